"""Unpacking a release archive's small files (tether.sources.extract): each is read in one
piece from where its bytes start in the archive, without a reader of its own per member
(for a release of many small files that reader cost as much as writing the file); a large
or sparse member is still streamed through tarfile's reader. The bytes and modes written
are the same either way, and a small member whose bytes come back short is refused."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from helpers_sources import file_entry, write_tar
from tether.errors import TetherError
from tether.sources.extract import extract_tar_safely

LARGE = (1 << 20) + 1  # one byte past the chunk tether reads a member in


def installed(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("name", ["release.tar", "release.tar.gz"])
def test_small_files_are_read_without_a_reader_each(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    large = os.urandom(LARGE)
    entries = [file_entry(f"docs/f{n}.md", f"file {n}\n") for n in range(20)]
    entries += [
        file_entry("bin/run.sh", "#!/bin/sh\n", mode=0o4755),  # setuid is dropped
        file_entry("empty.txt", b""),
        file_entry("big.bin", large, mode=0o666),  # world-writable is dropped
    ]
    archive = write_tar(tmp_path / name, entries)
    readers: list[str] = []
    real_extractfile = tarfile.TarFile.extractfile

    def counted(self: tarfile.TarFile, member: str | tarfile.TarInfo) -> object:
        readers.append(member if isinstance(member, str) else member.name)
        return real_extractfile(self, member)

    monkeypatch.setattr(tarfile.TarFile, "extractfile", counted)
    extract_tar_safely(archive, tmp_path / "tree")
    assert readers == ["big.bin"]
    expected = {f"docs/f{n}.md": (f"file {n}\n".encode(), 0o644) for n in range(20)}
    expected |= {
        "bin/run.sh": (b"#!/bin/sh\n", 0o755),
        "empty.txt": (b"", 0o644),
        "big.bin": (large, 0o644),
    }
    assert installed(tmp_path / "tree") == expected


class LosingBytes(io.BytesIO):
    """An archive whose member bytes come back half as long as asked once its headers have
    been listed (a medium failing between the listing and the copy): tarfile's listing
    never starts a read where a member's bytes start, the copy does."""

    def __init__(self, data: bytes, losing_at: int) -> None:
        super().__init__(data)
        self.losing_at = losing_at

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() == self.losing_at and size is not None and size > 1:
            size //= 2
        return super().read(size)


def test_a_small_member_read_short_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "release.tar", [file_entry("notes.md", "x" * 300)])
    with tarfile.open(archive) as tar:
        [member] = tar.getmembers()
    data = LosingBytes(archive.read_bytes(), member.offset_data)
    with pytest.raises(TetherError) as refused:
        extract_tar_safely(data, tmp_path / "out" / "tree", label="upload")
    assert str(refused.value) == "cannot extract 'notes.md' from upload: unexpected end of data"
    assert os.listdir(tmp_path / "out") == []
