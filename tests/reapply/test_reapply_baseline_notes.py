"""A saved file's baseline notes: the flow finds facts (``BaselineNote``), ``report/reapply``
words them into the file's reason, and the JSON's ``reason`` is those words, on real
GSD-shaped folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    PLANNER,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    make_gsd,
    reapply_json,
    sha,
    write,
)
from tether.engine.verify import VerifyResult
from tether.flows.reapply import (
    BaselineOptions,
    FileResult,
    ReapplyRequest,
    reapply,
    record_verification_failure,
)
from tether.flows.reapply.baseline import BaselineNote, BaselineNoteCode
from tether.flows.reapply.report import Reason, Why
from tether.report.reapply import FIRST_LINE, NO_HUNKS, baseline_note, file_reason, render

FILES = {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}


def _args(gsd: Any, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target), *extra]


def test_pristine_drift_is_a_fact_the_report_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, FILES)
    write(gsd.pristine, {PLANNER: PLANNER_V2})  # refreshed after the backup was taken
    options = BaselineOptions(pristine=gsd.pristine)
    report = reapply(ReapplyRequest(gsd.patches, gsd.target, options, dry_run=True))
    [result] = report.results
    where = str(gsd.pristine / PLANNER)
    drift = BaselineNote(BaselineNoteCode.PRISTINE_DRIFT, where, sha(PLANNER_V2), sha(PLANNER_V1))
    assert result.baseline_notes == (drift,)
    assert result.reason == Reason()  # nothing to say but the notes
    words = f"pristine drift: {where} has sha256 {sha(PLANNER_V2)}, the backup recorded "
    words += sha(PLANNER_V1)
    assert file_reason(result) == words
    assert f"  {words}" in render(report)
    code, doc = reapply_json(capsys, *_args(gsd, "--pristine", str(gsd.pristine), "--dry-run"))
    assert code == 1 and doc["results"][0]["reason"] == words


def test_no_baseline_notes_sit_in_parentheses_before_the_outcome_and_auto_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A release whose copy is not the recorded bytes: no baseline, so --auto ours cannot
    take a side hunk by hunk; what --auto could not do is said last."""
    gsd = make_gsd(tmp_path, FILES, pristine=False)
    shelf = tmp_path / "releases"
    write(shelf / "1.0.0", {PLANNER: PLANNER_V1 + "templated at install\n"})
    options = BaselineOptions(use_git=False, source=str(shelf), version="1.0.0")
    request = ReapplyRequest(gsd.patches, gsd.target, options, dry_run=True, auto="ours")
    [result] = reapply(request).results
    assert [note.code for note in result.baseline_notes] == [
        BaselineNoteCode.RELEASE_MISMATCH,
        BaselineNoteCode.NOT_FOUND,
    ]
    assert result.baseline_notes[0].version == "1.0.0"
    assert result.no_baseline and result.auto_left == "ours"
    assert result.reason == Reason(Why.PATCH_NO_BASELINE, first_line=True)
    assert result.two_way == "edits" and len(result.user_edits) == 4
    notes = (
        "release 1.0.0's copy does not match the pristine hash; "
        "no version with the recorded pristine hash was found"
    )
    outcome = f"the patch turns the installed file into your copy ({FIRST_LINE})"
    edits = "4 edit(s) of yours beyond mechanical drift"
    expected = f"no baseline ({notes}); {outcome}; {edits}; --auto ours left it: {NO_HUNKS}"
    assert file_reason(result) == expected
    source = ("--baseline-source", str(shelf), "--baseline-version", "1.0.0", "--no-git")
    code, doc = reapply_json(capsys, *_args(gsd, *source, "--auto", "ours", "--dry-run"))
    assert code == 4 and doc["results"][0]["reason"] == expected


def test_a_new_outcome_drops_the_words_said_around_the_old_one() -> None:
    """A merge whose verification fails is stated anew: its baseline notes described the
    merge, not the failure."""
    note = BaselineNote(BaselineNoteCode.FROM_GIT, blob="0123456789abcdef")
    result = FileResult(PLANNER, "merged", Reason(), "git", (note,))
    assert file_reason(result) == "baseline from git blob 0123456789ab"
    verdict = VerifyResult(False, missing=[(3, "mine")], readded=[])
    record_verification_failure(result, verdict, Path("/patches") / PLANNER)
    assert result.baseline_notes == ()
    assert result.reason == Reason(Why.VERIFICATION_FAILED, f"/patches/{PLANNER}", written=True)
    assert file_reason(result) == (
        "verification failed (1 of your line(s) missing): the installed version is back, "
        f"your copy stays at /patches/{PLANNER}"
    )
    assert result.record_reason == "verification-failed"


def test_the_journal_records_the_codes() -> None:
    notes = (
        BaselineNote(BaselineNoteCode.RELEASE_MISMATCH, version="1.0.0"),
        BaselineNote(BaselineNoteCode.NOT_FOUND),
    )
    result = FileResult(PLANNER, "conflict", Reason(Why.BOTH_VERSIONS), baseline_notes=notes)
    assert result.record_reason == "both-versions; release-mismatch; not-found"
    result.restate(Reason(Why.UNSAFE_PATH, text="a link on the way"))
    assert result.record_reason == "unsafe-path; a link on the way"


WORDS = [
    (BaselineNote(BaselineNoteCode.NO_PRISTINE_COPY, "/p/a.md"), "no pristine copy at /p/a.md"),
    (
        BaselineNote(BaselineNoteCode.PRISTINE_UNCHECKED),
        "the pristine copy cannot be checked: no pristine hash recorded",
    ),
    (
        BaselineNote(BaselineNoteCode.PRISTINE_ACCEPTED, sha256="ab12"),
        "pristine copy accepted, sha256 ab12",
    ),
    (BaselineNote(BaselineNoteCode.NO_HASH), "no pristine hash recorded for this file"),
    (
        BaselineNote(BaselineNoteCode.RELEASE_UNCHECKED, version="1.2.0"),
        "no pristine hash recorded: release 1.2.0 used unchecked, so the change is never "
        "claimed as incorporated",
    ),
    (BaselineNote(BaselineNoteCode.FROM_RELEASE, version="1.2.0"), "baseline from release 1.2.0"),
    (
        BaselineNote(BaselineNoteCode.FROM_RELEASE, version="1.2.0", prefix="$HOME/.claude/"),
        "baseline from release 1.2.0, its paths rewritten to $HOME/.claude/ as GSD's "
        "installer wrote them",
    ),
    (
        BaselineNote(BaselineNoteCode.RELEASE_MISMATCH, version="1.2.0", rewritten=True),
        "release 1.2.0's copy does not match the pristine hash (nor with the installer's "
        "path rewriting)",
    ),
    (
        BaselineNote(
            BaselineNoteCode.BEFORE_YOUR_COMMITS,
            commits=(("0123456789abcdef", "tweak"), ("fedcba9876543210", "more")),
        ),
        "baseline: the file before your commits 0123456789ab 'tweak', fedcba987654 'more'",
    ),
]


@pytest.mark.parametrize(("note", "words"), WORDS, ids=[str(n.code) for n, _ in WORDS])
def test_every_note_has_its_words(note: BaselineNote, words: str) -> None:
    assert baseline_note(note) == words


def test_every_code_is_worded() -> None:
    """A code added without words fails here rather than at a person's run."""
    for code in BaselineNoteCode:
        assert baseline_note(BaselineNote(code)), code
