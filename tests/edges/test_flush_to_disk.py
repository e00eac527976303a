"""``flush_to_disk`` makes a batch of ``durable=False`` writes durable: on Linux one
``syncfs`` per file system holding them (``sync`` when that call is missing), elsewhere an
fsync of every file and of each distinct folder once. The other platform's way is run here
by naming another platform; ``os.fsync`` and ``os.open`` are wrapped to note what they do
(and still do it)."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import pytest

from tether.fsio import atomic_write, flush_to_disk


def test_elsewhere_every_file_and_each_folder_once_is_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[str | Path] = []
    for rel in ("a/one.txt", "a/two.txt", "b/three.txt"):
        atomic_write(tmp_path / rel, rel.encode(), durable=False)
        written.append(str(tmp_path / rel) if rel.startswith("a/") else tmp_path / rel)
    synced: list[tuple[int, int]] = []
    real_fsync = os.fsync

    def noting_fsync(fd: int) -> None:
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(os, "fsync", noting_fsync)
    flush_to_disk(written)
    expected = [tmp_path / r for r in ("a/one.txt", "a/two.txt", "b/three.txt", "a", "b")]
    identities = {(os.stat(p).st_dev, os.stat(p).st_ino) for p in expected}
    assert sorted(synced) == sorted(identities)  # each folder once, though a/ holds two


def written_in_two_folders(tmp_path: Path) -> list[str | Path]:
    written: list[str | Path] = []
    for rel in ("a/one.txt", "a/two.txt", "b/three.txt"):
        atomic_write(tmp_path / rel, rel.encode(), durable=False)
        written.append(tmp_path / rel)
    return written


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_on_linux_one_syncfs_per_file_system_and_never_a_global_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two folders on one file system: one folder is opened and synced; ``sync``, which
    would wait for every other program's writes to every disk, is never called."""
    written = written_in_two_folders(tmp_path)
    opened: list[str] = []
    real_open = os.open

    def noting_open(path: str, flags: int, *args: int) -> int:
        if flags & os.O_DIRECTORY:
            opened.append(str(path))
        return real_open(path, flags, *args)

    def no_global_sync() -> None:
        raise AssertionError("sync() called")

    monkeypatch.setattr(os, "open", noting_open)
    monkeypatch.setattr(os, "sync", no_global_sync)
    flush_to_disk(written)
    assert len(opened) == 1 and opened[0] in {str(tmp_path / "a"), str(tmp_path / "b")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_without_syncfs_one_global_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = written_in_two_folders(tmp_path)
    synced: list[bool] = []
    real_sync = os.sync

    def no_libc(*args: object, **kwargs: object) -> None:
        raise OSError("no C library here")

    def noting_sync() -> None:
        synced.append(True)
        real_sync()

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    monkeypatch.setattr(os, "sync", noting_sync)
    flush_to_disk(written)
    assert synced == [True]


class _FailingLibc:
    """The C library as seen through ``ctypes``, with a ``syncfs`` that reports what a
    failed writeback reports (-1, errno EIO): the data did not reach the disk."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    @staticmethod
    def syncfs(fd: int) -> int:
        import errno

        ctypes.set_errno(errno.EIO)
        return -1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="syncfs is Linux's")
def test_a_writeback_error_syncfs_reports_is_raised_not_hidden_behind_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sync`` reports nothing: falling back to it when ``syncfs`` says the writes failed
    would let the journal say "written" of bytes that never reached the disk (one fsync per
    file, as before the group commit, raised the error)."""
    import errno

    written = written_in_two_folders(tmp_path)
    synced: list[bool] = []
    monkeypatch.setattr(ctypes, "CDLL", _FailingLibc)
    monkeypatch.setattr(os, "sync", lambda: synced.append(True))
    with pytest.raises(OSError) as raised:
        flush_to_disk(written)
    assert raised.value.errno == errno.EIO
    assert synced == []


def test_elsewhere_a_failed_fsync_of_a_file_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    written = written_in_two_folders(tmp_path)

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError) as raised:
        flush_to_disk(written)
    assert raised.value.errno == errno.EIO
