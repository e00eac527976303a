"""``tether deps scan|plan|apply`` over real project folders and a loopback registry:
catalogs, unknown packages, cooldowns, alignment policies, the gate and the registry file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def deps(*args: str, server: LoopbackRegistry, registry: Path) -> list[str]:
    return [
        "deps",
        *args,
        "--registry",
        str(registry),
        "--npm-registry",
        server.url,
        "--pypi-index",
        server.url + "/pypi",
    ]


def package(doc: dict[str, Any], name: str, catalog: str | None = None) -> dict[str, Any]:
    found = [p for p in doc["packages"] if p["name"] == name and p.get("catalog") == catalog]
    assert len(found) == 1, doc["packages"]
    return dict(found[0])


def effective(pkg: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (o["project_name"], o["source_file"]): o["effective_target"] for o in pkg["occurrences"]
    }


# --- catalogs, unknown packages, cooldown ----------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    web = project(
        tmp_path / "web",
        {
            "package.json": {
                "name": "web",
                "private": True,
                "dependencies": {"react": "catalog:", "left-pad-nowhere": "^1.0.0"},
            },
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            "pnpm-workspace.yaml": (
                "packages:\n  - packages/*\n"
                "catalog:\n  react: ^18.2.0  # the main line\n"
                "catalogs:\n  react17:\n    react: ^17.0.0\n    react-dom: ^17.0.2\n"
                "  legacy:\n    react: ^17.0.1\n"
            ),
            "packages/ui/package.json": {
                "name": "ui",
                "dependencies": {"react": "catalog:react17", "delta": "^1.0.0"},
            },
        },
    )
    api = project(
        tmp_path / "api",
        {
            "package.json": {
                "name": "api",
                "dependencies": {"react": "^18.2.0", "delta": "^1.0.0"},
            },
            "package-lock.json": {},
            "pnpm-workspace.yaml": "minimumReleaseAge: 1440\n",
        },
    )
    return registry_file(tmp_path / "projects.json", {"web": web, "api": api})


def test_catalogs_are_keyed_by_name(workspace: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*deps("plan", "--level", "minor", server=server, registry=workspace))
    assert code == 0
    main = package(doc, "react")
    assert main["proposed_target"] == "^18.3.1"
    assert {(o["project_name"], o["location"]) for o in main["occurrences"]} == {
        ("web", "catalog"),
        ("api", "dependencies"),
    }
    # Each named catalog keeps its own line: a minor target never carries react17 to 18.
    assert package(doc, "react", "react17")["proposed_target"] == "^17.0.2"
    assert package(doc, "react", "legacy")["proposed_target"] == "^17.0.2"
    assert not any(p["name"] == "react-dom" for p in doc["packages"])  # already at 17.0.2


def test_unknown_package_reported(workspace: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*deps("scan", "--level", "minor", server=server, registry=workspace))
    assert code == 0
    unknown = [s for s in doc["skipped"] if s["kind"] == "unknown-package"]
    assert [(s["project_name"], s["name"], s["current_version"]) for s in unknown] == [
        ("web", "left-pad-nowhere", "^1.0.0")
    ]
    assert any("unknown package left-pad-nowhere" in w for w in doc["warnings"])


def test_project_cooldown_fails_closed_and_holds_in_alignment(
    workspace: Path, server: LoopbackRegistry
) -> None:
    # delta 1.1.0 has no publish time. api waits a day (pnpm's minimumReleaseAge), web does not.
    _, doc = run_json(*deps("plan", "--level", "minor", server=server, registry=workspace))
    delta = package(doc, "delta")
    targets = {o["project_name"]: o["target_version"] for o in delta["occurrences"]}
    assert targets == {"web": "^1.1.0", "api": "^1.0.1"}
    # api's range admits 1.1.0 but its cooldown does not: a conflict, never an override.
    assert delta["conflict"] is True
    assert {o["project_name"]: o["effective_target"] for o in delta["occurrences"]} == targets


def test_cli_cooldown_flag(workspace: Path, server: LoopbackRegistry) -> None:
    args = deps(
        "scan", "--level", "minor", "--min-release-age", "2d", server=server, registry=workspace
    )
    code, doc = run_json(*args)
    web = next(p for p in doc["projects"] if p["name"] == "web")
    delta = next(d for d in web["dependencies"] if d["name"] == "delta")
    assert delta["target_version"] == "^1.0.1"
    code, _, err = run_cli(
        *deps(
            "scan", "--level", "minor", "--min-release-age", "7", server=server, registry=workspace
        )
    )
    assert code == 2 and "unit" in err


# --- alignment -------------------------------------------------------------------------------


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    specs = {
        "a": {"alpha": "^2.0.0", "gamma": "^4.0.0"},
        "b": {"alpha": "^2.1.0", "gamma": "^4.1.0"},
        "c": {"alpha": "~2.0.0"},
        "d": {"alpha": "2.1.0"},
    }
    roots = {
        name: project(
            tmp_path / name,
            {"package.json": {"name": name, "dependencies": dependencies}, "package-lock.json": {}},
        )
        for name, dependencies in specs.items()
    }
    # b waits a week for a release: alpha 2.2.0 (two days old) is too new for it.
    (roots["b"] / ".npmrc").write_text("min-release-age=7\n")
    return registry_file(tmp_path / "projects.json", roots)


# minor level. Own targets: a ^2.2.0, c ~2.2.0, d 2.2.0 → max 2.2.0; b's gate keeps it at
# 2.1.0 → conflict. gamma: a ^4.1.1, b ^4.1.1 → aligned. The level bounds alignment, so an
# occurrence that admits the maximum already has it as its own target: use-max-where-possible
# and per-project write the same versions.
EXPECTED = {
    "use-max-where-possible": {"a": "^2.2.0", "b": "^2.1.0", "c": "~2.2.0", "d": "2.2.0"},
    "per-project": {"a": "^2.2.0", "b": "^2.1.0", "c": "~2.2.0", "d": "2.2.0"},
    "skip-package": {"a": "^2.0.0", "b": "^2.1.0", "c": "~2.0.0", "d": "2.1.0"},
}


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_alignment_policies(fleet: Path, server: LoopbackRegistry, policy: str) -> None:
    args = deps(
        "plan", "--level", "minor", "--conflict-policy", policy, server=server, registry=fleet
    )
    _, doc = run_json(*args)
    alpha = package(doc, "alpha")
    assert alpha["conflict"] is True
    assert alpha["proposed_target"] == "^2.2.0"  # the prefix of the first highest occurrence
    assert {o["project_name"]: o["effective_target"] for o in alpha["occurrences"]} == EXPECTED[
        policy
    ]
    assert (alpha.get("skipped_by") == "conflict-policy") == (policy == "skip-package")
    gamma = package(doc, "gamma")
    assert gamma["conflict"] is False
    assert {o["project_name"]: o["effective_target"] for o in gamma["occurrences"]} == {
        "a": "^4.1.1",
        "b": "^4.1.1",
    }


def test_the_level_bounds_alignment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """A patch run moves each occurrence inside its own major.minor, a minor run inside its
    major: a project with no update of its own at the level is never pulled onto another
    project's line, and that is no conflict (no policy needed under --yes)."""
    setup_cli(monkeypatch, tmp_path)
    specs = {
        "x": {"alpha": "^1.0.5", "gamma": "^4.0.0"},  # no patch update of its own
        "y": {"alpha": "^1.1.0", "gamma": "^4.1.0"},  # patch: ^1.1.4, ^4.1.1
        "z": {"alpha": "^1.0.0"},  # patch: ^1.0.5
        "w": {"alpha": "^2.0.0"},  # another major line
    }
    roots = {
        name: project(
            tmp_path / name,
            {"package.json": {"name": name, "dependencies": found}, "package-lock.json": {}},
        )
        for name, found in specs.items()
    }
    reg = registry_file(tmp_path / "projects.json", roots)
    untouched = files_of(roots["x"])

    code, doc = run_json(*deps("plan", "--level", "patch", server=server, registry=reg))
    assert code == 0
    assert [p["conflict"] for p in doc["packages"]] == [False, False]
    assert effective(package(doc, "alpha")) == {
        ("x", "package.json"): "^1.0.5",
        ("y", "package.json"): "^1.1.4",
        ("z", "package.json"): "^1.0.5",
        ("w", "package.json"): "^2.0.0",
    }
    code, doc = run_json(
        *deps("apply", "--level", "patch", "--yes", "--no-install", server=server, registry=reg)
    )
    assert code == 0, doc
    assert files_of(roots["x"]) == untouched
    written = {
        n: json.loads((r / "package.json").read_text())["dependencies"] for n, r in roots.items()
    }
    assert written["y"] == {"alpha": "^1.1.4", "gamma": "^4.1.1"}
    assert written["z"] == {"alpha": "^1.0.5"}

    # minor: each major line keeps its own newest minor, with no conflict to decide
    code, doc = run_json(*deps("plan", "--level", "minor", server=server, registry=reg))
    alpha = package(doc, "alpha")
    assert alpha["conflict"] is False
    assert {o["project_name"]: o["effective_target"] for o in alpha["occurrences"]} == {
        "x": "^1.2.3",
        "y": "^1.2.3",
        "z": "^1.2.3",
        "w": "^2.2.0",
    }


