"""``tether fleet``: three real projects (git repos built with ``tether init``) updated in
registry order; failures, isolation, the one question, locks and the per-project unit."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import call, git, make_release
from helpers_gh import add_origin
from tether.fleet.units import (
    ApplyOptions,
    PlanOptions,
    ProjectOutcome,
    ProjectPlan,
    UnitFailure,
    apply_unit,
    plan_unit,
    status_unit,
)
from tether.report.fleet_project import STALE_PLAN, unit_failure
from tether.state.lock import ProjectLock

BRANCH = "chore/update-acme-kit-1.1.0"


@dataclass
class Fleet:
    tmp: Path
    registry: Path
    state_home: Path
    shelf: Path
    projects: list[Path]


def files(root: Path) -> dict[str, bytes]:
    """Every file of a checkout except git's own folder and tether's (git-ignored) cache,
    which planning may fill."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and ".git" not in rel.parts and not str(rel).startswith(".tether/cache/"):
            found[str(rel)] = path.read_bytes()
    return found


def installed(root: Path) -> str:
    return str(json.loads((root / ".tether/state.json").read_text())["version"])


def branch(root: Path) -> str:
    return git(root, "branch", "--show-current").strip()


def new_project(fleet: Fleet, name: str, *, repo: bool = True, commit: bool = True) -> Path:
    root = fleet.tmp / name
    root.mkdir()
    if repo:
        git(root, "init", "-q", "-b", "main")
    assert call("init", "--source", str(fleet.shelf), "--to", "1.0.0", "-C", str(root)) == 0
    if repo and commit:
        git(root, "add", "-A")
        git(root, "commit", "-qm", "install 1.0.0")
    return root


def register(*paths: Path) -> None:
    for path in paths:
        assert call("projects", "add", str(path)) == 0


def _settings(patch: pytest.MonkeyPatch, tmp: Path) -> Fleet:
    registry = tmp / "registry.json"
    patch.setenv("TETHER_REGISTRY", str(registry))
    patch.setenv("XDG_CONFIG_HOME", str(tmp / "config"))
    patch.setenv("XDG_STATE_HOME", str(tmp / "state"))
    return Fleet(tmp, registry, tmp / "state", tmp / "rel", [])


