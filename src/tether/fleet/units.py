"""The per-project units of work: each a function of (project path, options) → result.

Nothing here reads the registry, shares state between projects, prints or writes outside
the project (and its worktree). Inputs are plain values and results turn into JSON and
back, so another executor (a process pool, a job queue, a remote worker) can run a unit
anywhere the project is checked out. The log a unit returns is text for the run folder,
worded by ``report/fleet_project``; the coordinator decides where it goes. Why a unit
stopped short is a ``UnitFailure``, worded there too (a result's ``error``).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tether.errors import Exit, TetherError
from tether.flows.plan import UpdateOptions
from tether.flows.preflight import GitOptions, default_branch_name
from tether.flows.project import open_project
from tether.flows.status import newest_available, project_status
from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update, run_update
from tether.flows.update_report import UpdateReport, UpdateStatus
from tether.model.plan import Bucket
from tether.report.fleet_project import (
    WORKTREE_PLAN_DIFFERS,
    error_line,
    plan_failed_line,
    unit_failure,
    up_to_date_log,
)
from tether.report.runs import isolation_line
from tether.report.update import render_plan_summary, render_update, update_document
from tether.runs.isolation import DEFAULT_MODE, Isolation, Target, isolate

# --- why a unit stopped short ----------------------------------------------------------

FailureKind = Literal[
    "error",  # message: a TetherError's own line
    "internal",  # error_type, message: an exception tether did not expect
    "newest-unknown",  # message: why the source could not name its newest release
    "isolation-skipped",  # message: why the isolation asked for could not be had
    "stale-plan",  # the project changed after its plan was shown
    "files-failed",  # failed: every file the update could not write, with its reason
    "update-ended",  # status: an update that ended failed without a failed file
    "interrupted",  # Ctrl-C between two files of the project
]


@dataclass(frozen=True)
class UnitFailure:
    """Why one project's unit stopped short, with the data its words quote:
    ``report/fleet_project.unit_failure`` words it (a result's ``error``)."""

    kind: FailureKind
    message: str = ""
    error_type: str = ""
    failed: tuple[tuple[str, str], ...] = ()  # (path, reason)
    status: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "failed": [list(pair) for pair in self.failed]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> UnitFailure | None:
        if data is None:
            return None
        failed = tuple((str(path), str(reason)) for path, reason in data["failed"])
        return cls(**{**data, "failed": failed})


def _error_words(failure: UnitFailure | None) -> str:
    return unit_failure(failure) if failure is not None else ""


def _result_json(result: Any) -> dict[str, Any]:
    """A unit result as JSON: its fields, ``error`` in words where ``failure`` stands,
    and the failure itself last (for the executor's way back; documents drop it)."""
    data = {("error" if name == "failure" else name): v for name, v in asdict(result).items()}
    data["error"] = result.error
    data["failure"] = result.failure.to_json() if result.failure is not None else None
    return data


# --- status ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusRow:
    status: str  # ok | not-tethered | error
    upstream: str = ""
    profile: str = ""
    installed_version: str = ""
    latest_version: str | None = None
    update_available: bool = False
    modified: int = 0
    conflicts: int = 0
    # Why the row is incomplete (not tethered, unreadable, source down).
    failure: UnitFailure | None = None

    @property
    def error(self) -> str:
        return _error_words(self.failure)

    def to_json(self) -> dict[str, Any]:
        return _result_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StatusRow:
        fields = {k: v for k, v in data.items() if k != "error"}
        return cls(**{**fields, "failure": UnitFailure.from_json(data["failure"])})


def status_unit(path: str, check_latest: bool = True) -> StatusRow:
    """One project's status row; reads only (a remote source may fill the release cache)."""
    root = Path(path)
    try:
        project = open_project(root)
    except TetherError as error:
        return StatusRow("not-tethered", failure=UnitFailure("error", str(error)))
    try:
        report = project_status(root)
    except TetherError as error:
        return StatusRow("error", failure=UnitFailure("error", str(error)))
    problem = None
    if check_latest:
        try:
            report.latest_version = newest_available(project, report.source, report.notes)
        except TetherError as error:
            # A source that is down must not hide the local drift this row still shows.
            problem = UnitFailure("newest-unknown", str(error))
    return StatusRow(
        "ok",
        report.upstream,
        report.profile,
        report.installed_version,
        report.latest_version,
        report.update_available,
        len(report.modified),
        len(report.conflicts),
        problem,
    )


# --- plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanOptions:
    to: str | None = None  # None: each project's newest release


@dataclass(frozen=True)
class ProjectPlan:
    status: str  # planned | up-to-date | not-tethered | failed
    upstream: str = ""
    from_version: str = ""
    to_version: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)  # bucket -> paths, non-zero only
    conflicts: tuple[str, ...] = ()
    digest: str = ""  # of the plan shown; apply refuses a different one
    failure: UnitFailure | None = None
    log: tuple[str, ...] = ()

    @property
    def error(self) -> str:
        return _error_words(self.failure)

    def to_json(self) -> dict[str, Any]:
        data = _result_json(self)
        data["counts"] = dict(self.counts)
        data["conflicts"] = list(self.conflicts)
        data["log"] = list(self.log)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProjectPlan:
        fixed = {k: v for k, v in data.items() if k != "error"}
        fixed |= {"conflicts": tuple(data["conflicts"]), "log": tuple(data["log"])}
        return cls(**{**fixed, "failure": UnitFailure.from_json(data["failure"])})