@pytest.mark.parametrize("policy", list(EXPECTED))
def test_apply_follows_the_policy(fleet: Path, server: LoopbackRegistry, policy: str) -> None:
    args = deps(
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--conflict-policy",
        policy,
        server=server,
        registry=fleet,
    )
    code, doc = run_json(*args)
    assert code == 0
    for name, expected in EXPECTED[policy].items():
        written = json.loads((fleet.parent / name / "package.json").read_text())
        assert written["dependencies"]["alpha"] == expected
    if policy == "skip-package":
        assert [p["name"] for p in doc["skipped_by_conflict_policy"]] == ["alpha"]


def test_plan_dir_files(fleet: Path, server: LoopbackRegistry, tmp_path: Path) -> None:
    out = tmp_path / "plans"
    code, _, _ = run_cli(
        *deps("plan", "--level", "minor", "--plan-dir", str(out), server=server, registry=fleet)
    )
    assert code == 0
    plan_text = (out / "cross-project-plan.json").read_text()
    scan_text = (out / "scan-by-project.json").read_text()
    assert plan_text.startswith('{\n  "level": "minor"')  # pretty-printed
    plan, scan = json.loads(plan_text), json.loads(scan_text)
    # Commander's plan-folder files keep its camelCase shape; --json speaks snake_case.
    assert {"packages", "scanFailed", "pathMissing", "skipped", "warnings"} <= set(plan)
    assert "conflictPolicy" in plan and "conflict_policy" not in plan
    occurrence = plan["packages"][0]["occurrences"][0]
    assert set(occurrence) == {
        "projectName",
        "currentVersion",
        "targetVersion",
        "effectiveTarget",
        "skippedByReleaseAge",
        "location",
        "sourceFile",
    }
    assert [p["name"] for p in scan["projects"]] == ["a", "b", "c", "d"]
    assert {"packageManager", "packageManagerSource"} <= set(scan["projects"][0])
    assert set(scan["projects"][0]["dependencies"][0]) >= {"currentVersion", "sourceFile"}


