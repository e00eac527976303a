"""A release read back from tether's release cache obeys the rules of a release folder: a link
placed in a cached tree (or standing for one of the cache's own folders) is never followed,
for the native and the gaia profile's cache alike. A release folder on a shelf whose files
are setuid, setgid or world-writable is refused, naming the file."""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path

import pytest

from builders import make_release, run_tether, tree_digest

GUIDE = "docs/guide.md"
SECRET = "the adopter's secret\n"


def _tarball(dist: Path, build: Path, version: str, profile: str) -> None:
    folder = make_release(build, version, {GUIDE: f"guide {version}\n"}, profile=profile)
    dist.mkdir(exist_ok=True)
    with tarfile.open(dist / f"kit-{version}.tgz", "w:gz") as tar:
        tar.add(folder, arcname=f"kit-{version}")


CACHES = {
    "native": ".tether/cache/releases",
    "gaia": ".gaia/local/cache/shared/update-gaia/releases",
}


def _installed(tmp_path: Path, profile: str) -> tuple[Path, Path]:
    """A project at 1.0.0 of a tarball source whose 2.0.0 sits in the release cache."""
    dist, build = tmp_path / "dist", tmp_path / "build"
    for version in ("1.0.0", "2.0.0"):
        _tarball(dist, build, version, profile)
    project = tmp_path / "app"
    project.mkdir()
    source = str(dist / "kit-{version}.tgz")
    args = ["--profile", profile] if profile == "gaia" else []
    done = run_tether("init", *args, "--source", source, "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    dry = run_tether("update", "--dry-run", "--to", "2.0.0", "-C", str(project))
    assert dry.returncode == 0, dry.stderr
    cached = [p for p in (project / CACHES[profile]).glob("*/2.0.0") if p.is_dir()]
    assert len(cached) == 1
    return project, cached[0]


@pytest.mark.parametrize("profile", ["native", "gaia"])
def test_a_link_placed_in_a_cached_release_is_not_followed(tmp_path: Path, profile: str) -> None:
    project, tree = _installed(tmp_path, profile)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (tree / GUIDE).unlink()
    os.symlink(os.path.relpath(secret, (tree / GUIDE).parent), tree / GUIDE)
    before = tree_digest(project)
    result = run_tether("update", "--yes", "--to", "2.0.0", "-C", str(project))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert str(tree) in lines[0]
    assert f"member '{GUIDE}' is a symlink leading outside the tree" in lines[0]
    assert "remove it to fetch the release again" in lines[0]
    assert tree_digest(project) == before
    assert (project / GUIDE).read_text() == "guide 1.0.0\n"


@pytest.mark.parametrize("profile", ["native", "gaia"])
def test_a_cache_folder_that_is_a_link_is_not_followed(tmp_path: Path, profile: str) -> None:
    """The version folder's parent (the source's folder in the cache) replaced by a link to a
    tree of someone else's choosing: refused, not read through."""
    project, tree = _installed(tmp_path, profile)
    elsewhere = tmp_path / "elsewhere"
    tree.parent.rename(elsewhere)
    (elsewhere / "2.0.0" / GUIDE).write_text(SECRET)
    os.symlink(elsewhere, tree.parent)
    before = tree_digest(project)
    for command in (["update", "--yes"], ["update", "--dry-run"]):
        result = run_tether(*command, "--to", "2.0.0", "-C", str(project))
        assert result.returncode == 1
        assert result.stderr == (
            f"tether: {tree.parent}: is a symbolic link; tether reads cached releases only "
            "from plain folders (remove it to fetch the release again)\n"
        )
    assert tree_digest(project) == before


def test_a_cached_release_read_again_is_installed_as_before(tmp_path: Path) -> None:
    """The control: an untouched cached tree passes the check and is installed."""
    project, _tree = _installed(tmp_path, "native")
    result = run_tether("update", "--yes", "--to", "2.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert (project / GUIDE).read_text() == "guide 2.0.0\n"


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        (0o4755, "has mode 4755 (setuid), which a release may not carry"),
        (0o2755, "has mode 2755 (setgid), which a release may not carry"),
        (0o6777, "has mode 6777 (setuid, setgid, writable by every user), which"),
        (0o666, "has mode 0666 (writable by every user), which a release may not carry"),
    ],
    ids=["setuid", "setgid", "all-three", "world-writable"],
)
def test_a_shelf_file_with_an_unsafe_mode_is_refused(tmp_path: Path, mode: int, words: str) -> None:
    shelf = tmp_path / "shelf"
    folder = make_release(shelf, "1.0.0", {GUIDE: "guide\n", "bin/tool": "#!/bin/sh\n"})
    os.chmod(folder / "bin/tool", mode)
    if stat.S_IMODE(os.stat(folder / "bin/tool").st_mode) != mode:
        pytest.skip("this filesystem does not keep the mode")
    project = tmp_path / "app"
    project.mkdir()
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.startswith(f"tether: refusing release folder {folder}: member 'bin/tool' ")
    assert words in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert list(project.iterdir()) == []


def test_a_shelf_file_with_ordinary_modes_is_installed_with_them(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    folder = make_release(shelf, "1.0.0", {GUIDE: "guide\n", "bin/tool": "#!/bin/sh\n"})
    os.chmod(folder / "bin/tool", 0o775)  # group-writable is a shared shelf's ordinary mode
    os.chmod(folder / "docs", 0o2775)  # a setgid folder (group inheritance) is no file mode
    project = tmp_path / "app"
    project.mkdir()
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert os.access(project / "bin/tool", os.X_OK)


def test_a_clone_of_a_git_source_that_became_a_link_is_not_used(tmp_path: Path) -> None:
    """A remote git source is cloned into the cache once; a link standing for that clone (to
    a repository of someone else's choosing) is refused, not fetched into or read."""
    from helpers_sources import commit_release, init_repo
    from tether.errors import TetherError
    from tether.sources import open_source

    upstream = init_repo(tmp_path / "upstream")
    commit_release(upstream, {GUIDE: "one\n"}, "v1.0.0")
    commit_release(upstream, {GUIDE: "two\n"}, "v2.0.0")
    cache = tmp_path / "cache"
    assert open_source(f"file://{upstream}", cache).fetch("1.0.0").root.is_dir()
    (mirror,) = [p for p in cache.rglob(".mirror.git") if p.is_dir()]
    elsewhere = tmp_path / "elsewhere.git"
    mirror.rename(elsewhere)
    os.symlink(elsewhere, mirror)
    with pytest.raises(TetherError) as caught:
        open_source(f"file://{upstream}", cache).fetch("2.0.0")
    assert str(caught.value) == (
        f"{mirror}: is a symbolic link; tether keeps its clone of file://{upstream} only in "
        "a plain folder (remove it to clone again)"
    )
    assert not (cache / mirror.parent.name / "2.0.0").exists()
