"""The everyday adopter path with relative paths: ``init``, ``status``, ``check``,
``changelog`` and ``update`` given the project as a relative ``-C``, as ``-C .`` or as
nothing at all from inside it, and given a relative source, for every source kind;
``refresh`` the same way for a recipe folder. Every path tether hands to a program that
runs in another folder (``git archive`` in the source repository) must be absolute.

The tarball URL is served by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import call, make_release, write_files
from helpers_sources import (
    commit_release,
    init_repo,
    listing,
    read_tree,
    release_tar,
    serve_directory,
)
from tests.refresh.test_gbrain_refresh import recipe

VERSIONS = ("1.0.0", "1.1.0")
FILES = {"docs/guide.md": "guide {v}\n", "bin/run.sh": "echo {v}\n"}
CHANGELOG = "# Changelog\n\n## [1.1.0]\n- guide rewritten\n\n## [1.0.0]\n- first\n"


def files_of(version: str) -> dict[str, str]:
    return {rel: text.format(v=version) for rel, text in FILES.items()}


def build_shelf(shelf: Path) -> Path:
    for version in VERSIONS:
        make_release(shelf, version, files_of(version), sentinels={"CHANGELOG.md": CHANGELOG})
    return shelf


@dataclass(frozen=True)
class Kind:
    name: str
    lists_versions: bool  # a URL template cannot say which versions exist
    local: bool  # a path on disk, so it can be spelled relative to the current folder


KINDS = [
    Kind("shelf", True, True),
    Kind("tarball", True, True),
    Kind("url", False, False),
    Kind("git", True, True),
    Kind("git-file-url", True, False),
]


def build_upstream(upstream: Path, kind: Kind) -> None:
    """The source folder of ``kind``: a shelf, with its releases as tarballs beside it
    (``dist``) or committed and tagged in a repository beside it (``repo``)."""
    shelf = build_shelf(upstream / "shelf")
    if kind.name in ("tarball", "url"):
        for version in VERSIONS:
            release_tar(
                upstream / f"dist/kit-{version}.tar.gz",
                read_tree(shelf / version),
                top=f"kit-{version}",
            )
    elif kind.name.startswith("git"):
        repo = init_repo(upstream / "repo")
        for version in VERSIONS:
            commit_release(repo, read_tree(shelf / version), f"v{version}")


@pytest.fixture(scope="module")
def built_upstreams() -> dict[str, Path]:
    """Each kind's source folder, built once for the module (by ``upstream``, on first use)
    and copied into each test's folder: the tests read it and never change it."""
    return {}


@pytest.fixture(params=KINDS, ids=lambda kind: kind.name)
def upstream(request, tmp_path, tmp_path_factory, built_upstreams):
    """(kind, absolute source spec) for each kind of source, all holding 1.0.0 and 1.1.0,
    in the test's own folder."""
    kind: Kind = request.param
    if kind.name not in built_upstreams:
        built = tmp_path_factory.mktemp(f"upstream-{kind.name}") / "upstream"
        build_upstream(built, kind)
        built_upstreams[kind.name] = built
    shutil.copytree(built_upstreams[kind.name], tmp_path / "upstream", symlinks=True)
    if kind.name == "shelf":
        yield kind, str(tmp_path / "upstream/shelf")
    elif kind.name == "tarball":
        yield kind, str(tmp_path / "upstream/dist/kit-{version}.tar.gz")
    elif kind.name == "url":
        with serve_directory(tmp_path / "upstream/dist") as base:
            yield kind, base + "/kit-{version}.tar.gz"
    else:
        repo = tmp_path / "upstream/repo"
        yield kind, str(repo) if kind.name == "git" else f"file://{repo}"


@dataclass(frozen=True)
class Spelling:
    """Where tether runs and how it is told where the project is."""

    name: str
    cwd: str  # relative to tmp_path; the project is tmp_path/proj
    project_args: tuple[str, ...]
    relative_source: bool = False


SPELLINGS = [
    Spelling("relative -C", ".", ("-C", "proj")),
    Spelling("relative -C from beside", "elsewhere", ("-C", "../proj")),
    Spelling("-C dot inside", "proj", ("-C", ".")),
    Spelling("inside, no -C", "proj", ()),
    Spelling("relative source", "proj", (), relative_source=True),
]


