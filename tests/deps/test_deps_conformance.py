"""docs/conformance/commander.md stays true: its statuses, its count line, its tests; and the
few behaviours it names that no other test file shows."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "conformance" / "commander.md"
STATUSES = ("done", "different", "partial", "missing")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def rows() -> list[list[str]]:
    lines = [line for line in PAGE.read_text().splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[1:]]


def test_every_row_has_a_status_and_its_evidence() -> None:
    for ref, requirement, status, how in rows():
        assert ref and requirement and status in STATUSES, (ref, requirement)
        if status == "done":
            assert _TEST.search(how), f"done without a test: {requirement}"
        if status == "different":
            assert "docs/" in how, f"different without the page that says why: {requirement}"


def test_every_named_test_exists() -> None:
    for *_, how in rows():
        for path, name in _TEST.findall(how):
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{path}::{name}"


def test_the_count_line_matches_the_table() -> None:
    counts = Counter(status for _, _, status, _ in rows())
    numbers = ", ".join(f"{status} {counts[status]}" for status in STATUSES)
    assert f"Counts: {sum(counts.values())} requirements; {numbers}." in PAGE.read_text()


# --- behaviours the page names ----------------------------------------------------------------


def test_an_unknown_level_is_refused_before_anything_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup_cli(monkeypatch, tmp_path)
    reg = registry_file(tmp_path / "projects.json", {"app": tmp_path / "app"})
    for action in ("scan", "plan", "apply"):
        code, out, err = run_cli("deps", action, "--level", "huge", "--registry", str(reg))
        assert (code, out) == (2, ""), action
        assert "argument --level: invalid choice: 'huge'" in err
        assert "patch" in err and "engines" in err
    assert not (tmp_path / "state").exists()


def _two_managers(tmp_path: Path) -> Path:
    roots = {
        "web": project(
            tmp_path / "web",
            {
                "package.json": {"name": "web", "dependencies": {"alpha": "^1.0.0"}},
                "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            },
        ),
        "api": project(
            tmp_path / "api",
            {
                "package.json": {"name": "api", "dependencies": {"alpha": "^1.0.0"}},
                "package-lock.json": {},
            },
        ),
        "broken": project(tmp_path / "broken", {"package.json": '{"dependencies": {'}),
        "gone": tmp_path / "gone",
    }
    return registry_file(tmp_path / "projects.json", roots)


def test_mixed_package_managers_are_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    reg = _two_managers(tmp_path)
    args = ("deps", "plan", "--level", "minor", "--registry", str(reg), "--npm-registry")
    code, doc = run_json(*args, server.url)
    assert code == 0
    assert "mixed package managers across projects: pnpm (1), npm (1)" in doc["warnings"]


def test_the_plan_names_warnings_scan_failures_and_missing_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    reg = _two_managers(tmp_path)
    args = ("deps", "plan", "--level", "minor", "--registry", str(reg), "--npm-registry")
    code, out, _ = run_cli(*args, server.url)
    assert code == 0
    table = out.index("| package | proposed target | projects | locations |")
    warnings = out.index("## Warnings (1)\n- mixed package managers across projects")
    failed = out.index("## Skipped (scan-failed) (1)\n- broken:")
    missing = out.index(f"## Skipped (path missing) (1)\n- gone: {tmp_path / 'gone'}")
    assert table < min(warnings, failed, missing)