def update_options(root: Path) -> UpdateOptions:
    """What ``tether update`` would use without flags: the profile's conflict style."""
    return UpdateOptions(conflict_style=open_project(root).profile.default_conflict_style)


def plan_unit(path: str, options: PlanOptions) -> ProjectPlan:
    """The plan ``tether update --dry-run`` would show for this project. Writes nothing
    outside the project's release cache."""
    root = Path(path)
    try:
        open_project(root)
    except TetherError as error:
        return ProjectPlan("not-tethered", failure=UnitFailure("error", str(error)))
    try:
        request = UpdateRequest(root, to=options.to, dry_run=True, options=update_options(root))
        prepared = prepare_update(request)
    except TetherError as error:
        failure = UnitFailure("error", str(error))
        return ProjectPlan("failed", failure=failure, log=(plan_failed_line(failure),))
    except Exception as error:  # one project's crash must not cost the fleet its summary
        return ProjectPlan("failed", failure=_internal(error), log=tuple(_trace()))
    if isinstance(prepared, UpdateReport):
        return _up_to_date_plan(prepared)
    return _plan_from(prepared)


def _up_to_date_plan(report: UpdateReport) -> ProjectPlan:
    return ProjectPlan(
        "up-to-date",
        report.upstream,
        report.from_version,
        report.to_version,
        log=tuple(up_to_date_log(report)),
    )


def _plan_from(prepared: PreparedUpdate) -> ProjectPlan:
    report = prepared.report(UpdateStatus.PLAN)
    counts = {b.value: len(report.bucket(b)) for b in Bucket if report.bucket(b)}
    return ProjectPlan(
        "planned",
        report.upstream,
        report.from_version,
        report.to_version,
        counts,
        tuple(a.path for a in report.bucket(Bucket.CONFLICT)),
        prepared.plan.digest(),
        log=tuple(render_plan_summary(report).splitlines()),
    )


# --- apply -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyOptions:
    target: str  # the version the person confirmed (never re-resolved to a newer one)
    upstream: str
    isolate: str = DEFAULT_MODE
    expected_digest: str = ""  # the plan the person confirmed; empty: accept any
    allow_dirty: bool = False
    isolate_asked: bool = False  # --isolate was given: outside git is no reason to go in place


@dataclass(frozen=True)
class ProjectOutcome:
    status: str  # applied | up-to-date | failed
    isolation: Mapping[str, Any]
    step: str = ""  # where a failure happened: isolate | apply
    failure: UnitFailure | None = None
    exit_code: int = Exit.OK
    conflicts: tuple[str, ...] = ()
    report: Mapping[str, Any] | None = None  # the single-project update report (JSON)
    log: tuple[str, ...] = ()

    @property
    def error(self) -> str:
        return _error_words(self.failure)

    def to_json(self) -> dict[str, Any]:
        data = _result_json(self)
        data["isolation"] = dict(self.isolation)
        data["conflicts"] = list(self.conflicts)
        data["log"] = list(self.log)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProjectOutcome:
        fixed = {k: v for k, v in data.items() if k != "error"}
        fixed |= {"conflicts": tuple(data["conflicts"]), "log": tuple(data["log"])}
        return cls(**{**fixed, "failure": UnitFailure.from_json(data["failure"])})


