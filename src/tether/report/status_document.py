"""A status's and a check's notes and JSON document: the words the report object leaves to
``report/`` (why the files were not compared) put before its own notes, worded by
``report/notes.py``. Apart from the
human renderers, so ``status --json`` and ``check --json`` load no more than they use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.notes import worded_notes

if TYPE_CHECKING:
    from tether.flows.check import CheckReport
    from tether.flows.status import StatusReport


def status_notes(report: StatusReport) -> list[str]:
    """Every note of a status: why the files were not compared first, then the rest."""
    notes = []
    if report.not_compared is not None:
        notes.append(
            f"the files were not compared with the installed release: {report.not_compared.why}"
        )
        if report.not_compared.unfinished_verb is not None:
            notes.append(
                "give the rerun the same --source the interrupted "
                f"{report.not_compared.unfinished_verb} was given"
            )
    return notes + worded_notes(report.notes)


def status_document(report: StatusReport) -> dict[str, object]:
    """A status's JSON document, with the notes its words add."""
    return {**report.to_json(), "notes": status_notes(report)}


def check_document(report: CheckReport) -> dict[str, object]:
    """A check's JSON document, with the notes the status's words add."""
    return {**report.to_json(), "notes": status_notes(report.status)}
