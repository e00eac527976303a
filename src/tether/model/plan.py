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


class MergeNoteCode(StrEnum):
    """Why a three-way text merge did not go line by line (``MergeNote``)."""

    # Too large for tether's own line merge, and git's would take more than 4x the inputs'
    # memory: the whole file is one conflict, or the side ``favor`` names.
    MEMORY_BOUND = "memory-bound"
    GIT_FAILED = "git-failed"  # as MEMORY_BOUND, git's merge failing (``detail``: its error)
    PAST_TEXT_SIZE = "past-text-size"  # not merged at all (``detail``: the size it is past)


@valueclass(frozen=True)
class MergeNote:
    """A fact of one merge (``flows/merging.merge_sides``), worded by
    ``report/reasons.merge_note``: a plan's row and reapply's reasons carry it."""

    code: MergeNoteCode
    detail: str = ""
    favor: str = ""

    def to_json(self) -> dict[str, object]:
        return {"code": self.code.value, "detail": self.detail, "favor": self.favor}

    @classmethod
    def from_json(cls, data: object) -> MergeNote | None:
        if not isinstance(data, dict):
            return None
        try:
            code = MergeNoteCode(str(data.get("code")))
        except ValueError:
            return None
        return cls(code, str(data.get("detail", "")), str(data.get("favor", "")))


class RowCode(StrEnum):
    """Why a plan's row is what it is, when a flow decided it beyond the decision table:
    a fact of the row (``RowWhy``), worded by ``report/reasons.row_reason``."""

    LEFTOVER = "leftover"  # an earlier update left it after ``version`` dropped it
    MODIFIED_HERE = "modified-here"  # dropped upstream, edited here: kept unless asked
    HELD = "held"  # still has the conflict markers of the update to ``version``
    BINARY = "binary"  # no lines to merge: kept, or the release's copy stored beside it
    HASH_ONLY = "hash-only"  # the baseline is known by its hash only (gbrain's record)
    FRONT_MATTER = "front-matter"  # markers at line 1 would break the file's first line
    # The clean line merge does not parse (``detail``: the problem), or could not be
    # checked (``unchecked``); with ``side``, after taking that side of the clashes.
    MERGE_BROKEN = "merge-broken"
    HUNKS_SETTLED = "hunks-settled"  # ``count`` clashing hunks took ``side`` (a ``note``)
    NO_LINES = "no-lines"  # a binary (or too large: ``note``) file settled whole as ``side``
    MERGE_NOTE = "merge-note"  # the merge did not go line by line: its ``note`` says why
    # A side of a field-merged file does not parse (``unread``; a journal tether wrote
    # before held the words in ``detail``).
    NOT_PARSED = "not-parsed"
    NO_BASELINE = "no-baseline"  # a mixed file with no installed copy to merge key by key
    KEYS_KEPT = "keys-kept"  # ``count`` managed keys changed on both sides; notes at ``path``
    OUTSIDE_REGION = "outside-region"  # differs outside its generated region: a patch
    MERGED_OUTSIDE_REGION = "merged-outside-region"
    REGION_HUNKS_SETTLED = "region-hunks-settled"  # as HUNKS_SETTLED, outside the region
    # An ownership hand-off's condition holds (``detail``: the condition as the release
    # declares it, described): the path is the adopter's, left alone.
    HANDED_OVER = "handed-over"
    # A template-installed file (docs/lifecycle.md): installed, refreshed from the template
    # at ``path``, matching neither template, the installed release's template unavailable,
    # not installed here, in sync.
    TEMPLATE_INSTALLED = "template-installed"
    TEMPLATE_REFRESHED = "template-refreshed"
    TEMPLATE_DIVERGED = "template-diverged"
    TEMPLATE_UNAVAILABLE = "template-unavailable"
    TEMPLATE_NOT_INSTALLED = "template-not-installed"
    TEMPLATE_IN_SYNC = "template-in-sync"
    POST_UPDATE_WRITE = "post-update-write"  # a lifecycle post-update write set its keys


class SideFault(StrEnum):
    """Why a field-aware merge could not read one side of a file."""

    TOO_LARGE = "too-large"  # larger than ``limit_kib`` KiB, the bound of a key-by-key merge
    NOT_PARSED = "not-parsed"  # the parser refused it (``message``: the parser's own words)


