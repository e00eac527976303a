"""A clearance binds to the bytes a review saw: acknowledgement, withheld rounds, the scope
capture, GAIA's machinery, the VERSION-scoped anchor, deletions and ``--diff-only``.

Every test runs the real command line against a real git repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders import git
from tests.audit.builders import audit, audit_json, commit, head, make_repo, write, write_report

ROSTER = """members:
  - name: shell
    globs: ["scripts/**", "tests/**"]
"""
BASE = {
    ".tether/audit.yml": ROSTER,
    "scripts/a.sh": "#!/bin/bash\nset -e\necho a\n",
    "README.md": "readme\n",
}


BRANCH = {"scripts/b.sh": "#!/bin/bash\nset -e\necho b\n"}  # the branch of conftest.py's repo


def finding(severity: str, line: int = 2) -> dict[str, Any]:
    return {
        "finding_class": "holistic/unclassified",
        "severity": severity,
        "path": "scripts/b.sh",
        "line": line,
        "title": f"a {severity}",
        "failure_mode": "input x makes it do y",
        "verified_by": "ran it on x",
        "suggested_fix": "do z",
    }


def scope(capsys: pytest.CaptureFixture[str], repo: Path, *extra: str) -> dict[str, Any]:
    code, doc = audit_json(capsys, "scope", "-C", str(repo), "--member", "shell", *extra)
    assert code == 0, doc
    return dict(doc)


def clear(
    capsys: pytest.CaptureFixture[str], repo: Path, *extra: str, provenance: str = "earned"
) -> tuple[int, dict[str, Any]]:
    code, doc = audit_json(
        capsys,
        "clear",
        "-C",
        str(repo),
        "--member",
        "shell",
        "--provenance",
        provenance,
        *extra,
    )
    return code, dict(doc)


def markers(repo: Path, folder: str = ".tether/audit") -> list[str]:
    place = repo / folder
    if not place.is_dir():
        return []
    return sorted(p.name for p in place.iterdir() if p.name.endswith((".ok", ".refused")))


# --- 1. --acknowledge accepts Important only ---------------------------------------------


def test_acknowledge_never_clears_an_error_finding(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scope(capsys, repo)
    write_report(capsys, repo, findings=[finding("error"), finding("warning", 3)])
    code, result = clear(capsys, repo, "--acknowledge", "we accept the risk")
    assert code == 1 and result["written"] is None
    assert "error" in str(result["withheld"]) and "--acknowledge" in str(result["withheld"])
    assert markers(repo) == []


def test_acknowledge_clears_standing_warnings_with_the_reason(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scope(capsys, repo)
    write_report(capsys, repo, findings=[finding("warning"), finding("suggestion", 3)])
    assert clear(capsys, repo)[0] == 1  # a warning withholds without a reason
    code, result = clear(capsys, repo, "--acknowledge", "portable enough for CI")
    assert code == 0, result
    record = json.loads((repo / str(result["written"])).read_text())
    assert record["acknowledged"]["reason"] == "portable enough for CI"
    assert [f["severity"] for f in record["acknowledged"]["findings"]] == ["warning"]


# --- 2. a withheld (dirty) round's report never clears later content ---------------------

HOLLOW_AT_HEAD = "#!/bin/bash\nset -e\ndeclare -A seen\necho b\n"


def test_a_report_written_over_a_dirty_tree_never_clears_after_a_revert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, BASE, {"scripts/b.sh": HOLLOW_AT_HEAD})
    scope(capsys, repo)
    # The operator fixes the file in the working tree only; the review reads those bytes.
    write(repo, {"scripts/b.sh": "#!/bin/bash\nset -e\necho b\n"})
    code, report = audit_json(capsys, "shell", "-C", str(repo), "--member", "shell")
    assert code == 0 and report["findings"] == []
    sidecar = write_report(capsys, repo, findings=report["findings"])
    written = json.loads((repo / sidecar["written"]).read_text())
    assert written["dirty"] == ["scripts/b.sh"]
    git(repo, "checkout", "--", "scripts/b.sh")  # HEAD's bytes, error and all, are back
    code, result = clear(capsys, repo)
    assert code == 1 and markers(repo) == []
    assert "uncommitted" in str(result["withheld"])
    # A fresh review of the committed bytes is what clears (or here, withholds) HEAD.
    code, report = audit_json(capsys, "shell", "-C", str(repo), "--member", "shell")
    assert code == 3 and {f["finding_class"] for f in report["findings"]} >= {"bash32/assoc-array"}
    write_report(capsys, repo, findings=report["findings"])
    code, result = clear(capsys, repo)
    assert code == 1 and "error" in str(result["withheld"]) and markers(repo) == []


def test_a_dirty_round_writes_no_refusal_either(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scope(capsys, repo)
    write(repo, {"scripts/b.sh": "echo edited\n"})
    write_report(capsys, repo)
    git(repo, "checkout", "--", "scripts/b.sh")
    code, result = clear(capsys, repo, provenance="refused")
    assert code == 1 and "uncommitted" in str(result["withheld"])
    assert markers(repo) == []


# --- 3. the scope digest is captured when the review starts ------------------------------


def test_a_second_scope_returns_the_first_capture_and_clear_refuses_moved_content(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = scope(capsys, repo)
    reviewed = first["scope_digest"]
    commit(repo, "late edit", {"scripts/b.sh": "echo b2\n"})
    again = scope(capsys, repo)
    assert again["scope_digest"] == reviewed  # not silently adopted
    assert first["content_digest"] == reviewed
    assert again["content_digest"] != reviewed and again["scope_superseded"] is True
    write_report(capsys, repo)  # a report for the new content nobody reviewed
    before = sorted(p.name for p in (repo / ".tether/audit").iterdir())
    code, result = clear(capsys, repo)  # no --scope-digest: the capture decides
    assert code == 1 and str(result["withheld"]).startswith("review scope superseded")
    assert markers(repo) == []
    after = sorted(p.name for p in (repo / ".tether/audit").iterdir())
    assert [name for name in after if name not in before] == []  # nothing written
    # The refusal released the capture: the next round starts on the new content.
    fresh = scope(capsys, repo)
    assert fresh["scope_digest"] == fresh["content_digest"] != reviewed
    write_report(capsys, repo)
    assert clear(capsys, repo)[0] == 0


def test_a_written_marker_ends_the_round_and_releases_the_capture(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scope(capsys, repo)
    write_report(capsys, repo)
    assert clear(capsys, repo)[0] == 0
    commit(repo, "next change", {"scripts/b.sh": "echo b3\n"})
    nxt = scope(capsys, repo)
    assert nxt["scope_digest"] == nxt["content_digest"]
    assert nxt["scope_superseded"] is False


def test_an_earned_clearance_needs_a_started_review(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_report(capsys, repo)
    code, result = clear(capsys, repo)
    assert code == 1 and "audit scope" in str(result["withheld"]) and markers(repo) == []


def test_an_explicit_scope_digest_is_compared_too(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reviewed = scope(capsys, repo)["scope_digest"]
    write_report(capsys, repo)
    code, result = clear(capsys, repo, "--scope-digest", "0" * 64)
    assert code == 1 and str(result["withheld"]).startswith("review scope superseded")
    assert markers(repo) == []
    assert scope(capsys, repo)["scope_digest"] == reviewed  # the capture was released
    assert clear(capsys, repo, "--scope-digest", reviewed)[0] == 0


# --- 4. and 5. GAIA: its own machinery list, and the VERSION-scoped anchor ---------------

GAIA_ROSTER = """auditors:
  - name: code-audit-maintainer-shell
    globs: [".gaia/**/*.sh", ".gaia/**/*.bats"]
