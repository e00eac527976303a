"""The tree cache: a fetched version is extracted once; broken fetches leave nothing trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers_sources import commit_release, init_repo, listing, read_tree, release_tar
from tether.errors import TetherError
from tether.sources import open_source
from tether.sources.release_cache import TreeCache, source_key


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    for version in ("1.0.0", "1.1.0"):
        release_tar(tmp_path / "dist" / f"app-{version}.tgz", {"v": version}, top="app")
    return tmp_path / "dist"


def test_second_fetch_reuses_the_extracted_tree(dist: Path, tmp_path: Path) -> None:
    spec = str(dist / "app-{version}.tgz")
    first = open_source(spec, tmp_path / "cache").fetch("1.0.0")
    inode = (first.root / "v").stat().st_ino
    (first.root / "marker").write_text("left by the first fetch")
    (dist / "app-1.0.0.tgz").unlink()  # a re-extraction would now fail
    second = open_source(spec, tmp_path / "cache").fetch("1.0.0")
    assert second.root == first.root
    assert (second.root / "v").stat().st_ino == inode
    assert (second.root / "marker").exists()


def test_git_fetch_reuses_the_cache_without_asking_the_repository(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "up")
    commit_release(repo, {"a": "1"}, "v1.0.0")
    first = open_source(f"file://{repo}", tmp_path / "cache").fetch("1.0.0")
    (repo / ".git").rename(tmp_path / "gone")  # the repository is no longer reachable
    second = open_source(f"file://{repo}", tmp_path / "cache").fetch("1.0.0")
    assert second.root == first.root and read_tree(second.root) == {"a": "1"}


def test_sources_have_separate_cache_folders(dist: Path, tmp_path: Path) -> None:
    release_tar(tmp_path / "other" / "app-1.0.0.tgz", {"v": "other"}, top="app")
    one = open_source(str(dist / "app-{version}.tgz"), tmp_path / "cache").fetch("1.0.0")
    two = open_source(str(tmp_path / "other" / "app-{version}.tgz"), tmp_path / "cache")
    assert read_tree(two.fetch("1.0.0").root) == {"v": "other"}
    assert read_tree(one.root) == {"v": "1.0.0"}


def test_relative_and_absolute_spellings_share_a_cache(
    dist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    one = open_source("dist/app-{version}.tgz", tmp_path / "cache").fetch("1.0.0")
    two = open_source(str(dist / "app-{version}.tgz"), tmp_path / "cache").fetch("1.0.0")
    assert one.root == two.root


def test_leftovers_of_an_interrupted_fetch_are_removed(dist: Path, tmp_path: Path) -> None:
    spec = str(dist / "app-{version}.tgz")
    open_source(spec, tmp_path / "cache").fetch("1.0.0")
    (key_dir,) = (tmp_path / "cache").iterdir()
    # What a killed run leaves: a half-built tree in a partial folder, no version folder.
    leftover = key_dir / ".1.1.0.partial-x1y2z3" / "tree"
    leftover.mkdir(parents=True)
    (leftover / "v").write_text("half written")
    tree = open_source(spec, tmp_path / "cache").fetch("1.1.0")
    assert read_tree(tree.root) == {"v": "1.1.0"}
    assert sorted(p.name for p in key_dir.iterdir()) == ["1.0.0", "1.1.0"]


def test_interrupted_build_leaves_nothing(tmp_path: Path) -> None:
    cache = TreeCache(tmp_path / "cache", source_key("tarball", "/x"))

    def interrupted(work: Path, dest: Path) -> None:
        dest.mkdir()
        (dest / "half").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.build("1.0.0", interrupted)
    assert not (tmp_path / "cache").exists()
    assert cache.cached("1.0.0") is None


def test_failed_fetch_keeps_other_versions(dist: Path, tmp_path: Path) -> None:
    spec = str(dist / "app-{version}.tgz")
    source = open_source(spec, tmp_path / "cache")
    source.fetch("1.0.0")
    before = listing(tmp_path / "cache")
    (dist / "app-1.1.0.tgz").write_bytes(b"corrupt")
    with pytest.raises(TetherError, match=r"app-1\.1\.0\.tgz: cannot read the archive \("):
        source.fetch("1.1.0")
    assert listing(tmp_path / "cache") == before


def test_source_keys_are_short_and_distinct() -> None:
    keys = {source_key("git", "/a"), source_key("tarball", "/a"), source_key("git", "/b")}
    assert len(keys) == 3 and all(len(k) == 16 for k in keys)