def test_conflicts_need_a_policy_under_yes(fleet: Path, server: LoopbackRegistry) -> None:
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    code, _, err = run_cli(
        *deps("apply", "--level", "minor", "--yes", server=server, registry=fleet)
    )
    assert code == 2 and "--conflict-policy" in err and "alpha" in err
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before


def test_one_prompt_chooses_the_policy(fleet: Path, server: LoopbackRegistry) -> None:
    args = deps("apply", "--level", "minor", "--no-install", server=server, registry=fleet)
    code, out, err = run_cli(*args, stdin="all\nskip-package\napply-all\n")
    assert code == 0, out
    # The question and the conflicts it asks about go to stderr; stdout is the summary.
    assert "conflicting targets" in err and "conflicting targets" not in out
    written = json.loads((fleet.parent / "a" / "package.json").read_text())
    assert written["dependencies"] == {"alpha": "^2.0.0", "gamma": "^4.1.1"}


# --- the gate --------------------------------------------------------------------------------


def _apply_per_project(fleet: Path, server: LoopbackRegistry, *extra: str) -> list[str]:
    return deps(
        "apply",
        "--level",
        "minor",
        "--yes",
        "--conflict-policy",
        "per-project",
        *extra,
        server=server,
        registry=fleet,
    )


def test_skip_package_rejects_unknown_names(fleet: Path, server: LoopbackRegistry) -> None:
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    code, _, err = run_cli(*_apply_per_project(fleet, server, "--skip-package", "alpha,nope"))
    assert code == 2
    assert "--skip-package names no package of this plan: nope" in err
    assert "valid: alpha, gamma" in err
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before


