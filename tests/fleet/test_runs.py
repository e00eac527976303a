"""What ``fleet`` and ``deps`` share (``tether.runs``): selection, isolation, the run folder and
the failed-project section, seen the same from both commands.

Real projects: git repositories built with ``tether init`` that also carry a package.json, a
real registry file, and npm packuments served by a loopback registry on 127.0.0.1. Every test
runs the same situation through ``fleet`` and through ``deps`` and compares what they say.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from builders import call, git, make_release, schema_validator
from fixtures.deps.kit import registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.errors import Exit
from tether.report.runs import isolation_line, isolation_note, unavailable
from tether.runs.isolation import IsolationNote, Target, Unavailable, isolate
from tether.runs.selection import EMPTY_REGISTRY, NO_MATCH

FLEET_BRANCH = "chore/update-acme-kit-1.1.0"
DEPS_BRANCH = "deps/minor-2025-06-01"  # the kit's clock stands at 2025-06-01
FAILURE_KEYS = {"name", "project_dir", "step", "exit_code", "error", "log", "log_tail"}
ISOLATION_KEYS = {"name", "requested", "used", "project_dir", "branch", "worktree_dir", "note"}
FAIL = f"{sys.executable} -c \"import sys; print('codemod failed'); sys.exit(3)\""


@dataclass
class World:
    tmp: Path
    shelf: Path
    server: LoopbackRegistry
    registry: Path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry) -> World:
    setup_cli(monkeypatch, tmp_path)
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\n"})
    make_release(shelf, "1.1.0", {"a.txt": "a2\n", "n.txt": "new\n"})
    return World(tmp_path, shelf, server, tmp_path / "projects.json")


def project(world: World, name: str, *, repo: bool = True) -> Path:
    """A tethered project (acme-kit 1.0.0) that also depends on alpha ^1.0.0."""
    root = world.tmp / name
    root.mkdir()
    if repo:
        git(root, "init", "-q", "-b", "main")
    assert call("init", "--source", str(world.shelf), "--to", "1.0.0", "-C", str(root)) == 0
    package = {"name": name, "dependencies": {"alpha": "^1.0.0"}}
    (root / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    (root / "package-lock.json").write_text("{}\n")
    if repo:
        git(root, "add", "-A")
        git(root, "commit", "-qm", "start")
    return root


def register(
    world: World, roots: dict[str, Path], keywords: dict[str, list[str]] | None = None
) -> Path:
    return registry_file(world.registry, roots, keywords)


def fleet(world: World, *args: str) -> list[str]:
    return ["fleet", *args, "--registry", str(world.registry)]


def deps(world: World, *args: str) -> list[str]:
    server = world.server
    return [
        "deps",
        *args,
        "--registry",
        str(world.registry),
        "--npm-registry",
        server.url,
        "--pypi-index",
        server.url + "/pypi",
    ]


def apply_command(world: World, command: str, *args: str) -> list[str]:
    """The writing command of each: the fleet update, or a deps apply at the minor level."""
    if command == "fleet":
        return fleet(world, "update", "--yes", *args)
    return deps(world, "apply", "--level", "minor", "--yes", "--no-install", *args)


def isolation_of(doc: dict[str, Any], command: str) -> dict[str, Any]:
    section = doc["summary"]["isolation"] if command == "fleet" else doc["isolation"]
    return dict(section)


def branch(root: Path) -> str:
    return git(root, "branch", "--show-current").strip()


def untouched(root: Path, head: str) -> bool:
    """The checkout is as it was: same commit, no tracked file changed, nothing new
    (tether's own cache is git-ignored, and planning may fill it)."""
    return git(root, "rev-parse", "HEAD") == head and git(root, "status", "--porcelain") == ""


# --- selection -------------------------------------------------------------------------------

SELECTING = {
    "fleet status": ("fleet", "status"),
    "fleet update": ("fleet", "update", "--yes"),
    "deps scan": ("deps", "scan", "--level", "minor"),
    "deps plan": ("deps", "plan", "--level", "minor"),
    "deps apply": ("deps", "apply", "--level", "minor", "--yes"),
}


def selecting(world: World, name: str, *extra: str) -> list[str]:
    command, *rest = SELECTING[name]
    build = fleet if command == "fleet" else deps
    return build(world, *rest, *extra)


# The schema of each selecting command's document, whatever it selected, and the list in it
# that holds what was worked on.
SCHEMA_OF_SELECTING = {
    "fleet status": ("fleet-status", "projects"),
    "fleet update": ("fleet-update", "projects"),
    "deps scan": ("deps-scan", "projects"),
    "deps plan": ("deps-plan", "packages"),
    "deps apply": ("deps-apply", "applied"),
}


@pytest.mark.parametrize("name", list(SELECTING))
def test_nothing_selected_keeps_the_commands_own_document(world: World, name: str) -> None:
    register(world, {"p1": project(world, "p1", repo=False)}, {"p1": ["web"]})
    schema, worked_on = SCHEMA_OF_SELECTING[name]
    code, doc = run_json(*selecting(world, name, "--keyword", "api"))
    assert code == 0
    schema_validator(schema).validate(doc)  # the command's own shape
    assert doc[worked_on] == [] and "message" not in doc
    code, out, _ = run_cli(*selecting(world, name, "--keyword", "api"))
    assert (code, out) == (0, f"{NO_MATCH}\n")

    register(world, {})
    code, doc = run_json(*selecting(world, name))
    assert code == 0 and doc[worked_on] == []
    schema_validator(schema).validate(doc)
    assert run_cli(*selecting(world, name))[:2] == (0, f"{EMPTY_REGISTRY}\n")
    assert not (world.tmp / "state").exists()  # no run folder for a run that did not start


@pytest.mark.parametrize("name", list(SELECTING))
def test_an_unknown_project_name_is_an_error_everywhere(world: World, name: str) -> None:
    """A typo in --projects must not run a command on fewer projects than were meant: one
    line naming the registry and every unknown name, exit 1, nothing read or run."""
    root = project(world, "p1")
    register(world, {"p1": root})
    before = git(root, "rev-parse", "HEAD"), (root / "a.txt").read_text()
    code, out, err = run_cli(*selecting(world, name, "--projects", "p1,zz", "--projects", "yy"))
    assert (code, out) == (Exit.ERROR, "")
    unknown = "not in the registry: zz, yy (see 'tether projects list')"
    assert err == f"tether: {world.registry}: {unknown}\n"
    code, doc = run_json(*selecting(world, name, "--projects", "zz"))
    assert code == Exit.ERROR and doc["error"]["exit_code"] == Exit.ERROR
    assert (git(root, "rev-parse", "HEAD"), (root / "a.txt").read_text()) == before
    assert not (world.tmp / "state").exists()  # no run folder: the run never started


def test_both_select_the_same_projects_in_registry_order(world: World) -> None:
    roots = {name: project(world, name, repo=False) for name in ("b", "a", "c")}
    roots["gone"] = world.tmp / "gone"  # registered, then moved away
    register(
        world,
        {"b": roots["b"], "a": roots["a"], "gone": roots["gone"], "c": roots["c"]},
        {"a": ["Web"], "b": ["web", "api"], "c": ["api"], "gone": ["web"]},
    )
    filters = ("--keyword", "WEB", "--projects", "a,c", "--projects", "gone,b")

    code, status = run_json(*fleet(world, "status", *filters))
    assert code == 0
    code, scanned = run_json(*deps(world, "scan", "--level", "minor", *filters))
    assert code == 0
    assert [p["name"] for p in status["projects"]] == ["b", "a"]  # registry order
    assert [p["name"] for p in scanned["projects"]] == ["b", "a"]
    missing = [{"name": "gone", "project_dir": str(roots["gone"])}]
    assert status["skipped_path_missing"] == scanned["skipped_path_missing"] == missing


# --- isolation -------------------------------------------------------------------------------


def test_the_default_is_a_new_branch_for_both(world: World) -> None:
    roots = {"f": project(world, "f"), "d": project(world, "d")}
    register(world, roots)
    heads = {name: git(root, "rev-parse", "HEAD") for name, root in roots.items()}

    code, by_fleet = run_json(*apply_command(world, "fleet", "--projects", "f"))
    assert code == 0
    code, by_deps = run_json(*apply_command(world, "deps", "--projects", "d"))
    assert code == 0

    assert by_fleet["isolate"] == by_deps["isolate"] == "branch"
    assert branch(roots["f"]) == FLEET_BRANCH and branch(roots["d"]) == DEPS_BRANCH
    assert {name: git(root, "rev-parse", "HEAD") for name, root in roots.items()} == heads
    [fleet_used] = isolation_of(by_fleet, "fleet")["projects"]
    [deps_used] = isolation_of(by_deps, "deps")["projects"]
    assert set(fleet_used) == set(deps_used) == ISOLATION_KEYS
    assert (fleet_used["used"], fleet_used["branch"]) == ("branch", FLEET_BRANCH)
    assert (deps_used["used"], deps_used["branch"]) == ("branch", DEPS_BRANCH)
    assert json.loads((roots["d"] / "package.json").read_text())["dependencies"] == {
        "alpha": "^1.2.3"
    }


@pytest.mark.parametrize("command", ["fleet", "deps"])
@pytest.mark.parametrize("mode", ["branch", "worktree"])
def test_outside_git_an_asked_isolation_says_why_it_is_not_possible(
    world: World, command: str, mode: str
) -> None:
    """Neither edits a checkout whose isolation was asked for and could not be had: the
    fleet fails the project (it was to reach the release), deps skips it."""
    root = project(world, "plain", repo=False)
    register(world, {"plain": root})
    before = (root / "package.json").read_bytes()
    code, doc = run_json(*apply_command(world, command, "--isolate", mode))
    assert code == (1 if command == "fleet" else 0)
    section = isolation_of(doc, command)
    assert section["requested"] == mode
    [used] = section["projects"]
    assert used["used"] == "skipped"
    assert used["requested"] == mode
    assert used["note"] == f"{mode} isolation not possible: not a git repository"
    assert (root / "package.json").read_bytes() == before
    if command == "deps":
        assert [p["name"] for p in doc["skipped_isolation"]] == ["plain"]


@pytest.mark.parametrize("command", ["fleet", "deps"])
def test_someone_elses_branch_is_never_reused(world: World, command: str) -> None:
    root = project(world, "p")
    taken = FLEET_BRANCH if command == "fleet" else DEPS_BRANCH
    git(root, "branch", taken)
    register(world, {"p": root})
    before = (root / "package.json").read_bytes()
    code, doc = run_json(*apply_command(world, command))
    assert code == (1 if command == "fleet" else 0)
    [used] = isolation_of(doc, command)["projects"]
    assert used["used"] == "skipped"
    assert used["note"] == f"branch isolation not possible: branch {taken} already exists"
    assert branch(root) == "main" and (root / "package.json").read_bytes() == before
    if command == "deps":  # not edited on the person's own branch either
        assert git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("command", ["fleet", "deps"])
def test_a_worktree_leaves_the_checkout_and_a_second_run_reuses_it(
    world: World, command: str
) -> None:
    root = project(world, "p")
    register(world, {"p": root})
    head = git(root, "rev-parse", "HEAD")
    code, first = run_json(*apply_command(world, command, "--isolate", "worktree"))
    assert code == 0
    [used] = isolation_of(first, command)["projects"]
    label = "1.1.0" if command == "fleet" else "deps-minor-2025-06-01"
    tree = world.tmp / f"p-tether-{label}"
    assert (used["used"], used["worktree_dir"]) == ("worktree", str(tree))
    assert branch(tree) == (FLEET_BRANCH if command == "fleet" else DEPS_BRANCH)
    assert untouched(root, head) and branch(root) == "main"
    changed = git(tree, "status", "--porcelain")
    assert changed  # the run's edits are in the worktree, uncommitted
    if command == "deps":  # deps plans what the worktree holds: give it something to redo
        git(tree, "checkout", "--", ".")

    code, second = run_json(*apply_command(world, command, "--isolate", "worktree"))
    assert code == 0, second
    [again] = isolation_of(second, command)["projects"]
    assert again["used"] == "worktree"
    assert again["note"] == "reusing the worktree an earlier run made"
    assert untouched(root, head) and git(tree, "status", "--porcelain") == changed


@pytest.mark.parametrize("command", ["fleet", "deps"])
def test_a_folder_in_the_worktrees_place_is_never_used(world: World, command: str) -> None:
    root = project(world, "p")
    label = "1.1.0" if command == "fleet" else "deps-minor-2025-06-01"
    squatter = world.tmp / f"p-tether-{label}"
    squatter.mkdir()
    (squatter / "notes.txt").write_text("mine\n")
    register(world, {"p": root})
    code, doc = run_json(*apply_command(world, command, "--isolate", "worktree"))
    assert code == (1 if command == "fleet" else 0)
    head = git(root, "rev-parse", "HEAD")
    [used] = isolation_of(doc, command)["projects"]
    assert used["used"] == "skipped"
    assert used["note"] == f"worktree isolation not possible: {squatter} already exists"
    assert [p.name for p in squatter.iterdir()] == ["notes.txt"]
    assert untouched(root, head)  # neither falls back to editing the checkout


# --- the run folder and the failed section ---------------------------------------------------


def test_a_failure_is_reported_the_same_by_both(world: World) -> None:
    broken_fleet = project(world, "f")
    (broken_fleet / "n.txt").mkdir()  # the update's new file cannot be written
    broken_deps = project(world, "d")
    overrides = world.tmp / "overrides.yaml"
    overrides.write_text(
        f"- id: al\n  match: [alpha]\n  command: {json.dumps(FAIL)}\n  versionSource: latest\n"
    )
    register(world, {"f": broken_fleet, "d": broken_deps})

    code, by_fleet = run_json(*apply_command(world, "fleet", "--projects", "f"))
    assert code == 1
    code, by_deps = run_json(
        *apply_command(
            world,
            "deps",
            "--projects",
            "d",
            "--overrides",
            str(overrides),
            "--override-action",
            "al=run-override",
        )
    )
    assert code == 1

    [fleet_failed] = by_fleet["summary"]["failed"]
    [deps_failed] = by_deps["failed"]
    assert set(fleet_failed) >= FAILURE_KEYS and set(deps_failed) >= FAILURE_KEYS
    assert (fleet_failed["name"], fleet_failed["step"], fleet_failed["exit_code"]) == (
        "f",
        "apply",
        1,
    )
    assert (deps_failed["name"], deps_failed["step"], deps_failed["exit_code"]) == (
        "d",
        "override:al",
        3,
    )
    assert "codemod failed" in deps_failed["log_tail"]
    for doc, failed in ((by_fleet, fleet_failed), (by_deps, deps_failed)):
        log = Path(failed["log"])
        assert failed["log_tail"] == log.read_text().splitlines()[-40:]
        run_dir = Path(doc["run_dir"])
        assert run_dir.parent == world.tmp / "state" / "tether" / "runs"
        assert run_dir.name == doc["run_id"] and log.parent == run_dir
        assert json.loads((run_dir / "summary.json").read_text()) == doc
        assert (run_dir / "summary.md").read_text().count("## Failed project\n") == 1


# --- an isolation's notes: facts in runs/isolation.py, worded in report/runs ----------------


def _repository(root: Path) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "f.txt").write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    return root