NAMES = ("p1", "p2", "p3")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shelf and p1, p2, p3 installed from it and committed, made once for the module;
    ``fleet`` copies them. tether init writes nothing outside the project."""
    base = tmp_path_factory.mktemp("fleet")
    with pytest.MonkeyPatch.context() as patch:
        made = _settings(patch, base)
        make_release(made.shelf, "1.0.0", {"a.txt": "a\n", "c.txt": "x\ny\nz\n"})
        make_release(made.shelf, "1.1.0", {"a.txt": "a2\n", "c.txt": "x\nY\nz\n", "n.txt": "new\n"})
        for name in NAMES:
            new_project(made, name)
    return base


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, built: Path) -> Fleet:
    """A copy of ``built``: the shelf and three projects installed from it with tether init,
    each a git repository whose one commit holds the install (its recorded source is the
    copied shelf, committed so)."""
    made = _settings(monkeypatch, tmp_path)
    shutil.copytree(built, tmp_path, symlinks=True, dirs_exist_ok=True)
    for name in NAMES:
        root = tmp_path / name
        state = root / ".tether" / "state.json"
        recorded, source = state.read_text(), json.dumps(str(built / "rel"))
        assert source in recorded
        state.write_text(recorded.replace(source, json.dumps(str(made.shelf)), 1))
        git(root, "commit", "-qa", "--amend", "--no-edit")
        made.projects.append(root)
    capsys.readouterr()
    return made


@pytest.fixture
def three(fleet: Fleet, capsys) -> Fleet:
    """p1, p2, p3 registered in that order; p2 cannot take the new file (a folder is in the
    way) and p3 changed the line upstream changes too."""
    p1, p2, p3 = fleet.projects
    (p2 / "n.txt").mkdir()
    (p3 / "c.txt").write_text("x\nmine\nz\n")
    git(p3, "commit", "-qam", "local edit")
    register(p1, p2, p3)
    capsys.readouterr()
    return fleet


def update_json(*args: str) -> tuple[int, dict]:
    import contextlib

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = call("fleet", "update", "--json", *args)
    return code, json.loads(out.getvalue())


def test_stop_on_fail_applies_in_order_and_leaves_the_rest_pending(three: Fleet) -> None:
    p1, p2, p3 = three.projects
    p3_before = files(p3)
    code, doc = update_json("--yes", "--isolate", "none")
    assert code == 1
    summary = doc["summary"]
    assert doc["status"] == "stopped"
    assert [p["name"] for p in summary["applied"]] == ["p1"]
    [failed] = summary["failed"]
    assert failed["name"] == "p2" and failed["step"] == "apply"
    assert "n.txt" in failed["error"] and "directory" in failed["error"]
    assert 0 < len(failed["log_tail"]) <= 40 and failed["log_tail"][-1] == "== result: failed"
    assert [p["name"] for p in summary["pending"]] == ["p3"]
    assert summary["conflicts_to_resolve"] == []
    assert installed(p1) == "1.1.0" and (p1 / "n.txt").read_text() == "new\n"
    assert installed(p2) == "1.0.0"  # state is written last, only by a clean run
    assert files(p3) == p3_before  # never reached
    assert [branch(p) for p in (p1, p2, p3)] == ["main"] * 3  # --isolate none stays put
    run_dir = Path(doc["run_dir"])
    assert run_dir.parent == three.state_home / "tether" / "runs"
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "1-p1.json",
        "1-p1.log",
        "2-p2.json",
        "2-p2.log",
        "3-p3.log",
        "summary.json",
        "summary.md",
    ]
    full = json.loads((run_dir / "1-p1.json").read_text())
    assert full["buckets"]["add"] == ["n.txt"]
    assert doc["projects"][0]["update"]["report"]["counts"] == {"add": 1, "update": 2}
    assert "== apply" not in (run_dir / "3-p3.log").read_text()
    assert json.loads((run_dir / "summary.json").read_text()) == doc


def test_continue_on_failure_goes_on_and_a_rerun_finishes(three: Fleet, capsys) -> None:
    p1, p2, p3 = three.projects
    assert call("fleet", "update", "--yes", "--continue-on-failure") == 1
    out = capsys.readouterr().out
    assert out.index("| p1 |") < out.index("| p2 |") < out.index("| p3 |")
    assert "## Applied projects (2)\n- p1: 1.0.0 → 1.1.0\n- p3: 1.0.0 → 1.1.0 (1 conflict" in out
    assert "## Failed project\n- p2: failed at step apply (exit 1): 1 file(s) failed: n.txt" in out
    assert "  last " in out and "lines of its log:" in out
    assert "Pending projects" not in out
    assert "## Conflicts to resolve (1)\n- p3: c.txt" in out
    assert f"## Isolation: branch\n- p1: branch {BRANCH}\n- p2: branch {BRANCH}\n" in out
    assert "## Suggested next steps\n1. fix p2 (failed at step apply" in out
    assert installed(p1) == installed(p3) == "1.1.0"
    assert [branch(p) for p in (p1, p2, p3)] == [BRANCH] * 3
    assert all(git(p, "log", "--oneline").count("\n") == n for p, n in ((p1, 1), (p3, 2)))

    (p2 / "n.txt").rmdir()
    assert call("fleet", "update", "--yes") == 0
    out = capsys.readouterr().out
    assert "- p1: already up to date at 1.1.0" in out and "- p2: 1.0.0 → 1.1.0" in out
    assert "already on it (an earlier run)" in out
    assert installed(p2) == "1.1.0"


def test_without_a_terminal_nothing_is_written_unless_yes(
    three: Fleet, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    before = [files(p) for p in three.projects]
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert call("fleet", "update") == 1
    assert "not running on a terminal: pass --yes" in capsys.readouterr().err
    assert [files(p) for p in three.projects] == before
    assert not three.state_home.exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_asks_once_and_a_no_writes_nothing(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    register(*fleet.projects)
    before = [files(p) for p in fleet.projects]
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    assert call("fleet", "update") == 0
    out, err = capsys.readouterr()
    # The question and the table it asks about go to stderr; stdout carries the result only.
    assert err.count("Apply the update to 3 project(s)") == 1
    assert err.count("| p1 | 1.0.0 → 1.1.0 |") == 1  # the table, shown once with the question
    assert "Apply the update" not in out and "| p1 |" not in out
    assert "cancelled: nothing written" in out and "## Pending projects (3)" in out
    assert [files(p) for p in fleet.projects] == before
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    assert call("fleet", "update", "--isolate", "none") == 0
    assert [installed(p) for p in fleet.projects] == ["1.1.0"] * 3


def test_a_locked_project_is_refused_not_waited_for(fleet: Fleet) -> None:
    p1, p2, _ = fleet.projects
    register(p1, p2)
    with ProjectLock(p1 / ".tether/lock", command="someone else"):
        code, doc = update_json("--yes", "--isolate", "none", "--continue-on-failure")
    assert code == 1
    [failed] = doc["summary"]["failed"]
    assert failed["name"] == "p1" and "another tether run is in progress" in failed["error"]
    assert installed(p1) == "1.0.0" and installed(p2) == "1.1.0"


def test_isolation_that_cannot_be_had_fails_the_project_and_never_edits_it(
    fleet: Fleet,
) -> None:
    """A branch someone already has is never reused, and the checkout is never edited
    instead; a folder outside git under the default mode has no branch to protect."""
    p1 = fleet.projects[0]
    git(p1, "branch", BRANCH)  # taken already: do not reuse someone's branch
    plain = new_project(fleet, "plain", repo=False)
    register(p1, plain)
    before = files(p1)
    code, doc = update_json("--yes", "--continue-on-failure")
    assert code == 1
    [failed] = doc["summary"]["failed"]
    assert failed["name"] == "p1" and failed["step"] == "isolate"
    assert "already exists" in failed["error"] and "nothing written" in failed["error"]
    isolation = {p["name"]: p for p in doc["summary"]["isolation"]["projects"]}
    assert isolation["p1"]["used"] == "skipped"
    assert isolation["plain"]["used"] == "none"
    assert "not a git repository" in isolation["plain"]["note"]
    assert branch(p1) == "main" and installed(p1) == "1.0.0" and files(p1) == before
    assert installed(plain) == "1.1.0"


def test_worktree_isolation_asked_for_outside_git_fails_the_project(fleet: Fleet) -> None:
    plain = new_project(fleet, "plain", repo=False)
    register(plain)
    before = files(plain)
    code, doc = update_json("--yes", "--isolate", "worktree")
    assert code == 1
    [item] = doc["summary"]["isolation"]["projects"]
    assert item["used"] == "skipped" and "not a git repository" in item["note"]
    assert installed(plain) == "1.0.0" and files(plain) == before


def test_worktree_isolation_leaves_the_checkout_untouched(fleet: Fleet, capsys) -> None:
    p1, p2, _ = fleet.projects
    (p2 / "a.txt").write_text("uncommitted\n")
    register(p1, p2)
    before = [files(p1), files(p2)]
    assert call("fleet", "update", "--yes", "--isolate", "worktree") == 0
    out = capsys.readouterr().out
    assert [files(p1), files(p2)] == before and branch(p1) == branch(p2) == "main"
    for project in (p1, p2):
        tree = project.parent / f"{project.name}-tether-1.1.0"
        assert f"- {project.name}: worktree {tree} (branch {BRANCH})" in out
        assert branch(tree) == BRANCH and installed(tree) == "1.1.0"
        assert (tree / "n.txt").read_text() == "new\n"
        assert git(tree, "log", "--oneline").count("\n") == 1  # never commits
    assert "uncommitted change(s) in the checkout are not in the worktree" in out
    assert "git worktree remove" in out
    # A second run finds its worktree and has nothing left to do there.
    assert call("fleet", "update", "--yes", "--isolate", "worktree") == 0
    assert "reusing the worktree an earlier run made" in capsys.readouterr().out


def test_worktree_without_committed_install_is_taken_back(fleet: Fleet) -> None:
    bare = new_project(fleet, "bare", commit=False)
    (bare / "README").write_text("x\n")
    git(bare, "add", "README")
    git(bare, "commit", "-qm", "no tether files committed")
    register(bare)
    before = files(bare)
    code, doc = update_json("--yes", "--isolate", "worktree")
    assert code == 1
    [item] = doc["summary"]["isolation"]["projects"]
    assert item["used"] == "skipped" and "is not committed" in item["note"]
    assert not (fleet.tmp / "bare-tether-1.1.0").exists()
    assert BRANCH not in git(bare, "branch", "--list")
    assert installed(bare) == "1.0.0" and files(bare) == before


def test_a_worktree_update_committed_there_opens_its_pull_request_with_tether_pr(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    p1 = fleet.projects[0]
    remote = add_origin(p1, tmp_path, monkeypatch)  # a real bare origin, and a stand-in gh
    register(p1)
    code, _doc = update_json("--yes", "--isolate", "worktree")
    assert code == 0
    assert list(remote.branches()) == ["main"]  # tether never commits: nothing to push
    assert remote.gh_calls() == []
    tree = fleet.tmp / "p1-tether-1.1.0"
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "update acme-kit to 1.1.0")
    assert call("pr", "-C", str(tree)) == 0
    assert remote.branches()[BRANCH] == git(tree, "rev-parse", "HEAD").strip()
    create = remote.gh_calls()[-1]
    assert create[:6] == ["pr", "create", "--base", "main", "--head", BRANCH]
    assert branch(p1) == "main"  # the checkout itself was never touched


def test_dry_run_and_status_read_only(three: Fleet, capsys) -> None:
    before = [files(p) for p in three.projects]
    registry_bytes = three.registry.read_bytes()
    assert call("fleet", "update", "--dry-run", "--jobs", "3") == 1  # p2 would fail
    out = capsys.readouterr().out
    assert "| p3 | 1.0.0 → 1.1.0 |" in out and "conflicts: c.txt" in out
    assert "dry run: nothing written" in out and "## Pending projects (3)" in out
    assert "run the same command without --dry-run" in out
    assert call("fleet", "status", "--json", "--jobs", "3") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["modified"], p["latest_version"]) for p in doc["projects"]] == [
        ("p1", 0, "1.1.0"),
        ("p2", 0, "1.1.0"),
        ("p3", 1, "1.1.0"),
    ]
    assert [files(p) for p in three.projects] == before
    assert three.registry.read_bytes() == registry_bytes


def test_status_counts_conflicts_left_by_an_update(three: Fleet, capsys) -> None:
    code, _ = update_json("--yes", "--isolate", "none", "--projects", "p3")
    assert code == 4
    assert call("fleet", "status") == 0
    out = capsys.readouterr().out
    assert "| p3 | acme-kit | 1.1.0 | 1.1.0 | 1 | 1 |" in out


def test_the_unit_applies_only_the_plan_that_was_shown(fleet: Fleet) -> None:
    p1 = fleet.projects[0]
    plan = plan_unit(str(p1), PlanOptions())
    assert plan.status == "planned" and plan.to_version == "1.1.0"
    (p1 / "c.txt").write_text("x\nedited after the plan\nz\n")
    options = ApplyOptions(plan.to_version, plan.upstream, "none", plan.digest, allow_dirty=True)
    outcome = apply_unit(str(p1), options)
    assert outcome.status == "failed" and outcome.error == STALE_PLAN
    assert (p1 / "c.txt").read_text() == "x\nedited after the plan\nz\n"
    assert installed(p1) == "1.0.0" and not (p1 / "n.txt").exists()


def test_unit_results_survive_json(fleet: Fleet, tmp_path: Path) -> None:
    p1 = fleet.projects[0]
    plan = plan_unit(str(p1), PlanOptions())
    assert ProjectPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    outcome = apply_unit(str(p1), ApplyOptions(plan.to_version, plan.upstream, "branch"))
    assert outcome.status == "applied" and outcome.isolation["branch"] == BRANCH
    assert ProjectOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
    assert plan_unit(str(p1), PlanOptions()).status == "up-to-date"
    assert plan_unit(str(tmp_path), PlanOptions()).status == "not-tethered"


def test_a_plan_failure_stops_the_run_at_its_turn(fleet: Fleet) -> None:
    p1, p2, p3 = fleet.projects
    register(p1, p2, p3)
    (p2 / ".tether/state.json").write_text("{ broken")
    code, doc = update_json("--yes", "--isolate", "none")
    assert code == 1
    summary = doc["summary"]
    assert [p["name"] for p in summary["applied"]] == ["p1"]
    assert [(f["name"], f["step"]) for f in summary["failed"]] == [("p2", "plan")]
    assert [p["name"] for p in summary["pending"]] == ["p3"]
    assert installed(p1) == "1.1.0" and installed(p3) == "1.0.0"


def test_ctrl_c_inside_a_project_stops_even_when_continuing(
    three: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.fleet.runner as runner

    def interrupted(path: str, options: ApplyOptions) -> ProjectOutcome:
        report = {"status": "interrupted", "buckets": {"conflict": [], "failed": [], "delete": []}}
        failure = UnitFailure("update-ended", status="interrupted")
        return ProjectOutcome("failed", {}, "apply", failure, 1, report=report)

    monkeypatch.setattr(runner, "apply_unit", interrupted)
    code, doc = update_json("--yes", "--continue-on-failure")
    assert code == 130 and doc["status"] == "interrupted"
    assert [f["name"] for f in doc["summary"]["failed"]] == ["p1"]
    assert [p["name"] for p in doc["summary"]["pending"]] == ["p2", "p3"]


def test_a_300_character_project_name_does_not_stop_the_run(fleet: Fleet) -> None:
    """Run-folder names are shortened (a file name has 255 bytes at most): the long-named
    project and every other one are updated, each with its own log."""
    p1, p2, p3 = fleet.projects
    long_name = "n" * 300
    assert call("projects", "add", str(p1), "--name", long_name) == 0
    register(p2, p3)
    code, doc = update_json("--yes", "--isolate", "none")
    assert code == 0, doc["summary"]
    assert [p["name"] for p in doc["summary"]["applied"]] == [long_name, "p2", "p3"]
    assert [installed(p) for p in (p1, p2, p3)] == ["1.1.0"] * 3
    logs = sorted(p.name for p in Path(doc["run_dir"]).glob("*.log"))
    assert len(logs) == 3 and all(len(name.encode()) < 255 for name in logs)
    assert (
        logs[0].startswith("1-nnnn") and "== result" in (Path(doc["run_dir"]) / logs[0]).read_text()
    )


NOTES = """# Changelog

