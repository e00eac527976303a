"""``--level engines``: one Node LTS and one version per package manager for the whole run.

Fixture facts: the Node index's newest LTS is 22.16.0 (2025-05-21), then 22.15.1
(2025-05-14); 24.1.0 and 23.11.1 are not LTS. pnpm's latest is 10.11.0 (2025-05-12).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import FIXTURES, LoopbackRegistry
from tether.deps.model import LeftAlone
from tether.deps.surfaces import engine_declared
from tether.report.deps import left_alone


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    app = project(
        tmp_path / "app",
        {
            "package.json": {
                "name": "app",
                "private": True,
                "packageManager": "pnpm@9.0.0+sha512.abcdef",
                "engines": {"node": ">=20.11.0", "pnpm": "^9.0.0"},
                "volta": {"node": "20.11.1"},
            },
            ".nvmrc": "v20.11.1\n",
            ".node-version": "20\n",
            ".tool-versions": "nodejs 20.11.1\npnpm 9.0.0   # pinned\npython 3.12.1\n",
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
        },
    )
    lib = project(
        tmp_path / "lib",
        {
            "package.json": {
                "name": "lib",
                "engines": {"node": ">=18"},
                "packageManager": "pnpm@10.11.0",
            },
            ".nvmrc": "24\n",
        },
    )
    alias = project(tmp_path / "alias", {".nvmrc": "lts/iron\n"})
    return registry_file(tmp_path / "projects.json", {"app": app, "lib": lib, "alias": alias})


def engines(registry: Path, server: LoopbackRegistry, *args: str) -> list[str]:
    return [
        "deps",
        *args,
        "--level",
        "engines",
        "--registry",
        str(registry),
        "--npm-registry",
        server.url,
        "--node-index",
        str(FIXTURES / "node-index.json"),
    ]


def test_plan_converges_runtime_loci(projects: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*engines(projects, server, "plan"))
    assert code == 0
    proposed = {p["name"]: p["proposed_target"] for p in doc["packages"]}
    assert proposed == {"node": "22.16.0", "pnpm": "10.11.0"}  # volta.node is read first
    node = next(p for p in doc["packages"] if p["name"] == "node")
    found = {(o["project_name"], o["location"]): o["effective_target"] for o in node["occurrences"]}
    assert found == {
        ("app", "engines.node"): ">=22.16.0",
        ("app", "volta.node"): "22.16.0",
        ("app", ".nvmrc"): "v22.16.0",
        ("app", ".node-version"): "22",
        ("app", ".tool-versions nodejs"): "22.16.0",
        ("lib", ".nvmrc"): "24",  # never moved down
    }
    reasons = {(s["project_name"], s["name"]): s["reason"] for s in doc["skipped"]}
    assert "published package" in reasons[("lib", "node")]
    assert "alias" in reasons[("alias", "node")]
    assert any(
        "lib: node 24" in w and "newer than the run's target 22.16.0" in w for w in doc["warnings"]
    )


def test_apply_writes_each_locus_in_place(projects: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*engines(projects, server, "apply", "--yes"))
    assert code == 0, doc
    app = projects.parent / "app"
    assert (app / ".nvmrc").read_text() == "v22.16.0\n"
    assert (app / ".node-version").read_text() == "22\n"
    assert (app / ".tool-versions").read_text() == (
        "nodejs 22.16.0\npnpm 10.11.0   # pinned\npython 3.12.1\n"
    )
    manifest = json.loads((app / "package.json").read_text())
    assert manifest["engines"] == {"node": ">=22.16.0", "pnpm": "^10.11.0"}
    assert manifest["volta"] == {"node": "22.16.0"}
    assert manifest["packageManager"] == "pnpm@10.11.0"
    assert any("without its integrity hash" in w for w in doc["warnings"])
    lib = json.loads((projects.parent / "lib" / "package.json").read_text())
    assert lib["engines"] == {"node": ">=18"}  # a published library's support range
    assert [s["step"] for s in doc["applied"][0]["steps"]] == ["edit"]  # no install for engines


def test_cooldown_picks_the_previous_lts(projects: Path, server: LoopbackRegistry) -> None:
    _, doc = run_json(*engines(projects, server, "plan", "--min-release-age", "14d"))
    node = next(p for p in doc["packages"] if p["name"] == "node")
    targets = {o["effective_target"] for o in node["occurrences"]}
    assert "v22.15.1" in targets and ">=22.15.1" in targets


@pytest.mark.parametrize(
    ("text", "shown"),
    [("v20.11.1", "v20.11.1"), ("20", "20"), (">=20.11", ">=20.11"), ("^9.0.0", "^9.0.0")],
)
def test_engine_versions_keep_their_shape(text: str, shown: str) -> None:
    declared = engine_declared(text)
    assert not isinstance(declared, str) and declared.shown == shown


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("lts/*", "an alias, not a version: it moves by itself"),
        (">=18 <21", "not a single version or simple range: cannot be rewritten faithfully"),
        ("18 || 20", "not a single version or simple range: cannot be rewritten faithfully"),
        ("node", "an alias, not a version: it moves by itself"),
    ],
)
def test_engine_versions_not_rewritten(text: str, why: str) -> None:
    left = engine_declared(text)
    assert isinstance(left, LeftAlone) and left_alone(left) == why


def test_override_families_are_not_consulted_at_engines(
    projects: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    """Families of package names mean nothing for runtime and package-manager pins: an
    entry that would match ``pnpm`` binds nothing, asks nothing and runs nothing, and the
    engines still converge."""
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        "- id: pm\n  match: [pnpm, node]\n  command: touch override-ran\n  versionSource: latest\n"
    )
    code, plan = run_json(*engines(projects, server, "plan", "--overrides", str(overrides)))
    assert code == 0 and plan["overrides"] == []
    assert not any(p.get("override") for p in plan["packages"])
    code, doc = run_json(
        *engines(projects, server, "apply", "--yes", "--overrides", str(overrides))
    )
    assert code == 0, doc
    assert doc["overrides"] == []
    assert (
        json.loads((projects.parent / "app" / "package.json").read_text())["packageManager"]
        == "pnpm@10.11.0"
    )
    assert not list(projects.parent.rglob("override-ran"))


def test_engines_ask_no_conflict_question_and_a_precision_is_no_split(
    projects: Path, server: LoopbackRegistry
) -> None:
    """Every locus takes the run's one target, so the engines level has no conflict to
    decide: on a terminal the only question is the confirmation. ``22`` and ``v22.16.0``
    are the same target written at their own precision: the row does not split."""
    code, out, err = run_cli(*engines(projects, server, "apply"), stdin="all\nc\n")
    assert code == 0 and out.rstrip().endswith("Cancelled. No files modified.")
    assert "conflicting targets" not in err and "Override" not in err
    assert "Conflict policy: use-max-where-possible (no conflicting package)" in err
    [node] = [line for line in err.splitlines() if line.startswith("| node")]
    assert node.split(" | ")[:2] == ["| node", "22.16.0"]
    assert "per-project targets" not in err


def test_a_pin_above_the_target_moves_down_only_when_asked(
    projects: Path, server: LoopbackRegistry
) -> None:
    """lib's .nvmrc says 24, above the run's Node target 22.16.0: surfaced and left as it is
    unless ``--converge-engines`` asks for every pin to take the run's target."""
    lib = projects.parent / "lib"
    code, doc = run_json(*engines(projects, server, "apply", "--yes"))
    assert code == 0, doc
    assert (lib / ".nvmrc").read_text() == "24\n"
    code, doc = run_json(*engines(projects, server, "apply", "--yes", "--converge-engines"))
    assert code == 0, doc
    assert (lib / ".nvmrc").read_text() == "22\n"
    assert any(
        "lib: node 24 (.nvmrc) is newer than the run's target 22.16.0; moved to it "
        "(--converge-engines)" in w
        for w in doc["warnings"]
    )
    minor = [a if a != "engines" else "minor" for a in engines(projects, server, "plan")]
    code, _, err = run_cli(*minor, "--converge-engines")
    assert code == 2 and "--converge-engines goes with --level engines" in err
