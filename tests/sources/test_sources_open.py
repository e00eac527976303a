"""Which kind a source string names, and the one-line errors for the ones tether cannot use."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from helpers_sources import init_repo, read_tree, release_tar
from tether.errors import TetherError
from tether.sources import open_source
from tether.sources.github import GhSource
from tether.sources.gitrepo import GitSource
from tether.sources.shelf import DirectorySource
from tether.sources.tarball import LocalTarballSource, UrlTarballSource

UNKNOWN = "expected a directory of releases, a tarball path/URL with {version}, or a git repository"


@pytest.mark.parametrize(
    "spec",
    ["ftp://example.org/app-1.0.tgz", "s3://bucket/app", "", "   ", "https://example.org/page"],
)
def test_unknown_scheme(spec: str, tmp_path: Path) -> None:
    with pytest.raises(TetherError) as caught:
        open_source(spec, tmp_path / "cache")
    assert str(caught.value).startswith(f"unknown source {spec!r}: {UNKNOWN}")
    assert not (tmp_path / "cache").exists()


def test_nonexistent_path(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match=r"unknown source .*\(no such file or directory\)"):
        open_source(str(tmp_path / "nope"), tmp_path / "cache")


def test_plain_file_is_not_a_source(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(TetherError, match="unknown source"):
        open_source(str(tmp_path / "notes.txt"), tmp_path / "cache")


def test_git_plus_path_that_is_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="is not a git repository"):
        open_source(f"git+{tmp_path}", tmp_path / "cache")


def test_https_tarball_without_placeholder(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match=r"needs \{version\} or \{tag\}"):
        open_source("https://example.org/app-1.0.0.tar.gz", tmp_path / "cache")


@pytest.mark.parametrize(
    "spec",
    [
        "https://example.org/team/app.git",
        "git+https://example.org/team/app",
        "git+ssh://git@example.org/team/app.git",
        "ssh://git@example.org/team/app.git",
        "git@example.org:team/app.git",
    ],
)
def test_remote_git_specs_open_without_network(spec: str, tmp_path: Path) -> None:
    assert isinstance(open_source(spec, tmp_path / "cache"), GitSource)
    assert not (tmp_path / "cache").exists()


def test_kinds_by_shape(tmp_path: Path) -> None:
    (tmp_path / "shelf").mkdir()
    init_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    assert isinstance(open_source(str(tmp_path / "shelf"), cache), DirectorySource)
    assert isinstance(open_source(str(tmp_path / "repo"), cache), GitSource)
    assert isinstance(open_source(str(tmp_path / "a-{version}.tgz"), cache), LocalTarballSource)
    assert isinstance(open_source("https://h/a-{tag}.tgz", cache), UrlTarballSource)


def test_home_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "rel" / "1.0.0").mkdir(parents=True)
    assert open_source("~/rel", tmp_path / "cache").available_versions() == ["1.0.0"]


# --- gh:owner/repo ---------------------------------------------------------------------


def test_gh_without_the_gh_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(TetherError, match="needs the `gh` program, which is not installed"):
        open_source("gh:owner/repo", tmp_path / "cache")


def test_gh_malformed(tmp_path: Path) -> None:
    with pytest.raises(TetherError, match="gh:OWNER/REPO"):
        open_source("gh:just-a-name", tmp_path / "cache")


# A shell script, not Python: a shell starts in about 1 ms of CPU, an interpreter in 10 ms
# and more.
FAKE_GH = r"""#!/bin/sh
data={data}
tarball=repos/owner/repo/tarball/refs/tags/
if [ "$1 $2 $3" = "api --paginate repos/owner/repo/tags" ]; then
    for path in "$data"/*.tar.gz; do
        name=${{path##*/}}
        echo "${{name%.tar.gz}}"
    done
elif [ "$1" = api ] && [ "${{2#"$tarball"}}" != "$2" ]; then
    path="$data/${{2#"$tarball"}}.tar.gz"
    if [ ! -e "$path" ]; then
        echo "gh: Not Found (HTTP 404)" >&2
        exit 1
    fi
    cat "$path"
else
    echo "gh: unexpected $*" >&2
    exit 1
fi
"""


def test_gh_through_the_gh_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in for the external gh program (not for tether's own code).
    data = tmp_path / "github"
    release_tar(data / "v1.0.0.tar.gz", {"a": "1"}, top="owner-repo-abc123")
    release_tar(data / "v1.1.0-rc.1.tar.gz", {"a": "rc"}, top="owner-repo-def456")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH.format(data=shlex.quote(str(data))))
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    source = open_source("gh:owner/repo", tmp_path / "cache")
    assert isinstance(source, GhSource)
    assert source.available_versions(include_prereleases=True) == ["1.0.0", "1.1.0-rc.1"]
    assert read_tree(source.fetch("1.0.0").root) == {"a": "1"}
    with pytest.raises(TetherError, match=r"version 2.0.0 not found in gh:owner/repo"):
        source.fetch("2.0.0")