@valueclass(frozen=True)
class SideProblem:
    """One side (``baseline``, ``latest``, ``current``) a field-aware merge could not read,
    as ``engine/structured`` found it; worded by ``report/reasons.side_problems``."""

    role: str
    fault: SideFault
    message: str = ""
    limit_kib: int = 0

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"role": self.role, "fault": self.fault.value}
        if self.message:
            data["message"] = self.message
        if self.limit_kib:
            data["limit_kib"] = self.limit_kib
        return data

    @classmethod
    def from_json(cls, data: object) -> SideProblem | None:
        """None for anything that is not a side problem this version knows."""
        if not isinstance(data, dict) or not isinstance(data.get("role"), str):
            return None
        try:
            fault = SideFault(str(data.get("fault")))
        except ValueError:
            return None
        limit = data.get("limit_kib", 0)
        return cls(
            data["role"],
            fault,
            str(data.get("message", "")),
            limit if isinstance(limit, int) else 0,
        )


@valueclass(frozen=True)
class RowWhy:
    """A row's reason as a fact: its code and the data its words need. ``version``: the
    release the fact names; ``modified``: the file was edited here; ``count``: how many;
    ``side``: the side or choice that settled it; ``detail``: words the fact carries as
    another part of tether gave them (a parser's problem); ``path``: a file the words
    name; ``note``: why the merge did not go line by line; ``unread``: the sides of a
    field-merged file that could not be read."""

    code: RowCode
    version: str = ""
    modified: bool = False
    count: int = 0
    side: str = ""
    detail: str = ""
    unchecked: bool = False
    path: str = ""
    note: MergeNote | None = None
    unread: tuple[SideProblem, ...] = ()

    @property
    def edited_here(self) -> bool:
        """The row's file holds edits made here (a leftover or a dropped file)."""
        return self.modified or self.code is RowCode.MODIFIED_HERE

    def to_json(self) -> dict[str, object]:
        """The fact as the journal records it, so a resumed run reports the same reason:
        its code and every datum that is not empty."""
        data: dict[str, object] = {"code": self.code.value}
        for name in ("version", "modified", "count", "side", "detail", "unchecked", "path"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        if self.note is not None:
            data["note"] = self.note.to_json()
        if self.unread:
            data["unread"] = [side.to_json() for side in self.unread]
        return data

    @classmethod
    def from_json(cls, data: object) -> RowWhy | None:
        """None for anything that is not a fact this version knows (an older journal's
        rows carry their words in ``reason`` instead)."""
        if not isinstance(data, dict):
            return None
        try:
            code = RowCode(str(data.get("code")))
        except ValueError:
            return None
        count = data.get("count", 0)
        listed = data.get("unread")
        unread = (
            [SideProblem.from_json(side) for side in listed] if isinstance(listed, list) else []
        )
        return cls(
            code,
            str(data.get("version", "")),
            modified=data.get("modified") is True,
            count=count if isinstance(count, int) else 0,
            side=str(data.get("side", "")),
            detail=str(data.get("detail", "")),
            unchecked=data.get("unchecked") is True,
            path=str(data.get("path", "")),
            note=MergeNote.from_json(data.get("note")),
            unread=tuple(one for one in unread if one is not None),
        )


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
    # Why the row is what it is: the decision table's row, a code (``YOURS``), or a
    # failure's message; a fact a flow decided in ``why`` instead, worded in report/.
    reason: str = ""
    # How a conflict was settled: markers, patch, notes, held, or one of AUTO_CHOICES.
    decision: str = ""
    rename_from: str | None = None
    # (base, ours, theirs) of a line merge: the verifier and git's unmerged stages need them.
    sides: tuple[bytes, bytes, bytes] | None = field(default=None, repr=False, compare=False)
    # What a failed verification puts back, when the path held something other than the
    # ours side before the run (reapply: the installed version). None: the ours side.
    restore: bytes | None = field(default=None, repr=False, compare=False)
    why: RowWhy | None = None

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
    by line), both with the sides that could not be read (``unread``). ``artifact``: the
    notes or patch file the run writes (None: none). Worded by
    ``report/update.field_merge_row``."""

    path: str
    state: str
    applied: int = 0
    conflicts: int = 0
    suggestions: int = 0
    settled: int = 0  # conflicts settled toward the release (--auto theirs / take-theirs)
    artifact: str | None = None
    unread: tuple[SideProblem, ...] = ()  # the sides not parsed, or the side too large


@valueclass()
class UpdatePlan:
    """What one update writes: an action per path, carried out by ``flows.apply.execute_plan``."""

    upstream: str
    from_version: str
    to_version: str
    actions: list[FileAction] = field(default_factory=list)
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
