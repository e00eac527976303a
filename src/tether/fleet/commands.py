"""``fleet status`` and ``fleet update`` as one library call each. Nothing here prints.

The command line passes in how to talk to the person (``confirm`` for the one question) and
renders the document it gets back; with nothing selected, that is the command's own document
with no project in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.errors import Exit
from tether.fleet.runner import (
    FleetRequest,
    FleetRun,
    apply_fleet,
    cancel,
    fleet_status,
    plan_fleet,
)
from tether.runs.rundir import RunFolder
from tether.runs.selection import Filters, NothingSelected, choose

Doc = dict[str, Any]
# Shown the planned run, answers whether to apply it; None: apply without asking (--yes).
Confirm = Callable[[FleetRun], bool]


@dataclass(frozen=True)
class StatusResult:
    document: Doc
    exit_code: int


def status(filters: Filters, jobs: int) -> StatusResult | NothingSelected:
    """Every selected project's status row; reads only."""
    from tether.fleet.summary import status_document

    chosen = choose(filters)
    if isinstance(chosen, NothingSelected):
        return chosen.with_document(status_document(chosen.registry, chosen.selection, []))
    rows = fleet_status(chosen.selection, jobs)
    document = status_document(str(chosen.registry.path), chosen.selection, rows)
    return StatusResult(
        document, Exit.ERROR if any(row.status == "error" for _, row in rows) else Exit.OK
    )


@dataclass(frozen=True)
class UpdateResult:
    run: FleetRun
    document: Doc
    asked: bool  # the plan table was shown with the question

    @property
    def exit_code(self) -> int:
        return self.run.exit_code()


def update(
    filters: Filters, request: FleetRequest, confirm: Confirm | None
) -> UpdateResult | NothingSelected:
    """Plan every selected project, ask once (unless a dry run or ``confirm`` is None),
    apply in registry order, and keep the whole summary in the run folder."""
    from tether.fleet.summary import update_document
    from tether.report.fleet import render_plan_table, render_update

    chosen = choose(filters)
    if isinstance(chosen, NothingSelected):
        nothing = FleetRun(request, chosen.selection, None, [], "nothing-selected")
        return chosen.with_document(update_document(nothing, chosen.registry))
    run = plan_fleet(chosen.selection, request, RunFolder.deferred())
    asked = False
    if not request.dry_run:
        if run.to_apply and confirm is not None:
            asked = True
            if not confirm(run):
                cancel(run)
        if run.status != "cancelled":
            apply_fleet(run)
    document = update_document(run, str(chosen.registry.path))
    if run.folder is not None:
        run.folder.keep_summary(document, f"{render_plan_table(run)}\n\n{render_update(document)}")
    return UpdateResult(run, document, asked)
