"""What an update's lifecycle steps will do (docs/lifecycle.md), as one value the update
carries from its plan to its report: the due migrations, the conditions read before any
write, what each post-update write will do, and what the run did. The steps themselves are
``flows.lifecycle_steps``, loaded only when the release or the profile declares one (most
declare none: an update then loads neither them nor the declarations' types,
docs/performance.md "Small projects").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

from tether.flows.project import utc_now
from tether.model.lifecycle import BLOCKING, Lifecycle
from tether.state.store import AppliedMigration
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from typing import Any

    from tether.flows.notes import Note
    from tether.model.lifecycle_declarations import Migration, Notice
    from tether.process import Finished

ADOPTER_OWNED_REASON = "adopter-owned"
SKIP_FLAG = "--skip-migrations"
NO_PROGRAMS_FLAG = "--no-programs"
NO_PROGRAMS_ENV = "TETHER_NO_PROGRAMS"


def skipped_by(skip_migrations: bool, programs_off: str | None) -> str:
    """What keeps every due migration from running this run ("" when they run)."""
    return programs_off or (SKIP_FLAG if skip_migrations else "")


def programs_off_switch(no_programs: bool, no_regions: bool) -> str | None:
    """What stops every program the release ships (migrations and region regeneration) for
    this run, or None. tether's own switches: ``--no-programs`` (``TETHER_NO_PROGRAMS``) and
    ``--no-regions`` (``TETHER_NO_REGIONS``), which have always meant "run nothing the
    release ships". A profile's own region variable (GAIA_UPDATE_NO_REGIONS) only switches
    region awareness off, as its ecosystem defines it."""
    from tether.flows.regions_plan import NO_REGIONS_ENV

    if no_programs:
        return NO_PROGRAMS_FLAG
    if no_regions:
        return "--no-regions"
    for name in (NO_PROGRAMS_ENV, NO_REGIONS_ENV):
        if os.environ.get(name, "") not in ("", "0"):
            return f"{name}={os.environ[name]}"
    return None


class ProgramCode(StrEnum):
    """Why a program a release ships (a migration's, a region's, the update ping's) was
    refused or could not start, or how it ended: the code of a ``ProgramWhy``, worded by
    ``report/lifecycle_steps.program_reason``."""

    NOT_SHIPPED = "not-shipped"  # ``operand``: this release does not ship it (skipped)
    MISSING_FROM_RELEASE = "missing-from-release"  # ``operand``: not in the release's tree
    NOT_A_FILE = "not-a-file"  # ``operand``: not a file in the project
    # Refused before it could run (``flows/regen.program_refusal``):
    INTERPRETER_UNSAFE = "interpreter-unsafe"  # ``detail``: the program-name rule's message
    OPERAND_UNSAFE = "operand-unsafe"  # ``operand``; ``detail``: the path rule's message
    OPERAND_NOT_RELEASED = "operand-not-released"  # ``operand``: not a path the release ships
    OPERAND_OUTSIDE = "operand-outside"  # ``operand``: resolves through a link out of it
    NOT_STARTED = "not-started"  # ``program``; ``detail``: the error
    LOG_FAILED = "log-failed"  # ``program``; ``detail``: the error opening its log
    EXITED = "exited"  # ``exit_code``
    KILLED = "killed"  # ``exit_code``: minus the signal
    TIMED_OUT = "timed-out"  # ``seconds`` (None: not known); ``variable``: what sets them


@valueclass(frozen=True)
class ProgramWhy:
    """A fact about one program run: a code with its data (journaled as ``to_json()``)."""

    code: ProgramCode
    operand: str = ""
    program: str = ""
    detail: str = ""
    exit_code: int | None = None
    seconds: float | None = None
    variable: str | None = None

    def to_json(self) -> dict[str, object]:
        """The code and the data it has (what the journal records)."""
        doc: dict[str, object] = {"code": self.code.value}
        for key in ("operand", "program", "detail", "exit_code", "seconds", "variable"):
            value = getattr(self, key)
            if value not in ("", None):
                doc[key] = value
        return doc

    @classmethod
    def from_json(cls, doc: object) -> ProgramWhy | None:
        """The fact a journal recorded, or None for what is no such record."""
        # A hand-edited code may be any JSON value, a list among them: never hashed unchecked.
        if not isinstance(doc, dict) or not isinstance(doc.get("code"), str):
            return None
        if doc["code"] not in set(ProgramCode):
            return None
        code, seconds = doc.get("exit_code"), doc.get("seconds")
        variable = doc.get("variable")
        return cls(
            ProgramCode(doc["code"]),
            operand=str(doc.get("operand", "")),
            program=str(doc.get("program", "")),
            detail=str(doc.get("detail", "")),
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
            variable=None if variable is None else str(variable),
        )


def program_end(run: Finished) -> ProgramWhy:
    """How a program run ended, as a fact (``report/programs.py`` words it)."""
    if not run.started:
        return ProgramWhy(ProgramCode.NOT_STARTED, program=run.program, detail=run.error)
    if run.timed_out:
        return ProgramWhy(ProgramCode.TIMED_OUT, seconds=run.timeout, variable=run.limit)
    if run.exit_code is not None and run.exit_code < 0:
        return ProgramWhy(ProgramCode.KILLED, exit_code=run.exit_code)
    return ProgramWhy(ProgramCode.EXITED, exit_code=run.exit_code)


@valueclass(frozen=True)
class MigrationResult:
    """What one due migration did this run (or why it did not run), as the report and the
    journal record it."""

    id: str
    version: str | None
    when: str
    command: str
    # ok | conflict | error | refused | skipped (not run: --skip-migrations, --no-programs,
    # operand not shipped) | planned (a dry run lists it) | pending (not run yet)
    status: str
    exit_code: int | None = None
    summary: str | None = None
    stderr: str = ""
    # Words: the switch that skipped it, or what a journal written before ``why`` holds.
    reason: str = ""
    label: str | None = None
    # Why it could not start or how its program ended, as a fact (``reason`` is then
    # empty): the documents' ``reason`` is its words (``report/lifecycle_steps.py``).
    why: ProgramWhy | None = None
    # Always false: a dry run runs no release program (kept for the documents' shape).
    dry_run: bool = False

    @property
    def blocking(self) -> bool:
        return self.status in BLOCKING

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "when": self.when,
            "command": self.command,
            "status": self.status,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "stderr": self.stderr,
            "reason": self.reason,
            "label": self.label,
            "dry_run": self.dry_run,
            **({"why": self.why.to_json()} if self.why is not None else {}),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> MigrationResult:
        code = record.get("exit_code")
        summary = record.get("summary")
        version = record.get("version")
        label = record.get("label")
        return cls(
            id=str(record.get("id", "")),
            version=None if version is None else str(version),
            when=str(record.get("when", "")),
            command=str(record.get("command", "")),
            status=str(record.get("status", "error")),
            exit_code=code if isinstance(code, int) else None,
            summary=None if summary is None else str(summary),
            stderr=str(record.get("stderr", "")),
            reason=str(record.get("reason", "")),
            label=None if label is None else str(label),
            why=ProgramWhy.from_json(record.get("why")),
        )


class PostUpdateCode(StrEnum):
    """What one post-update write will do or did; worded by ``report/lifecycle_steps.py``."""

    PLANNED = "planned"  # the file will be written (backed up first)
    WRITTEN = "written"
    NO_SUCH_FILE = "no-such-file"  # skipped: the write is only for a file that exists
    NOT_AN_OBJECT = "not-an-object"  # skipped: the file holds no JSON object
    FAILED = "failed"  # ``detail``: the problem (the path guard's, or the write's error)


@valueclass(frozen=True)
class PostUpdateOutcome:
    """One post-update write's file and what it will do or did."""

    file: str
    code: PostUpdateCode
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        """Its data; the update document's ``status`` is ``report/``'s words of it."""
        return {"file": self.file, "status": self.code.value, "detail": self.detail}


@valueclass(frozen=True)
class TrailerCount:
    """How many open pull requests carry a declared trailer stamped with the version an
    update leaves (``count``), or why that is ``"unknown"``: ``why`` is ``no-checkout`` (the
    project is in no git checkout) or ``gh`` (gh is missing or failed: its own words in
    ``detail``). Worded by ``report/lifecycle_steps.trailer_document``."""

    trailer_key: str
    label: str
    count: int | str
    why: str = ""
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        """Its document with ``reason`` empty (report/ words a ``why``)."""
        return {
            "trailer_key": self.trailer_key,
            "label": self.label,
            "count": self.count,
            "reason": "",
        }


@valueclass()
class LifecyclePlan:
    """What this update does besides merging the release's files."""

    declared: Lifecycle = field(default_factory=Lifecycle)
    from_version: str = ""
    to_version: str = ""
    migrations: list[Migration] = field(default_factory=list)  # due, in run order
    # What keeps every due migration from running (--skip-migrations, --no-programs, …).
    skipped_by: str = ""
    # The switch that stops every program the release ships this run (migrations and
    # region regeneration), "" when they run.
    programs_off: str = ""
    snapshot: dict[str, bool] = field(default_factory=dict)  # condition key -> held before
    # path -> the condition (described) of the hand-off that leaves it alone
    owned: dict[str, str] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    after_refresh: dict[str, str] = field(default_factory=dict)  # template target -> text
    # Filled as the run goes (or from the journal of an interrupted run).
    results: dict[str, MigrationResult] = field(default_factory=dict)
    post_updated: list[PostUpdateOutcome] = field(default_factory=list)
    # What each post-update write will do, decided with the plan (shown before consent).
    post_planned: list[PostUpdateOutcome] = field(default_factory=list)
    backed_up: list[str] = field(default_factory=list)  # files a post-update write backed up
    trailers: list[TrailerCount] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # worded by report/notes.py

    @property
    def skip_migrations(self) -> bool:
        return bool(self.skipped_by)

    def migration_results(self) -> list[MigrationResult]:
        """One result per due migration, in run order; not reached yet: skipped or pending."""
        out = []
        ordered = sorted(self.migrations, key=lambda m: m.when != "before")  # stable
        for migration in ordered:
            result = self.results.get(migration.id)
            if result is None:
                status = "skipped" if self.skipped_by else "pending"
                result = migration_result(migration, status, reason=self.skipped_by)
            out.append(result)
        return out

    def notice_documents(self) -> list[dict[str, str]]:
        """Notices whose condition held before the run, then what a template refresh asks
        the adopter to expect."""
        docs = [{"id": n.id, "text": n.text} for n in self.notices]
        docs += [{"id": f"refreshed:{t}", "text": text} for t, text in self.after_refresh.items()]
        return docs

    def applied(self, run_id: str) -> dict[str, AppliedMigration]:
        """What the state records for this run's migrations (those that ran)."""
        now = utc_now()
        recorded = ("ok", *BLOCKING)
        return {
            r.id: AppliedMigration(r.version or "", r.status, now, run_id)
            for r in self.migration_results()
            if r.status in recorded or self._skipped_by_switch(r)
        }

    def _skipped_by_switch(self, result: MigrationResult) -> bool:
        """Left out by --skip-migrations or --no-programs: recorded, so the next update
        runs it."""
        return (
            bool(self.skipped_by)
            and result.status == "skipped"
            and (result.reason == self.skipped_by)
        )


def migration_result(migration: Migration, status: str, **fields: Any) -> MigrationResult:
    import shlex

    return MigrationResult(
        id=migration.id,
        version=migration.version,
        when=migration.when,
        command=shlex.join(migration.run),
        status=status,
        label=migration.label,
        **fields,
    )
