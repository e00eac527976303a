"""Git sources: real repositories with release tags, local and through a clone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builders import git
from helpers_sources import commit_release, init_repo, listing, read_tree
from tether import git as tgit
from tether.errors import TetherError
from tether.sources import open_source

V1 = {"src/app.py": "v1\n"}  # a single top folder: must NOT be stripped for git
V11 = {"src/app.py": "v1.1\n", "README.md": "hello\n"}
V2RC = {"src/app.py": "v2-rc\n"}


@pytest.fixture(scope="module")
def built_upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The upstream repository, built once per module; each test gets its own copy."""
    repo = init_repo(tmp_path_factory.mktemp("built") / "upstream")
    commit_release(repo, V1, "v1.0.0", annotated=True)
    commit_release(repo, V11, "1.1.0")  # the other tag style
    commit_release(repo, V2RC, "v2.0.0-rc.1")
    commit_release(repo, {"src/app.py": "wip\n"}, "nightly")  # not a version
    (repo / "src" / "app.py").write_text("uncommitted\n")  # the working tree is not a release
    return repo


@pytest.fixture
def upstream(tmp_path: Path, built_upstream: Path) -> Path:
    return shutil.copytree(built_upstream, tmp_path / "upstream", symlinks=True)


def test_versions_come_from_tags(upstream: Path, tmp_path: Path) -> None:
    source = open_source(str(upstream), tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0"]
    assert source.available_versions(include_prereleases=True) == ["1.0.0", "1.1.0", "2.0.0-rc.1"]


def test_fetch_exports_the_tagged_tree(upstream: Path, tmp_path: Path) -> None:
    source = open_source(str(upstream), tmp_path / "cache")
    assert read_tree(source.fetch("1.0.0").root) == V1
    assert read_tree(source.fetch("v1.1.0").root) == V11
    assert read_tree(source.fetch("2.0.0-rc.1").root) == V2RC


def test_missing_tag_lists_available(upstream: Path, tmp_path: Path) -> None:
    source = open_source(str(upstream), tmp_path / "cache")
    with pytest.raises(TetherError) as caught:
        source.fetch("3.0.0")
    assert str(caught.value) == (
        f"version 3.0.0 not found in {upstream} (available: 1.0.0, 1.1.0, 2.0.0-rc.1)"
    )
    assert not (tmp_path / "cache").exists()


def test_bare_repository(upstream: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(upstream), str(bare))
    source = open_source(str(bare), tmp_path / "cache")
    assert read_tree(source.fetch("1.1.0").root) == V11


def test_file_url_clones_into_the_cache_and_tops_up_new_tags(
    upstream: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    source = open_source(f"file://{upstream}", cache)
    assert read_tree(source.fetch("1.0.0").root) == V1
    mirrors = [p for p in cache.rglob("*.git") if p.is_dir()]
    assert len(mirrors) == 1
    # A release published after the clone is fetched into the same mirror.
    commit_release(upstream, {"src/app.py": "v3\n"}, "v3.0.0")
    source = open_source(f"git+file://{upstream}", cache)  # git+ is the same repository
    assert source.available_versions()[-1] == "3.0.0"
    assert read_tree(source.fetch("3.0.0").root) == {"src/app.py": "v3\n"}
    assert [p for p in cache.rglob("*.git") if p.is_dir()] == mirrors  # reused, not recloned


def test_git_plus_local_path(upstream: Path, tmp_path: Path) -> None:
    source = open_source(f"git+{upstream}", tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0"]


def test_unreachable_remote_names_the_source(tmp_path: Path) -> None:
    spec = f"file://{tmp_path}/nowhere.git"
    source = open_source(spec, tmp_path / "cache")
    with pytest.raises(TetherError, match=f"cannot read the tags of {spec}: git ls-remote failed"):
        source.available_versions()


def test_a_shelf_inside_a_repository_is_a_shelf(upstream: Path, tmp_path: Path) -> None:
    (upstream / "releases" / "1.0.0").mkdir(parents=True)
    source = open_source(str(upstream / "releases"), tmp_path / "cache")
    assert source.fetch("1.0.0").root == upstream / "releases" / "1.0.0"


def test_hook_environment_does_not_redirect_git(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Inside a git hook GIT_DIR points at the project's repository, not the upstream.
    other = init_repo(tmp_path / "project")
    commit_release(other, {"x": "x"}, "v9.0.0")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    source = open_source(f"file://{upstream}", tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0"]
    assert read_tree(source.fetch("1.0.0").root) == V1


def test_git_errors_carry_gits_own_line(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(TetherError, match=r"^git rev-parse failed: fatal: "):
        tgit.rev_parse(tmp_path / "plain", "HEAD")


def test_git_helpers(upstream: Path, tmp_path: Path) -> None:
    assert tgit.is_git_repo(upstream)
    assert not tgit.is_git_repo(upstream / "src")
    assert not tgit.is_git_repo(tmp_path / "missing")
    assert sorted(tgit.list_tags(str(upstream))) == ["1.1.0", "nightly", "v1.0.0", "v2.0.0-rc.1"]
    assert tgit.has_ref(upstream, "refs/tags/v1.0.0")
    assert not tgit.has_ref(upstream, "refs/tags/v9")
    assert len(tgit.rev_parse(upstream, "v1.0.0^{commit}")) == 40
    listed = tgit.tree_listing(upstream, "refs/tags/1.1.0")
    assert sorted(path for _, _, _, path in listed) == ["README.md", "src", "src/app.py"]
    assert listing(tmp_path / "cache") == []
