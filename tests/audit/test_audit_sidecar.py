"""The findings sidecar: validation before any write, the path rule, declines."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from builders import git
from tests.audit.builders import audit, audit_json, make_repo
from tether.audit.workspace import branch_slug

GOOD: dict[str, Any] = {
    "finding_class": "bats/hollow-assertion",
    "severity": "error",
    "path": "test/a.bats",
    "line": 12,
    "title": "assertion cannot fail the test",
    "failure_mode": "the check is false and the test passes",
    "verified_by": "ran the suite with the condition false",
    "suggested_fix": "append || return 1",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_repo(tmp_path, monkeypatch, {"a.sh": "echo a\n"}, name="feature/x.y")


def base_of(repo: Path) -> str:
    return git(repo, "rev-parse", "main").strip()


def write_findings(tmp_path: Path, document: object) -> str:
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(document))
    return str(path)


def audit_dir(repo: Path) -> Path:
    return repo / ".tether" / "audit"


def test_writes_atomically_to_the_keyed_path(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = base_of(repo)
    entry = {**GOOD, "security": False}  # keys tether does not know are kept
    code, doc = audit_json(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "shell",
        "--base-ref",
        base,
        "--findings",
        write_findings(tmp_path, [entry, {**GOOD, "path": "top.sh"}]),
        "--review-base",
        base,
        "--base-reason",
        "merge-base",
        "--anchor-tree",
        base[:12],
    )
    assert code == 0
    expected = f".tether/audit/{base}.feature%2Fx%2Ey.shell.findings.json"
    assert doc == {"schema_version": 1, "written": expected, "count": 2, "declined": None}
    written = json.loads((repo / expected).read_text())
    assert written["schema_version"] == 1 and written["member"] == "shell"
    assert written["findings"][0]["area_tags"] == ["test"]
    assert written["findings"][0]["security"] is False
    assert written["findings"][1]["area_tags"] == ["."]
    assert written["review_base"] == {"sha": base, "reason": "merge-base", "anchor_tree": base[:12]}
    assert (audit_dir(repo) / ".gitignore").read_text() == "*\n"
    assert git(repo, "status", "--porcelain").strip() == ""  # records never dirty the tree
    assert [p.name for p in audit_dir(repo).iterdir() if "tmp" in p.name] == []


def test_reads_findings_from_stdin_and_accepts_an_empty_report(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("[]"))
    code, out, _ = audit(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        base_of(repo),
        "--findings",
        "-",
    )
    assert code == 0 and "(0 findings)" in out


def test_gaia_profile_writes_under_gaia_local(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = audit_json(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--profile",
        "gaia",
        "--member",
        "code-audit-bash",
        "--base-ref",
        base_of(repo),
        "--findings",
        write_findings(tmp_path, []),
    )
    assert code == 0
    assert doc["written"].startswith(".gaia/local/audit/")
    assert doc["written"].endswith(".feature%2Fx%2Ey.code-audit-bash.findings.json")


INVALID = [
    ("not an object", "findings[1]: must be an object"),
    ({**GOOD, "finding_class": ""}, "findings[1]: finding_class must be a non-empty string"),
    ({**GOOD, "finding_class": 7}, "findings[1]: finding_class must be a non-empty string"),
    ({**GOOD, "path": "  "}, "findings[1]: path must be a non-empty string"),
    ({**GOOD, "severity": "critical"}, "findings[1]: severity must be one of"),
    ({**GOOD, "line": 0}, "findings[1]: line must be an integer >= 1"),
    ({**GOOD, "line": "3"}, "findings[1]: line must be an integer >= 1"),
    ({**GOOD, "line": True}, "findings[1]: line must be an integer >= 1"),
    ({**GOOD, "line": 2.5}, "findings[1]: line must be an integer >= 1"),
    ({k: v for k, v in GOOD.items() if k != "title"}, "findings[1]: title must be"),
    ({**GOOD, "failure_mode": ""}, "findings[1]: failure_mode must be a non-empty string"),
    ({**GOOD, "verified_by": None}, "findings[1]: verified_by must be a non-empty string"),
    ({**GOOD, "suggested_fix": " "}, "findings[1]: suggested_fix must be a non-empty string"),
    ({**GOOD, "area_tags": "test"}, "findings[1]: area_tags must be an array of strings"),
    ({**GOOD, "area_tags": ["ok", 3]}, "findings[1]: area_tags must be an array of strings"),
]


@pytest.mark.parametrize(("bad", "message"), INVALID)
def test_validation_names_the_first_offending_index_and_writes_nothing(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: object, message: str
) -> None:
    source = write_findings(tmp_path, [GOOD, bad, "also bad"])
    code, out, err = audit(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        base_of(repo),
        "--findings",
        source,
    )
    assert code == 2
    assert out == ""
    assert message in err
    assert not audit_dir(repo).exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "findings: not valid JSON"), ('{"a": 1}', "findings: must be a JSON array")],
)
def test_document_level_validation(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    source = tmp_path / "f.json"
    source.write_text(text)
    code, _, err = audit(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        base_of(repo),
        "--findings",
        str(source),
    )
    assert code == 2 and message in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--review-base", "abc1234"],  # no reason
        ["--base-reason", "merge-base"],  # no review base
        ["--review-base", "not-a-sha", "--base-reason", "x"],
        ["--review-base", "abc1234", "--base-reason", "two words"],
    ],
)
def test_review_base_arguments_are_checked(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    code, _, _ = audit(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        base_of(repo),
        "--findings",
        write_findings(tmp_path, []),
        *extra,
    )
    assert code == 2
    assert not audit_dir(repo).exists()


def test_bad_member_or_base_is_a_usage_error(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_findings(tmp_path, [])
    assert (
        audit(
            capsys,
            "findings",
            "write",
            "-C",
            str(repo),
            "--member",
            "../up",
            "--base-ref",
            base_of(repo),
            "--findings",
            source,
        )[0]
        == 2
    )
    assert (
        audit(
            capsys,
            "findings",
            "write",
            "-C",
            str(repo),
            "--member",
            "m",
            "--base-ref",
            "main/../x",
            "--findings",
            source,
        )[0]
        == 2
    )


def test_detached_head_and_empty_base_decline(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_findings(tmp_path, [GOOD])
    code, out, _ = audit(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        "",
        "--findings",
        source,
    )
    assert code == 0
    assert out.strip() == "findings-sidecar: declined: audit key unresolved (empty base)"
    git(repo, "checkout", "-q", "--detach")
    code, doc = audit_json(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "m",
        "--base-ref",
        base_of(repo),
        "--findings",
        source,
    )
    assert code == 0
    assert doc == {
        "schema_version": 1,
        "written": None,
        "count": 1,
        "declined": "audit key unresolved (detached HEAD)",
    }
    assert not audit_dir(repo).exists()


def test_branch_slug_percent_encodes_every_byte_outside_the_safe_set() -> None:
    assert branch_slug("main") == "main"
    assert branch_slug("feat/a_b-c") == "feat%2Fa_b-c"
    assert branch_slug("v1.2") == "v1%2E2"
    assert branch_slug("é %") == "%C3%A9%20%25"
    assert branch_slug("a/b") != branch_slug("a%2Fb")  # injective