## [1.1.0] - 2026-02-01
### Removed
- Removed `legacy.cfg` support: `rm legacy.cfg`

## [1.0.0] - 2026-01-01
- First release.
"""


def test_the_summary_carries_each_projects_delete_list_and_follow_ups(fleet: Fleet, capsys) -> None:
    """What the single-project summary lists under "Delete?" and "Follow-ups" reaches the
    fleet's summary (text and JSON), not only the per-project logs, with a next step each."""
    shelf = fleet.tmp / "dropping"
    make_release(shelf, "1.0.0", {"a.txt": "a\n", "old.md": "old\n"})
    notes = {"CHANGELOG.md": NOTES}
    make_release(shelf, "1.1.0", {"a.txt": "a2\n"}, sentinels=notes)
    root = fleet.tmp / "dropper"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    (root / "legacy.cfg").write_text("x\n")
    register(root)
    capsys.readouterr()
    assert call("fleet", "update", "--yes", "--isolate", "none") == 0
    out = capsys.readouterr().out
    assert "## Delete? (removed upstream, still here) (1)\n- dropper: old.md" in out
    assert "## Follow-ups the release notes ask for (not run) (1)\n- dropper: rm legacy.cfg" in out
    assert "'tether update --delete-removed' removes the unmodified ones" in out
    assert (root / "old.md").exists() and (root / "legacy.cfg").exists()  # nothing run
    doc = json.loads((Path(out.split("logs in ")[1].split(")")[0]) / "summary.json").read_text())
    summary = doc["summary"]
    assert summary["leftovers"] == [
        {"name": "dropper", "project_dir": str(root), "items": ["old.md"]}
    ]
    assert summary["follow_ups"] == [
        {"name": "dropper", "project_dir": str(root), "items": ["rm legacy.cfg"]}
    ]


