"""The hunk verification table: one row per hunk the user added, in --json and in the
human summary, with "(verified)" or a missing-hunk warning per file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    EXECUTE,
    HELP,
    PLANNER,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    cli,
    make_gsd,
    reapply_json,
    standard,
)
from tether.engine.hunktable import hunk_table


def args(gsd: Any, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target),
            "--pristine", str(gsd.pristine), *extra]  # fmt: skip


def test_a_row_per_added_hunk_with_its_first_significant_line() -> None:
    base = b"# Title\none\ntwo\nthree\n"
    ours = b"# Title\n<!-- mine -->\n\nkept line\none\ntwo\nthree\nlast line\n"
    rows = hunk_table(base, ours, b"# Title\nkept line\none\ntwo\nthree\n")
    assert [(r.hunk_id, r.signature_line, r.line_count, r.verified) for r in rows] == [
        (1, "kept line", 3, True),  # the comment and the blank line are passed over
        (2, "last line", 1, False),
    ]
    assert hunk_table(base, b"# Title\none\nthree\n", base) == []  # a deletion adds nothing


def test_json_has_the_table_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    _, doc = reapply_json(capsys, *args(gsd))
    hunks = {r["file"]: r["hunks"] for r in doc["results"]}
    assert hunks[PLANNER] == [
        {"hunk_id": 1, "signature_line": "model: opus", "line_count": 1, "verified": True}
    ]
    assert hunks[HELP] == [
        {"hunk_id": 1, "signature_line": "- /gsd:progress", "line_count": 1, "verified": True}
    ]
    assert hunks[EXECUTE] == []  # a conflict: nothing is decided yet


def test_human_summary_prints_the_table_and_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    capsys.readouterr()
    assert cli(*args(gsd)) == 0
    out = capsys.readouterr().out
    assert f"merged        {PLANNER}  [baseline: pristine]  (verified)" in out
    assert "file\thunk_id\tsignature_line\tline_count\tverified" in out
    assert f"{PLANNER}\t1\tmodel: opus\t1\tyes" in out


def test_a_lost_hunk_shows_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lossy merge (injected) fails the file; the table says which hunk is gone."""
    from tether.engine.textmerge import MergeResult
    from tether.flows.reapply import decide

    def lossy_merge(base: bytes, ours: bytes, theirs: bytes, **_: Any) -> tuple[MergeResult, str]:
        return MergeResult(theirs, 0), ""

    monkeypatch.setattr(decide, "merge_sides", lossy_merge)
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    capsys.readouterr()
    assert cli(*args(gsd)) == 1
    out = capsys.readouterr().out
    assert f"failed        {PLANNER}  [baseline: pristine]  (⚠ 1 hunk(s) missing)" in out
    assert f"{PLANNER}\t1\tmodel: opus\t1\tno" in out


def test_summary_header_names_both_versions_and_each_files_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    (gsd.target / "get-shit-done/VERSION").write_text("2.0.0\n")
    (gsd.pristine / EXECUTE).unlink()  # this one file has no baseline
    capsys.readouterr()
    cli(*args(gsd))
    out = capsys.readouterr().out
    assert "backed up from: v1.0.0\ncurrent version: v2.0.0\nfiles: 3\n" in out
    assert f"{PLANNER}  [baseline: pristine]" in out
    assert f"{EXECUTE}  [baseline: none]" in out
    _, doc = reapply_json(capsys, *args(gsd, "--dry-run"))
    assert (doc["from_version"], doc["installed_version"]) == ("1.0.0", "2.0.0")
