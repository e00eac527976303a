"""Every ``--json`` document validates against its schema under ``schemas/``.

Each case builds a real project, release shelf, registry, repository or GSD install in
a folder of its own, runs one command with ``--json`` in its own process (forked from the
test's) and validates what it printed. Besides the schema, every document tether defines must carry
``schema_version`` and spell every key in snake_case; the documents a specification fixes
(docs/cli.md, "JSON documents") keep their own shape.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import pytest

from builders import SCHEMAS, call, git, make_release, run_forked, schema_validator, write_files
from tests.architecture.test_architecture_json_names import DATA_KEYED, banned_keys
from tether.errors import MERGE_DRIVER_CONFLICTS, SNAPSHOT_CHANGED, VERIFY_LINES_LOST, Exit
from tether.report.documents import SCHEMA_VERSION
from tether.state import crashpoint

DEPS_FIXTURES = Path(__file__).parents[1] / "fixtures" / "deps"
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
# Each command taking --json and the schemas its documents follow (errors: error.json).
SCHEMA_OF: dict[str, tuple[str, ...]] = {
    "init": ("init",),
    "status": ("status",),
    "check": ("check",),
    "diff": ("diff",),
    "own": ("own",),
    "update": ("update-report",),
    "refresh": ("update-report",),
    "pr": ("pr",),
    "changelog": ("changelog",),
    "manifest build": ("manifest-build",),
    "release pack": ("release-pack",),
    "merge-fields": ("merge-fields",),
    "merge-driver": ("merge-driver",),
    "verify": ("verify",),
    "region-compare": ("region-compare",),
    "demo": ("demo",),
    "snapshot": ("snapshot",),
    "snapshot check": ("snapshot-check",),
    "reapply": ("reapply", "reapply-save"),
    "projects add": ("projects-add",),
    "projects list": ("projects-list",),
    "projects show": ("projects-show",),
    "projects remove": ("projects-remove",),
    "fleet status": ("fleet-status",),
    "fleet update": ("fleet-update",),
    "campaign start": ("campaign",),
    "campaign run": ("campaign",),
    "campaign status": ("campaign",),
    "campaign push": ("campaign",),
    "campaign pr": ("campaign",),
    "campaign close": ("campaign",),
    "campaign retry": ("campaign",),
    "deps scan": ("deps-scan",),
    "deps plan": ("deps-plan",),
    "deps apply": ("deps-apply",),
    "deps notes": ("deps-notes",),
    "deps dossier": ("deps-dossier",),
    "audit scope": ("audit-scope",),
    "audit shell": ("audit-shell",),
    "audit findings write": ("audit-findings",),
    "audit digest": ("audit-digest",),
    "audit clear": ("audit-clear",),
    "audit gate": ("audit-gate",),
    "completion": ("completion",),
    "migrations": ("migrations",),
}
# Schemas of files a publisher writes (not --json documents), each checked by its own tests.
INPUT_SCHEMAS = {"lifecycle"}


@dataclass
class Case:
    argv: list[str]
    exit: int
    schema: str
    spec_fixed: bool = False  # the shape belongs to a specification: no schema_version


Made = TypeVar("Made")


@dataclass
class Stages:
    """The worlds stages were built into, copied (``copies/<stage>``), and what each build
    returned; one per test process."""

    copies: Path
    made: dict[str, Any] = field(default_factory=dict)


@dataclass
class World:
    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    stages: Stages

    def staged(self, stage: str, build: Callable[[], Made]) -> Made:
        """What ``build`` makes in this world, empty, built once per test process and copied
        in by each case that starts from it. Every case's world is the same folder
        (``world`` below), so the absolute paths held by what was built (a repository's
        remote, a worktree's git folder, a campaign's records) name the copy's own files.
        ``build`` changes the world's files only (not the environment, not the world's
        ``monkeypatch``)."""
        assert not any(self.tmp.iterdir()), f"stage {stage}: the world is not empty"
        if stage in self.stages.made:
            shutil.copytree(self.stages.copies / stage, self.tmp, symlinks=True, dirs_exist_ok=True)
        else:
            made = build()
            shutil.copytree(self.tmp, self.stages.copies / stage, symlinks=True)
            self.stages.made[stage] = made
        return copy.deepcopy(self.stages.made[stage])

    def shelf(self) -> Path:
        """Releases 1.0.0 and 1.1.0; 1.1.0 changes both files and adds one."""
        shelf = self.tmp / "rel"
        if not shelf.exists():
            make_release(shelf, "1.0.0", {"a.txt": "a\n", "c.txt": "x\ny\nz\n"})
            make_release(shelf, "1.1.0", {"a.txt": "a2\n", "c.txt": "x\nY\nz\n", "n.txt": "new\n"})
        return shelf

    def project(self, name: str = "proj", *, repo: bool = False) -> Path:
        root = self.tmp / name
        root.mkdir()
        if repo:
            git(root, "init", "-q", "-b", "main")
        assert call("init", "--source", str(self.shelf()), "--to", "1.0.0", "-C", str(root)) == 0
        if repo:
            git(root, "add", "-A")
            git(root, "commit", "-qm", "install 1.0.0")
        return root

    def registry(self, *projects: Path) -> Path:
        path = self.tmp / "projects.json"
        self.monkeypatch.setenv("TETHER_REGISTRY", str(path))
        for project in projects:
            assert call("projects", "add", str(project)) == 0
        return path


CASES: dict[str, Callable[[World], Case]] = {}


def case(name: str) -> Callable[[Callable[[World], Case]], Callable[[World], Case]]:
    def register(build: Callable[[World], Case]) -> Callable[[World], Case]:
        CASES[name] = build
        return build

    return register


# --- one project -------------------------------------------------------------------------


@case("init")
def _init(w: World) -> Case:
    target = w.tmp / "fresh"
    return Case(["init", "--source", str(w.shelf()), "--to", "1.0.0", "-C", str(target)], 0, "init")


@case("init-existing")
def _init_existing(w: World) -> Case:
    """Into a project that has one of the release's files and lacks the other."""
    target = w.tmp / "existing"
    write_files(target, {"a.txt": "a\n"})
    return Case(["init", "--source", str(w.shelf()), "-C", str(target)], 0, "init")