def test_no_run_folder_when_nothing_needs_updating(fleet: Fleet, capsys) -> None:
    """Every project already at the target: the summary says so and no run folder is made
    (a run with something to do still keeps one)."""
    p1, p2, _ = fleet.projects
    register(p1, p2)
    code, doc = update_json("--yes", "--isolate", "none", "--to", "1.0.0")
    assert code == 0 and doc["run_dir"] is None and doc["run_id"] is None
    assert [p["log"] for p in doc["projects"]] == [None, None]
    assert not (fleet.state_home / "tether" / "runs").exists()
    assert call("fleet", "update", "--yes", "--isolate", "none", "--to", "1.0.0") == 0
    assert "nothing to update: no run folder" in capsys.readouterr().out
    assert not (fleet.state_home / "tether" / "runs").exists()
    code, doc = update_json("--dry-run")
    assert Path(doc["run_dir"]).is_dir()


# --- why a unit stopped short: a fact in the result, worded in report/fleet_project -------


def test_a_plan_failure_is_a_fact_its_error_and_log_line_word(fleet: Fleet) -> None:
    p2 = fleet.projects[1]
    (p2 / ".tether/state.json").write_text("{ broken")
    plan = plan_unit(str(p2), PlanOptions())
    assert plan.status == "failed" and plan.failure is not None
    assert plan.failure.kind == "error" and "state file does not parse" in plan.failure.message
    assert plan.error == plan.failure.message == unit_failure(plan.failure)
    assert plan.log == (f"plan failed: {plan.failure.message}",)
    assert ProjectPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan


