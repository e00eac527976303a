"""``flush_to_disk`` makes a batch of ``durable=False`` writes durable: one ``sync`` on Linux,
elsewhere an fsync of every file and of each distinct folder once. The second way is run
here by naming another platform; ``os.fsync`` is wrapped to note what it syncs (and still
syncs it)."""

from __future__ import annotations

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