"""
MACHINERY_LIB = """#!/usr/bin/env bash
# the one machinery path list
AUDIT_MACHINERY_PATHS="$(cat <<'EOF'
.gaia/audit-ci.yml
# gaia:maintainer-only:start
.claude/hooks/lib/**
# gaia:maintainer-only:end
.github/audit/**
.github/workflows/code-review-audit.yml
.gaia/VERSION
EOF
)"
"""
GAIA_BASE = {
    ".gaia/audit-ci.yml": GAIA_ROSTER,
    ".gaia/VERSION": "1.4.0\n",
    ".gaia/scripts/run.sh": "#!/bin/bash\nset -e\necho run\n",
    ".claude/hooks/lib/audit-machinery.sh": MACHINERY_LIB,
    ".github/workflows/code-review-audit.yml": "on: pull_request\n",
    ".github/workflows/other.yml": "on: push\n",
    ".github/audit/gate.sh": "echo gate\n",
    ".github/audit/gate.bats": "@test 'x' { true; }\n",
}
MEMBER = "code-audit-maintainer-shell"


def gaia_digest(capsys: pytest.CaptureFixture[str], repo: Path) -> str:
    code, out, err = audit(
        capsys, "digest", "-C", str(repo), "--profile", "gaia", "--member", MEMBER
    )
    assert code == 0, err
    return out.strip()


def test_gaia_digest_covers_the_machinery_list_read_from_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, GAIA_BASE)
    before = gaia_digest(capsys, repo)
    commit(repo, "workflow", {".github/workflows/code-review-audit.yml": "on: [pull_request]\n"})
    rotated = gaia_digest(capsys, repo)
    assert rotated != before
    commit(repo, "gate script", {".github/audit/gate.sh": "echo gate 2\n"})
    assert gaia_digest(capsys, repo) != rotated
    steady = gaia_digest(capsys, repo)
    # Not on the list: an unrelated workflow, and a suite under a listed folder.
    commit(repo, "other", {".github/workflows/other.yml": "on: [push]\n"})
    commit(repo, "suite", {".github/audit/gate.bats": "@test 'y' { true; }\n"})
    assert gaia_digest(capsys, repo) == steady
    # The list is read from the tree: naming other.yml there brings it in.
    commit(
        repo,
        "list",
        {
            ".claude/hooks/lib/audit-machinery.sh": MACHINERY_LIB.replace(
                ".gaia/VERSION\n", ".gaia/VERSION\n.github/workflows/other.yml\n"
            )
        },
    )
    listed = gaia_digest(capsys, repo)
    commit(repo, "other again", {".github/workflows/other.yml": "on: [push, pull_request]\n"})
    assert gaia_digest(capsys, repo) != listed


def test_a_clearance_anchors_the_review_base_only_under_its_gaia_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path, monkeypatch, GAIA_BASE, {".gaia/scripts/run.sh": "#!/bin/bash\necho 2\n"}
    )
    args = ["-C", str(repo), "--profile", "gaia", "--member", MEMBER]
    code, first = audit_json(capsys, "scope", *args)
    assert code == 0 and first["review_base"]["reason"] == "no-anchor"
    write_report(capsys, repo, MEMBER, "--profile", "gaia")
    code, result = audit_json(capsys, "clear", *args, "--provenance", "earned")
    assert code == 0, result
    cleared_at = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, "more", {".gaia/scripts/run.sh": "#!/bin/bash\necho 3\n"})
    code, doc = audit_json(capsys, "scope", *args)
    assert doc["review_base"] == {
        "sha": cleared_at,
        "reason": "member-clearance",
        "anchor_tree": git(repo, "rev-parse", "HEAD~1^{tree}").strip(),
    }
    commit(repo, "framework update", {".gaia/VERSION": "1.5.0\n"})
    code, doc = audit_json(capsys, "scope", *args)
    assert doc["review_base"]["reason"] == "no-anchor"
    assert doc["review_base"]["sha"] == git(repo, "merge-base", "main", "HEAD").strip()
    assert ".gaia/scripts/run.sh" in doc["files"]


# --- 6. deleted paths are changes --------------------------------------------------------

SUITE = """#!/usr/bin/env bats

@test "prints a" {
  run bash scripts/a.sh
  [ "$output" = a ]
}

@test "exits 0" {
  run bash scripts/a.sh
  [ "$status" -eq 0 ]
}
"""


def test_a_branch_that_only_deletes_a_suite_is_not_nothing_to_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, {**BASE, "tests/a.bats": SUITE}, {"tests/a.bats": None})
    doc = scope(capsys, repo)
    assert doc["files"] == [] and doc["deleted"] == ["tests/a.bats"]
    assert doc["branch"]["deleted"] == ["tests/a.bats"]  # the member runs
    code, report = audit_json(
        capsys, "shell", "-C", str(repo), "--member", "shell", "--base-ref", "main"
    )
    assert report["deleted"] == ["tests/a.bats"]
    (dropped,) = report["findings"]
    assert dropped["finding_class"] == "bats/deleted-suite"
    assert dropped["severity"] == "warning" and dropped["path"] == "tests/a.bats"
    assert "2 @test" in dropped["failure_mode"]
    assert code == 0  # a warning: it withholds the clearance, not the shell run
    _, out, _ = audit(capsys, "shell", "-C", str(repo), "--member", "shell", "--base-ref", "main")
    assert "deleted: tests/a.bats" in out and "bats/deleted-suite" in out


# --- 7. --diff-only compares findings at the base and at HEAD ----------------------------

GRANDFATHERED = """#!/usr/bin/env bats

@test "old" {
  run echo old
  [[ "$output" == old ]]
  echo after
}
"""
LAST_CHECK = """
@test "new" {
  run echo hi
  [[ "$output" == hi ]]
}
"""


def test_diff_only_keeps_a_finding_the_branch_made_on_an_untouched_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base_suite = GRANDFATHERED + LAST_CHECK
    # The branch adds a line after the final check (and one at the top that moves every
    # line): the `[[ … ]]` on line 12 becomes non-final, hollow on bash 3.2, untouched.
    branch_suite = base_suite.replace(
        "#!/usr/bin/env bats\n", "#!/usr/bin/env bats\n# the suite for scripts/a.sh\n"
    ).replace('  [[ "$output" == hi ]]\n', '  [[ "$output" == hi ]]\n  echo done\n')
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {**BASE, "tests/a.bats": base_suite},
        {"tests/a.bats": branch_suite},
    )
    touched = git(repo, "diff", "-U0", "main", "HEAD").strip()
    assert '+  [[ "$output" == hi ]]' not in touched  # the diff never names that line
    args = ["shell", "-C", str(repo), "--member", "shell", "--base-ref", "main"]
    code, report = audit_json(capsys, *args, "--diff-only")
    hollow = {
        f["line"]: f["severity"]
        for f in report["findings"]
        if f["finding_class"] == "bats/hollow-assertion"
    }
    assert hollow == {6: "suggestion", 12: "error"}  # the old one moved from 5 to 6
    assert code == 3


def test_a_dirty_check_that_cannot_run_withholds_never_reads_clean(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scope(capsys, repo)
    write_report(capsys, repo)
    (repo / ".git" / "index").write_bytes(b"not an index")  # git status cannot run
    code, out, err = audit(
        capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", "earned"
    )
    assert code == 1 and out == "" and err.count("\n") == 1
    assert markers(repo) == []


def test_every_audit_command_leaves_the_audited_tree_byte_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Advisory only: the gate never repairs what it reviews; its records live in a folder
    # that ignores itself in git.
    repo = make_repo(tmp_path, monkeypatch, BASE, {"scripts/b.sh": HOLLOW_AT_HEAD})

    def snapshot() -> tuple[str, dict[str, bytes]]:
        tracked = git(repo, "ls-files").splitlines()
        return git(repo, "status", "--porcelain").strip(), {
            p: (repo / p).read_bytes() for p in tracked
        }

    before = snapshot()
    scope(capsys, repo)
    assert audit(capsys, "shell", "-C", str(repo), "--member", "shell")[0] == 3
    assert audit(capsys, "shell", "-C", str(repo), "--base-ref", "main", "--diff-only")[0] == 3
    write_report(capsys, repo, findings=[finding("error")])
    assert audit(capsys, "digest", "-C", str(repo), "--member", "shell")[0] == 0
    assert clear(capsys, repo)[0] == 1
    assert clear(capsys, repo, provenance="refused")[0] == 0
    assert audit(capsys, "gate", "-C", str(repo))[0] == 3
    assert snapshot() == before


def test_the_ledger_keeps_each_members_entries_and_never_decides_a_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = ROSTER + '  - name: docs\n    globs: ["docs/**"]\n'
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {**BASE, ".tether/audit.yml": roster, "docs/a.md": "a\n"},
        {"scripts/b.sh": "echo b\n", "docs/a.md": "b\n"},
    )
    for member in ("shell", "docs"):
        scope(capsys, repo, "--member", member)
        write_report(capsys, repo, member, findings=[{**finding("error"), "title": member}])
        argv = ["clear", "-C", str(repo), "--member", member, "--provenance", "refused"]
        assert audit_json(capsys, *argv)[0] == 0
    (ledger,) = (repo / ".tether/audit").glob("*.rerun.json")
    commit(repo, "fix", {"scripts/b.sh": "echo fixed\n"})
    fix = head(repo)
    scope(capsys, repo)
    write_report(capsys, repo)
    code, result = clear(capsys, repo)
    assert code == 0 and [f["fixed_in"] for f in result["fixed_last_round"]] == [fix]
    members = json.loads(ledger.read_text())["members"]
    assert [f["title"] for f in members["docs"]["remaining"]] == ["docs"]  # untouched
    assert members["shell"]["remaining"] == []
    # A ledger that cannot be written changes no verdict.
    ledger.unlink()
    ledger.mkdir()
    commit(repo, "again", {"scripts/b.sh": "echo again\n"})
    scope(capsys, repo)
    write_report(capsys, repo)
    code, result = clear(capsys, repo)
    assert code == 0 and result["written"]


def test_the_gate_waits_for_the_members_the_whole_branch_dispatches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = ROSTER + '  - name: docs\n    globs: ["docs/**"]\n'
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {**BASE, ".tether/audit.yml": roster, "docs/a.md": "a\n"},
        {"scripts/b.sh": "echo b\n"},  # a shell-only branch dispatches shell alone
    )
    code, doc = audit_json(capsys, "gate", "-C", str(repo), "--trailer")
    states = {m["member"]: m["status"] for m in doc["members"]}
    assert code == 3 and states == {"shell": "pending", "docs": "not-dispatched"}
    scope(capsys, repo)
    write_report(capsys, repo)
    assert clear(capsys, repo)[0] == 0
    code, doc = audit_json(capsys, "gate", "-C", str(repo), "--trailer")
    assert code == 0 and doc["cleared"] is True
    assert [line.split(":")[0] for line in doc["trailers"]] == ["shell-Audit"]
    code, out, _ = audit(capsys, "gate", "-C", str(repo))
    assert "docs: not-dispatched" in out
    # Named members are awaited whatever the branch changed.
    assert audit_json(capsys, "gate", "-C", str(repo), "--members", "shell,docs")[0] == 3
    # A refusal blocks even for a member the branch does not dispatch.
    scope(capsys, repo, "--member", "docs")
    write_report(capsys, repo, "docs")
    argv = ["clear", "-C", str(repo), "--member", "docs", "--provenance", "refused"]
    assert audit_json(capsys, *argv)[0] == 0
    assert audit_json(capsys, "gate", "-C", str(repo))[0] == 3
    # An edit to the gate machinery (the roster) dispatches every member.
    commit(repo, "roster", {".tether/audit.yml": roster + "# reviewed by both\n"})
    code, doc = audit_json(capsys, "gate", "-C", str(repo))
    states = {m["member"]: m["status"] for m in doc["members"]}
    assert code == 3 and states == {"shell": "pending", "docs": "pending"}


# --- in-file suppression -----------------------------------------------------------------

SUPPRESSED_SUITE = """#!/usr/bin/env bats

@test "allowed on the line above" {
  run printf 'ok\\n'
  # tether-audit: allow bats/hollow-assertion -- bats >= 1.5 runs this on bash 5 only
  [[ "$output" == ok ]]
  echo done
}

@test "allowed on the line itself" {
  run printf 'ok\\n'
  [[ "$output" == ok ]] # tether-audit: allow bats/hollow-assertion -- same reason
  echo done
}

@test "a directive without a reason suppresses nothing" {
  run printf 'ok\\n'
  [[ "$output" == ok ]] # tether-audit: allow bats/hollow-assertion
  echo done
}

@test "a directive for another class suppresses nothing" {
  run printf 'ok\\n'
  # tether-audit: allow bats/always-matches -- not this finding's class
  [[ "$output" == ok ]]
  echo done
}
"""


def test_an_in_file_allow_needs_a_reason_and_is_listed_never_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, BASE, {"tests/a.bats": SUPPRESSED_SUITE})
    code, report = audit_json(capsys, "shell", "-C", str(repo), "tests/a.bats")
    hollow = {
        f["line"]: (f["severity"], (f.get("suppressed") or {}).get("reason"))
        for f in report["findings"]
        if f["finding_class"] == "bats/hollow-assertion"
    }
    assert hollow == {
        6: ("suggestion", "bats >= 1.5 runs this on bash 5 only"),
        12: ("suggestion", "same reason"),
        18: ("error", None),
        25: ("error", None),
    }
    allowed = next(f for f in report["findings"] if f["line"] == 6)
    assert allowed["suppressed"] == {
        "line": 5,
        "reason": "bats >= 1.5 runs this on bash 5 only",
        "severity": "error",
    }
    invalid = [
        (f["line"], f["severity"])
        for f in report["findings"]
        if f["finding_class"] == "audit/invalid-suppression"
    ]
    assert invalid == [(18, "warning")]
    assert code == 3 and report["counts"]["suppressed"] == 2
    _, out, _ = audit(capsys, "shell", "-C", str(repo), "tests/a.bats")
    assert "tests/a.bats:6: suggestion [bats/hollow-assertion]" in out
    assert "(allowed: bats >= 1.5 runs this on bash 5 only)" in out
    assert "2 allowed in the file" in out
    # The sidecar written from the report keeps every suppression with its reason.
    scope(capsys, repo)
    sidecar = write_report(capsys, repo, findings=report["findings"])
    written = json.loads((repo / sidecar["written"]).read_text())
    reasons = [f["suppressed"]["reason"] for f in written["findings"] if "suppressed" in f]
    assert reasons == ["bats >= 1.5 runs this on bash 5 only", "same reason"]


# --- a bats suite against its previous version -------------------------------------------

SUITE_BEFORE = """#!/usr/bin/env bats

@test "prints the version" {
  run bash scripts/a.sh --version
  [ "$status" -eq 0 ]
  [ "$output" = "a 1.0" ]
}

@test "refuses an unknown flag" {
  run bash scripts/a.sh --nope
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown flag"* ]] || return 1
}

@test "reads the config" {
  run bash scripts/a.sh --config x
  [ "$status" -eq 0 ]
}

@test "old name" {
  run bash scripts/a.sh --quiet
  [ "$output" = "" ]
}

@test "writes nothing to stderr" {
  run bash scripts/a.sh
  [ -z "$stderr" ]
}
"""
SUITE_AFTER = """#!/usr/bin/env bats

@test "prints the version" {
  run bash scripts/a.sh --version
  [ "$status" -eq 0 ]
  grep -q "1.0" <<<"$output"
}

@test "refuses an unknown flag" {
  run bash scripts/a.sh --nope
  [ "$status" -eq 2 ]
}

@test "reads the config" {
  [ -n "${CI:-}" ] || skip "needs the runner's config"
  run bash scripts/a.sh --config x
  [ "$status" -eq 0 ]
}

@test "new name for the same test" {
  run bash scripts/a.sh --quiet
  [ "$output" = "" ]
}
"""


def test_a_suite_is_read_against_its_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path, monkeypatch, {**BASE, "tests/a.bats": SUITE_BEFORE}, {"tests/a.bats": SUITE_AFTER}
    )
    code, report = audit_json(
        capsys, "shell", "-C", str(repo), "--member", "shell", "--base-ref", "main"
    )
    against = {
        (f["finding_class"], f["line"]): f["title"]
        for f in report["findings"]
        if f["finding_class"].startswith(
            ("bats/dropped", "bats/removed", "bats/weakened", "bats/added")
        )
    }
    assert set(against) == {
        ("bats/weakened-assertion", 3),
        ("bats/removed-assertion", 9),
        ("bats/added-skip", 14),
        ("bats/dropped-test", 1),
    }
    assert 'was `[ "$output" = "a 1.0" ]`' in against[("bats/weakened-assertion", 3)]
    assert "'writes nothing to stderr' was dropped" in against[("bats/dropped-test", 1)]
    assert all(
        f["severity"] == "warning"
        for f in report["findings"]
        if (f["finding_class"], f["line"]) in against
    )
    assert code == 0  # warnings: they withhold the clearance until fixed or acknowledged
    # Without a base there is no previous version to read against.
    _, report = audit_json(capsys, "shell", "-C", str(repo), "tests/a.bats")
    assert not [f for f in report["findings"] if f["finding_class"] == "bats/dropped-test"]


# --- the report's sections and cross-remit findings ---------------------------------------


def test_the_report_has_its_sections_and_cross_remit_findings_never_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = '#!/bin/bash\nset -e\ndeclare -A seen\necho "${seen[x]:-}"\n'
    repo = make_repo(
        tmp_path,
        monkeypatch,
        BASE,
        {"scripts/b.sh": HOLLOW_AT_HEAD, "docs/tool.sh": tool},  # docs/ is nobody's here
    )
    argv = ["shell", "-C", str(repo), "--member", "shell", "scripts/b.sh", "docs/tool.sh"]
    code, report = audit_json(capsys, *argv)
    assert {f["path"] for f in report["findings"]} == {"scripts/b.sh"}
    assert {f["path"] for f in report["cross_remit"]} == {"docs/tool.sh"}
    assert report["counts"]["cross_remit"] == len(report["cross_remit"]) > 0
    assert code == 3  # the member's own error
    _, out, _ = audit(capsys, *argv)
    assert out.startswith("Summary: 2 files reviewed; 1 errors block")
    critical = out.index("Critical (errors: fix before clearing): 1")
    cross = out.index("Cross-remit (outside this remit; never gates it):")
    assert critical < out.index("scripts/b.sh:3: error [bash32/assoc-array]") < cross
    assert out.index("docs/tool.sh:3: error [bash32/assoc-array]") > cross
    assert "    fix: use two indexed arrays" in out
    # In the sidecar, an error on a cross-remit file does not withhold the clearance.
    commit(repo, "fix", {"scripts/b.sh": "#!/bin/bash\nset -e\necho b\n"})
    scope(capsys, repo)
    outside = {**finding("error"), "path": "docs/tool.sh"}
    write_report(capsys, repo, findings=[outside])
    code, result = clear(capsys, repo)
    assert code == 0 and result["written"]


# --- declarative files read as policy ------------------------------------------------------

SETTINGS_BEFORE = {
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm -rf:*)"]},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": ".claude/hooks/guard.sh"},
                    {"type": "command", "command": ".claude/hooks/secrets.sh"},
                ],
            }
        ]
    },
}
SETTINGS_AFTER = {
    "permissions": {
        "allow": ["Bash(git status)", "Bash(curl:*)"],
        "deny": [],
        "defaultMode": "bypassPermissions",
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": ".claude/hooks/guard.sh"}]}
        ]
    },
}
RATES = '{"models": {"m1": {"input": 3, "effective_through": "DAY"}}}\n'
POLICY_ROSTER = """auditors:
  - name: code-audit-maintainer-shell
    globs: [".gaia/**/*.sh", ".gaia/**/*.bats", ".gaia/release-exclude", ".gaia/*.json",
            ".claude/**", ".github/CODEOWNERS", ".gaia/audit-ci.yml"]
  - name: code-audit-github-workflows
    globs: [".github/workflows/**"]
"""


def test_declarative_files_are_read_for_what_their_change_loosens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = {
        ".gaia/audit-ci.yml": POLICY_ROSTER,
        ".gaia/release-exclude": "# never shipped\n.gaia/local/\n.gaia/tests/\n",
        ".claude/settings.json": json.dumps(SETTINGS_BEFORE, indent=2) + "\n",
        ".claude/hooks/guard.sh": "#!/bin/bash\nexit 0\n",
        ".claude/hooks/secrets.sh": "#!/bin/bash\nexit 0\n",
        ".github/CODEOWNERS": ".gaia/ @gaia/maintainers @gaia/security\n.claude/ @gaia/security\n",
        ".gaia/token-rates.json": RATES.replace("DAY", "2099-12-31"),
    }
    branch = {
        ".gaia/audit-ci.yml": POLICY_ROSTER.replace(', ".gaia/**/*.bats"', "").replace(
            '  - name: code-audit-github-workflows\n    globs: [".github/workflows/**"]\n', ""
        ),
        ".gaia/release-exclude": "# never shipped\n.gaia/local/\n",
        ".claude/settings.json": json.dumps(SETTINGS_AFTER, indent=2) + "\n",
        ".github/CODEOWNERS": ".gaia/ @gaia/maintainers\n",
        ".gaia/token-rates.json": RATES.replace("DAY", "2020-01-31"),
    }
    repo = make_repo(tmp_path, monkeypatch, base, branch)
    args = ["shell", "-C", str(repo), "--profile", "gaia", "--member", MEMBER]
    code, report = audit_json(capsys, *args, "--base-ref", "main")
    assert code == 0  # warnings: they withhold the clearance until fixed or acknowledged
    titles = {(f["path"], f["finding_class"], f["title"]) for f in report["findings"]}
    assert {
        (".gaia/release-exclude", "policy/unexcluded"),
        (".claude/settings.json", "policy/hook-unregistered"),
        (".claude/settings.json", "policy/permission-widened"),
        (".github/CODEOWNERS", "policy/owner-removed"),
        (".gaia/audit-ci.yml", "policy/remit-narrowed"),
        (".gaia/token-rates.json", "policy/stale-rate"),
    } == {(p, c) for p, c, _ in titles if c.startswith("policy/")}
    said = " | ".join(t for _, _, t in titles)
    for phrase in (
        "`.gaia/tests/` is no longer excluded from the release",
        "the PreToolUse (Bash) hook `.claude/hooks/secrets.sh` is no longer registered",
        "`Bash(curl:*)` is now allowed without asking",
        "`Bash(rm -rf:*)` was removed from permissions.deny",
        "permissions.defaultMode is now `bypassPermissions`",
        "the CODEOWNERS rule for `.claude/` was removed",
        "`.gaia/` no longer requires @gaia/security",
        "`code-audit-maintainer-shell` no longer reaches `.gaia/**/*.bats`",
        "member `code-audit-github-workflows` was removed",
        "effective_through 2020-01-31 is before",
    ):
        assert phrase in said, phrase
    assert all(
        f["severity"] == "warning"
        for f in report["findings"]
        if f["finding_class"].startswith("policy/")
    )
    assert report["not_analysed"] == []  # every changed file here has a reader
    # The same files, unchanged on a branch: nothing to say but the stale date.
    (tmp_path / "again").mkdir()
    repo2 = make_repo(tmp_path / "again", monkeypatch, base, {"README.md": "x\n"})
    _, report = audit_json(
        capsys,
        "shell",
        "-C",
        str(repo2),
        "--profile",
        "gaia",
        "--member",
        MEMBER,
        ".gaia/token-rates.json",
        ".claude/settings.json",
    )
    assert not [f for f in report["findings"] if f["finding_class"].startswith("policy/")]