def test_an_isolation_that_cannot_be_had_is_a_fact_worded_into_error_and_log(
    fleet: Fleet,
) -> None:
    p1 = fleet.projects[0]
    git(p1, "branch", BRANCH)  # taken already
    outcome = apply_unit(str(p1), ApplyOptions("1.1.0", "acme-kit", "branch"))
    why = f"branch isolation not possible: branch {BRANCH} already exists"
    assert outcome.failure == UnitFailure("isolation-skipped", why)
    assert outcome.error == f"{why}; nothing written"
    assert outcome.log == (
        f"isolation: not possible, so the project is left alone ({why})",
        f"error: {why}; nothing written",
    )
    assert ProjectOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome


def test_a_stale_plan_is_a_fact(fleet: Fleet) -> None:
    p1 = fleet.projects[0]
    plan = plan_unit(str(p1), PlanOptions())
    (p1 / "c.txt").write_text("x\nedited after the plan\nz\n")
    options = ApplyOptions(plan.to_version, plan.upstream, "none", plan.digest, allow_dirty=True)
    outcome = apply_unit(str(p1), options)
    assert outcome.failure == UnitFailure("stale-plan")
    assert outcome.error == STALE_PLAN and outcome.log[-1] == STALE_PLAN


def test_a_source_that_is_down_is_a_fact_on_the_status_row(fleet: Fleet, capsys) -> None:
    p1 = fleet.projects[0]
    register(p1)
    shutil.rmtree(fleet.shelf)
    row = status_unit(str(p1))
    assert row.status == "ok" and row.failure is not None
    assert row.failure.kind == "newest-unknown"
    assert row.error == f"newest version unknown: {row.failure.message}"
    capsys.readouterr()
    assert call("fleet", "status", "--json") == 0
    [document_row] = json.loads(capsys.readouterr().out)["projects"]
    assert document_row["error"] == row.error and "failure" not in document_row


