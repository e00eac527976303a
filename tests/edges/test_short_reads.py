"""A read of a regular file may return fewer bytes than asked before its end: a FUSE file
system mounted with ``direct_io`` passes its own short reads on, and POSIX allows them. tether
reads a file whole until the read that returns nothing, never taking a short read for its
end, or it would hash, merge and write back a file cut short. The file system is stood in for
by ``os.read`` returning at most a page per call (one cannot be mounted here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether import fsio

PAGE = 4096


@pytest.fixture
def page_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    real_read = os.read

    def short_read(fd: int, size: int) -> bytes:
        return real_read(fd, min(size, PAGE))

    monkeypatch.setattr(os, "read", short_read)


@pytest.mark.parametrize("size", [PAGE - 1, PAGE, PAGE + 1, 5 * PAGE + 7])
def test_a_file_read_in_short_reads_is_read_whole(
    tmp_path: Path, page_at_a_time: None, size: int
) -> None:
    target = tmp_path / "file.bin"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    target.write_bytes(data)
    assert fsio.read_bytes(target) == data
    assert fsio.read_with_stat(target)[0] == data
    assert fsio.read_regular(target) == data