@case("status")
def _status(w: World) -> Case:
    project = w.project()
    (project / "a.txt").write_text("mine\n")
    return Case(["status", "--check-latest", "-C", str(project)], 0, "status")


@case("check")
def _check(w: World) -> Case:
    project = w.project()
    return Case(["check", "--check-latest", "-C", str(project)], Exit.FOUND, "check")


@case("status-local")
def _status_local(w: World) -> Case:
    """Without --check-latest nobody asked the source: latest_version is null."""
    return Case(["status", "-C", str(w.project())], 0, "status")


@case("check-local")
def _check_local(w: World) -> Case:
    return Case(["check", "-C", str(w.project())], 0, "check")


@case("own")
def _own(w: World) -> Case:
    project = w.project()
    (project / "c.txt").unlink()
    return Case(["own", "-C", str(project), "a.txt", "c.txt"], 0, "own")


@case("status-yours")
def _status_yours(w: World) -> Case:
    project = w.project()
    assert call("own", "-C", str(project), "a.txt") == 0
    return Case(["status", "-C", str(project)], 0, "status")


@case("diff")
def _diff(w: World) -> Case:
    project = w.project()
    (project / "c.txt").write_text("x\nmine\nz\n")
    return Case(["diff", "--exit-code", "-C", str(project)], Exit.FOUND, "diff")


@case("update-plan")
def _update_plan(w: World) -> Case:
    project = w.project()
    return Case(["update", "--dry-run", "-C", str(project)], 0, "update-report")


@case("update-applied")
def _update_applied(w: World) -> Case:
    project = w.project()
    (project / "c.txt").write_text("x\nmine\nz\n")
    return Case(["update", "--yes", "-C", str(project)], Exit.CONFLICTS, "update-report")


@case("update-up-to-date")
def _update_up_to_date(w: World) -> Case:
    project = w.project()
    assert call("update", "--yes", "-C", str(project)) == 0
    return Case(["update", "--yes", "-C", str(project)], 0, "update-report")


