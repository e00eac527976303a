"""Content digests, clearance markers and the gate, in real repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tether.audit.clearance
from builders import git
from tests.audit.builders import (
    audit,
    audit_json,
    commit,
    start_review,
    write,
    write_report,
)
from tether.audit.digest import DIGEST_PREFIX, digest_entries

ROSTER = """members:
  - name: shell
    globs: ["scripts/**"]
  - name: docs
    globs: ["docs/**"]
machinery: ["gate/**"]
"""
BASE = {
    ".tether/audit.yml": ROSTER,
    "scripts/a.sh": "echo a\n",
    "docs/guide.md": "# guide\n",
    "gate/check.sh": "echo gate\n",
    "README.md": "readme\n",
}


BRANCH = {"scripts/b.sh": "echo b\n"}  # the branch of conftest.py's repo


def digest(capsys: pytest.CaptureFixture[str], repo: Path, member: str = "shell") -> str:
    code, out, _ = audit(capsys, "digest", "-C", str(repo), "--member", member)
    assert code == 0
    return out.strip()


def markers(repo: Path) -> list[str]:
    folder = repo / ".tether" / "audit"
    return (
        sorted(
            p.name
            for p in folder.iterdir()
            if p.name != ".gitignore"
            and not p.name.endswith((".findings.json", ".rerun.json", ".scope.json"))
        )
        if folder.exists()
        else []
    )


def clear(
    capsys: pytest.CaptureFixture[str], repo: Path, *extra: str
) -> tuple[int, dict[str, object]]:
    start_review(capsys, repo)
    write_report(capsys, repo)
    return audit_json(capsys, "clear", "-C", str(repo), "--member", "shell", *extra)


def gate(
    capsys: pytest.CaptureFixture[str], repo: Path, members: str = "shell"
) -> tuple[int, dict[str, object]]:
    return audit_json(capsys, "gate", "-C", str(repo), "--members", members)


def test_digest_is_stable_across_an_empty_commit_and_rotated_by_an_owned_edit(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = digest(capsys, repo)
    commit(repo, "empty")
    assert digest(capsys, repo) == first
    commit(repo, "readme", {"README.md": "outside every remit\n"})
    assert digest(capsys, repo) == first
    write(repo, {"scripts/a.sh": "echo working tree only\n"})
    assert digest(capsys, repo) == first  # committed bytes, never the working tree
    commit(repo, "edit", {"scripts/a.sh": "echo a2\n"})
    second = digest(capsys, repo)
    assert second != first
    commit(repo, "machinery", {"gate/check.sh": "echo gate2\n"})
    third = digest(capsys, repo)
    assert third != second
    commit(repo, "roster", {".tether/audit.yml": ROSTER + "# note\n"})
    assert digest(capsys, repo) != third  # the roster is machinery too
    assert digest(capsys, repo, "docs") != digest(capsys, repo)


def test_digest_covers_mode_and_json_lists_the_files(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(capsys, repo)
    (repo / "scripts/a.sh").chmod(0o755)
    commit(repo, "mode")
    assert digest(capsys, repo) != before
    _, doc = audit_json(capsys, "digest", "-C", str(repo), "--member", "shell")
    assert doc["files"] == [".tether/audit.yml", "gate/check.sh", "scripts/a.sh", "scripts/b.sh"]
    assert doc["head"] == git(repo, "rev-parse", "HEAD").strip()


def test_digest_format_is_framed_and_byte_sorted() -> None:
    unframed = digest_entries([("ab", "100644", b"c"), ("a", "100644", b"bc")])
    assert unframed != digest_entries([("a", "100644", b"bcc"), ("ab", "100644", b"")])
    reordered = digest_entries([("a", "100644", b"bc"), ("ab", "100644", b"c")])
    assert unframed == reordered
    assert DIGEST_PREFIX.startswith(b"tether-audit-digest/")


def test_clear_then_gate_and_stale_after_an_edit(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = gate(capsys, repo)
    assert code == 3 and doc["members"][0]["status"] == "pending"  # type: ignore[index]
    code, result = clear(capsys, repo, "--provenance", "earned")
    current = digest(capsys, repo)
    assert code == 0 and result["written"] == f".tether/audit/{current}.shell.ok"
    record = json.loads((repo / str(result["written"])).read_text())
    assert record["schema_version"] == 1 and record["provenance"] == "earned"
    assert record["digest"] == current and record["member"] == "shell"
    assert record["written_at"].endswith("Z")
    code, doc = gate(capsys, repo)
    assert code == 0 and doc["cleared"] is True
    commit(repo, "edit", {"scripts/a.sh": "echo changed\n"})
    code, doc = gate(capsys, repo)
    assert code == 3 and doc["members"][0]["status"] == "pending"  # type: ignore[index]


def test_gate_checks_refusals_first(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert clear(capsys, repo, "--provenance", "earned")[0] == 0
    assert clear(capsys, repo, "--provenance", "refused")[0] == 0
    current = digest(capsys, repo)
    assert markers(repo) == [f"{current}.shell.ok", f"{current}.shell.refused"]
    code, doc = gate(capsys, repo)
    assert code == 3 and doc["members"][0]["status"] == "refused"  # type: ignore[index]


def test_gate_with_several_members_needs_every_one_cleared(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clear(capsys, repo, "--provenance", "earned")
    code, doc = gate(capsys, repo, "shell,docs")
    states = {m["member"]: m["status"] for m in doc["members"]}  # type: ignore[attr-defined]
    assert code == 3 and states == {"shell": "cleared", "docs": "pending"}
    start_review(capsys, repo, "docs")
    write_report(capsys, repo, "docs")
    assert (
        audit_json(capsys, "clear", "-C", str(repo), "--member", "docs", "--provenance", "earned")[
            0
        ]
        == 0
    )
    code, out, _ = audit(capsys, "gate", "-C", str(repo))  # default: the roster's members
    assert code == 0 and "shell: cleared" in out and "docs: cleared" in out


def test_earned_never_replaces_a_refusal_silently(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clear(capsys, repo, "--provenance", "refused")
    before = markers(repo)
    start_review(capsys, repo)  # a new round on the refused content
    code, _, err = audit(
        capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", "earned"
    )
    assert code == 1 and "--supersede-refusal" in err
    assert markers(repo) == before
    code, _, _ = audit(
        capsys,
        "clear",
        "-C",
        str(repo),
        "--member",
        "shell",
        "--provenance",
        "earned",
        "--supersede-refusal",
        "   ",
    )
    assert code == 2 and markers(repo) == before


def test_supersede_writes_the_clearance_then_removes_the_refusal(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clear(capsys, repo, "--provenance", "refused")
    current = digest(capsys, repo)
    code, result = clear(
        capsys,
        repo,
        "--provenance",
        "earned",
        "--supersede-refusal",
        "finding was a false positive",
    )
    assert code == 0 and result["removed"] == f".tether/audit/{current}.shell.refused"
    assert markers(repo) == [f"{current}.shell.ok"]
    record = json.loads((repo / f".tether/audit/{current}.shell.ok").read_text())
    assert record["supersedes"]["reason"] == "finding was a false positive"
    assert record["supersedes"]["record"]["provenance"] == "refused"
    assert gate(capsys, repo)[0] == 0


def test_a_crash_between_the_two_supersede_steps_fails_safe(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clear(capsys, repo, "--provenance", "refused")
    start_review(capsys, repo)
    write_report(capsys, repo)

    def crash(path: Path) -> None:
        raise KeyboardInterrupt  # the process dies after the .ok and before the removal

    original = tether.audit.clearance._remove_refusal
    monkeypatch.setattr(tether.audit.clearance, "_remove_refusal", crash)
    code, _, _ = audit(
        capsys,
        "clear",
        "-C",
        str(repo),
        "--member",
        "shell",
        "--provenance",
        "earned",
        "--supersede-refusal",
        "reviewed again",
    )
    assert code == 130
    current = digest(capsys, repo)
    assert markers(repo) == [f"{current}.shell.ok", f"{current}.shell.refused"]
    monkeypatch.setattr(tether.audit.clearance, "_remove_refusal", original)
    code, doc = audit_json(capsys, "gate", "-C", str(repo), "--members", "shell")
    assert code == 3 and doc["members"][0]["status"] == "refused"


def test_scope_digest_mismatch_is_refused_and_writes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reviewed = digest(capsys, repo)
    commit(repo, "late edit", {"scripts/b.sh": "echo b2\n"})
    code, result = clear(capsys, repo, "--provenance", "earned", "--scope-digest", reviewed)
    assert code == 1
    assert "review scope superseded" in str(result["withheld"])
    assert result["written"] is None and markers(repo) == []
    code, result = clear(
        capsys, repo, "--provenance", "earned", "--scope-digest", digest(capsys, repo)
    )
    assert code == 0 and result["written"]


def test_dirty_in_scope_files_withhold_everything(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo, {"scripts/a.sh": "echo uncommitted\n", "gate/new.sh": "echo new\n"})
    for provenance in ("earned", "refused"):
        code, result = clear(capsys, repo, "--provenance", provenance)
        assert code == 1
        assert str(result["withheld"]).startswith("withheld: in-scope files differ from HEAD")
        assert result["dirty"] == ["gate/new.sh", "scripts/a.sh"]
    assert markers(repo) == []
    code, out, _ = audit(
        capsys, "clear", "-C", str(repo), "--member", "shell", "--provenance", "earned"
    )
    assert code == 1 and "dirty: scripts/a.sh" in out
    write(repo, {"scripts/a.sh": "echo a\n", "gate/new.sh": None, "README.md": "dirty, outside\n"})
    assert clear(capsys, repo, "--provenance", "earned")[0] == 0


def test_ad_hoc_member_and_unreadable_clearance(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["-C", str(repo), "--remit", "scripts/*.sh", "--member", "adhoc"]
    start_review(capsys, repo, "adhoc", "--remit", "scripts/*.sh")
    write_report(capsys, repo, "adhoc", "--remit", "scripts/*.sh")
    assert audit_json(capsys, "clear", *args, "--provenance", "earned")[0] == 0
    code, doc = audit_json(capsys, "gate", *args)
    assert code == 0 and doc["members"][0]["member"] == "adhoc"
    marker = next((repo / ".tether/audit").glob("*.adhoc.ok"))
    marker.write_text("{broken")
    code, doc = audit_json(capsys, "gate", *args)
    assert code == 3 and doc["members"][0]["note"] == "clearance marker unreadable"
    assert (
        audit(capsys, "clear", "-C", str(repo), "--remit", "x", "--provenance", "earned")[0] == 2
    )  # an ad hoc remit needs --member to name it
