"""An update's last notes are facts in the report object (``run_end``, ``uncommitted``) and
words in ``report/update.py``: the same words in the summary and in the JSON document,
after the run's own notes."""

from __future__ import annotations

from tether.flows.notes import MigrationInterrupted
from tether.flows.update_report import (
    RunEnd,
    RunEndCode,
    UncommittedMarker,
    UpdateReport,
    UpdateStatus,
)
from tether.report.update import render_update, update_document, update_notes

EARLIER = MigrationInterrupted("m1")  # a note the flow found first, a fact
FOUND = "migration m1 was interrupted while it ran; it runs again"


def _report(status: UpdateStatus, **facts: object) -> UpdateReport:
    report = UpdateReport("default", "acme", "1.0.0", "1.1.0", status, notes=[EARLIER])
    for name, value in facts.items():
        setattr(report, name, value)
    return report


def test_a_stopped_run_is_a_code_worded_last_with_its_run_id() -> None:
    report = _report(UpdateStatus.INTERRUPTED, run_end=RunEnd(RunEndCode.STOPPED, run_id="r-7"))
    last = (
        "stopped by a signal; run the same command again to finish run r-7, or "
        "'tether update --abandon' to roll it back"
    )
    assert update_notes(report) == [FOUND, last]
    assert update_document(report)["notes"] == [FOUND, last]
    assert report.to_json(str, str)["notes"] == []  # the object's own JSON holds no words
    lines = render_update(report).splitlines()
    at = lines.index(f"note: {FOUND}")
    assert lines[at + 1] == f"note: {last}"
    assert report.notes == [EARLIER]  # the flow's own list holds no words of it


def test_failed_files_and_a_finished_state_are_worded_from_their_codes() -> None:
    failed = _report(UpdateStatus.FAILED, run_end=RunEnd(RunEndCode.FILES_FAILED))
    assert update_notes(failed)[-1] == (
        "some files failed; fix them and run the same command again to finish"
    )
    finished = _report(
        UpdateStatus.COMPLETED, run_end=RunEnd(RunEndCode.STATE_WRITTEN, to_version="1.1.0")
    )
    assert update_notes(finished)[-1] == (
        "the update to 1.1.0 wrote its state but was interrupted before it completed; review "
        "the changes (git diff) and commit them"
    )


def test_an_uncommitted_marker_quotes_its_values_before_how_the_run_ended() -> None:
    report = _report(
        UpdateStatus.COMPLETED,
        uncommitted=UncommittedMarker(".gaia/VERSION", "1.9.0", "1.7.0"),
        run_end=RunEnd(RunEndCode.STATE_WRITTEN, to_version="1.9.0"),
    )
    notes = update_notes(report)
    assert notes[0] == FOUND
    assert notes[1] == (
        "the update to 1.9.0 is applied but not committed (.gaia/VERSION says 1.9.0, the last "
        "commit has 1.7.0): review it (git status, git diff) and commit it, or run 'git "
        "checkout -- .gaia/VERSION' and rerun 'tether update' to start over"
    )
    assert notes[2].startswith("the update to 1.9.0 wrote its state")


def test_conflicts_git_index_was_not_told_of_are_worded_before_how_the_run_ended() -> None:
    from tether.flows.update_report import IndexTrouble, IndexTroubleCode

    report = _report(
        UpdateStatus.FAILED,
        index_trouble=[
            IndexTrouble(IndexTroubleCode.NOT_RECORDED, "a.txt", "fatal: index.lock exists"),
            IndexTrouble(IndexTroubleCode.BACKUP_MISSING, "b.txt"),
            IndexTrouble(IndexTroubleCode.NOT_READ, error="fatal: bad index file"),
        ],
        run_end=RunEnd(RunEndCode.FILES_FAILED),
    )
    assert update_document(report)["notes"] == [
        FOUND,
        "a.txt: could not record the conflict in git's index (fatal: index.lock exists)",
        "b.txt: could not record the conflict in git's index (the run's backup of the file "
        "is missing)",
        "could not read git's index (fatal: bad index file)",
        "some files failed; fix them and run the same command again to finish",
    ]
