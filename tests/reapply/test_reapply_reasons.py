"""Why each saved file ended as it did: a code with its data in the result
(``Reason``, flows/reapply/report.py), its words in ``report/reapply.file_reason``; on real
GSD-shaped folders for the flow, and word for word for every code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    EXECUTE,
    EXECUTE_V1,
    PLANNER,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    make_gsd,
    reapply_json,
)
from tether.engine.twoway import DRIFT_KINDS
from tether.flows.reapply import BaselineOptions, FileResult, ReapplyRequest, reapply
from tether.flows.reapply.report import Reason, Why
from tether.model.plan import MergeNote, MergeNoteCode
from tether.report.reapply import (
    DRIFT_QUESTION,
    FIRST_LINE,
    file_reason,
    question,
    result_document,
)

GONE = "agents/gsd-retired.md"
GONE_V1 = "# Retired agent\n\nDo things.\n"
SCRIPT = "scripts/sync.md"
SCRIPT_V1 = '# Sync\n\nRun:\n  cd "$HOME/.claude/gsd" && ./sync.sh\n'
SCRIPT_DRIFT = "# Sync\n\nRun:\n    cd /Users/bob/.claude/gsd && ./sync.sh\n"
EXECUTE_A = EXECUTE_V1.replace("Run tests.", "Run tests A.")
EXECUTE_B = EXECUTE_V1.replace("Run tests.", "Run tests B.")


def _args(gsd: Any, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target), *extra]


def test_a_file_the_new_release_dropped_is_a_code_then_what_you_chose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {GONE: (GONE_V1, GONE_V1 + "mine\n", GONE_V1)})
    (gsd.target / GONE).unlink()
    request = ReapplyRequest(gsd.patches, gsd.target, dry_run=True)
    [result] = reapply(request).results
    assert result.reason == Reason(Why.DROPPED, str(gsd.patches / GONE))
    words = (
        f"the installed release no longer has this file; your copy stays at {gsd.patches / GONE}"
    )
    assert file_reason(result) == words
    code, doc = reapply_json(capsys, *_args(gsd, "--dropped", "keep"))
    assert code == 0
    assert doc["results"][0]["reason"] == (
        "the installed release no longer has this file; you kept it as your own file "
        "(your saved copy)"
    )


def test_drift_only_is_a_fact_and_the_question_is_the_reports(tmp_path: Path) -> None:
    gsd = make_gsd(tmp_path, {SCRIPT: (SCRIPT_V1, SCRIPT_DRIFT, SCRIPT_V1)}, pristine=False)
    options = BaselineOptions(use_git=False)
    [result] = reapply(ReapplyRequest(gsd.patches, gsd.target, options, dry_run=True)).results
    assert result.two_way == "drift-only" and result.no_baseline
    assert result.reason == Reason(Why.BOTH_VERSIONS)
    assert question(result) == DRIFT_QUESTION
    assert result_document(result)["question"] == DRIFT_QUESTION
    assert file_reason(result).endswith(
        f"; both versions written into the file; only mechanical drift "
        f"({', '.join(DRIFT_KINDS)}) differs"
    )
    settled = FileResult(SCRIPT, "resolved", two_way="drift-only")
    settled.restate(Reason(Why.KEPT_MINE))  # a choice answers the question
    assert question(settled) is None
    assert file_reason(settled) == (
        "you kept your whole saved copy (the installed version is backed up)"
    )


def test_the_prompt_is_told_which_conflict_is_drift_only(tmp_path: Path) -> None:
    gsd = make_gsd(tmp_path, {SCRIPT: (SCRIPT_V1, SCRIPT_DRIFT, SCRIPT_V1)}, pristine=False)
    asked: list[Any] = []

    def chooser(items: list[Any], table: list[tuple[str, str]]) -> dict[str, str]:
        asked.extend(items)
        return {}

    options = BaselineOptions(use_git=False)
    reapply(ReapplyRequest(gsd.patches, gsd.target, options, chooser=chooser))
    assert [(item.file, item.drift_only) for item in asked] == [(SCRIPT, True)]


def test_a_side_taken_clash_by_clash_is_a_code_with_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(
        tmp_path, {EXECUTE: (EXECUTE_V1, EXECUTE_A, EXECUTE_B)}, pristine=False, git_history=True
    )
    request = ReapplyRequest(gsd.patches, gsd.target, dry_run=True, auto="ours")
    [result] = reapply(request).results
    assert result.reason == Reason(Why.FAVORED, count=1, other="ours")
    assert result.baseline_notes == ()  # a new outcome: the baseline's note went with the old
    assert file_reason(result) == "1 clashing hunk took your side; every other change merged"
    code, doc = reapply_json(capsys, *_args(gsd, "--auto", "theirs", "--dry-run"))
    assert code == 0 and doc["results"][0]["reason"] == (
        "1 clashing hunk took the installed release's side; every other change merged"
    )


def test_a_rerun_names_what_the_earlier_run_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    options = BaselineOptions(pristine=gsd.pristine)
    assert reapply(ReapplyRequest(gsd.patches, gsd.target, options)).exit_code() == 0
    [result] = reapply(ReapplyRequest(gsd.patches, gsd.target, options)).results
    assert result.reason == Reason(Why.EARLIER_REAPPLIED)
    assert file_reason(result) == "already reapplied by an earlier run"


PATCH = "/p/agents/a.md"
WORDS = [
    (Reason(), ""),
    (Reason(Why.IDENTICAL), "your copy is identical to the installed file"),
    (
        Reason(Why.ACCEPTED_IS_INSTALLED, other="--baseline-source npm:x@1.0.0"),
        "the pristine copy accepted with --accept-pristine is the installed release itself: "
        "merging on it would undo every upstream change; use the release the patches were "
        "saved from as the baseline (--baseline-source npm:x@1.0.0)",
    ),
    (
        Reason(Why.BINARY_NO_BASELINE, PATCH),
        f"binary file left as installed, your copy is {PATCH}",
    ),
    (Reason(Why.PATCH_NO_BASELINE), "the patch turns the installed file into your copy"),
    (
        Reason(Why.PATCH_NO_BASELINE, first_line=True),
        f"the patch turns the installed file into your copy ({FIRST_LINE})",
    ),
    (
        Reason(Why.SAVED_IS_BASELINE),
        "your saved copy equals its baseline: the backup is inconsistent, nothing merged",
    ),
    (Reason(Why.ALREADY_IN_RELEASE), "your change is already in the installed release"),
    (Reason(Why.MERGE_IS_INSTALLED), "nothing to write: the merge equals the installed file"),
    (
        Reason(Why.BINARY_CONFLICT, PATCH),
        f"binary file changed on both sides: left as installed, your copy is {PATCH}",
    ),
    (
        Reason(Why.BINARY_CONFLICT, PATCH, note=MergeNote(MergeNoteCode.PAST_TEXT_SIZE, "big")),
        f"big: left as installed, your copy is {PATCH}",
    ),
    (
        Reason(Why.CONFLICT_PATCH, count=2),
        "2 conflicting hunk(s); the patch is your change to the baseline",
    ),
    (Reason(Why.CONFLICT_MARKERS, count=3), "3 conflicting hunk(s) marked in the file"),
    (Reason(Why.UNSAFE_PATH, text="a link"), "unsafe path: a link"),
    (
        Reason(Why.SAME_FILE, PATCH, other="agents/b.md"),
        f"the same file on disk as agents/b.md (through a link); merge it by hand from {PATCH}",
    ),
    (Reason(Why.SAVED_MISSING, PATCH), f"the saved copy {PATCH} is missing"),
    (Reason(Why.ERROR, text="it broke"), "it broke"),
    (
        Reason(Why.EARLIER_UNRESOLVED),
        "conflict markers from an earlier run are still unresolved",
    ),
    (
        Reason(Why.EARLIER_EDITED),
        "already reapplied by an earlier run and edited since; left as it is",
    ),
    (
        Reason(Why.EARLIER_MARKERS_EDITED),
        "the conflict of an earlier run is edited but still has conflict markers",
    ),
    (Reason(Why.BY_HAND), "you resolved the conflict of an earlier run by hand"),
    (Reason(Why.CHANGED_SINCE), "the file changed since the interrupted run; left as it is"),
    (
        Reason(Why.DROPPED_TOO),
        "the installed release no longer has this file; you dropped it (your copy stays in "
        "the patches folder)",
    ),
    (
        Reason(Why.TOOK_THEIRS),
        "you took the installed file whole; your copy stays in the patches folder",
    ),
    (
        Reason(Why.FAVORED, count=2, other="theirs", note=MergeNote(MergeNoteCode.MEMORY_BOUND)),
        "2 clashing hunks took the installed release's side; every other change merged (too "
        "large for tether's own line merge, and a line merge would take more than 4x its size in "
        "memory: the whole file is one conflict)",
    ),
    (
        Reason(Why.VERIFICATION_FAILED, PATCH, written=False),
        f"verification failed (): the installed file is left as it is, your copy stays at {PATCH}",
    ),
    (Reason(Why.NOT_WRITTEN, text="disk full"), "not written: disk full"),
]


@pytest.mark.parametrize(("reason", "words"), WORDS, ids=[str(r.code) for r, _ in WORDS])
def test_every_reason_has_its_words(reason: Reason, words: str) -> None:
    assert file_reason(FileResult(PLANNER, "failed", reason)) == words


def test_every_code_is_worded() -> None:
    for code in Why:
        file_reason(FileResult(PLANNER, "failed", Reason(code)))  # no code without words
