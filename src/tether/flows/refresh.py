"""A refresh in gbrain's terms: each copied file in one of its states, and the decision that
settles a locally-modified or host-deleted file (docs/refresh.md)."""

from __future__ import annotations

from collections.abc import Iterable

from tether.model.plan import Bucket, FileAction

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