def test_the_fleet_document_carries_the_words_not_the_fact(three: Fleet) -> None:
    code, doc = update_json("--yes", "--isolate", "none", "--continue-on-failure")
    assert code == 1
    p2 = doc["projects"][1]
    assert "failure" not in p2["plan"] and "failure" not in p2["update"]
    assert p2["update"]["error"] == (
        "1 file(s) failed: n.txt: is a directory, but the release ships a file there"
    )


FAILURE_WORDS = [
    (UnitFailure("error", "it broke"), "it broke"),
    (UnitFailure("internal", "kaboom", "RuntimeError"), "internal error: RuntimeError: kaboom"),
    (UnitFailure("newest-unknown", "offline"), "newest version unknown: offline"),
    (UnitFailure("isolation-skipped", "no branch"), "no branch; nothing written"),
    (UnitFailure("stale-plan"), STALE_PLAN),
    (
        UnitFailure("files-failed", failed=(("a", "x"), ("b", "y"))),
        "2 file(s) failed: a: x; b: y",
    ),
    (
        UnitFailure("files-failed", failed=tuple((f"f{n}", "gone") for n in range(5))),
        "5 file(s) failed: f0: gone; f1: gone; f2: gone (and 2 more)",
    ),
    (UnitFailure("update-ended", status="interrupted"), "update interrupted"),
    (UnitFailure("interrupted"), "interrupted"),
]


@pytest.mark.parametrize(("failure", "words"), FAILURE_WORDS)
def test_every_failure_has_its_words(failure: UnitFailure, words: str) -> None:
    assert unit_failure(failure) == words
    assert UnitFailure.from_json(json.loads(json.dumps(failure.to_json()))) == failure
