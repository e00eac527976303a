"""Field-aware merges inside the update: a file with a merge rule is merged key by key when
both sides changed it (for a profile that always merges such files, whenever upstream
changed it), instead of line by line.

A key both sides changed is not a file-level conflict: the adopter's value is kept and both
values go to ``<merge folder>/<file>.notes``, which is informational; the file is reported as
merged (or left as it is) with the count in its summary row, so the update does not exit 4
for it and ``check`` does not wait for the notes file to go (GAIA Steps 7a-7c)."""

from __future__ import annotations

from tether.engine.patches import unified_patch
from tether.flows.artifacts import artifact_path, patch_conflict
from tether.flows.project import Project
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FieldMergeRow, FileAction, Op, RowCode, RowWhy

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import Any


def structured_action(
    project: Project,
    rel: str,
    cls: FileClass,
    spec: dict[str, Any],
    base: bytes,
    ours: bytes,
    theirs: bytes,
    mode: int,
    auto: str | None,
) -> tuple[FileAction | None, FieldMergeRow] | None:
    """The action and its summary row; None when the rule is unusable, and no action with
    a row saying why when a side is too large: the file is merged line by line then.

    ``auto``: ``theirs`` and ``take-theirs`` settle each key both sides changed toward the
    release (never a key outside the managed sections); ``ours`` and ``keep-mine`` keep the
    adopter's value, as without it. A file merged key by key has keys, not lines: the key
    both sides changed is its clashing hunk, and none of the four ever takes or keeps the
    whole file (the adopter's own keys stay; docs/cli.md, "Settling conflicts")."""
    from tether.engine.structured import merge_structured, render_notes, rules_for
    from tether.engine.structured.merge import oversized

    try:
        rules = rules_for(rel, spec)
    except ValueError:
        return None
    too_large = oversized(base, theirs, ours)
    if too_large is not None:
        return None, FieldMergeRow(rel, "line-merge", unread=(too_large,))
    settle = "latest" if auto in ("theirs", "take-theirs") else None
    result = merge_structured(rel, rules, base, theirs, ours, settle)
    if result.unread:
        why = RowWhy(RowCode.NOT_PARSED, unread=result.unread)
        action = patch_conflict(project, rel, cls, unified_patch(rel, ours, theirs), mode, why)
        return action, FieldMergeRow(
            rel, "not-merged", artifact=action.artifact, unread=result.unread
        )
    applied, conflicts, suggestions = result.counts
    settled = len(result.settled)
    notes_path = artifact_path(project, rel, ".notes")
    notes = render_notes(rel, result).encode() if conflicts or suggestions or settled else None
    artifact = notes_path if notes is not None else None
    row = FieldMergeRow(rel, "merged", applied, conflicts, suggestions, settled, artifact=artifact)
    changed = result.new_text != ours
    # A copy the adopter never edited is updated, not merged with edits of theirs: the
    # summary must not send them to review edits they did not make.
    bucket = (Bucket.MERGED if ours != base else Bucket.UPDATE) if changed else Bucket.SKIP
    kept = RowWhy(RowCode.KEYS_KEPT, count=conflicts, path=notes_path) if conflicts else None
    decision = "notes" if conflicts else (auto or "") if settled else ""
    action = FileAction(
        rel,
        cls,
        bucket,
        Op.WRITE if changed else Op.NONE,
        result.new_text if changed else None,
        mode,
        artifact,
        notes,
        decision=decision,
        why=kept,
    )
    return action, row


def whole_file_conflict(
    project: Project, rel: str, cls: FileClass, ours: bytes, theirs: bytes, mode: int
) -> tuple[FileAction, FieldMergeRow]:
    """A mixed file that cannot be merged key by key (no baseline): the adopter's copy
    stays, a patch towards the release's waits in the merge folder."""
    why = RowWhy(RowCode.NO_BASELINE)
    action = patch_conflict(project, rel, cls, unified_patch(rel, ours, theirs), mode, why)
    row = FieldMergeRow(rel, "whole-file-conflict", artifact=action.artifact)
    return action, row
