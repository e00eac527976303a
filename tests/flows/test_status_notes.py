"""Why a status did not compare the files is a fact in the report object (``NotCompared``),
worded first among its notes by ``report/status.py``, in its words and its JSON document
(and a check's)."""

from __future__ import annotations

from tether.flows.status import NotCompared, StatusReport
from tether.report.status import render_status
from tether.report.status_document import status_document, status_notes

WHY = "the files were not compared with the installed release: release 1.0.0 is not in x"


def _report(not_compared: NotCompared) -> StatusReport:
    report = StatusReport("gaia", "GAIA", "(not recorded yet)", "1.0.0", compared=False)
    report.not_compared = not_compared
    report.notes = ["a note the source left"]
    return report


def test_not_compared_is_worded_first_with_the_rerun_hint_of_the_stopped_command() -> None:
    report = _report(NotCompared("release 1.0.0 is not in x", "refresh"))
    expected = [
        WHY,
        "give the rerun the same --source the interrupted refresh was given",
        "a note the source left",
    ]
    assert status_notes(report) == expected
    assert status_document(report)["notes"] == expected
    assert render_status(report).splitlines()[-3:] == [f"note: {n}" for n in expected]
    assert report.notes == ["a note the source left"]  # no words in the flow's own list


def test_without_a_stopped_run_there_is_no_rerun_hint() -> None:
    report = _report(NotCompared("release 1.0.0 is not in x"))
    assert status_notes(report) == [WHY, "a note the source left"]
