"""The incremental review base: the member's own clearance, then a trailer, else the
fork point; an unresolvable full base is exit 1, never an empty list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import git
from tests.audit.builders import audit, audit_json, commit, make_repo, start_review, write_report

ROSTER = """members:
  - name: shell
    globs: ["scripts/**"]
"""
BASE = {".tether/audit.yml": ROSTER, "scripts/a.sh": "echo a\n", "README.md": "r\n"}


BRANCH = {"scripts/a.sh": "echo a2\n"}  # the branch of conftest.py's repo


def scope(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> dict[str, object]:
    code, doc = audit_json(capsys, "scope", "-C", str(repo), "--member", "shell", *extra)
    assert code == 0, doc
    return doc


def test_without_an_anchor_the_base_is_the_fork_point(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fork = git(repo, "rev-parse", "main").strip()
    doc = scope(capsys, repo)
    assert doc["review_base"] == {"sha": fork, "reason": "no-anchor", "anchor_tree": ""}
    assert doc["key_base"] == fork
    assert doc["files"] == ["scripts/a.sh"]
    code, out, _ = audit(capsys, "digest", "-C", str(repo), "--member", "shell")
    assert (code, doc["scope_digest"]) == (0, out.strip())


def test_the_members_own_clearance_anchors_the_next_round(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cleared_at = git(repo, "rev-parse", "HEAD").strip()
    _earn(capsys, repo)
    commit(repo, "second", {"scripts/b.sh": "echo b\n"})
    doc = scope(capsys, repo)
    assert doc["review_base"] == {
        "sha": cleared_at,
        "reason": "member-clearance",
        "anchor_tree": git(repo, "rev-parse", f"{cleared_at}^{{tree}}").strip(),
    }
    assert doc["files"] == ["scripts/b.sh"]  # the increment since the clearance
    assert doc["branch"]["files"] == ["scripts/a.sh", "scripts/b.sh"]  # the whole branch
    assert doc["key_base"] == git(repo, "rev-parse", "main").strip()


def test_a_trailer_anchors_when_the_member_has_no_clearance(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, "stamp\n\nshell-Audit: 0.1.0 abc123")
    stamped = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "later", {"scripts/c.sh": "echo c\n"})
    doc = scope(capsys, repo)
    assert doc["review_base"]["sha"] == stamped
    assert doc["review_base"]["reason"] == "trailer"
    assert doc["files"] == ["scripts/c.sh"]


def test_an_explicit_base_is_recorded_as_such(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = scope(capsys, repo, "--base-ref", "main")
    assert doc["review_base"]["reason"] == "explicit"


def test_no_default_branch_is_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, BASE, {"scripts/a.sh": "echo 2\n"})
    git(repo, "branch", "-q", "-m", "main", "trunk")
    code, out, err = audit(capsys, "scope", "-C", str(repo), "--member", "shell")
    assert (code, out) == (1, "")
    assert "cannot resolve the full base: no default branch" in err


def test_no_shared_history_is_exit_1(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, "unrelated", {"scripts/x.sh": "echo x\n"})
    code, out, err = audit(capsys, "scope", "-C", str(repo), "--member", "shell")
    assert (code, out) == (1, "")
    assert "HEAD shares no history with main" in err


def test_the_no_anchor_form_of_anchor_tree_is_accepted(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = tmp_path / "f.json"
    findings.write_text("[]")
    fork = git(repo, "rev-parse", "main").strip()
    code, doc = audit_json(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        "shell",
        "--base-ref",
        fork,
        "--review-base",
        fork,
        "--base-reason",
        "no-anchor",
        "--anchor-tree",
        "",
        "--findings",
        str(findings),
    )
    assert code == 0, doc
    written = json.loads((repo / doc["written"]).read_text())
    assert written["review_base"] == {"sha": fork, "reason": "no-anchor", "anchor_tree": ""}


def _earn(capsys: pytest.CaptureFixture[str], repo: Path) -> None:
    start_review(capsys, repo)
    write_report(capsys, repo)
    code, doc = audit_json(
        capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", "earned"
    )
    assert code == 0, doc


def test_why_the_whole_branch_has_no_list_is_a_code_worded_in_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path
) -> None:
    # The scope finds why (a code, with the default branch as data); report/audit words it
    # in the text and the JSON document.
    from tether.audit.roster import Remit
    from tether.audit.scope import BranchScope, NoBranchList, Scope, branch_scope
    from tether.report.audit import render_scope, scope_document

    (tmp_path / "trunk").mkdir()
    trunk = make_repo(tmp_path / "trunk", monkeypatch, BASE, {"scripts/a.sh": "echo 2\n"})
    git(trunk, "branch", "-q", "-m", "main", "trunk")
    everything = Remit(None, ())
    assert branch_scope(trunk, everything) == BranchScope(
        None, None, (), NoBranchList.NO_DEFAULT_BRANCH
    )
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, "unrelated", {"scripts/x.sh": "echo x\n"})
    unrelated = branch_scope(repo, everything)
    assert unrelated == BranchScope("main", None, (), NoBranchList.NO_SHARED_HISTORY)
    found = Scope("main", "a" * 40, "b" * 40, (), (), unrelated, ())
    document = scope_document(found, repo, everything)
    assert document["branch"] == {
        "default_branch": "main",
        "fork_point": None,
        "files": [],
        "deleted": [],
        "reason": "HEAD shares no history with main",
    }
    assert "whole branch since main: unavailable (HEAD shares no history with main)" in (
        render_scope(found)
    )
    lost = Scope(
        "x",
        "a" * 40,
        "b" * 40,
        (),
        (),
        BranchScope(None, None, (), NoBranchList.NO_DEFAULT_BRANCH),
        (),
    )
    assert "whole branch: unavailable (no default branch (origin/HEAD, main, master))" in (
        render_scope(lost)
    )
    assert (
        "reason"
        not in scope_document(
            Scope("x", "a" * 40, "b" * 40, (), (), BranchScope("main", "c" * 40, ()), ()),
            repo,
            everything,
        )["branch"]
    )
