"""Safe extraction: every refused entry type leaves nothing on disk."""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
from pathlib import Path

import pytest

from helpers_sources import (
    Entry,
    dir_entry,
    file_entry,
    hardlink_entry,
    listing,
    read_tree,
    special_entry,
    symlink_entry,
    write_tar,
)
from tether.errors import TetherError
from tether.sources.extract import extract_tar_safely

MALICIOUS: dict[str, tuple[list[Entry], str]] = {
    "absolute name": ([file_entry("/tmp/evil", "x")], "absolute name"),
    "dot-dot": ([file_entry("../evil", "x")], "'..'"),
    "dot-dot inside": ([file_entry("a/../../evil", "x")], "'..'"),
    "backslash": ([file_entry("a\\..\\evil", "x")], "backslash"),
    "absolute symlink": ([symlink_entry("link", "/etc/passwd")], "absolute path"),
    "escaping symlink": ([symlink_entry("sub/link", "../../outside")], "outside the tree"),
    "symlink chain": (
        [dir_entry("d"), symlink_entry("d/here", ".."), symlink_entry("d/far", "here/..")],
        "outside the tree",
    ),
    "symlink through symlink": (
        [symlink_entry("a", "."), symlink_entry("b", "a/../..")],
        "outside the tree",
    ),
    "write through symlink": (
        [dir_entry("sub"), symlink_entry("link", "sub"), file_entry("link/x", "x")],
        "inside the symlink",
    ),
    "symlink loop": ([symlink_entry("a", "b"), symlink_entry("b", "a/x")], "outside the tree"),
    "absolute hardlink": ([hardlink_entry("link", "/etc/passwd")], "hardlink"),
    "escaping hardlink": ([hardlink_entry("link", "../outside")], "hardlink"),
    "hardlink to nothing": ([hardlink_entry("link", "missing")], "not an earlier file"),
    "character device": ([special_entry("tty", tarfile.CHRTYPE)], "character device"),
    "block device": ([special_entry("disk", tarfile.BLKTYPE)], "block device"),
    "fifo": ([special_entry("pipe", tarfile.FIFOTYPE)], "fifo"),
    "oversize": ([file_entry("big.bin", b"x" * 101)], "over the limit of 100"),
    "duplicate": ([file_entry("a", "1"), file_entry("a", "2")], "more than once"),
    "file below a file": ([file_entry("a", "1"), file_entry("a/b", "2")], "inside the file"),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_refused_archive_leaves_nothing(case: str, tmp_path: Path) -> None:
    entries, reason = MALICIOUS[case]
    # A harmless file first: proves a refusal undoes members that were fine.
    archive = write_tar(tmp_path / "in" / "evil.tar", [file_entry("ok.txt", "fine"), *entries])
    dest = tmp_path / "out" / "tree"
    with pytest.raises(TetherError) as caught:
        extract_tar_safely(archive, dest, max_entry_bytes=100)
    message = str(caught.value)
    assert str(archive) in message
    assert repr(entries[-1][0].name) in message
    assert reason in message
    assert listing(tmp_path / "out") == []
    assert not (tmp_path / "tmp").exists() and not (tmp_path / "outside").exists()


def test_refused_archive_inside_top_folder_is_checked_after_stripping(tmp_path: Path) -> None:
    # top/link -> .. is inside the archive, but once top/ is stripped it leaves the tree.
    archive = write_tar(
        tmp_path / "a.tar",
        [dir_entry("top"), file_entry("top/f", "x"), symlink_entry("top/link", "..")],
    )
    with pytest.raises(TetherError, match="outside the tree"):
        extract_tar_safely(archive, tmp_path / "tree")
    assert not (tmp_path / "tree").exists()


def test_safe_archive_keeps_files_links_and_modes(tmp_path: Path) -> None:
    archive = write_tar(
        tmp_path / "good.tar.gz",
        [
            dir_entry("./"),
            file_entry("./bin/run", "#!/bin/sh\n", mode=0o4755),
            file_entry("./docs/a.md", "A"),
            symlink_entry("./docs/b.md", "a.md"),
            symlink_entry("./latest", "docs"),
            hardlink_entry("./docs/c.md", "./docs/a.md"),
            file_entry("./secret", "s", mode=0o000),
        ],
    )
    dest = tmp_path / "tree"
    extract_tar_safely(archive, dest)
    assert read_tree(dest) == {
        "bin/run": "#!/bin/sh\n",
        "docs/a.md": "A",
        "docs/c.md": "A",
        "secret": "s",
    }
    assert os.readlink(dest / "docs/b.md") == "a.md"
    assert os.readlink(dest / "latest") == "docs"
    assert stat.S_IMODE((dest / "bin/run").stat().st_mode) == 0o755  # setuid dropped
    assert stat.S_IMODE((dest / "secret").stat().st_mode) == 0o644
    assert (dest / "docs/c.md").stat().st_ino != (dest / "docs/a.md").stat().st_ino
    assert listing(tmp_path) == sorted(
        ["good.tar.gz", "tree", *[f"tree/{p}" for p in listing(dest)]]
    )


def test_single_top_folder_is_stripped(tmp_path: Path) -> None:
    archive = write_tar(
        tmp_path / "a.tar", [dir_entry("app-1.0"), file_entry("app-1.0/src/x.py", "x")]
    )
    extract_tar_safely(archive, tmp_path / "tree")
    assert read_tree(tmp_path / "tree") == {"src/x.py": "x"}


@pytest.mark.parametrize(
    "entries",
    [
        [file_entry("only.txt", "x")],  # a single top-level file is content
        [file_entry("a/x", "x"), file_entry("b/y", "y")],  # two folders
        [file_entry("a/x", "x"), file_entry("top.txt", "t")],
    ],
)
def test_no_stripping_without_a_single_top_folder(entries: list[Entry], tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", entries)
    extract_tar_safely(archive, tmp_path / "tree")
    assert sorted(read_tree(tmp_path / "tree")) == sorted(e[0].name for e in entries)


def test_stripping_can_be_turned_off(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", [file_entry("src/x.py", "x")])
    extract_tar_safely(archive, tmp_path / "tree", strip_single_top=False)
    assert read_tree(tmp_path / "tree") == {"src/x.py": "x"}


def test_reads_from_an_open_file(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", [file_entry("x", "x")])
    with open(archive, "rb") as handle:
        extract_tar_safely(io.BytesIO(handle.read()), tmp_path / "tree", label="upload")
    assert read_tree(tmp_path / "tree") == {"x": "x"}


def test_not_a_tar_archive(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"<html>not found</html>")
    with pytest.raises(TetherError, match=re.escape(f"{junk}: cannot read the archive (")):
        extract_tar_safely(junk, tmp_path / "tree")
    assert not (tmp_path / "tree").exists()


def test_truncated_archive_leaves_nothing(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar.gz", [file_entry("x", os.urandom(50_000))])
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    with pytest.raises(TetherError, match="archive"):
        extract_tar_safely(archive, tmp_path / "out" / "tree")
    assert listing(tmp_path / "out") == []


def test_existing_destination_is_never_overwritten(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar", [file_entry("x", "x")])
    (tmp_path / "tree").mkdir()
    with pytest.raises(FileExistsError):
        extract_tar_safely(archive, tmp_path / "tree")
