"""The per-file decision table of an update (docs/update.md, "The per-file decision"). Pure.

Equality is given, not computed, so each path can bring its own comparator
(bytes, region-masked text, parsed structure) and still land in the same rows.
"""

from __future__ import annotations

from enum import StrEnum

from tether.model.manifest import FileClass
from tether.model.plan import Bucket
from tether.valueclass import valueclass


class Row(StrEnum):
    ADD = "add"  # A absent, B absent: copy L
    RESPECT_DELETION = "respect-deletion"  # A absent, B present: write nothing
    OWNED_UNTRACKED = "owned-untracked"  # owned, B absent, A present: back up A, copy L
    NO_UPSTREAM_CHANGE = "no-upstream-change"  # B ≅ L
    NO_ADOPTER_DRIFT = "no-adopter-drift"  # A ≅ B: back up A, copy L
    ALREADY_LATEST = "already-latest"  # A ≅ L
    MERGE = "merge"  # both changed: three-way merge


@valueclass(frozen=True)
class Comparison:
    """What is known about one path's three sides."""

    base_present: bool
    ours_present: bool
    base_eq_latest: bool = False
    ours_eq_base: bool = False
    ours_eq_latest: bool = False


def decide_row(cls: FileClass, sides: Comparison) -> Row:
    """First matching row wins."""
    if not sides.ours_present:
        return Row.RESPECT_DELETION if sides.base_present else Row.ADD
    if cls is FileClass.OWNED and not sides.base_present:
        # Identical bytes need no backup and no write; the table's intent is that the
        # release's copy wins, which it already does.
        return Row.ALREADY_LATEST if sides.ours_eq_latest else Row.OWNED_UNTRACKED
    if sides.base_present and sides.base_eq_latest:
        return Row.NO_UPSTREAM_CHANGE
    if sides.base_present and sides.ours_eq_base:
        return Row.NO_ADOPTER_DRIFT
    if sides.ours_eq_latest:
        return Row.ALREADY_LATEST
    return Row.MERGE


def row_ignores_adopter_bytes(
    cls: FileClass, base_present: bool, ours_present: bool, base_eq_latest: bool
) -> bool:
    """True when ``decide_row`` picks the same row whatever the adopter's bytes are (only
    their presence counts): upstream did not change the file, so it is left alone and
    need not be read."""
    owned_untracked = cls is FileClass.OWNED and not base_present
    return not ours_present or (base_present and base_eq_latest and not owned_untracked)


def bucket_for_row(row: Row, cls: FileClass) -> Bucket:
    """The report bucket of every row but MERGE (whose bucket depends on the merge)."""
    if row is Row.ADD:
        return Bucket.ADD
    if row is Row.RESPECT_DELETION:
        return Bucket.REMOVED
    if row is Row.OWNED_UNTRACKED:
        return Bucket.OVERWRITE
    if row is Row.NO_ADOPTER_DRIFT:
        return Bucket.UPDATE if cls.is_shared else Bucket.OVERWRITE
    if row in (Row.NO_UPSTREAM_CHANGE, Row.ALREADY_LATEST):
        return Bucket.SKIP
    raise ValueError(f"row {row} has no fixed bucket")


def decide_dropped(ours_present: bool, ours_eq_base: bool, delete_removed: bool) -> Bucket:
    """A path B shipped and L no longer ships."""
    if not ours_present:
        return Bucket.REMOVED
    if delete_removed and ours_eq_base:
        return Bucket.DELETED
    return Bucket.DELETE
