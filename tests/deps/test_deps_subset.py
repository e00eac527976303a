"""``tether deps apply`` in deep mode: a subset picked by exact package name or by any part
of an improvement title of the plan folder's dossier (``--select`` or pick-subset at the
gate), and the stop/continue question after a failed project on a terminal
(``--continue-on-failure`` for scripts; without a person the run stops).

A loopback registry on 127.0.0.1 serves the packuments. ``npm`` is a stand-in script first on
PATH that records its argv and always fails, so every install fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fixtures.deps.deep import PACKUMENTS, PAGES
from fixtures.deps.kit import calls, run_cli, run_json, stand_in
from fixtures.deps.loopback import LoopbackRegistry

IMPROVEMENTS = (
    "- @scope: adopt the new `two` function (group: scope:@scope; affects: web, api)\n"
    "- React: drop the legacy polyfill (affects: shop)\n"
)


SERVED = {"packuments": PACKUMENTS, "pages": dict(PAGES)}  # what the registry serves (conftest.py)


def apply_args(world: Path, server: LoopbackRegistry, *extra: str) -> list[str]:
    return [
        "deps", "apply", "--level", "minor", "--registry", str(world), "--npm-registry",
        server.url, "--isolate", "none", *extra,
    ]  # fmt: skip


def dependencies(root: Path) -> dict[str, str]:
    return dict(json.loads((root / "package.json").read_text())["dependencies"])


def filled_dossier(world: Path, server: LoopbackRegistry, tmp_path: Path) -> Path:
    folder = tmp_path / "plan"
    args = ("deps", "plan", "--level", "minor", "--registry", str(world))
    assert run_cli(*args, "--npm-registry", server.url, "--plan-dir", str(folder))[0] == 0
    assert run_cli("deps", "dossier", "--plan-dir", str(folder))[0] == 0
    md = folder / "dossier.md"
    head, _, tail = md.read_text().partition("## Improvements\n")
    body, _, rest = tail.partition("## Workarounds resolved\n")
    md.write_text(
        head
        + "## Improvements\n"
        + body.replace("_none yet_\n", IMPROVEMENTS)
        + "## Workarounds resolved\n"
        + rest
    )
    return folder


# --- subset selection --------------------------------------------------------------------


def test_select_applies_exact_packages_and_keeps_matching_improvements(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    folder = filled_dossier(world, server, tmp_path)
    web_before = dependencies(tmp_path / "web")
    argv = apply_args(world, server, "--yes", "--no-install", "--plan-dir", str(folder))
    code, doc = run_json(*argv, "--select", "@scope/one, the NEW `two`")
    assert code == 0, doc
    web = dependencies(tmp_path / "web")
    assert web["@scope/one"] == "^1.2.0"
    assert {k: v for k, v in web.items() if k != "@scope/one"} == {
        k: v for k, v in web_before.items() if k != "@scope/one"
    }
    assert dependencies(tmp_path / "shop") == {"react": "^18.2.0"}
    assert [p["name"] for p in doc["applied"]] == ["web"]
    assert "react" in [p["name"] for p in doc["skipped_by_user"]]
    assert doc["selected_improvements"] == [
        {
            "title": "@scope: adopt the new `two` function",
            "group": "scope:@scope",
            "projects": ["web", "api"],
        }
    ]
    assert doc["skipped_improvements"] == [
        {
            "title": "React: drop the legacy polyfill",
            "group": None,
            "projects": ["shop"],
            "reason": "not selected",
        }
    ]
    assert any("selected improvement(s)" in step for step in doc["suggested_next_steps"])


def test_an_unknown_selection_is_a_usage_error_and_nothing_is_written(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    folder = filled_dossier(world, server, tmp_path)
    before = {name: dependencies(tmp_path / name) for name in ("web", "api", "shop")}
    argv = apply_args(world, server, "--yes", "--no-install", "--plan-dir", str(folder))
    code, out, err = run_cli(*argv, "--select", "react,React-DOM,nope")
    assert code == 2 and out == ""
    assert err.startswith(
        "tether: --select names nothing of this plan: React-DOM, nope (packages: "
    )
    assert (
        "improvements: @scope: adopt the new `two` function; React: drop the legacy polyfill)"
        in err
    )
    assert {name: dependencies(tmp_path / name) for name in before} == before
    assert not (tmp_path / "state" / "tether" / "runs").exists()
    code, _, err = run_cli(*apply_args(world, server, "--yes", "--select", "polyfill"))
    assert code == 2 and "--plan-dir DIR names the folder of a filled dossier" in err


def test_pick_subset_asks_what_to_apply_when_a_dossier_offers_improvements(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    folder = filled_dossier(world, server, tmp_path)
    argv = apply_args(world, server, "--no-install", "--plan-dir", str(folder))
    code, out, err = run_cli(*argv, stdin="all\np\nnope\n@scope/one,POLYFILL\n")
    assert code == 0, err
    assert "Improvements in the dossier: @scope: adopt the new `two` function; React: drop" in err
    assert "Matches nothing: nope." in err
    assert dependencies(tmp_path / "web")["@scope/one"] == "^1.2.0"
    assert dependencies(tmp_path / "web")["react"] == "^18.2.0"
    assert "## Improvements to take up (1)\n- React: drop the legacy polyfill → shop" in out
    assert "## Improvements not selected (1)\n- @scope: adopt the new `two` function" in out


def test_picking_only_improvements_applies_nothing_and_lists_them(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    folder = filled_dossier(world, server, tmp_path)
    before = {name: dependencies(tmp_path / name) for name in ("web", "api", "shop")}
    argv = apply_args(world, server, "--no-install", "--plan-dir", str(folder), "--json")
    code, out, _ = run_cli(*argv, stdin="all\np\ntwo\n")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "nothing" and doc["run_dir"] is None
    assert {name: dependencies(tmp_path / name) for name in before} == before
    assert [i["title"] for i in doc["selected_improvements"]] == [
        "@scope: adopt the new `two` function"
    ]
    assert not (tmp_path / "state" / "tether" / "runs").exists()


# --- a failed project: stop or go on -----------------------------------------------------------


def failing_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return stand_in(tmp_path, monkeypatch, "npm", fail_unless=tmp_path / "never")


def names(doc: dict[str, Any], key: str) -> list[str]:
    return [p["name"] for p in doc[key]]


QUESTION = "web failed at install (exit 1); 2 project(s) not yet applied. [s]top here or [c]ontinue"


def test_on_a_terminal_each_failure_asks_whether_to_go_on(
    world: Path, server: LoopbackRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = failing_npm(tmp_path, monkeypatch)
    code, out, err = run_cli(*apply_args(world, server, "--json"), stdin="all\na\nc\nx\ns\n")
    doc = json.loads(out)
    assert code == 1
    assert QUESTION in err
    assert "api failed at install (exit 1); 1 project(s) not yet applied." in err
    assert names(doc, "failed") == ["web", "api"] and names(doc, "pending") == ["shop"]
    assert doc["status"] == "stopped"
    assert [c["cwd"] for c in calls(record)] == [str(tmp_path / "web"), str(tmp_path / "api")]


def test_the_end_of_input_at_the_question_stops(
    world: Path, server: LoopbackRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_npm(tmp_path, monkeypatch)
    code, out, err = run_cli(*apply_args(world, server, "--json"), stdin="all\na\n")
    doc = json.loads(out)
    assert code == 1 and QUESTION in err
    assert names(doc, "failed") == ["web"] and names(doc, "pending") == ["api", "shop"]


def test_scripts_stop_unless_told_to_continue(
    world: Path, server: LoopbackRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = failing_npm(tmp_path, monkeypatch)
    code, doc = run_json(*apply_args(world, server, "--yes"))
    assert code == 1 and names(doc, "pending") == ["api", "shop"]
    code, out, err = run_cli(*apply_args(world, server, "--yes", "--json"), stdin="c\n")
    assert "not yet applied" not in err  # --yes never asks, even on a terminal
    assert names(json.loads(out), "pending") == ["api", "shop"]
    code, doc = run_json(*apply_args(world, server, "--yes", "--continue-on-failure"))
    assert code == 1 and names(doc, "failed") == ["web", "api", "shop"]
    assert doc["status"] == "done" and doc["pending"] == []
    assert len(calls(record)) == 1 + 1 + 3


# --- the researched plan -----------------------------------------------------------------


def test_the_gate_names_the_dossier_by_path_and_digest(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    """Before the one confirmation: the dossier's path and sha256, its counts and the
    improvement titles with the projects they affect, never its bodies."""
    import hashlib

    folder = filled_dossier(world, server, tmp_path)
    digest = hashlib.sha256((folder / "dossier.md").read_bytes()).hexdigest()
    argv = apply_args(world, server, "--no-install", "--plan-dir", str(folder))
    code, out, err = run_cli(*argv, stdin="all\nc\n")
    assert code == 0 and out.rstrip().endswith("Cancelled. No files modified.")
    assert f"Dossier: {folder / 'dossier.md'} (sha256 {digest[:16]})" in err
    assert "  Improvements (2):" in err
    assert "  - @scope: adopt the new `two` function (affects: web, api)" in err
    assert "  - React: drop the legacy polyfill (affects: shop)" in err
    assert err.index("Dossier: ") < err.index("Apply ")


def test_apply_with_a_plan_folder_applies_its_plan_or_nothing(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    """The plan kept in the folder (the one the notes and the dossier are about) is the plan
    applied: a project changed since is named and nothing is written; the folder's plan
    files are never rewritten."""
    folder = filled_dossier(world, server, tmp_path)
    kept = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".json"}
    web = tmp_path / "web"
    original = (web / "package.json").read_text()
    (web / "package.json").write_text(
        original.replace('"@scope/one": "^1.0.0"', '"@scope/one": "^1.2.0"')
    )
    before = {p: p.read_bytes() for p in tmp_path.rglob("package.json") if "state" not in p.parts}
    argv = apply_args(world, server, "--yes", "--no-install", "--plan-dir", str(folder))
    code, out, err = run_cli(*argv)
    assert (code, out) == (1, "")
    assert f"tether: {folder}: the plan kept there is not what the projects give now (web: " in err
    assert "@scope/one ^1.0.0 no longer moves to ^1.2.0" in err
    assert err.rstrip().endswith(
        "nothing was written (plan again with --plan-dir, or apply without it)"
    )
    assert {p: p.read_bytes() for p in before} == before
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".json"} == kept

    (web / "package.json").write_text(original)
    code, doc = run_json(*argv)
    assert code == 0 and [p["name"] for p in doc["applied"]] == ["web", "api", "shop"], doc
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix == ".json"} == kept
