"""tether reads what a repository holds through one reader (``git.BlobReader``, one
``git cat-file --batch``): the bytes as committed, for an object id, a path from the top
(``REV:PATH``) or from the folder asked in (``REV:./PATH``); a name that names no file reads
as absent, never as git's listing of a folder. Real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builders import git
from tether import git as tgit
from tether.errors import TetherError


@pytest.fixture(scope="module")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two commits of three files, made once for the module (``repo`` copies it)."""
    root = tmp_path_factory.mktemp("blobs") / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f.txt").write_bytes(b"first\r\n")
    (root / "top.txt").write_bytes(b"\x00binary\xff")
    (root / "two\nlines.txt").write_bytes(b"a name with a line break\n")
    # A filter that would change the bytes on checkout: never run for a read.
    (root / ".gitattributes").write_text("*.txt filter=shout\n")
    git(root.parent, "init", "-q", "-b", "main", str(root))
    git(root, "config", "filter.shout.smudge", "tr a-z A-Z")
    git(root, "config", "filter.shout.clean", "cat")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "sub" / "f.txt").write_bytes(b"second\n")
    git(root, "commit", "-qam", "two")
    return root


@pytest.fixture
def repo(built_repo: Path, tmp_path: Path) -> Path:
    """The test's own copy of the repository: a test may write objects into it."""
    return Path(shutil.copytree(built_repo, tmp_path / "repo", symlinks=True))


def test_a_file_reads_as_committed_from_the_top_and_from_a_subfolder(repo: Path) -> None:
    assert tgit.read_blob(repo, "HEAD:sub/f.txt") == b"second\n"
    assert tgit.read_blob(repo, "HEAD~1:sub/f.txt") == b"first\r\n"
    assert tgit.read_blob(repo / "sub", "HEAD~1:./f.txt") == b"first\r\n"
    assert tgit.read_blob(repo, "HEAD:top.txt") == b"\x00binary\xff"
    assert tgit.read_blob(repo, "HEAD:two\nlines.txt") == b"a name with a line break\n"
    oid = git(repo, "rev-parse", "HEAD:top.txt").strip()
    assert tgit.read_blob(repo, oid) == b"\x00binary\xff"


def test_a_name_that_names_no_file_reads_as_absent(repo: Path, tmp_path: Path) -> None:
    assert tgit.read_blob(repo, "HEAD:sub") is None  # a folder: not git's listing of it
    assert tgit.read_blob(repo, "HEAD:./nothing.txt") is None
    assert tgit.read_blob(repo, "no-such-branch:top.txt") is None
    assert tgit.read_blob(repo, "HEAD") is None  # a commit
    outside = tmp_path / "plain"
    outside.mkdir()
    assert tgit.read_blob(outside, "HEAD:top.txt") is None


def test_many_blobs_read_through_one_reader(repo: Path) -> None:
    names = ["HEAD:sub/f.txt", "HEAD:sub", "HEAD:top.txt", "HEAD~1:sub/f.txt", "HEAD:gone"]
    with tgit.BlobReader(repo) as reader:
        read = [reader.read(name) for name in names]
        size, stream = reader.open("HEAD:top.txt")
        assert (size, stream.read(3)) == (8, b"\x00bi")  # left unfinished: skipped
        assert reader.read("HEAD:sub/f.txt") == b"second\n"
    assert read == [b"second\n", None, b"\x00binary\xff", b"first\r\n", None]


def test_a_batch_of_object_ids_names_the_one_missing(repo: Path) -> None:
    present = git(repo, "rev-parse", "HEAD:top.txt").strip()
    assert tgit.read_blobs(repo, [present]) == {present: b"\x00binary\xff"}
    with pytest.raises(TetherError, match=r"could not read 0{40}"):
        tgit.read_blobs(repo, [present, "0" * 40])


def test_blobs_are_stored_one_by_one_when_the_scratch_folder_is_full(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``hash-object --stdin-paths`` for a batch's conflict sides reads them from scratch
    files; a full or unwritable scratch folder (a small /tmp in CI) must cost only speed: the
    sides go to git one at a time on its stdin, as before the batch, so an update still
    records its conflicts in the index instead of stopping half way. The full disk is
    stood in for by the scratch files' open failing with ENOSPC (a full file system cannot
    be made here without mounting one)."""
    import builtins
    import errno
    import hashlib

    real_open = builtins.open

    def full_scratch(file: object, *args: object, **kwargs: object) -> object:
        if "tether-blobs-" in str(file):
            raise OSError(errno.ENOSPC, "No space left on device", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(tgit, "open", full_scratch, raising=False)
    blobs = [b"base\n", b"ours\n", b"theirs\n"]
    ids = tgit.write_blobs(repo, blobs)
    assert ids == [
        hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's object ids
        for data in blobs
    ]
    assert [tgit.read_blob(repo, oid) for oid in ids] == blobs