@case("update-abandoned")
def _update_abandoned(w: World) -> Case:
    project = w.project(repo=True)
    crashed = run_forked("update", "--yes", "-C", str(project), crash="file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    return Case(["update", "--abandon", "-C", str(project)], 0, "update-report")


@case("pr")
def _pr(w: World) -> Case:
    from helpers_gh import add_origin

    project = w.project(repo=True)
    add_origin(project, w.tmp, w.monkeypatch)  # gh is a stand-in script that records its argv
    assert call("update", "--yes", "-C", str(project)) == 0
    git(project, "commit", "-qam", "update to 1.1.0")
    return Case(["pr", "-C", str(project)], 0, "pr")


@case("refresh")
def _refresh(w: World) -> Case:
    recipe = w.tmp / "recipe"
    manifest = {
        "recipe": "brain-sync",
        "gbrain_version": "0.4.0",
        "target_root_relative_to_host_repo": "tools/gbrain",
        "files": [{"src": "src/rules.md", "target": "rules.md", "mode": "0644"}],
    }
    write_files(
        recipe,
        {"src/rules.md": "one\n", "install/manifest.json": json.dumps(manifest, indent=2)},
    )
    host = w.tmp / "host"
    host.mkdir()
    assert call("init", "--profile", "gbrain", "--source", str(recipe), "-C", str(host)) == 0
    (recipe / "src/rules.md").write_text("two\n")
    return Case(["refresh", "--yes", "-C", str(host)], 0, "update-report")


@case("changelog")
def _changelog(w: World) -> Case:
    path = w.tmp / "CHANGELOG.md"
    path.write_text(
        "# Changelog\n\n## 1.1.0 - 2025-02-01\n\n- Removed `old.sh`; run `rm old.sh`.\n\n"
        "## 1.0.0 - 2025-01-01\n\n- First.\n"
    )
    return Case(
        ["changelog", "--from", "1.0.0", "--to", "1.1.0", "--file", str(path)], 0, "changelog"
    )


# --- publishers ------------------------------------------------------------------------------


def upstream(w: World) -> Path:
    root = w.tmp / "upstream"
    write_files(
        root,
        {
            "tether.toml": 'name = "acme-kit"\nversion = "1.0.0"\ndefault_class = "shared"\n',
            "a.txt": "a\n",
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "kit")
    return root


@case("manifest-build")
def _manifest_build(w: World) -> Case:
    return Case(["manifest", "build", "-C", str(upstream(w))], 0, "manifest-build")


@case("release-pack")
def _release_pack(w: World) -> Case:
    root = upstream(w)
    assert call("manifest", "build", "-C", str(root)) == 0
    return Case(["release", "pack", "--version", "1.0.0", "-C", str(root)], 0, "release-pack")


# --- single files ----------------------------------------------------------------------------


def three_sides(w: World, base: str, latest: str, current: str) -> list[str]:
    paths = []
    for name, text in (("baseline", base), ("latest", latest), ("current", current)):
        path = w.tmp / name / "package.json"
        path.parent.mkdir()
        path.write_text(text)
        paths.append(str(path))
    return paths


@case("merge-fields")
def _merge_fields(w: World) -> Case:
    base, latest, current = three_sides(
        w,
        '{"name": "p", "packageManager": "pnpm@9.0.0"}\n',
        '{"name": "p", "packageManager": "pnpm@9.1.0"}\n',
        '{"name": "mine", "packageManager": "pnpm@9.0.0"}\n',
    )
    argv = ["merge-fields", "--preset", "npm-package", "--baseline", base]
    return Case([*argv, "--latest", latest, "--current", current], 0, "merge-fields", True)


@case("merge-driver")
def _merge_driver(w: World) -> Case:
    base, latest, current = three_sides(w, "a\nb\nc\n", "a\ntheirs\nc\n", "a\nmine\nc\n")
    return Case(
        ["merge-driver", base, current, latest, "notes.txt"],
        MERGE_DRIVER_CONFLICTS,
        "merge-driver",
    )


@case("verify")
def _verify(w: World) -> Case:
    base, ours, result = three_sides(w, "a\nb\n", "a\nb\nmine\n", "a\nb\n")
    return Case(
        ["verify", "--baseline", base, "--current", ours, "--result", result],
        VERIFY_LINES_LOST,
        "verify",
    )


@case("region-compare")
def _region_compare(w: World) -> Case:
    start, end = "<!-- gen:start -->", "<!-- gen:end -->"
    body = f"head\n{start}\n{{}}\n{end}\ntail\n"
    base, latest, current = three_sides(
        w, body.format("one"), body.format("two"), body.format("one").replace("tail", "mine")
    )
    argv = ["region-compare", "--baseline", base, "--latest", latest, "--current", current]
    return Case([*argv, "--start-marker", start, "--end-marker", end], 0, "region-compare", True)


@case("demo")
def _demo(w: World) -> Case:
    return Case(["demo", "-C", str(w.tmp / "demo")], 0, "demo")


@case("snapshot")
def _snapshot(w: World) -> Case:
    tree = w.tmp / "tree"
    write_files(tree, {"a.txt": "a\n"})
    return Case(["snapshot", "-C", str(tree), "--out", str(w.tmp / "snap.json")], 0, "snapshot")


@case("snapshot-check")
def _snapshot_check(w: World) -> Case:
    tree = w.tmp / "tree"
    write_files(tree, {"a.txt": "a\n"})
    snap = w.tmp / "snap.json"
    assert call("snapshot", "-C", str(tree), "--out", str(snap)) == 0
    (tree / "a.txt").write_text("changed\n")
    # Commander's source-untouched check says 1 when the tree changed; tether says 3 (docs/deps.md).
    argv = ["snapshot", "check", "-C", str(tree), "--baseline", str(snap)]
    return Case(argv, SNAPSHOT_CHANGED, "snapshot-check")


# --- reapply (GSD) ---------------------------------------------------------------------------


def gsd_install(w: World) -> tuple[Path, Path, Path]:
    """An install of 1.0.0 the user changed, saved with ``reapply --save``, then 2.0.0
    installed over it; returns (target, patches, pristine)."""
    import hashlib

    v1 = "# Plan\n\n1. Read.\n2. Write.\n3. Check.\n"
    target, patches, pristine = w.tmp / "claude", w.tmp / "patches", w.tmp / "pristine"
    write_files(target, {"agents/plan.md": v1})
    write_files(pristine, {"agents/plan.md": v1})
    manifest = {
        "version": "1.0.0",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "mode": "full",
        "files": {"agents/plan.md": hashlib.sha256(v1.encode()).hexdigest()},
    }
    (target / "gsd-file-manifest.json").write_text(json.dumps(manifest))
    (target / "agents/plan.md").write_text(v1.replace("1. Read.", "1. Read twice."))
    return target, patches, pristine


@case("reapply-save")
def _reapply_save(w: World) -> Case:
    target, patches, _ = gsd_install(w)
    manifest = str(target / "gsd-file-manifest.json")
    argv = ["reapply", "--save", "-C", str(target), "--manifest", manifest]
    return Case([*argv, "--patches", str(patches)], 0, "reapply-save")


@case("reapply")
def _reapply(w: World) -> Case:
    target, patches, pristine = gsd_install(w)
    manifest = str(target / "gsd-file-manifest.json")
    save = ["reapply", "--save", "-C", str(target), "--manifest", manifest]
    assert call(*save, "--patches", str(patches)) == 0
    (target / "agents/plan.md").write_text("# Plan\n\n1. Read.\n2. Write.\n3. Check.\n4. Ship.\n")
    argv = ["reapply", "--patches", str(patches), "-C", str(target)]
    return Case([*argv, "--pristine", str(pristine)], 0, "reapply")


# --- projects, fleet ---------------------------------------------------------------------------


@case("projects-add")
def _projects_add(w: World) -> Case:
    w.registry()
    return Case(["projects", "add", str(w.project()), "--keyword", "web"], 0, "projects-add")


@case("projects-list")
def _projects_list(w: World) -> Case:
    w.registry(w.project())
    return Case(["projects", "list"], 0, "projects-list")


@case("projects-show")
def _projects_show(w: World) -> Case:
    w.registry(w.project())
    return Case(["projects", "show", "proj"], 0, "projects-show")


@case("projects-remove")
def _projects_remove(w: World) -> Case:
    w.registry(w.project())
    return Case(["projects", "remove", "proj"], 0, "projects-remove")


@case("fleet-status")
def _fleet_status(w: World) -> Case:
    w.registry(w.project("p1"), w.project("p2"))
    return Case(["fleet", "status"], 0, "fleet-status")


@case("fleet-status-empty")
def _fleet_status_empty(w: World) -> Case:
    """Nothing selected: the command's own document, with no project in it."""
    w.registry()
    return Case(["fleet", "status"], 0, "fleet-status")


@case("fleet-update-empty")
def _fleet_update_empty(w: World) -> Case:
    w.registry()
    return Case(["fleet", "update", "--yes"], 0, "fleet-update")


@case("deps-apply-empty")
def _deps_apply_empty(w: World) -> Case:
    w.registry()
    return Case(["deps", "apply", "--level", "minor", "--yes"], 0, "deps-apply")


def campaign_registry(w: World) -> Path:
    """Two repositories served as file:// remotes (bare clones) in a registry of remote
    entries; p2 changed the line the release changes too. Built once (``World.staged``)."""
    return w.tmp / w.staged("campaign-registry", lambda: _campaign_registry(w))


def _campaign_registry(w: World) -> str:
    p1, p2 = w.project("p1", repo=True), w.project("p2", repo=True)
    (p2 / "c.txt").write_text("x\nmine\nz\n")
    git(p2, "commit", "-qam", "local edit")
    projects = {}
    for project in (p1, p2):
        bare = w.tmp / "remotes" / f"{project.name}.git"
        git(w.tmp, "clone", "-q", "--bare", str(project), str(bare))
        projects[project.name] = {"name": project.name, "url": bare.as_uri()}
    path = w.tmp / "campaign-registry.json"
    path.write_text(json.dumps({"version": 2, "projects": projects}))
    return path.name


def campaign_start(w: World) -> list[str]:
    registry = campaign_registry(w)
    return [
        "campaign",
        "start",
        "c1",
        "--upstream",
        "acme-kit",
        "--to",
        "1.1.0",
        "--registry",
        str(registry),
        "--dir",
        str(w.tmp / "campaigns"),
    ]


@case("campaign-start")
def _campaign_start(w: World) -> Case:
    return Case(campaign_start(w), 0, "campaign")


def campaign_started(w: World) -> None:
    """The campaign of campaign_start, started. Built once (``World.staged``)."""

    def build() -> None:
        assert call(*campaign_start(w)) == 0

    w.staged("campaign-started", build)


@case("campaign-run")
def _campaign_run(w: World) -> Case:
    campaign_started(w)
    argv = ["campaign", "run", "c1", "--dir", str(w.tmp / "campaigns"), "-j", "1"]
    return Case(argv, Exit.CONFLICTS, "campaign")


@case("campaign-status")
def _campaign_status(w: World) -> Case:
    named = campaign_ran(w)
    return Case(["campaign", "status", *named], 0, "campaign")


def campaign_ran(w: World, *start: str) -> list[str]:
    """The campaign of campaign_start, run; the arguments that name it. Built once for each
    ``start`` (``World.staged``)."""

    def build() -> list[str]:
        assert call(*campaign_start(w), *start) == 0
        assert (
            call("campaign", "run", "c1", "--dir", str(w.tmp / "campaigns"), "-j", "1")
            == Exit.CONFLICTS
        )
        return ["c1", "--dir", str(w.tmp / "campaigns")]

    return w.staged(" ".join(("campaign-ran", *start)), build)


@case("campaign-push")
def _campaign_push(w: World) -> Case:
    return Case(["campaign", "push", *campaign_ran(w, "--on-conflict", "commit")], 0, "campaign")


@case("campaign-pr")
def _campaign_pr(w: World) -> Case:
    from helpers_gh import install_gh_store

    named = campaign_ran(w, "--on-conflict", "commit")  # starting and running ask gh nothing
    install_gh_store(w.tmp, w.monkeypatch)  # gh is a stand-in script that records its argv
    # Both committed, one pull request allowed: it stops with work left (a `stopped` part).
    return Case(["campaign", "pr", *named, "--max-open-prs", "1"], Exit.FOUND, "campaign")


@case("campaign-status-refresh")
def _campaign_status_refresh(w: World) -> Case:
    from helpers_gh import install_gh_store

    named = campaign_ran(w)  # starting and running ask gh nothing
    gh = install_gh_store(w.tmp, w.monkeypatch)  # gh is a stand-in script
    assert call("campaign", "pr", *named) == Exit.CONFLICTS
    gh.set_state(1, "MERGED")
    return Case(["campaign", "status", *named, "--refresh"], 0, "campaign")


@case("campaign-close")
def _campaign_close(w: World) -> Case:
    return Case(["campaign", "close", *campaign_ran(w)], 0, "campaign")


@case("campaign-retry")
def _campaign_retry(w: World) -> Case:
    return Case(["campaign", "retry", *campaign_ran(w), "--failed"], Exit.CONFLICTS, "campaign")


@case("campaign-run-waves")
def _campaign_run_waves(w: World) -> Case:
    campaign_started(w)
    argv = ["campaign", "run", "c1", "--dir", str(w.tmp / "campaigns"), "-j", "1"]
    argv += ["--canary", "1", "--wave-size", "1", "--pause", "0s"]
    return Case(argv, Exit.CONFLICTS, "campaign")


@case("campaign-run-canary-stop")
def _campaign_run_canary_stop(w: World) -> Case:
    campaign_started(w)
    argv = ["campaign", "run", "c1", "--dir", str(w.tmp / "campaigns"), "-j", "1", "--canary", "2"]
    return Case(argv, Exit.ERROR, "campaign")


@case("campaign-status-html")
def _campaign_status_html(w: World) -> Case:
    campaign_started(w)
    argv = ["campaign", "status", "c1", "--dir", str(w.tmp / "campaigns")]
    return Case([*argv, "--html", str(w.tmp / "status.html")], 0, "campaign")


@case("fleet-update")
def _fleet_update(w: World) -> Case:
    p1, p2 = w.project("p1", repo=True), w.project("p2", repo=True)
    (p2 / "c.txt").write_text("x\nmine\nz\n")
    git(p2, "commit", "-qam", "local edit")
    w.registry(p1, p2)
    return Case(["fleet", "update", "--yes", "--isolate", "none"], Exit.CONFLICTS, "fleet-update")


@case("fleet-update-dry-run")
def _fleet_update_dry_run(w: World) -> Case:
    w.registry(w.project("p1"))
    return Case(["fleet", "update", "--dry-run"], 0, "fleet-update")


# --- deps ------------------------------------------------------------------------------------


def deps_projects(w: World) -> list[str]:
    for name, deps in (("web", {"alpha": "^1.0.0", "beta": "0.1.0"}), ("api", {"alpha": "~1.0.0"})):
        package = {"name": name, "dependencies": deps}
        write_files(w.tmp / name, {"package.json": json.dumps(package, indent=2) + "\n"})
    (w.tmp / "gone").mkdir()
    w.registry(w.tmp / "web", w.tmp / "api", w.tmp / "gone")
    (w.tmp / "gone").rmdir()  # a registered path that went away
    return [
        "--npm-registry",
        str(DEPS_FIXTURES / "npm"),
        "--pypi-index",
        str(DEPS_FIXTURES / "pypi"),
    ]


@case("deps-scan")
def _deps_scan(w: World) -> Case:
    return Case(["deps", "scan", "--level", "minor", *deps_projects(w)], 0, "deps-scan")


@case("deps-plan")
def _deps_plan(w: World) -> Case:
    return Case(["deps", "plan", "--level", "minor", *deps_projects(w)], 0, "deps-plan")


def deps_plan_folder(w: World) -> str:
    """A plan folder from ``deps plan --deep`` (the fixture packages name no repository, so
    ``deps notes`` records that and asks no server)."""
    assert call("deps", "plan", "--level", "minor", "--deep", *deps_projects(w)) == 0
    (folder,) = (w.tmp / "state" / "tether" / "plans").iterdir()
    return str(folder)


@case("deps-plan-deep")
def _deps_plan_deep(w: World) -> Case:
    argv = ["deps", "plan", "--level", "minor", "--deep", *deps_projects(w)]
    return Case(argv, 0, "deps-plan")


@case("deps-notes")
def _deps_notes(w: World) -> Case:
    return Case(["deps", "notes", "--plan-dir", deps_plan_folder(w)], 0, "deps-notes")


@case("deps-dossier")
def _deps_dossier(w: World) -> Case:
    folder = deps_plan_folder(w)
    assert call("deps", "notes", "--plan-dir", folder) == 0
    return Case(["deps", "dossier", "--level", "minor"], 0, "deps-dossier")


@case("deps-apply")
def _deps_apply(w: World) -> Case:
    registries = deps_projects(w)
    argv = ["deps", "apply", "--level", "minor", "--yes", "--no-install"]
    return Case([*argv, "--conflict-policy", "per-project", *registries], 0, "deps-apply")


# --- audit -----------------------------------------------------------------------------------

ROSTER = 'members:\n  - name: shell\n    globs: ["scripts/**"]\n'


def audit_repo(w: World) -> Path:
    """A repository whose branch ``feature`` adds a script. Built once (``World.staged``)."""
    return w.tmp / w.staged("audit-repo", lambda: _audit_repo(w))


def _audit_repo(w: World) -> str:
    repo = w.tmp / "repo"
    write_files(repo, {".tether/audit.yml": ROSTER, "scripts/a.sh": "#!/bin/sh\necho a\n"})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "switch", "-q", "-c", "feature")
    write_files(repo, {"scripts/b.sh": "#!/bin/bash\necho $1\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feature")
    return repo.name


@case("audit-scope")
def _audit_scope(w: World) -> Case:
    repo = audit_repo(w)
    return Case(["audit", "scope", "-C", str(repo), "--base-ref", "main"], 0, "audit-scope")


@case("audit-shell")
def _audit_shell(w: World) -> Case:
    repo = audit_repo(w)
    argv = ["audit", "shell", "-C", str(repo), "--base-ref", "main", "--member", "shell"]
    return Case([*argv, "--no-cache"], 0, "audit-shell")


@case("audit-findings-write")
def _audit_findings(w: World) -> Case:
    repo = audit_repo(w)
    findings = w.tmp / "findings.json"
    findings.write_text("[]")
    head = git(repo, "rev-parse", "main").strip()
    argv = ["audit", "findings", "write", "-C", str(repo), "--member", "shell"]
    return Case([*argv, "--base-ref", head, "--findings", str(findings)], 0, "audit-findings")


@case("audit-digest")
def _audit_digest(w: World) -> Case:
    repo = audit_repo(w)
    return Case(["audit", "digest", "-C", str(repo), "--member", "shell"], 0, "audit-digest")


@case("audit-clear")
def _audit_clear(w: World) -> Case:
    repo = audit_repo(w)
    findings = w.tmp / "findings.json"
    findings.write_text("[]")
    head = git(repo, "rev-parse", "main").strip()
    sidecar = ["audit", "findings", "write", "-C", str(repo), "--member", "shell"]
    assert call("audit", "scope", "-C", str(repo), "--member", "shell") == 0  # starts the round
    assert call(*sidecar, "--base-ref", head, "--findings", str(findings)) == 0  # clear needs it
    argv = ["audit", "clear", "-C", str(repo), "--member", "shell"]
    return Case([*argv, "--provenance", "earned"], 0, "audit-clear")


@case("audit-gate")
def _audit_gate(w: World) -> Case:
    repo = audit_repo(w)
    return Case(["audit", "gate", "-C", str(repo), "--members", "shell"], Exit.FOUND, "audit-gate")


@case("migrations")
def _migrations(w: World) -> Case:
    import tests.lifecycle.test_lifecycle_migrations as lifecycle

    shelf = lifecycle.shelf_with(w.tmp, lifecycle.DECLARED, lifecycle.SCRIPTS)
    project = lifecycle.installed(w.tmp, shelf)
    assert lifecycle.update(project, "--to", "1.5.0")[0] == 0
    return Case(["migrations", "-C", str(project)], 0, "migrations")


@case("completion")
def _completion(w: World) -> Case:
    return Case(["completion", "bash"], 0, "completion")


# --- errors ----------------------------------------------------------------------------------


@case("error-usage")
def _error_usage(w: World) -> Case:
    return Case(["update", "--dryrun"], Exit.USAGE, "error")


@case("error-run")
def _error_run(w: World) -> Case:
    return Case(["status", "-C", str(w.tmp / "nowhere")], Exit.ERROR, "error")


# --- the test --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stages(tmp_path_factory: pytest.TempPathFactory) -> Stages:
    return Stages(tmp_path_factory.mktemp("stages"))


@pytest.fixture
def world(
    tmp_path_factory: pytest.TempPathFactory, stages: Stages, monkeypatch: pytest.MonkeyPatch
) -> Iterator[World]:
    """One folder for every case of the test process, emptied before each (see
    ``World.staged``); the last case's stays for a look."""
    tmp_path = tmp_path_factory.getbasetemp() / "world"
    if tmp_path.exists():
        shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    # The commands run as their own processes and inherit this environment: no developer's
    # git config, registry or state folders.
    for name, value in {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TETHER_REGISTRY": str(tmp_path / "projects.json"),
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("npm_config_registry", "PIP_INDEX_URL", "SHELLCHECK_OPTS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield World(tmp_path, monkeypatch, stages)


def run_json(argv: list[str]) -> tuple[int, Any]:
    done = run_forked(*argv, "--json")
    return done.returncode, json.loads(done.stdout)  # one document and nothing else


def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / f"{name}.json").read_text())
    return data


def keys_not_snake(value: Any, schema_name: str, path: tuple[str, ...] = ()) -> list[str]:
    """Every key (with where it is) that is not snake_case, outside data-keyed objects."""
    found: list[str] = []
    if isinstance(value, dict):
        data_keyed = (schema_name, path) in DATA_KEYED
        for key, item in value.items():
            if not data_keyed and not SNAKE.match(key):
                found.append("/".join((*path, key)))
            found += keys_not_snake(item, schema_name, (*path, key))
    elif isinstance(value, list):
        for item in value:
            found += keys_not_snake(item, schema_name, path)
    return found


def folders_named_path(value: Any) -> list[str]:
    """Every ``path`` that names a folder on disk: a folder is ``project_dir`` or another
    ``*_dir`` (docs/cli.md, "One name per concept"); ``path`` is a file's."""
    if isinstance(value, dict):
        found = [
            item
            for key, item in value.items()
            if key == "path" and isinstance(item, str) and os.path.isabs(item)
            if Path(item).is_dir()
        ]
        return found + [f for item in value.values() for f in folders_named_path(item)]
    if isinstance(value, list):
        return [f for item in value for f in folders_named_path(item)]
    return []


def command_named_by(case_name: str) -> str:
    """The command a case is named for: the longest command of ``SCHEMA_OF`` whose words,
    joined by ``-``, begin the name (``deps-plan-deep`` runs ``deps plan``); "" for none."""
    named = [
        command
        for command in SCHEMA_OF
        if f"{case_name}-".startswith(f"{command.replace(' ', '-')}-")
    ]
    return max(named, key=len, default="")


@pytest.mark.parametrize("name", CASES)
def test_json_document_validates_against_its_schema(name: str, world: World) -> None:
    made = CASES[name](world)
    code, doc = run_json(made.argv)
    assert code == made.exit, doc
    if made.schema != "error":
        assert command_of(made.argv) == command_named_by(name)  # what the name says it runs
        assert made.schema in SCHEMA_OF[command_of(made.argv)]
    schema_validator(made.schema).validate(doc)
    if made.spec_fixed:
        assert "schema_version" not in doc
        return
    assert next(iter(doc)) == "schema_version" and doc["schema_version"] == SCHEMA_VERSION
    assert keys_not_snake(doc, made.schema) == []
    assert banned_keys(doc, made.schema) == []  # one name per concept
    assert folders_named_path(doc) == []


@functools.cache
def full_parser() -> argparse.ArgumentParser:
    """Every command's parser, built once per process (parsing never changes it)."""
    from tether.cli.main import build_full_parser

    return build_full_parser()


def command_of(argv: list[str]) -> str:
    """The (sub)command an argument list runs: ``["audit", "findings", "write", ...]``."""
    parser, words = full_parser(), []
    for word in argv:
        choices = _subcommands(parser)
        if word not in choices:
            break
        parser, words = choices[word], [*words, word]
    return " ".join(words)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _json_commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[str]:
    found = [" ".join(words)] if any("--json" in a.option_strings for a in parser._actions) else []
    for word, sub in _subcommands(parser).items():
        found += _json_commands(sub, (*words, word))
    return found


def test_every_command_with_json_has_a_schema() -> None:
    """A new command (or subcommand) taking --json needs a case here, and so a schema."""
    from tether.cli.main import build_full_parser

    assert sorted(_json_commands(build_full_parser())) == sorted(SCHEMA_OF)


def test_every_command_with_a_schema_has_a_real_run_case() -> None:
    """Each command of the table is run for real by at least one case, its ``--json``
    document validated against the schema (each case runs the command its name begins with,
    held by test_json_document_validates_against_its_schema)."""
    run = {command_named_by(name) for name in CASES}
    assert [command for command in SCHEMA_OF if command not in run] == []


def test_a_case_is_named_for_the_command_it_runs() -> None:
    assert command_named_by("deps-plan-deep") == "deps plan"
    assert command_named_by("snapshot-check") == "snapshot check"
    assert command_named_by("snapshot") == "snapshot"
    assert command_named_by("fleet-update-dry-run") == "fleet update"
    assert command_named_by("error-usage") == ""


def test_every_schema_is_used_and_valid() -> None:
    used = {"error", *INPUT_SCHEMAS, *(name for names in SCHEMA_OF.values() for name in names)}
    on_disk = {path.stem for path in SCHEMAS.glob("*.json")}
    assert on_disk == used
    for name in on_disk:
        jsonschema.Draft202012Validator.check_schema(schema(name))


def test_a_schema_rejects_a_document_of_the_wrong_shape() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": 1, "error": {"message": 3}}, schema("error"))
