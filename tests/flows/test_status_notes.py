"""Why a status did not compare the files is a fact in the report object (``NotCompared``),
worded first among its notes by ``report/status.py``, in its words and its JSON document
(and a check's)."""

from __future__ import annotations

import pytest

from tether.flows.notes import MigrationInterrupted
from tether.flows.status import NotCompared, StatusReport, UnfinishedUpdate
from tether.report.status import render_status
from tether.report.status_document import status_document, status_notes, unfinished_message

LEFT = MigrationInterrupted("m1")  # a note the flow found, a fact
SAID = "migration m1 was interrupted while it ran; it runs again"
WHY = "the files were not compared with the installed release: release 1.0.0 is not in x"


def _report(not_compared: NotCompared) -> StatusReport:
    report = StatusReport("gaia", "GAIA", "(not recorded yet)", "1.0.0", compared=False)
    report.not_compared = not_compared
    report.notes = [LEFT]
    return report


def test_not_compared_is_worded_first_with_the_rerun_hint_of_the_stopped_command() -> None:
    report = _report(NotCompared("release 1.0.0 is not in x", "refresh"))
    expected = [
        WHY,
        "give the rerun the same --source the interrupted refresh was given",
        SAID,
    ]
    assert status_notes(report) == expected
    assert status_document(report)["notes"] == expected
    assert render_status(report).splitlines()[-3:] == [f"note: {n}" for n in expected]
    assert report.notes == [LEFT]  # no words in the flow's own list


def test_without_a_stopped_run_there_is_no_rerun_hint() -> None:
    report = _report(NotCompared("release 1.0.0 is not in x"))
    assert status_notes(report) == [WHY, SAID]


@pytest.mark.parametrize(
    ("state_written", "abandon_started", "asks"),
    [
        (
            False,
            False,
            "rerun 'tether update --to 2.0.0' to finish or 'tether update --abandon' to roll back",
        ),
        (
            True,
            False,
            "its new state is recorded but it stopped before it completed; rerun 'tether update "
            "--to 2.0.0' to finish it",
        ),
        (
            False,
            True,
            "its abandon was interrupted; run 'tether update --abandon' again to finish rolling "
            "it back",
        ),
    ],
)
def test_an_unfinished_run_is_a_fact_worded_by_the_report(
    state_written: bool, abandon_started: bool, asks: str
) -> None:
    """The flow keeps the run's facts; report/status_document.py words the message, in the
    status's text and in the ``unfinished`` of the status and check documents."""
    unfinished = UnfinishedUpdate(
        "R1", "1.0.0", "2.0.0", "update --to 2.0.0", state_written, abandon_started
    )
    words = f"unfinished update 1.0.0 → 2.0.0 (run R1): {asks}"
    assert unfinished_message(unfinished) == words
    report = StatusReport("native", "kit", "/shelf", "1.0.0")
    report.unfinished = unfinished
    facts = report.to_json()["unfinished"]
    assert isinstance(facts, dict) and "message" not in facts
    document = status_document(report)["unfinished"]
    assert document == {
        "run_id": "R1",
        "from_version": "1.0.0",
        "to_version": "2.0.0",
        "command": "update --to 2.0.0",
        "state_written": state_written,
        "abandon_started": abandon_started,
        "message": words,
    }
    assert words in render_status(report).splitlines()
