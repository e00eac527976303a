"""Fan the per-project units out: status and plans concurrently, applies one at a time.

Plans only read, so they run on a bounded thread pool (``--jobs``): the work is file
hashing and git/subprocess calls, which release the GIL. Applies run in registry order in
this thread: the order is part of the contract (stop-on-fail leaves the rest pending), and
``run_update`` installs signal handlers, which only the main thread may do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tether.errors import Exit
from tether.fleet.units import (
    ApplyOptions,
    PlanOptions,
    ProjectOutcome,
    ProjectPlan,
    StatusRow,
    UnitFailure,
    apply_unit,
    plan_unit,
    status_unit,
)
from tether.process import map_in_threads
from tether.report.fleet_project import (
    APPLY_SECTION,
    INTERRUPTED_SECTION,
    PLAN_SECTION,
    log_head,
    result_line,
)
from tether.runs.isolation import DEFAULT_MODE
from tether.runs.rundir import RunFolder
from tether.runs.selection import Member, Selection

T = TypeVar("T")
R = TypeVar("R")


def fleet_status(selection: Selection, jobs: int) -> list[tuple[Member, StatusRow]]:
    rows = map_in_threads(lambda m: status_unit(str(m.path)), selection.chosen, jobs)
    return list(zip(selection.chosen, rows, strict=True))


@dataclass(frozen=True)
class FleetRequest:
    to: str | None = None
    dry_run: bool = False
    isolate: str = DEFAULT_MODE
    continue_on_failure: bool = False
    jobs: int = 4
    allow_dirty: bool = False
    isolate_asked: bool = False  # --isolate was given (not the default)


@dataclass
class FleetEntry:
    member: Member
    plan: ProjectPlan
    log_path: Path
    # applied | up-to-date | failed | pending | not-tethered
    status: str = "pending"
    outcome: ProjectOutcome | None = None
    log: list[str] = field(default_factory=list)

    @property
    def report_path(self) -> Path:
        return self.log_path.with_suffix(".json")

    @property
    def step(self) -> str:
        return self.outcome.step if self.outcome else "plan"

    @property
    def error(self) -> str:
        return self.outcome.error if self.outcome else self.plan.error


@dataclass
class FleetRun:
    request: FleetRequest
    selection: Selection
    # None: nothing was selected, or nothing needed updating: no run folder was made
    folder: RunFolder | None
    entries: list[FleetEntry]
    # planned | dry-run | cancelled | done | stopped | interrupted | nothing-selected
    status: str = "planned"

    def write(self, path: Path, lines: list[str]) -> None:
        if self.folder is not None:
            self.folder.write(path, lines)

    @property
    def to_apply(self) -> list[FleetEntry]:
        return [e for e in self.entries if e.plan.status == "planned"]

    def exit_code(self) -> int:
        if self.status == "interrupted":
            return Exit.INTERRUPTED
        if any(e.status == "failed" for e in self.entries):
            return Exit.ERROR
        if self.status == "dry-run" and any(e.plan.counts.get("failed") for e in self.to_apply):
            return Exit.ERROR  # as `tether update --dry-run`: files that will fail to be written
        if any(e.outcome and e.outcome.conflicts for e in self.entries):
            return Exit.CONFLICTS
        return Exit.OK


_STATUS_OF_PLAN = {
    "planned": "pending",
    "up-to-date": "up-to-date",
    "not-tethered": "not-tethered",
    "failed": "failed",
}


def plan_fleet(selection: Selection, request: FleetRequest, folder: RunFolder) -> FleetRun:
    """Plan every chosen project concurrently and log each plan in ``folder`` (made only
    when some project needs updating or failed to plan). Writes no project."""
    options = PlanOptions(request.to)
    plans = map_in_threads(
        lambda m: plan_unit(str(m.path), options), selection.chosen, request.jobs
    )
    count = len(plans)
    entries = []
    for index, (member, plan) in enumerate(zip(selection.chosen, plans, strict=True)):
        entry = FleetEntry(
            member, plan, folder.log_path(index, count, member.name), _STATUS_OF_PLAN[plan.status]
        )
        entry.log = [log_head(member.name, member.path), PLAN_SECTION, *plan.log]
        if plan.error and not plan.log:
            entry.log.append(plan.error)
        entries.append(entry)
    status = "dry-run" if request.dry_run else "planned"
    run = FleetRun(request, selection, folder, entries, status)
    if any(e.plan.status in ("planned", "failed") for e in entries):
        for entry in entries:
            folder.write(entry.log_path, entry.log)
    else:
        # Nothing to update and nothing that failed: no run folder (nothing to look up later).
        run.folder = None
    return run


def cancel(run: FleetRun) -> None:
    run.status = "cancelled"


def apply_fleet(run: FleetRun) -> None:
    """Apply in registry order; by default the first failure leaves the rest pending."""
    stopped = False
    for entry in run.entries:
        if stopped:
            if entry.status == "failed":
                entry.status = "pending"  # its plan failed, but it was never reached
            continue
        if entry.status == "pending":
            try:
                _apply_one(run, entry)
            except KeyboardInterrupt:
                _interrupted(run, entry)
                return
            if entry.outcome and (entry.outcome.report or {}).get("status") == "interrupted":
                # Ctrl-C inside run_update stops that project after its current file; it
                # means "stop", so even --continue-on-failure goes no further.
                run.status = "interrupted"
                return
        stopped = entry.status == "failed" and not run.request.continue_on_failure
    run.status = "stopped" if stopped else "done"


def _apply_one(run: FleetRun, entry: FleetEntry) -> None:
    options = ApplyOptions(
        target=entry.plan.to_version,
        upstream=entry.plan.upstream,
        isolate=run.request.isolate,
        isolate_asked=run.request.isolate_asked,
        expected_digest=entry.plan.digest,
        allow_dirty=run.request.allow_dirty,
    )
    entry.outcome = apply_unit(str(entry.member.path), options)
    entry.status = entry.outcome.status
    entry.log += [APPLY_SECTION, *entry.outcome.log, result_line(entry.status)]
    run.write(entry.log_path, entry.log)
    if entry.outcome.report is not None:
        # The full single-project report (every path) stays here; the summary carries counts.
        run.write(entry.report_path, [json.dumps(entry.outcome.report, indent=2)])


def _interrupted(run: FleetRun, entry: FleetEntry) -> None:
    # Ctrl-C between files of one project is handled inside run_update (it stops after the
    # current file); one arriving elsewhere lands here: keep the summary, mark the rest.
    interrupted = UnitFailure("interrupted")
    entry.outcome = ProjectOutcome("failed", {}, "apply", interrupted, Exit.INTERRUPTED)
    entry.status = "failed"
    entry.log += [INTERRUPTED_SECTION]
    run.write(entry.log_path, entry.log)
    run.status = "interrupted"