def test_skip_package_leaves_the_package_alone(fleet: Path, server: LoopbackRegistry) -> None:
    args = _apply_per_project(fleet, server, "--no-install", "--skip-package", "alpha")
    code, doc = run_json(*args)
    assert code == 0
    assert [p["name"] for p in doc["skipped_by_user"]] == ["alpha"]
    a = json.loads((fleet.parent / "a" / "package.json").read_text())
    assert a["dependencies"] == {"alpha": "^2.0.0", "gamma": "^4.1.1"}


def test_exclude_with_package_names_points_to_skip_package(
    fleet: Path, server: LoopbackRegistry
) -> None:
    """--exclude means path globs in every command; the old package-name use is refused
    before anything is read, with the new spelling to type."""
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    code, out, err = run_cli(*_apply_per_project(fleet, server, "--exclude", "alpha"))
    assert code == 2 and out == ""
    assert "use --skip-package alpha" in err and err.count("\n") == 1
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before
    assert not (fleet.parent / "state").exists()  # no run folder either


def test_interactive_pick_subset(fleet: Path, server: LoopbackRegistry) -> None:
    args = deps(
        "apply",
        "--level",
        "minor",
        "--no-install",
        "--conflict-policy",
        "per-project",
        server=server,
        registry=fleet,
    )
    code, out, err = run_cli(*args, stdin="all\np\nnope\ngamma\n")
    assert code == 0
    assert "Not in this plan: nope. Valid: alpha, gamma" in err
    assert "Exclude which packages" in err and "Exclude which packages" not in out
    a = json.loads((fleet.parent / "a" / "package.json").read_text())
    assert a["dependencies"] == {"alpha": "^2.2.0", "gamma": "^4.0.0"}
    assert "## Skipped by user (1)" in out


def test_cancel_writes_nothing(fleet: Path, server: LoopbackRegistry) -> None:
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    args = deps(
        "apply",
        "--level",
        "minor",
        "--conflict-policy",
        "per-project",
        server=server,
        registry=fleet,
    )
    code, out, _ = run_cli(*args, stdin="all\nc\n")
    assert code == 0
    assert out.rstrip().endswith("Cancelled. No files modified.")
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before


def test_not_a_terminal_needs_yes(fleet: Path, server: LoopbackRegistry) -> None:
    code, _, err = run_cli(*deps("apply", "--level", "patch", server=server, registry=fleet))
    assert code == 1 and "--yes" in err


# --- selection and the registry file ---------------------------------------------------------


def test_registry_file_is_never_written(fleet: Path, server: LoopbackRegistry) -> None:
    digest = hashlib.sha256(fleet.read_bytes()).hexdigest()
    for action in ("scan", "plan"):
        assert run_cli(*deps(action, "--level", "minor", server=server, registry=fleet))[0] == 0
    args = deps(
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--conflict-policy",
        "per-project",
        server=server,
        registry=fleet,
    )
    assert run_cli(*args)[0] == 0
    assert hashlib.sha256(fleet.read_bytes()).hexdigest() == digest


def test_selection_messages(fleet: Path, server: LoopbackRegistry, tmp_path: Path) -> None:
    code, out, err = run_cli(
        *deps("scan", "--level", "minor", "--projects", "a,zz", server=server, registry=fleet)
    )
    assert (code, out) == (1, "") and f"{fleet}: not in the registry: zz" in err
    code, out, _ = run_cli(
        *deps("scan", "--level", "minor", "--keyword", "none", server=server, registry=fleet)
    )
    assert code == 0 and "No projects matched the filter." in out
    empty = registry_file(tmp_path / "empty.json", {})
    code, out, _ = run_cli(*deps("scan", "--level", "minor", server=server, registry=empty))
    assert code == 0 and "No projects registered" in out


def test_scan_failed_and_path_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    broken = project(
        tmp_path / "broken", {"package.json": '{"dependencies": {"alpha": "^1.0.0",}}'}
    )
    good = project(tmp_path / "good", {"package.json": {"dependencies": {"alpha": "^1.0.0"}}})
    reg = registry_file(
        tmp_path / "projects.json", {"broken": broken, "gone": tmp_path / "gone", "good": good}
    )
    code, doc = run_json(*deps("plan", "--level", "minor", server=server, registry=reg))
    assert code == 0
    assert [(f["name"], "invalid JSON" in f["error"]) for f in doc["scan_failed"]] == [
        ("broken", True)
    ]
    assert [m["name"] for m in doc["skipped_path_missing"]] == ["gone"]
    assert package(doc, "alpha")["proposed_target"] == "^1.2.3"


