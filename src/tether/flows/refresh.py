"""A refresh in gbrain's terms: each copied file in one of its states, and the decision that
settles a locally-modified or host-deleted file (docs/refresh.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from tether.model.plan import Bucket, FileAction, Op, UpdatePlan

if TYPE_CHECKING:
    from tether.flows.baseline import Baseline
    from tether.flows.project import Project, Release

UNCHANGED_IDENTICAL = "unchanged-identical"
UNCHANGED_STALE = "unchanged-stale"
LOCALLY_MODIFIED = "locally-modified"
HOST_DELETED = "host-deleted"
SOURCE_DELETED = "source-deleted"
NEW_IN_SOURCE = "new-in-source"
FAILED = "failed"


def refresh_state(action: FileAction) -> str:
    """The state of one copied file, from the plan's action for it."""
    from tether.flows.plan import LOCAL_EDIT_KEPT

    bucket = action.bucket
    if bucket is Bucket.REMOVED or action.decision == "restore":
        return HOST_DELETED
    if bucket is Bucket.ADD:
        return NEW_IN_SOURCE
    if bucket in (Bucket.UPDATE, Bucket.OVERWRITE):
        return UNCHANGED_STALE
    if bucket in (Bucket.DELETE, Bucket.DELETED):
        return SOURCE_DELETED
    if bucket is Bucket.FAILED:
        return FAILED
    if bucket is Bucket.SKIP:
        return LOCALLY_MODIFIED if action.reason == LOCAL_EDIT_KEPT else UNCHANGED_IDENTICAL
    if bucket is Bucket.CONFLICT and action.sides is not None and not action.sides[0]:
        return NEW_IN_SOURCE  # a host file already stands where the recipe adds one
    return LOCALLY_MODIFIED


def refresh_states(actions: Iterable[FileAction]) -> dict[str, str]:
    return {a.path: refresh_state(a) for a in actions}


LOCAL_EDIT_DECISIONS = ("keep-mine", "take-theirs", "merge")


def settle_local_edit(
    project: Project, latest: Release, action: FileAction, choice: str
) -> FileAction:
    """One locally-modified file settled as ``choice`` says: keep-mine leaves the host's
    bytes, take-theirs writes the recipe's (whether or not a line merge would be clean),
    merge keeps the line merge as planned; ``hand-merge`` writes nothing and leaves the
    recipe's changes as a patch for a person."""
    from tether.flows.plan import resettle

    if refresh_state(action) != LOCALLY_MODIFIED or choice == "merge":
        return action
    if action.sides is not None:
        return resettle(project, action, "patch" if choice == "hand-merge" else choice)
    if choice == "take-theirs":  # the recipe did not move: the host's edit is replaced
        content = latest.verified_bytes(action.path)
        mode = latest.mode_of(action.path)
        return replace(
            action,
            bucket=Bucket.CONFLICT,
            op=Op.WRITE,
            content=content,
            mode=mode,
            decision=choice,
            reason="",
        )
    return replace(action, decision="keep-mine" if choice == "keep-mine" else "")


def settle_local_edits(project: Project, latest: Release, plan: UpdatePlan, choice: str) -> None:
    """``--auto``: every locally-modified file settled the same way."""
    plan.actions[:] = [settle_local_edit(project, latest, a, choice) for a in plan.actions]


def local_edit_diff(project: Project, latest: Release, action: FileAction) -> bytes:
    """What the recipe would change in the host's copy: a unified diff, host → recipe."""
    from tether.engine.patches import unified_patch
    from tether.fsio import read_bytes

    if action.sides is not None:
        ours, theirs = action.sides[1], action.sides[2]
    else:
        ours, theirs = read_bytes(project.path(action.path)), latest.verified_bytes(action.path)
    return unified_patch(action.path, ours, theirs)


HOST_DELETED_DECISIONS = ("restore", "drop")


def settle_host_deleted(latest: Release, action: FileAction, choice: str) -> FileAction:
    """restore: copy the recipe's file back; drop: the deletion stands and is recorded
    (the entry leaves gbrain's record), so later refreshes do not ask again."""
    if refresh_state(action) != HOST_DELETED:
        return action
    if choice == "restore":
        content, mode = latest.verified_bytes(action.path), latest.mode_of(action.path)
        return replace(
            action, bucket=Bucket.ADD, op=Op.WRITE, content=content, mode=mode, decision="restore"
        )
    return replace(action, decision="drop")


def settle_host_deletions(
    project: Project, baseline: Baseline, latest: Release, plan: UpdatePlan, choice: str | None
) -> None:
    """Deletions dropped by an earlier refresh stay dropped; the others take ``choice``."""
    from tether.flows.gbrain_record import recorded_drops

    dropped = recorded_drops(project, baseline)
    for index, action in enumerate(plan.actions):
        if action.bucket is not Bucket.REMOVED:
            continue
        if action.path in dropped:
            plan.actions[index] = replace(action, decision="dropped")
        elif choice:
            plan.actions[index] = settle_host_deleted(latest, action, choice)


# What a file's line in the ecosystem's run log says was done, when no choice was asked.
_DEFAULT_DECISION = {
    UNCHANGED_IDENTICAL: "none",
    UNCHANGED_STALE: "take-theirs",
    NEW_IN_SOURCE: "add",
    LOCALLY_MODIFIED: "merge",
    HOST_DELETED: "keep-deleted",
    SOURCE_DELETED: "keep",
    FAILED: "failed",
}
LOG_ROTATE_BYTES = 1024 * 1024


def log_lines(actions: Iterable[FileAction], now: str) -> list[dict[str, str]]:
    """One line per copied file, untouched ones included: when, which file, its state and
    the decision taken (docs/refresh.md, "Run log and lock")."""
    lines = []
    for action in sorted(actions, key=lambda a: a.path):
        state = refresh_state(action)
        decision = action.decision or _DEFAULT_DECISION[state]
        if state == SOURCE_DELETED and action.bucket is Bucket.DELETED:
            decision = "cleanup"
        lines.append({"ts": now, "src": action.path, "state": state, "decision": decision})
    return lines


def append_log(project: Project, actions: Iterable[FileAction], now: str) -> None:
    """Append the run's lines to the ecosystem's log, first moving a log above 1 MB to
    ``<log>.1`` (the one earlier generation the ecosystem keeps)."""
    import json
    import os

    from tether.flows.safety import PathGuard
    from tether.fsio import write_all

    rel = project.profile.ecosystem_log
    if rel is None:
        return
    guard = PathGuard(project.root)
    path, info = guard.ready(rel)
    if info is not None and info.st_size > LOG_ROTATE_BYTES:
        os.replace(path, path + ".1")
    text = "".join(json.dumps(line) + "\n" for line in log_lines(actions, now))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, text.encode())
    finally:
        os.close(fd)
