"""A release tarball is verified against the ``.sha256`` published beside it."""

import hashlib

import pytest

from helpers_sources import release_tar, serve_directory
from tether.errors import TetherError
from tether.sources import open_source


def publish(folder, version, files, digest=None):
    tarball = release_tar(folder / f"kit-v{version}.tar.gz", files, top=f"kit-v{version}")
    real = hashlib.sha256(tarball.read_bytes()).hexdigest()
    (folder / f"{tarball.name}.sha256").write_text(f"{digest or real}  {tarball.name}\n")
    return tarball


def test_local_tarball_with_matching_checksum(tmp_path):
    shelf = tmp_path / "dist"
    shelf.mkdir()
    publish(shelf, "1.0.0", {"a.txt": "a\n"})
    tree = open_source(str(shelf / "kit-v{version}.tar.gz"), tmp_path / "cache").fetch("1.0.0")
    assert (tree.root / "a.txt").read_text() == "a\n"


def test_local_tarball_with_wrong_checksum_is_refused(tmp_path):
    shelf = tmp_path / "dist"
    shelf.mkdir()
    publish(shelf, "1.0.0", {"a.txt": "a\n"}, digest="0" * 64)
    with pytest.raises(TetherError, match="does not match the sha256 published beside it"):
        open_source(str(shelf / "kit-v{version}.tar.gz"), tmp_path / "cache").fetch("1.0.0")
    assert not any((tmp_path / "cache").rglob("a.txt"))


def test_url_tarball_checksums(tmp_path):
    shelf = tmp_path / "dist"
    shelf.mkdir()
    publish(shelf, "1.0.0", {"a.txt": "good\n"})
    publish(shelf, "2.0.0", {"a.txt": "tampered\n"}, digest="1" * 64)
    with serve_directory(shelf) as base:
        source = open_source(base + "/kit-v{version}.tar.gz", tmp_path / "cache")
        assert (source.fetch("1.0.0").root / "a.txt").read_text() == "good\n"
        with pytest.raises(TetherError, match="does not match"):
            source.fetch("2.0.0")