def test_a_registry_that_cannot_be_asked_fails_the_run(
    fleet: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    """Nothing listens on the discard port: a plan missing every update must not read as
    "nothing to update". scan and plan still print what they read, and exit 1; apply stops
    with one line naming the registry and the reason, before anything is written."""
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    where = ("--registry", str(fleet), "--npm-registry", "http://127.0.0.1:9", "--retries", "0")
    for action in ("scan", "plan"):
        code, doc = run_json("deps", action, "--level", "minor", *where)
        assert code == 1, action
        assert any(w.startswith("could not fetch alpha (npm registry") for w in doc["warnings"])
    code, out, err = run_cli("deps", "apply", "--level", "minor", "--yes", *where)
    assert (code, out) == (1, "")
    assert err.startswith("tether: the npm registry could not be asked for 2 package(s) (alpha, ")
    assert err.endswith("; nothing was written (run again once it answers)\n")
    assert err.count("\n") == 1
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before
    assert not (tmp_path / "state").exists()


def test_on_a_terminal_without_a_filter_a_picker_chooses_the_projects(
    fleet: Path, server: LoopbackRegistry
) -> None:
    """No --projects and no --keyword on a terminal: the registered projects are listed,
    numbered, and the answer picks by name or number (or all); a name the registry lacks is
    named and asked again; nothing picked cancels with exit 0 and nothing written. The run
    keeps registry order whatever the order typed."""
    before = {n: files_of(fleet.parent / n) for n in "abcd"}
    args = deps(
        "apply", "--level", "minor", "--no-install", "--conflict-policy", "per-project",
        server=server, registry=fleet,
    )  # fmt: skip
    code, out, _ = run_cli(*args, stdin="\n")
    assert (code, out.strip()) == (0, "No projects selected. Cancelled.")
    assert {n: files_of(fleet.parent / n) for n in "abcd"} == before

    code, doc = run_json(*args, stdin="zz, 9\nd,1\na\n")
    assert code == 0, doc
    assert [p["name"] for p in doc["applied"]] == ["a", "d"]
    assert files_of(fleet.parent / "b") == before["b"]
    _, _, err = run_cli(*args, stdin="zz\n\n")
    assert f"1. a — {fleet.parent / 'a'}" in err and f"4. d — {fleet.parent / 'd'}" in err
    assert "Not registered: zz. Answer with names or numbers of the list, or all." in err


def test_a_target_moves_versions_less_far_than_the_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """``--target-level`` is how far each version moves (npm-check-updates' --target), the
    level names the run: ``--level minor --target-level patch`` writes 1.0.x updates only.
    Engines go with engines only."""
    setup_cli(monkeypatch, tmp_path)
    root = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    reg = registry_file(tmp_path / "projects.json", {"app": root})
    code, doc = run_json(
        *deps("plan", "--level", "minor", "--target-level", "patch", server=server, registry=reg)
    )
    assert code == 0 and (doc["level"], doc["target"]) == ("minor", "patch")
    assert effective(package(doc, "alpha")) == {("app", "package.json"): "^1.0.5"}
    code, doc = run_json(
        *deps(
            "apply",
            "--level",
            "minor",
            "--target-level",
            "patch",
            "--yes",
            "--no-install",
            server=server,
            registry=reg,
        )
    )
    assert code == 0 and doc["target"] == "patch"
    assert json.loads((root / "package.json").read_text())["dependencies"] == {"alpha": "^1.0.5"}
    for level, target in (("minor", "engines"), ("engines", "patch")):
        code, out, err = run_cli(
            *deps("plan", "--level", level, "--target-level", target, server=server, registry=reg)
        )
        assert (code, out) == (2, "") and "engines are not a dependency target" in err
    code, _, err = run_cli(
        *deps("plan", "--level", "minor", "--target-level", "huge", server=server, registry=reg)
    )
    assert code == 2 and "argument --target-level: invalid choice: 'huge'" in err
