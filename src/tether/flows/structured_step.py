"""Field-aware merges inside the update: a file with a merge rule is merged key by key
when both sides changed it, instead of line by line."""

from __future__ import annotations

from typing import Any

from tether.engine.patches import unified_patch
from tether.flows.artifacts import patch_conflict
from tether.flows.project import Project
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FileAction, Op


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
) -> tuple[FileAction | None, str] | None:
    """The action and its summary row; None when the rule is unusable, and no action with
    a row saying why when a side is too large: the file is merged line by line then."""
    from tether.engine.structured import merge_structured, render_notes, rules_for, summary_line
    from tether.engine.structured.merge import oversized

    try:
        rules = rules_for(rel, spec)
    except ValueError:
        return None
    too_large = oversized(base, theirs, ours)
    if too_large is not None:
        return None, f"{rel}: merged line by line: the {too_large[1]}"
    result = merge_structured(rel, rules, base, theirs, ours)
    notes_path = f"{project.profile.merge_dir}/{rel}.notes"
    if result.parse_error is not None:
        patch = unified_patch(rel, ours, theirs)
        action = patch_conflict(project, rel, cls, patch, mode, result.parse_error)
        return action, summary_line(rel, result)
    applied, conflicts, suggestions = result.counts
    notes = render_notes(rel, result).encode() if conflicts or suggestions else None
    summary = summary_line(rel, result, notes_path if notes else None)
    notes_artifact = notes_path if notes else None
    if conflicts and auto == "take-theirs":
        return FileAction(rel, cls, Bucket.CONFLICT, Op.WRITE, theirs, mode, decision=auto), summary
    op = Op.WRITE if result.new_text != ours else Op.NONE
    if conflicts:
        decision = auto if auto == "keep-mine" else "notes"
        action = FileAction(
            rel,
            cls,
            Bucket.CONFLICT,
            op,
            result.new_text,
            mode,
            notes_artifact,
            notes,
            reason="managed keys changed on both sides",
            decision=decision,
        )
    elif applied:
        action = FileAction(
            rel, cls, Bucket.MERGED, op, result.new_text, mode, notes_artifact, notes
        )
    else:
        action = FileAction(rel, cls, Bucket.SKIP, Op.NONE, None, mode, notes_artifact, notes)
    return action, summary
