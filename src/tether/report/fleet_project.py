"""One project's words in a fleet run: why its unit stopped short (a result's ``error``, which
the fleet's documents carry) and the lines of its log in the run folder.

The fleet's units and runner call these (``report/`` sits below ``fleet/``); they know the
fleet's results only as types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, assert_never

from tether.report.update import update_notes

if TYPE_CHECKING:
    from tether.fleet.units import UnitFailure
    from tether.flows.update_report import UpdateReport

FAILED_SHOWN = 3  # failed files named in a failure; the rest are counted
STALE_PLAN = (
    "the project changed after its plan was shown; nothing was written "
    "(run the command again to see the new plan)"
)
# A worktree starts from the last commit, not from the checkout that was planned.
WORKTREE_PLAN_DIFFERS = "note: the worktree's plan differs from the one shown (it starts at HEAD)"
PLAN_SECTION = "== plan"
APPLY_SECTION = "== apply"
INTERRUPTED_SECTION = "== interrupted"


def unit_failure(failure: UnitFailure) -> str:
    """Why one project's unit stopped short, in words."""
    kind = failure.kind
    if kind == "error":
        return failure.message
    if kind == "internal":
        return f"internal error: {failure.error_type}: {failure.message}"
    if kind == "newest-unknown":
        return f"newest version unknown: {failure.message}"
    if kind == "isolation-skipped":
        return f"{failure.message}; nothing written"
    if kind == "stale-plan":
        return STALE_PLAN
    if kind == "files-failed":
        return _files_failed(failure.failed)
    if kind == "update-ended":
        return f"update {failure.status}"
    if kind == "interrupted":
        return "interrupted"
    assert_never(kind)


def _files_failed(failed: Sequence[tuple[str, str]]) -> str:
    shown = "; ".join(f"{path}: {reason}" for path, reason in failed[:FAILED_SHOWN])
    extra = len(failed) - FAILED_SHOWN
    more = f" (and {extra} more)" if extra > 0 else ""
    return f"{len(failed)} file(s) failed: {shown}{more}"


def plan_failed_line(failure: UnitFailure) -> str:
    return f"plan failed: {unit_failure(failure)}"


def error_line(failure: UnitFailure) -> str:
    return f"error: {unit_failure(failure)}"


def up_to_date_log(report: UpdateReport) -> list[str]:
    """A plan with nothing to do: the version it is at, and the update's notes."""
    lines = [f"already up to date ({report.upstream} {report.from_version})"]
    return lines + [f"note: {note}" for note in update_notes(report)]


def log_head(name: str, path: object) -> str:
    return f"project {name} ({path})"


def result_line(status: str) -> str:
    return f"== result: {status}"
