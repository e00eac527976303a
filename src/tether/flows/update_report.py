"""What an update reports: its status, the files in each bucket, and the JSON document and
exit code they make. Words are ``report/update.py``'s."""

from __future__ import annotations

from enum import StrEnum

from tether.errors import Exit
from tether.model.lifecycle import blocking_items
from tether.model.plan import SETTLED_DECISIONS, Bucket, FieldMergeRow, FileAction
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from tether.flows.abandon import Abandoned
    from tether.flows.lifecycle_plan import PostUpdateOutcome, TrailerCount
    from tether.flows.notes import Note
    from tether.flows.regen import RegenOutcome


class UpdateStatus(StrEnum):
    """Where an update stands: the JSON ``status`` (schemas/update-report.json) and what the
    words and the exit code follow."""

    PLAN = "plan"  # the plan shown before a person confirms; never a result
    DRY_RUN = "dry-run"
    UP_TO_DATE = "up-to-date"
    AHEAD = "ahead"  # installed is newer than the target: refused
    NOT_COMMITTED = "not-committed"  # an applied update's version marker is not committed
    ACTION_REQUIRED = "action-required"  # an earlier update's blocking items are open
    CONFLICTS_OPEN = "conflicts-open"  # an earlier update's conflicts are not resolved
    COMPLETED = "completed"  # a stopped run finished, or an earlier one settled
    CANCELLED = "cancelled"
    UPDATED = "updated"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    ABANDONED = "abandoned"


class RunEndCode(StrEnum):
    """How a run ended when that asks something more of a person (``report/update.py``
    words it as the report's last note)."""

    STOPPED = "stopped"  # a signal stopped it: run again to finish, or abandon
    FILES_FAILED = "files-failed"  # some files failed: fix them and run again
    STATE_WRITTEN = "state-written"  # an interrupted run had recorded its state: review, commit


@valueclass(frozen=True)
class RunEnd:
    """How a run ended when that asks more of a person (worded by ``report/update.py``)."""

    code: RunEndCode
    run_id: str = ""  # the run to finish or abandon (stopped)
    to_version: str = ""  # the release the run was updating to (state-written)


class IndexTroubleCode(StrEnum):
    """Why a conflict is not marked unmerged in git's index (the file itself is fine):
    worded by ``report/update.py``."""

    NOT_RECORDED = "not-recorded"  # git refused to record the file's stages
    BACKUP_MISSING = "backup-missing"  # a resumed run's backup of the file is gone
    NOT_READ = "not-read"  # git's index could not be read (no path: the whole batch)


@valueclass(frozen=True)
class IndexTrouble:
    """A conflict git's index could not be told of: why, for which path, git's own line."""

    code: IndexTroubleCode
    path: str = ""
    error: str = ""  # git's own error line


@valueclass(frozen=True)
class UncommittedMarker:
    """An applied update not committed: the committed version file (GAIA's) differs from
    HEAD's copy. The marker's own values, as tether's record may say something else."""

    marker: str  # the version file, relative to the project
    value: str  # what it says now
    committed: str  # what the last commit has


BUCKET_ORDER = (
    Bucket.ADD,
    Bucket.REMOVED,
    Bucket.OVERWRITE,
    Bucket.UPDATE,
    Bucket.MERGED,
    Bucket.SKIP,
    Bucket.CONFLICT,
    Bucket.DELETE,
    Bucket.DELETED,
    Bucket.FAILED,
)