def test_a_roster_glob_reaching_the_generated_workflow_copies_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reaching = GAIA_ROSTER.replace('".gaia/**/*.bats"]', '".gaia/**/*.bats", ".gaia/**"]')
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {
            **GAIA_BASE,
            ".gaia/audit-ci.yml": reaching,
            ".gaia/cli/templates/workflows/code-review-audit.yml.tmpl": "on: pull_request\n",
            ".gaia/cli/src/automation/templates/workflows/code-review-audit.yml.tmpl": "x\n",
        },
    )
    args = ["shell", "-C", str(repo), "--profile", "gaia", "--member", MEMBER]
    _, report = audit_json(capsys, *args, ".gaia/audit-ci.yml")
    (reach,) = [
        f for f in report["findings"] if f["finding_class"] == "policy/remit-reaches-copies"
    ]
    assert reach["line"] == 3 and reach["severity"] == "warning"
    assert "`.gaia/**` reaches the generated copy .gaia/cli/templates/workflows/" in reach["title"]
    commit(repo, "narrow", {".gaia/audit-ci.yml": GAIA_ROSTER})
    _, report = audit_json(capsys, *args, ".gaia/audit-ci.yml")
    assert not [f for f in report["findings"] if f["finding_class"].startswith("policy/")]


def test_a_manifest_change_names_what_stops_and_starts_shipping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def manifest(*paths: str) -> str:
        files = {path: "owned" for path in paths}
        return json.dumps({"name": "gaia", "version": "1.0.0", "files": files}, indent=2) + "\n"

    roster = GAIA_ROSTER.replace('".gaia/**/*.bats"]', '".gaia/**/*.bats", ".gaia/*.json"]')
    base = {**GAIA_BASE, ".gaia/audit-ci.yml": roster}
    base[".gaia/manifest.json"] = manifest(".gaia/scripts/run.sh", ".claude/hooks/guard.sh")
    branch = {".gaia/manifest.json": manifest(".gaia/scripts/run.sh", ".gaia/local/notes.md")}
    repo = make_repo(tmp_path, monkeypatch, base, branch)
    args = ["shell", "-C", str(repo), "--profile", "gaia", "--member", MEMBER, "--base-ref"]
    _, report = audit_json(capsys, *args, "main")
    said = {
        (f["finding_class"], f["severity"], f["title"])
        for f in report["findings"]
        if f["path"] == ".gaia/manifest.json"
    }
    assert said == {
        (
            "policy/unshipped",
            "warning",
            ".claude/hooks/guard.sh stops shipping: the release no longer updates it",
        ),
        ("policy/ships", "suggestion", ".gaia/local/notes.md now ships to every adopter"),
    }
