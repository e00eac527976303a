"""Release-age gates from each project's own configuration (npm's ``.npmrc``, yarn's
``.yarnrc.yml``, Bun's ``bunfig.toml``; pnpm's is in test_deps_plan.py), and every version a
gate held back reported with its reason, in text and JSON. A loopback registry on 127.0.0.1
serves packuments whose publish times sit at known distances from the fixed clock."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry


def packument(name: str, published: dict[str, str]) -> dict[str, Any]:
    return {
        "name": name,
        "dist-tags": {"latest": max(published)},
        "versions": {v: {"name": name, "version": v} for v in published},
        "time": published,
    }


# The fixed clock is 2025-06-01: 1.1.0 is 7 days old, 1.2.0 one day old.
AGES = {"1.0.0": "2025-01-01T00:00:00Z", "1.1.0": "2025-05-25T00:00:00Z"}
AGES["1.2.0"] = "2025-05-31T00:00:00Z"
PACKUMENTS = {"fresh": packument("fresh", AGES), "trusted": packument("trusted", AGES)}
DEPS = {"dependencies": {"fresh": "^1.0.0", "trusted": "^1.0.0"}}


SERVED = {"packuments": PACKUMENTS, "dist": False}  # what the registry serves (conftest.py)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    roots = {
        "npm-app": project(
            tmp_path / "npm-app",
            {"package.json": DEPS, "package-lock.json": {}, ".npmrc": "min-release-age=3\n"},
        ),
        "yarn-app": project(
            tmp_path / "yarn-app",
            {
                "package.json": {**DEPS, "packageManager": "yarn@4.10.0"},
                "yarn.lock": "",
                ".yarnrc.yml": "npmMinimalAgeGate: 10d\nnpmPreapprovedPackages:\n  - trust*\n",
            },
        ),
        "bun-app": project(
            tmp_path / "bun-app",
            {
                "package.json": DEPS,
                "bun.lock": "{}",
                "bunfig.toml": "[install]\nminimumReleaseAge = 172800\n"
                'minimumReleaseAgeExcludes = ["trusted"]\n',
            },
        ),
        "plain": project(tmp_path / "plain", {"package.json": DEPS, "package-lock.json": {}}),
    }
    return registry_file(tmp_path / "projects.json", roots)


def deps(action: str, world: Path, server: LoopbackRegistry, *extra: str) -> list[str]:
    args = ["deps", action, "--level", "minor", "--registry", str(world)]
    return [*args, "--npm-registry", server.url, *extra]


def targets(doc: dict[str, Any], name: str) -> dict[str, tuple[str, bool]]:
    project_docs = doc["projects"]
    found = {}
    for project_doc in project_docs:
        for dep in project_doc["dependencies"]:
            if dep["name"] == name:
                found[project_doc["name"]] = (dep["target_version"], dep["skipped_by_release_age"])
    return found


def test_each_projects_own_gate_holds_versions_back(world: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*deps("scan", world, server))
    assert code == 0
    assert targets(doc, "fresh") == {
        "npm-app": ("^1.1.0", True),  # 3 days: 1.2.0 is too new
        "yarn-app": ("^1.0.0", True),  # 10 days: both newer ones are too new
        "bun-app": ("^1.1.0", True),  # 172800 seconds: two days
        "plain": ("^1.2.0", False),
    }
    # yarn's preapproved pattern and Bun's exclusion spare "trusted"; npm has no exclusions.
    assert targets(doc, "trusted") == {
        "npm-app": ("^1.1.0", True),
        "yarn-app": ("^1.2.0", False),
        "bun-app": ("^1.2.0", False),
        "plain": ("^1.2.0", False),
    }
    held = {(h["project_name"], h["name"]): h for h in doc["skipped_by_release_age"]}
    assert set(held) == {
        ("npm-app", "fresh"),
        ("npm-app", "trusted"),
        ("yarn-app", "fresh"),
        ("bun-app", "fresh"),
    }
    assert held[("npm-app", "fresh")]["held_back_version"] == "1.2.0"
    assert held[("npm-app", "fresh")]["reason"] == (
        "1.2.0 is 24h old; min-release-age=3 (days) in .npmrc asks 3d"
    )
    assert held[("yarn-app", "fresh")]["reason"] == (
        "1.2.0 is 24h old; npmMinimalAgeGate 10d in .yarnrc.yml asks 10d"
    )
    assert (
        "minimumReleaseAge 172800 (seconds) in bunfig.toml" in held[("bun-app", "fresh")]["reason"]
    )


def test_held_back_versions_in_plan_text_and_apply_summary(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    code, plan = run_json(*deps("plan", world, server))
    assert code == 0
    fresh = next(p for p in plan["packages"] if p["name"] == "fresh")
    flags = {o["project_name"]: o["skipped_by_release_age"] for o in fresh["occurrences"]}
    assert flags == {"npm-app": True, "yarn-app": True, "bun-app": True, "plain": False}
    assert len(plan["skipped_by_release_age"]) == 4

    code, text, _ = run_cli(*deps("plan", world, server))
    assert code == 0
    assert "## Skipped by release age (4)" in text
    assert (
        "- yarn-app: fresh ^1.0.0 (package.json dependencies) kept at ^1.0.0, not 1.2.0: "
        "1.2.0 is 24h old; npmMinimalAgeGate 10d in .yarnrc.yml asks 10d"
    ) in text

    apply = deps("apply", world, server, "--yes", "--no-install", "--isolate", "none")
    apply += ["--conflict-policy", "use-max-where-possible"]
    code, summary = run_json(*apply)
    assert code == 0
    assert len(summary["skipped_by_release_age"]) == 4
    npm_app = json.loads((tmp_path / "npm-app" / "package.json").read_text())
    # Aligned to the one target every admitting project may take, never past a gate.
    assert npm_app["dependencies"]["fresh"] == "^1.1.0"


def test_an_unreadable_gate_is_a_warning(world: Path, server: LoopbackRegistry) -> None:
    (world.parent / "yarn-app" / ".yarnrc.yml").write_text("npmMinimalAgeGate: soon\n")
    code, doc = run_json(*deps("scan", world, server))
    assert code == 0
    assert any(
        w.startswith("yarn-app: .yarnrc.yml: npmMinimalAgeGate 'soon' is not a duration")
        for w in doc["warnings"]
    )


@pytest.fixture
def home_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's ``~/.yarnrc.yml`` asks 3 days; a yarn berry project without a gate of its
    own, a yarn 1 project, an npm project, and yarn-app with its own 10-day gate."""
    setup_cli(monkeypatch, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".yarnrc.yml").write_text("npmMinimalAgeGate: 3d\n")
    monkeypatch.setenv("HOME", str(home))
    berry_lock = "__metadata:\n  version: 8\n"
    roots = {
        "berry-app": project(
            tmp_path / "berry-app", {"package.json": DEPS, "yarn.lock": berry_lock}
        ),
        "classic-app": project(
            tmp_path / "classic-app",
            {
                "package.json": {**DEPS, "packageManager": "yarn@1.22.22"},
                "yarn.lock": "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n",
            },
        ),
        "plain": project(tmp_path / "plain", {"package.json": DEPS, "package-lock.json": {}}),
        "yarn-app": project(
            tmp_path / "yarn-app",
            {
                "package.json": {**DEPS, "packageManager": "yarn@4.10.0"},
                "yarn.lock": "",
                ".yarnrc.yml": "npmMinimalAgeGate: 10d\n",
            },
        ),
    }
    return registry_file(tmp_path / "projects.json", roots)


