"""What reapply found and did, per saved file, and the run's summary.

A file's status is reapply's own word; for the shared writer it maps onto the shared buckets
(``STATUS_BUCKETS``): merged and conflict are those buckets, incorporated is a skip (nothing
to write), failed is failed. Its words are in ``tether.report.reapply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tether.errors import Exit
from tether.model.plan import AUTO_CHOICES, Bucket, MergeNote

if TYPE_CHECKING:
    from tether.engine.hunktable import ChangeRow, HunkRow
    from tether.engine.twoway import UserEdit
    from tether.engine.verify import VerifyResult
    from tether.flows.reapply.baseline import BaselineNote

MERGED = "merged"
CONFLICT = "conflict"
INCORPORATED = "incorporated"
FAILED = "failed"
RESOLVED = "resolved"  # a conflict a person (or --auto) settled: one of RESOLUTIONS
RESOLUTIONS = (*AUTO_CHOICES, "markers")
# A file the new release no longer ships: kept as the user's own file, or dropped
# (``--dropped``, or the prompt).
DROPPED_CHOICES = ("keep", "drop")
BY_HAND = "by-hand"  # a conflict an earlier run left, resolved by a person since
PATCHES_OPTION = "--patches"  # how the patches were found when the user named them

STATUS_BUCKETS = {
    MERGED: Bucket.MERGED,
    CONFLICT: Bucket.CONFLICT,
    INCORPORATED: Bucket.SKIP,
    FAILED: Bucket.FAILED,
    RESOLVED: Bucket.MERGED,
}

# GSD's package on the npm registry: the release the patches were saved from is fetched from
# there as the baseline (``--baseline-source npm:<package>@<from_version>``).
GSD_PACKAGE = "get-shit-done-cc"


def release_baseline_option(from_version: str | None) -> str:
    """The option that makes the release the patches were saved from the baseline."""
    version = (from_version or "<from_version>").removeprefix("v")
    return f"--baseline-source npm:{GSD_PACKAGE}@{version}"


KeptKind = Literal[
    "dry-run",
    "failed",  # count: files failed
    "conflicts",  # count: conflicts left
    "settled-theirs",  # settled: (file, resolution) of each file that dropped some of yours
    "folder-is-link",  # folder
    "holds-install",  # folder, target: the folder holds the installed release
    "unlisted",  # folder, path: a file its backup-meta.json does not list
    "error",  # message: the error's own line
]


@dataclass(frozen=True)
class KeptBecause:
    """Why ``--remove-backups`` removed nothing: worded by
    ``report/reapply.kept_because``."""

    kind: KeptKind
    count: int = 0
    settled: tuple[tuple[str, str], ...] = ()
    folder: str = ""
    target: str = ""
    path: str = ""
    message: str = ""


class Why(StrEnum):
    """What happened to one saved file, as a code: ``report/reapply.file_reason`` words it
    with the data of its ``Reason`` (named after each code)."""

    NOTHING = "nothing"  # a clean merge: only the baseline's notes have something to say
    DROPPED = "dropped"  # patch: the new release no longer ships the file
    IDENTICAL = "identical"  # the saved copy is the installed file
    ACCEPTED_IS_INSTALLED = "accepted-is-installed"  # other: the option that fixes it
    BINARY_NO_BASELINE = "binary-no-baseline"  # patch
    PATCH_NO_BASELINE = "patch-no-baseline"  # first_line
    BOTH_VERSIONS = "both-versions"  # both written into the file, no baseline
    SAVED_IS_BASELINE = "saved-is-baseline"  # the backup is inconsistent
    ALREADY_IN_RELEASE = "already-in-release"
    MERGE_IS_INSTALLED = "merge-is-installed"  # nothing to write
    BINARY_CONFLICT = "binary-conflict"  # note: the merge's own, if any; patch
    CONFLICT_PATCH = "conflict-patch"  # count, first_line
    CONFLICT_MARKERS = "conflict-markers"  # count
    UNSAFE_PATH = "unsafe-path"  # text: the problem
    SAME_FILE = "same-file"  # other: the path naming the same file first; patch
    SAVED_MISSING = "saved-missing"  # patch
    ERROR = "error"  # text: the error's own line
    EARLIER_REAPPLIED = "earlier-reapplied"
    EARLIER_UNRESOLVED = "earlier-unresolved"  # an earlier run's markers, untouched
    EARLIER_EDITED = "earlier-edited"  # an earlier run's merge, edited since
    EARLIER_MARKERS_EDITED = "earlier-markers-edited"  # edited, markers still in
    BY_HAND = "by-hand"  # an earlier run's conflict resolved by a person
    CHANGED_SINCE = "changed-since"  # edited since the interrupted run
    KEPT_DROPPED = "kept-dropped"  # a dropped file kept as the user's own
    DROPPED_TOO = "dropped-too"  # a dropped file the user dropped as well
    KEPT_MINE = "kept-mine"
    TOOK_THEIRS = "took-theirs"
    FAVORED = "favored"  # count, other: the side (ours | theirs); note: the merge's
    VERIFICATION_FAILED = "verification-failed"  # patch, written (the lines: the result's)
    NOT_WRITTEN = "not-written"  # text: the writer's error


@dataclass(frozen=True)
class Reason:
    """Why a saved file ended as it did, with the data its words quote."""

    code: Why = Why.NOTHING
    patch: str = ""  # the saved copy (where the user's copy stays)
    count: int = 0  # conflicting or clashing hunks
    text: str = ""  # words found elsewhere, quoted as they are (an error)
    note: MergeNote | None = None  # why the merge did not go line by line
    other: str = ""
    first_line: bool = False  # conflict markers would break line 1: a patch instead
    written: bool = False  # verification failed after the merge was written


# Without a baseline, what the saved copy and the installed file differ by.
TwoWay = Literal["drift-only", "edits"]


@dataclass
class FileResult:
    """One saved file's outcome. Its reason as a person reads it (the JSON's ``reason``)
    is ``report/reapply.file_reason``: the ``reason`` code with the facts below around
    it; the drift question is worded there too."""

    file: str
    status: str
    reason: Reason = field(default_factory=Reason)
    baseline: str = "none"  # pristine | git | release | none
    # What the search for the baseline found on the way (why this one, or why none).
    baseline_notes: tuple[BaselineNote, ...] = ()
    no_baseline: bool = False  # decided without a baseline: the reason says so first
    auto_left: str | None = None  # the --auto choice that could not settle this conflict
    missing: list[tuple[int, str]] = field(default_factory=list)
    readded: list[tuple[int, str]] = field(default_factory=list)
    drifted: bool = False
    artifact: str | None = None  # a conflict patch, when --conflict patch
    hunks: list[HunkRow] = field(default_factory=list)  # the hunk verification table
    user_edits: list[UserEdit] = field(default_factory=list)  # without a baseline
    # Without a baseline: only mechanical drift differs (asked whether on purpose), or edits.
    two_way: TwoWay | None = None
    user_commits: list[tuple[str, str]] = field(default_factory=list)  # (commit, subject)
    resolution: str | None = None  # how a conflict was settled: RESOLUTIONS or BY_HAND
    pristine_is_installed: bool = False  # drifted: the pristine copy is the installed file
    settled_hunks: int = 0  # resolved ours/theirs: the clashing hunks that took that side
    # The user's changes (base → their copy) the file the run leaves holds; None: not known
    # (no baseline to tell them by, or a file an earlier run already reapplied).
    preserved: list[ChangeRow] | None = None

    @property
    def hunks_missing(self) -> int:
        return sum(1 for row in self.hunks if not row.verified)

    def restate(self, reason: Reason) -> None:
        """A new outcome: what was said around the old one goes with it."""
        self.reason, self.baseline_notes, self.no_baseline = reason, (), False
        self.auto_left, self.two_way = None, None

    @property
    def record_reason(self) -> str:
        """The reason the journal records: its code, the text it quotes, the notes' codes."""
        code = str(self.reason.code) if self.reason.code is not Why.NOTHING else ""
        notes = [str(note.code) for note in self.baseline_notes]
        merge = str(self.reason.note.code) if self.reason.note is not None else ""
        return "; ".join(part for part in (code, self.reason.text, merge, *notes) if part)

    def to_json(self, reason: str, question: str | None) -> dict[str, Any]:
        """Its data with its words, which ``report/reapply.result_document`` gives."""
        document: dict[str, Any] = {
            "file": self.file,
            "status": self.status,
            "missing": [{"line": n, "text": t} for n, t in self.missing],
            "reason": reason,
            "baseline": self.baseline,
            "readded": [{"line": n, "text": t} for n, t in self.readded],
            "hunks": [row.to_json() for row in self.hunks],
            "user_edits": [edit.to_json() for edit in self.user_edits],
            "question": question,
            "user_commits": [{"commit": c, "subject": s} for c, s in self.user_commits],
            "resolution": self.resolution,
            "settled_hunks": self.settled_hunks,
            "preserved": (
                None if self.preserved is None else [row.to_json() for row in self.preserved]
            ),
        }
        if self.artifact:
            document["artifact"] = self.artifact
        return document


