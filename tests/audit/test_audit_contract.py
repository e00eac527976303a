"""The sidecar contract around a clearance: closed vocabulary, no sidecar in CI, no
clearance without its report, withholding on open findings, the re-run ledger and the
trailer line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders import git
from tests.audit.builders import (
    audit,
    audit_json,
    commit,
    head,
    start_review,
    write,
    write_report,
)

ROSTER = """members:
  - name: shell
    globs: ["scripts/**"]
"""
BASE = {".tether/audit.yml": ROSTER, "scripts/a.sh": "echo a\n"}


def finding(
    title: str, severity: str = "error", cls: str = "bats/hollow-assertion"
) -> dict[str, Any]:
    return {
        "finding_class": cls,
        "severity": severity,
        "path": "scripts/a.sh",
        "line": 1,
        "title": title,
        "failure_mode": "the check passes while the condition is false",
        "verified_by": "ran it with the condition false",
        "suggested_fix": "append || return 1",
    }


BRANCH = {"scripts/b.sh": "echo b\n"}  # the branch of conftest.py's repo


def clear(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> tuple[int, Any]:
    start_review(capsys, repo)
    return audit_json(capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", *extra)


def audit_files(repo: Path, suffix: str) -> list[str]:
    folder = repo / ".tether" / "audit"
    return sorted(p.name for p in folder.glob(f"*{suffix}")) if folder.exists() else []


def test_classes_outside_the_vocabulary_become_unclassified(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [finding("a"), finding("b", cls="made/up"), finding("c", cls="shellcheck/SC2086")]
    doc = write_report(capsys, repo, findings=entries)
    written = json.loads((repo / doc["written"]).read_text())
    assert [(f["finding_class"], f.get("original_class")) for f in written["findings"]] == [
        ("bats/hollow-assertion", None),
        ("holistic/unclassified", "made/up"),
        ("shellcheck/SC2086", None),
    ]
    entries = [finding("a"), finding("h", cls="holistic/hollow-assertion")]
    doc = write_report(capsys, repo, "shell", "--vocabulary", "gaia", findings=entries)
    written = json.loads((repo / doc["written"]).read_text())
    assert written["vocabulary"] == "gaia"
    assert [(f["finding_class"], f.get("original_class")) for f in written["findings"]] == [
        ("holistic/unclassified", "bats/hollow-assertion"),
        ("holistic/hollow-assertion", None),
    ]


def test_the_checkouts_own_gaia_schema_is_the_list(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(
        repo,
        "schema",
        {
            ".gaia/cli/src/schemas/finding-class.ts": (
                "export const HOLISTIC_FINDING_CLASSES = ['holistic/brand-new', "
                "'holistic/unclassified'] as const;\n"
            )
        },
    )
    entries = [finding("n", cls="holistic/brand-new"), finding("o", cls="holistic/stale-figure")]
    doc = write_report(capsys, repo, "shell", "--vocabulary", "gaia", findings=entries)
    written = json.loads((repo / doc["written"]).read_text())
    assert [f["finding_class"] for f in written["findings"]] == [
        "holistic/brand-new",
        "holistic/unclassified",
    ]


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_no_sidecar_is_written_in_ci(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    source = tmp_path / "f.json"
    source.write_text("[]")
    monkeypatch.setenv(variable, "true")
    base = git(repo, "rev-parse", "main").strip()
    args = ["-C", str(repo), "--member", "shell", "--base-ref", base, "--findings", str(source)]
    code, doc = audit_json(capsys, "findings", "write", *args)
    assert (code, doc["written"]) == (0, None)
    assert doc["declined"] == "CI run (CI or GITHUB_ACTIONS is set)"
    assert audit_files(repo, ".findings.json") == []
    monkeypatch.setenv(variable, "false")
    code, doc = audit_json(capsys, "findings", "write", *args)
    assert code == 0 and doc["written"]


def test_a_clearance_needs_the_sidecar_for_its_digest(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = clear(capsys, repo, "earned")
    assert code == 1 and str(doc["withheld"]).startswith("withheld: no findings sidecar")
    assert audit_files(repo, ".ok") == []
    write_report(capsys, repo)
    assert clear(capsys, repo, "earned")[0] == 0
    for sidecar in (repo / ".tether" / "audit").glob("*.findings.json"):
        sidecar.unlink()  # the report is lost: the marker alone must not clear the gate
    code, doc = audit_json(capsys, "gate", "-C", str(repo), "--members", "shell")
    assert code == 3
    assert doc["members"][0]["status"] == "pending"
    assert doc["members"][0]["note"].startswith("lost report")
    # A sidecar for an older digest does not count either.
    write_report(capsys, repo)
    commit(repo, "edit", {"scripts/a.sh": "echo a2\n"})
    code, doc = clear(capsys, repo, "earned")
    assert code == 1 and "no findings sidecar" in str(doc["withheld"])


def test_a_withheld_rounds_sidecar_names_the_dirty_paths(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo, {"scripts/a.sh": "echo uncommitted\n"})
    doc = write_report(capsys, repo)
    assert json.loads((repo / doc["written"]).read_text())["dirty"] == ["scripts/a.sh"]
    code, result = clear(capsys, repo, "earned")
    assert code == 1 and result["dirty"] == ["scripts/a.sh"]


def test_open_errors_and_warnings_withhold_unless_acknowledged(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_report(capsys, repo, findings=[finding("w", "warning"), finding("s", "suggestion")])
    code, doc = clear(capsys, repo, "earned")
    assert code == 1 and "1 warning findings (Important) stand" in str(doc["withheld"])
    assert audit_files(repo, ".ok") == []
    code, doc = clear(capsys, repo, "earned", "--acknowledge", "accepted by the maintainer")
    assert code == 0
    marker = json.loads((repo / doc["written"]).read_text())
    assert marker["acknowledged"]["reason"] == "accepted by the maintainer"
    assert [f["title"] for f in marker["acknowledged"]["findings"]] == ["w"]
    write_report(capsys, repo, findings=[finding("s", "suggestion")])
    assert clear(capsys, repo, "earned")[0] == 0  # suggestions never withhold


def test_the_rerun_ledger_records_what_the_last_round_fixed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_report(capsys, repo, findings=[finding("first"), finding("second")])
    code, doc = clear(capsys, repo, "refused")
    assert code == 0
    assert [f["title"] for f in doc["remaining"]] == ["first", "second"]
    assert doc["fixed_last_round"] == []
    ledger = audit_files(repo, ".rerun.json")
    assert len(ledger) == 1

    commit(repo, "fix first", {"scripts/a.sh": "echo fixed\n"})
    fix = head(repo)
    write_report(capsys, repo, findings=[{**finding("second"), "line": 7}])  # moved, not fixed
    code, doc = clear(capsys, repo, "refused")
    assert [f["title"] for f in doc["remaining"]] == ["second"]
    assert [(f["title"], f["fixed_in"]) for f in doc["fixed_last_round"]] == [("first", fix)]
    write_report(capsys, repo, findings=[{**finding("second"), "line": 7}])
    code, out, _ = audit(
        capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", "refused"
    )
    assert "  remaining: scripts/a.sh:7 second" in out
    assert "  fixed last round: scripts/a.sh:1 first" in out
    recorded = json.loads((repo / ".tether" / "audit" / ledger[0]).read_text())
    assert [f["title"] for f in recorded["members"]["shell"]["remaining"]] == ["second"]

    commit(repo, "fix second", {"scripts/a.sh": "echo fixed twice\n"})
    fix = head(repo)
    write_report(capsys, repo)
    code, doc = clear(capsys, repo, "earned")
    assert code == 0 and doc["remaining"] == []
    assert [(f["title"], f["fixed_in"]) for f in doc["fixed_last_round"]] == [("second", fix)]
    assert audit_files(repo, ".rerun.json") == []  # nothing left for anyone


def test_gate_prints_the_member_trailer_only_when_cleared(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["-C", str(repo), "--members", "shell", "--trailer"]
    code, doc = audit_json(capsys, "gate", *args)
    assert (code, doc["trailers"]) == (3, [])
    write_report(capsys, repo)
    assert clear(capsys, repo, "earned")[0] == 0
    code, doc = audit_json(capsys, "gate", *args)
    digest = doc["members"][0]["digest"]
    assert (code, doc["trailers"]) == (0, [f"shell-Audit: 0.1.0 {digest}"])
    commit(repo, "version", {".gaia/VERSION": "4.2.0\n"})
    code, out, _ = audit(capsys, "gate", *args)
    assert f"shell-Audit: 4.2.0 {digest}" in out
    assert git(repo, "log", "-1", "--format=%s").strip() == "version"  # tether committed nothing