@pytest.fixture
def tether(monkeypatch, capsys):
    """Run the CLI in this process with ``cwd`` as the current folder (in-process: the
    matrix runs over a hundred commands); returns the exit code and the JSON document."""

    def run(cwd: Path, *args: str) -> tuple[int, dict[str, object]]:
        monkeypatch.chdir(cwd)
        code = call(*args, "--json")
        out, err = capsys.readouterr()
        assert code in (0, 3), err
        return code, json.loads(out)

    return run


def spelled_source(spec: str, spelling: Spelling, cwd: Path) -> str:
    return os.path.relpath(spec, cwd) if spelling.relative_source else spec


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: s.name)
def test_every_command_with_relative_paths(tmp_path, upstream, spelling, tether):
    kind, spec = upstream
    if spelling.relative_source and not kind.local:
        pytest.skip("a URL has no relative spelling")
    project = tmp_path / "proj"
    cwd = tmp_path / spelling.cwd
    cwd.mkdir(exist_ok=True)
    around = [p for p in listing(tmp_path) if not p.startswith("proj")]
    source = spelled_source(spec, spelling, cwd)
    where = spelling.project_args
    override = ("--source", source) if spelling.relative_source else ()

    code, doc = tether(cwd, "init", "--source", source, "--to", "1.0.0", *where)
    assert code == 0, doc
    assert (project / "docs/guide.md").read_text() == "guide 1.0.0\n"
    state = json.loads((project / ".tether/state.json").read_text())
    # A relative source is recorded relative to the project (a clone elsewhere with the
    # source beside it still finds it), any other as given: every folder finds it later.
    recorded = os.path.relpath(spec, project) if spelling.relative_source else spec
    assert state["source"] == recorded

    code, doc = tether(cwd, "status", *where)
    assert (code, doc["installed_version"], doc["clean"], doc["modified"]) == (0, "1.0.0", 2, [])
    if kind.lists_versions:
        code, doc = tether(cwd, "check", "--check-latest", *override, *where)
        assert (code, doc["latest_version"], doc["reasons"]) == (3, "1.1.0", ["update-available"])

    # release 1.1.0 is not cached yet: the changelog fetches it into the project's cache
    code, doc = tether(cwd, "changelog", "--from", "1.0.0", "--to", "1.1.0", *override, *where)
    assert code == 0, doc
    assert [section["version"] for section in doc["sections"]] == ["1.1.0"]

    (project / ".tether/cache").rename(project / ".tether/cache-gone")  # fetch 1.1.0 anew
    code, doc = tether(cwd, "update", "--yes", "--to", "1.1.0", *override, *where)
    assert code == 0, doc
    assert (project / "docs/guide.md").read_text() == "guide 1.1.0\n"
    state = json.loads((project / ".tether/state.json").read_text())
    assert (state["version"], state["source"]) == ("1.1.0", recorded)
    code, doc = tether(cwd, "check", *where)
    assert (code, doc["installed_version"], doc["clean"], doc["reasons"]) == (0, "1.1.0", 2, [])

    # nothing was written outside the project: not in the current folder, not in the source
    assert [p for p in listing(tmp_path) if not p.startswith("proj")] == around


@pytest.fixture
def recipe_folder(tmp_path):
    return recipe(
        tmp_path / "recipe",
        {"sync.sh": ("#!/bin/sh\necho sync\n", "0755"), "rules.md": ("rule 1\n", "0644")},
    )


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda s: s.name)
def test_refresh_with_relative_paths(tmp_path, recipe_folder, spelling, tether):
    host = tmp_path / "proj"
    host.mkdir()
    cwd = tmp_path / spelling.cwd
    cwd.mkdir(exist_ok=True)
    source = spelled_source(str(recipe_folder), spelling, cwd)
    where = spelling.project_args

    code, doc = tether(cwd, "init", "--profile", "gbrain", "--source", source, *where)
    assert code == 0, doc
    assert (host / "tools/gbrain/rules.md").read_text() == "rule 1\n"
    record = json.loads((host / ".tether/gbrain/state.json").read_text())
    relative = os.path.relpath(recipe_folder, host)
    assert record["source"] == (relative if spelling.relative_source else str(recipe_folder))

    write_files(recipe_folder, {"src/rules.md": "rule 1, refreshed\n"})
    code, doc = tether(cwd, "refresh", "--yes", *where)
    assert code == 0, doc
    assert doc["files"]["tools/gbrain/rules.md"] == "unchanged-stale"
    assert (host / "tools/gbrain/rules.md").read_text() == "rule 1, refreshed\n"
    code, doc = tether(cwd, "status", *where)
    assert (code, doc["profile"], doc["modified"]) == (0, "gbrain", [])
