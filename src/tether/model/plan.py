"""The plan of one update: a decision per path, computed without touching the tree."""

from __future__ import annotations

from enum import StrEnum

from tether.model.manifest import FileClass
from tether.valueclass import field, valueclass

# How an update (or reapply, or refresh, or a campaign's updates) leaves a conflict, and how
# --auto settles one: one definition for every command that offers them (docs/cli.md,
# "Settling conflicts"). ``ours``/``theirs`` settle only the clashing hunks, merging every
# other change from both sides, as git's ``merge -X ours/theirs``; ``keep-mine``/
# ``take-theirs`` decide for the whole file.
CONFLICT_STYLES = ("markers", "patch")
HUNK_CHOICES = ("ours", "theirs")
WHOLE_FILE_CHOICES = ("keep-mine", "take-theirs")
AUTO_CHOICES = (*HUNK_CHOICES, *WHOLE_FILE_CHOICES)
# Decisions that settle a conflict: the file holds a result, nothing is left for a person.
SETTLED_DECISIONS = frozenset(AUTO_CHOICES)


# Why an update leaves a path alone that the adopter took over (``tether own``).
YOURS = "yours"


class Bucket(StrEnum):
    ADD = "add"  # new upstream, absent here: copied
    REMOVED = "removed"  # absent here although installed (you deleted it): left absent
    OVERWRITE = "overwrite"  # owned file replaced by the release (backed up)
    UPDATE = "update"  # shared file you never touched, replaced by the release (backed up)
    SKIP = "skip"  # nothing to do
    MERGED = "merged"  # both sides changed; merged cleanly (backed up)
    CONFLICT = "conflict"  # both sides changed the same lines; artifact for a person
    DELETE = "delete"  # dropped upstream, still here: surfaced, removed only on request
    DELETED = "deleted"  # dropped upstream and removed on request (--delete-removed, backed up)
    FAILED = "failed"  # could not be read or written; the rest of the plan still applies


class Op(StrEnum):
    """What apply does on disk for an action."""

    NONE = "none"
    WRITE = "write"  # write ``content`` to the path (backing up what is there)
    MARKERS = "markers"  # write ``content`` (with conflict markers) to the path, backed up
    PATCH = "patch"  # keep the path; write ``artifact_content`` to ``artifact``
    THEIRS = "theirs"  # keep the path; store the release's bytes at ``artifact``
    REMOVE = "remove"  # back up, then remove the path


@valueclass(frozen=True)
class FileAction:
    """What the update does to one path: its bucket, the operation and the bytes it writes."""

    path: str
    cls: FileClass | None
    bucket: Bucket
    op: Op = Op.NONE
    content: bytes | None = None
    mode: int | None = None
    artifact: str | None = None
    artifact_content: bytes | None = None
    reason: str = ""
    # How a conflict was settled: markers, patch, notes, held, or one of AUTO_CHOICES.
    decision: str = ""
    rename_from: str | None = None
    # (base, ours, theirs) of a line merge: the verifier and git's unmerged stages need them.
    sides: tuple[bytes, bytes, bytes] | None = field(default=None, repr=False, compare=False)
    # What a failed verification puts back, when the path held something other than the
    # ours side before the run (reapply: the installed version). None: the ours side.
    restore: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def backs_up(self) -> bool:
        """Every op that replaces or removes the adopter's bytes takes a backup first."""
        return self.op in (Op.WRITE, Op.MARKERS, Op.REMOVE) and self.bucket is not Bucket.ADD


@valueclass(frozen=True)
class FieldMergeRow:
    """What a field-aware merge of one file did (or, planned, will do): the summary row's
    facts. ``state``: ``merged`` (counts below), ``clean-skip`` (no managed key changed
    upstream), ``whole-file-conflict`` (no baseline to merge key by key against: a patch),
    ``not-merged`` (a side does not parse: a patch), ``line-merge`` (too large: merged line
    by line). ``artifact``: the notes or patch file the run writes (None: none)."""

    path: str
    state: str
    applied: int = 0
    conflicts: int = 0
    suggestions: int = 0
    settled: int = 0  # conflicts settled toward the release (--auto theirs / take-theirs)
    artifact: str | None = None
    detail: str = ""  # why it was not merged key by key


@valueclass()
class UpdatePlan:
    """What one update writes: an action per path, carried out by ``flows.apply.execute_plan``."""

    upstream: str
    from_version: str
    to_version: str
    actions: list[FileAction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    structured: dict[str, FieldMergeRow] = field(default_factory=dict)  # field-merged files
    latest_hashes: dict[str, str] = field(default_factory=dict)  # path -> sha256 of L's bytes

    def by_bucket(self, bucket: Bucket) -> list[FileAction]:
        return [a for a in self.actions if a.bucket is bucket]

    def digest(self) -> str:
        import hashlib

        h = hashlib.sha256(f"{self.upstream}\0{self.from_version}\0{self.to_version}".encode())
        for action in self.actions:
            h.update(f"\0{action.path}\0{action.bucket}\0{action.op}".encode())
            if action.content is not None:
                h.update(hashlib.sha256(action.content).digest())
        return h.hexdigest()
