"""The few behaviours docs/conformance/commander.md names that no other test file shows (the
page itself is held true by tests/architecture/test_conformance_citations.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry

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