def test_an_isolation_that_cannot_be_had_carries_why_as_a_fact(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    git(root, "branch", "b1")
    where = isolate(root, "worktree", Target("b1", "l1"), skip=True)
    why = Unavailable("branch-exists", branch="b1")
    assert where.used == "skipped"
    assert where.remark == IsolationNote("not-possible", "worktree", why)
    assert where.note == "worktree isolation not possible: branch b1 already exists"
    assert where.to_json()["note"] == where.note
    assert isolation_line(where) == (
        "isolation: not possible, so the project is left alone "
        "(worktree isolation not possible: branch b1 already exists)"
    )


def test_a_worktree_names_the_checkouts_uncommitted_edits_and_a_rerun_reuses_it(
    tmp_path: Path,
) -> None:
    root = _repository(tmp_path / "repo")
    (root / "f.txt").write_text("edited\n")
    first = isolate(root, "worktree", Target("b1", "l1"))
    assert first.remark == IsolationNote("uncommitted", count=1)
    assert first.note == "1 uncommitted change(s) in the checkout are not in the worktree"
    again = isolate(root, "worktree", Target("b1", "l1"))
    assert again.remark == IsolationNote("reused-worktree")
    assert again.note == "reusing the worktree an earlier run made"


def test_a_callers_own_words_follow_the_isolations(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    git(root, "switch", "-q", "-c", "b1")
    where = isolate(root, "branch", Target("b1", "l1"))
    assert where.remark == IsolationNote("on-branch-already")
    added = replace(where, added=("configuration carried",))
    assert added.note == "already on it (an earlier run); configuration carried"


UNAVAILABLE_WORDS = [
    (Unavailable("not-a-repository"), "not a git repository"),
    (Unavailable("folder-exists", "/w/x"), "/w/x already exists"),
    (
        Unavailable("not-committed", "sub"),
        "sub is not committed, so the worktree does not contain it",
    ),
    (
        Unavailable("required-not-committed", "req"),
        "req is not committed, so a worktree would not contain it",
    ),
    (
        Unavailable("workspace-apart", "/ws", outer="/other", top="/repo"),
        "the workspace root /ws is in another git repository (/other), so a branch or "
        "worktree of the project's repository /repo cannot hold what the run writes there",
    ),
    (
        Unavailable("workspace-apart", "/ws", top="/repo"),
        "the workspace root /ws is outside git, so a branch or worktree of the project's "
        "repository /repo cannot hold what the run writes there",
    ),
    (
        Unavailable("workspace-apart", "/ws", outer="/other"),
        "the workspace root /ws is in another git repository (/other), so a branch or "
        "worktree of a project outside git cannot hold what the run writes there",
    ),
    (Unavailable("git-refused", message="fatal: no"), "fatal: no"),
]


@pytest.mark.parametrize(("why", "words"), UNAVAILABLE_WORDS)
def test_every_cause_has_its_words(why: Unavailable, words: str) -> None:
    assert unavailable(why) == words
    note = IsolationNote("not-possible", "branch", why)
    assert isolation_note(note) == f"branch isolation not possible: {words}"