@valueclass()
class UpdateReport:
    """What an update did or would do: its status, every file's action, the notes."""

    profile: str
    upstream: str
    from_version: str
    to_version: str
    status: UpdateStatus
    dry_run: bool = False
    actions: list[FileAction] = field(default_factory=list)
    backup_dir: str | None = None
    backed_up: list[str] = field(default_factory=list)
    state_written: bool = False
    merge_dir: str = ""
    earlier_artifacts: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # worded by report/notes.py
    resumed: bool = False
    regions: dict[str, Any] = field(default_factory=dict)
    regenerated: list[RegenOutcome] = field(default_factory=list)
    superseded_artifacts: list[str] = field(default_factory=list)
    release_notes: list[dict[str, str]] = field(default_factory=list)
    adopter_actions: list[dict[str, str | None]] = field(default_factory=list)
    branch: str | None = None
    dirty: list[str] = field(default_factory=list)
    structured: list[FieldMergeRow] = field(default_factory=list)  # by path; report/ words them
    run_id: str | None = None
    # Planned changes an interrupted run did not carry out (not counted in the buckets).
    not_done: list[FileAction] = field(default_factory=list)
    # Conflicts left by an earlier update that are still unresolved (status conflicts-open).
    earlier_conflicts: list[dict[str, str]] = field(default_factory=list)
    # Blocking items an earlier update left and nobody settled (status action-required).
    earlier_action_items: list[dict[str, object]] = field(default_factory=list)
    # The commit message the next steps suggest (the profile's wording: GAIA's
    # "chore: update GAIA to v1.7.0"), and the project's quality-gate page when it has one.
    commit_message: str = ""
    # The ecosystem's update ping: command, status (planned, sent, failed, not-run), reason.
    ping: dict[str, Any] | None = None
    quality_gate: str | None = None
    region_check: str | None = None  # confirms regions are current (GAIA's roster check)
    # The release lifecycle (docs/lifecycle.md): migrations run or planned, notices whose
    # condition held before the run, post-update writes, and what a person must do.
    migrations: list[dict[str, Any]] = field(default_factory=list)
    migrations_skipped: bool = False
    # The switch that stopped every program the release ships (--no-programs, …), or None.
    programs_off: str | None = None
    notices: list[dict[str, str]] = field(default_factory=list)
    post_update: list[PostUpdateOutcome] = field(default_factory=list)  # report/ words them
    trailer_invalidations: list[TrailerCount] = field(default_factory=list)  # report/ words
    # What an abandon put back and could not (flows/abandon.py); worded by report/abandon.py.
    abandoned: Abandoned | None = None
    # What kept conflicts out of git's index, an applied update not committed, and how the
    # run ended: facts worded as the last notes
    # by report/update.py (``update_notes``), in its words and its JSON document.
    index_trouble: list[IndexTrouble] = field(default_factory=list)
    # Files edited in place while an interrupted run's backup still shared their bytes.
    backups_edited: list[str] = field(default_factory=list)
    uncommitted: UncommittedMarker | None = None
    run_end: RunEnd | None = None

    @property
    def action_items(self) -> list[dict[str, Any]]:
        """Blocking items a person must settle: migrations that did not succeed."""
        return blocking_items(self.migrations)

    def bucket(self, bucket: Bucket) -> list[FileAction]:
        return [a for a in self.actions if a.bucket is bucket]

    @property
    def open_conflicts(self) -> list[FileAction]:
        return [a for a in self.bucket(Bucket.CONFLICT) if a.decision not in SETTLED_DECISIONS]

    def exit_code(self) -> int:
        if self.status == UpdateStatus.INTERRUPTED:
            return Exit.INTERRUPTED
        if self.status == UpdateStatus.FAILED or self.bucket(Bucket.FAILED):
            return Exit.ERROR
        if self.status in (UpdateStatus.CONFLICTS_OPEN, UpdateStatus.ACTION_REQUIRED):
            return Exit.FOUND  # as ``check`` does for the same finding
        if self.status == UpdateStatus.UPDATED and (self.open_conflicts or self.action_items):
            return Exit.CONFLICTS
        if self.status == UpdateStatus.COMPLETED and self.earlier_conflicts:
            return Exit.CONFLICTS
        return Exit.OK

    def to_json(
        self,
        row_reason: Callable[[FileAction], str],
        field_merge_row: Callable[[FieldMergeRow, bool], str],
    ) -> dict[str, Any]:
        """The document without the notes report/ words (``report/update.update_document``);
        ``row_reason`` words a row's reason (``report/reasons.row_reason``)."""
        buckets: dict[str, Any] = {}
        for bucket in BUCKET_ORDER:
            actions = self.bucket(bucket)
            if bucket is Bucket.CONFLICT:
                buckets["conflict"] = [
                    {
                        "path": a.path,
                        "class": a.cls.value if a.cls else None,
                        "artifact": a.artifact,
                        "decision": a.decision,
                        "reason": row_reason(a),
                    }
                    for a in actions
                ]
            elif bucket is Bucket.FAILED:
                buckets["failed"] = [{"path": a.path, "reason": row_reason(a)} for a in actions]
            else:
                buckets[bucket.value] = [a.path for a in actions]
        return {
            "from_version": self.from_version,
            "to_version": self.to_version,
            "profile": self.profile,
            "upstream": self.upstream,
            "status": self.status,
            "dry_run": self.dry_run,
            "buckets": buckets,
            "backup_dir": self.backup_dir,
            "backed_up": self.backed_up,
            "state_written": self.state_written,
            "merge_dir": self.merge_dir,
            "earlier_artifacts": self.earlier_artifacts,
            "notes": [],  # facts, worded by report/ into the document
            "resumed": self.resumed,
            "regions": self.regions,
            "regenerated": [outcome.document() for outcome in self.regenerated],
            "superseded_artifacts": self.superseded_artifacts,
            "release_notes": self.release_notes,
            "adopter_actions": self.adopter_actions,
            "branch": self.branch,
            "dirty": self.dirty,
            "structured": [field_merge_row(row, self.dry_run) for row in self.structured],
            "run_id": self.run_id,
            "pending": [{"path": a.path, "bucket": a.bucket.value} for a in self.not_done],
            "open_conflicts": self.earlier_conflicts,
            "open_action_items": self.earlier_action_items,
            "commit_message": self.commit_message,
            "ping": self.ping,
            "quality_gate": self.quality_gate,
            "region_check": self.region_check,
            "migrations": self.migrations,
            "migrations_skipped": self.migrations_skipped,
            "programs_off": self.programs_off,
            "notices": self.notices,
            "post_update": [outcome.to_json() for outcome in self.post_update],
            "trailer_invalidations": [check.to_json() for check in self.trailer_invalidations],
            "action_items": self.action_items,
            "renames": [
                {"from_path": a.rename_from, "path": a.path, "bucket": a.bucket.value}
                for a in self.actions
                if a.rename_from
            ],
        }