def apply_unit(path: str, options: ApplyOptions) -> ProjectOutcome:
    """Isolate, then update through ``run_update`` (which takes the project's lock)."""
    root = Path(path)
    log: list[str] = []
    where = Isolation(options.isolate, "none", root)
    try:
        where = isolate(
            root,
            options.isolate,
            _target(root, options),
            skip=True,
            in_place_outside_git=not options.isolate_asked,
        )
        log.append(isolation_line(where))
        if where.used == "skipped":  # the checkout is never edited instead
            failure = UnitFailure("isolation-skipped", where.note)
            log.append(error_line(failure))
            return ProjectOutcome(
                "failed", where.to_json(), "isolate", failure, Exit.ERROR, log=tuple(log)
            )
        report = run_update(_request(where, options), _confirm(where, options, log))
    except TetherError as error:
        failure = UnitFailure("error", str(error))
        log.append(error_line(failure))
        return ProjectOutcome(
            "failed", where.to_json(), "apply", failure, Exit.ERROR, log=tuple(log)
        )
    except Exception as error:  # one project's crash must not cost the fleet its summary
        log += _trace()
        return ProjectOutcome(
            "failed", where.to_json(), "apply", _internal(error), Exit.ERROR, log=tuple(log)
        )
    log += render_update(report).splitlines()
    return _outcome(report, where, log)


def _target(root: Path, options: ApplyOptions) -> Target:
    """The single-project update's branch; a worktree without tether's state is no project."""
    branch = default_branch_name(options.upstream, options.target)
    if options.isolate != "worktree":
        return Target(branch, options.target)
    return Target(branch, options.target, required=(open_project(root).profile.state_file,))


def _request(where: Isolation, options: ApplyOptions) -> UpdateRequest:
    return UpdateRequest(
        where.root,
        to=options.target,
        options=update_options(where.root),
        command=f"fleet update --to {options.target}",
        git=_git_options(where, options),
    )


def _git_options(where: Isolation, options: ApplyOptions) -> GitOptions:
    """The single-project git options that carry the isolation out. The fleet's own
    worktree is made for the run, so the single-project worktree refusal is lifted."""
    return GitOptions(
        allow_dirty=options.allow_dirty,
        branch=where.branch if where.used == "branch" else None,
        no_branch=where.used != "branch",  # none: stay put; worktree: already on its branch
        allow_linked_worktree=where.used == "worktree",
    )


def _confirm(
    where: Isolation, options: ApplyOptions, log: list[str]
) -> Callable[[PreparedUpdate], bool]:
    """The person confirmed one plan for the whole fleet; apply exactly that plan."""

    def confirm(prepared: PreparedUpdate) -> bool:
        if not options.expected_digest or prepared.plan.digest() == options.expected_digest:
            return True
        if where.used == "worktree":
            # The worktree starts from the last commit, not from the checkout that was
            # planned; a different plan there is expected, and it touches nothing of theirs.
            log.append(WORKTREE_PLAN_DIFFERS)
            return True
        return False

    return confirm


def _outcome(report: UpdateReport, where: Isolation, log: list[str]) -> ProjectOutcome:
    data = update_document(report)
    isolation = where.to_json()
    if report.status == UpdateStatus.CANCELLED:
        stale = UnitFailure("stale-plan")
        return ProjectOutcome(
            "failed",
            isolation,
            "apply",
            stale,
            Exit.ERROR,
            report=data,
            log=(*log, unit_failure(stale)),
        )
    if report.status == UpdateStatus.UP_TO_DATE:
        return ProjectOutcome("up-to-date", isolation, report=data, log=tuple(log))
    code = report.exit_code()
    if code == Exit.ERROR:
        return ProjectOutcome(
            "failed",
            isolation,
            "apply",
            _update_failure(report),
            Exit.ERROR,
            report=data,
            log=tuple(log),
        )
    conflicts = tuple(a.path for a in report.open_conflicts)
    return ProjectOutcome(
        "applied", isolation, exit_code=code, conflicts=conflicts, report=data, log=tuple(log)
    )


def _update_failure(report: UpdateReport) -> UnitFailure:
    failed = tuple((a.path, a.reason) for a in report.bucket(Bucket.FAILED))
    if not failed:
        return UnitFailure("update-ended", status=str(report.status))
    return UnitFailure("files-failed", failed=failed)


def _internal(error: Exception) -> UnitFailure:
    return UnitFailure("internal", str(error), type(error).__name__)


def _trace() -> list[str]:
    return traceback.format_exc().rstrip().splitlines()