def test_the_home_yarnrc_gate_holds_yarn_berry_projects_only(
    home_gate: Path, server: LoopbackRegistry
) -> None:
    code, doc = run_json(*deps("scan", home_gate, server))
    assert code == 0
    assert targets(doc, "fresh") == {
        "berry-app": ("^1.1.0", True),  # the home file's 3 days
        "classic-app": ("^1.2.0", False),  # yarn 1 never reads ~/.yarnrc.yml
        "plain": ("^1.2.0", False),
        "yarn-app": ("^1.0.0", True),  # its own 10 days win over the home file
    }
    held = {(h["project_name"], h["name"]): h["reason"] for h in doc["skipped_by_release_age"]}
    assert held[("berry-app", "fresh")] == (
        "1.2.0 is 24h old; npmMinimalAgeGate 3d in ~/.yarnrc.yml asks 3d"
    )
    assert "in .yarnrc.yml asks 10d" in held[("yarn-app", "fresh")]


def test_a_malformed_home_yarnrc_is_a_warning(home_gate: Path, server: LoopbackRegistry) -> None:
    home = Path(os.environ["HOME"])
    (home / ".yarnrc.yml").write_text("npmMinimalAgeGate: [unclosed\n")
    code, doc = run_json(*deps("scan", home_gate, server))
    assert code == 0
    assert targets(doc, "fresh")["berry-app"] == ("^1.2.0", False)
    assert [w for w in doc["warnings"] if w.startswith("berry-app: ~/.yarnrc.yml: ")], doc[
        "warnings"
    ]