@dataclass
class ReapplyReport:
    patches: Path | None  # None: no patches folder anywhere, nothing to reapply
    target: Path | None  # None: nothing found and no folder named
    results: list[FileResult]
    dry_run: bool = False
    run_id: str | None = None
    backup_dir: Path | None = None
    resumed: bool = False
    patches_source: str = PATCHES_OPTION  # --patches, the variable, "global" or "local"
    searched: list[str] = field(default_factory=list)  # the places tried, when searched
    pristine: Path | None = None  # the pristine folder used, if any
    from_version: str | None = None  # the release the patches were saved from
    installed_version: str | None = None  # the target's VERSION file
    backups_removed: Path | None = None  # the patch folder --remove-backups removed
    removed_files: list[str] = field(default_factory=list)  # every file that removal took
    updated: int = 0  # files written with the user's changes (merged, or kept: keep-mine)
    backups_kept_because: KeptBecause | None = None  # why --remove-backups removed nothing
    # Files edited in place while an interrupted run's backup still shared their bytes
    # (flows.backups.Saved.first_edited), worded as notes by report/reapply.py.
    backups_edited: list[str] = field(default_factory=list)

    @property
    def accept_offered(self) -> bool:
        """Pristine drift that accepting the drifted copy could settle: a drifted copy
        that is not the installed release (merging on that would undo every upstream
        change)."""
        return any(not r.pristine_is_installed for r in self.results if r.drifted)

    @property
    def drifted_files(self) -> list[str]:
        return [r.file for r in self.results if r.drifted]

    @property
    def failures(self) -> int:
        return sum(1 for r in self.results if r.status == FAILED)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    def exit_code(self) -> int:
        """1 when a file failed (verification, drift or an error), 4 when conflicts are left."""
        if self.failures:
            return Exit.ERROR
        return Exit.CONFLICTS if self.count(CONFLICT) else Exit.OK

    def to_json(
        self, results: Sequence[dict[str, Any]], remedies: list[str], kept_because: str | None
    ) -> dict[str, Any]:
        """Its data with its words, which ``report/reapply.reapply_document`` gives (each
        file's document, the remedies for drift, why the backups were kept; it fills
        ``notes``)."""
        return {
            "checked": len(self.results),
            "failures": self.failures,
            "drifted": len(self.drifted_files),
            "drifted_files": self.drifted_files,
            "results": list(results),
            "patches_dir": str(self.patches) if self.patches is not None else None,
            "patches_source": self.patches_source if self.patches is not None else None,
            "searched": self.searched,
            "pristine_dir": str(self.pristine) if self.pristine is not None else None,
            "from_version": self.from_version,
            "installed_version": self.installed_version,
            "project_dir": str(self.target) if self.target is not None else None,
            "dry_run": self.dry_run,
            "run_id": self.run_id,
            "backup_dir": str(self.backup_dir) if self.backup_dir else None,
            "resumed": self.resumed,
            "remedies": remedies,
            "backups_removed": str(self.backups_removed) if self.backups_removed else None,
            "backups_kept_because": kept_because,
            "removed_files": self.removed_files,
            "updated": self.updated,
            "notes": [],
        }


def record_verification_failure(
    result: FileResult, verdict: VerifyResult, patch: Path, *, written: bool = True
) -> None:
    """Fail ``result`` with the verifier's lines; ``written``: the merge had been written
    and the installed version was put back (else the installed file was never touched)."""
    result.status = FAILED
    result.missing = list(verdict.missing)
    result.readded = list(verdict.readded)
    result.restate(Reason(Why.VERIFICATION_FAILED, str(patch), written=written))
