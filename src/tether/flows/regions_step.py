"""Generated regions inside the update: the masked comparison while planning, and the
confined regeneration after the files are written (before state is)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tether.engine.decide import Comparison
from tether.engine.regions import (
    RegionComparison,
    RegionDecl,
    compare_region_file,
    conflict_patch,
    fill_placeholder,
    region_body,
)
from tether.flows.artifacts import patch_conflict
from tether.flows.project import Project
from tether.flows.regions_plan import RegionPlan
from tether.model.manifest import FileClass
from tether.model.plan import SETTLED_DECISIONS, YOURS, Bucket, FileAction, Op, RowCode, RowWhy

if TYPE_CHECKING:  # the runner is imported only when regions are regenerated
    from tether.flows.regen import HeldBy, RegenOutcome


def masked_comparison(
    plan: RegionPlan, rel: str, base: bytes, ours: bytes, theirs: bytes
) -> tuple[Comparison, RegionComparison]:
    decl = plan.by_path[rel]
    result = compare_region_file(base, theirs, ours, decl.start_marker, decl.end_marker)
    if result.fallback:
        plan.fallbacks.append(rel)
    elif result.absent_markers:
        plan.pre_region.append(rel)
    b, latest, a = (result.baseline.normalized, result.latest.normalized, result.current.normalized)
    sides = Comparison(
        True, True, base_eq_latest=b == latest, ours_eq_base=a == b, ours_eq_latest=a == latest
    )
    return sides, result


def region_conflict(
    project: Project, rel: str, cls: FileClass, comparison: RegionComparison, mode: int
) -> FileAction:
    """The adopter's file stays; the patch shows only the divergence outside the region."""
    patch = conflict_patch(comparison, rel).encode()
    return patch_conflict(project, rel, cls, patch, mode, RowWhy(RowCode.OUTSIDE_REGION))


def region_merge(
    rel: str,
    cls: FileClass,
    comparison: RegionComparison,
    sides: tuple[bytes, bytes, bytes],
    mode: int,
    favor: str | None = None,
) -> FileAction | None:
    """Both sides changed a declared path outside its region: merge the masked texts line
    by line (``favor``: ``ours``/``theirs`` settles each clashing hunk toward that side).
    Merged: the result with the adopter's region body put back (their program made it; it
    is regenerated after the update), verified like any merge. None when it is a conflict:
    lines both sides changed (no ``favor``), malformed markers (nothing was masked), or a
    merge that cannot be put back together; the caller leaves the conflict."""
    from tether.flows.merging import merge_sides
    from tether.flows.syntax_step import check_clean_merge

    if comparison.bailed:
        return None
    base, ours, theirs = sides
    result, note = merge_sides(
        comparison.baseline.normalized,
        comparison.current.normalized,
        comparison.latest.normalized,
        favor=favor,
    )
    if result.binary or result.conflicts:
        return None
    body = None
    if comparison.current.scan.kind == "region":
        body = region_body(ours, comparison.current.scan)
    elif comparison.latest.scan.kind == "region":  # a pre-region copy of the adopter's
        body = region_body(theirs, comparison.latest.scan)
    merged = fill_placeholder(result.merged, body)
    if merged is None or check_clean_merge(rel, base, ours, theirs, merged) is not None:
        return None
    if not result.settled:
        return FileAction(
            rel,
            cls,
            Bucket.MERGED,
            Op.WRITE,
            merged,
            mode,
            sides=sides,
            why=RowWhy(RowCode.MERGED_OUTSIDE_REGION),
        )
    assert favor is not None
    why = RowWhy(RowCode.REGION_HUNKS_SETTLED, count=result.settled, side=favor, note=note)
    return FileAction(
        rel,
        cls,
        Bucket.CONFLICT,
        Op.WRITE,
        merged,
        mode,
        decision=favor,
        sides=sides,
        why=why,
    )


# Conflicts settled for the whole file, or reconciled key by key (notes): either way the
# file holds merged content, so a region derived from it can be regenerated.
_RECONCILED = frozenset({"notes", *SETTLED_DECISIONS})


def unreconciled_inputs(actions: list[FileAction], merge_paths: set[str]) -> set[str]:
    """Field-merged files this run left in a whole-file conflict (a patch or markers): a
    region derived from one of them would be regenerated from the adopter's old copy."""
    return {
        a.path
        for a in actions
        if a.bucket is Bucket.CONFLICT and a.path in merge_paths and a.decision not in _RECONCILED
    }


def _held_back(
    decl: RegionDecl,
    actions: dict[str, FileAction],
    inputs: tuple[str, ...],
    unreconciled: set[str],
) -> tuple[tuple[HeldBy, str], ...]:
    """What holds the region's program back, path by path (none: it runs)."""
    from tether.flows.regen import HeldBy

    held: list[tuple[HeldBy, str]] = []
    for path in decl.paths:
        action = actions.get(path)
        if (
            action is not None
            and action.bucket is Bucket.CONFLICT
            and action.decision not in SETTLED_DECISIONS
        ):
            held.append((HeldBy.CONFLICT, path))
        if action is not None and action.bucket is Bucket.REMOVED:
            held.append((HeldBy.DELETED, path))
        if action is not None and action.reason == YOURS:
            held.append((HeldBy.YOURS, path))
    held += [(HeldBy.INPUT_UNRECONCILED, path) for path in inputs if path in unreconciled]
    return tuple(held)


def regenerate_regions(
    project: Project,
    plan: RegionPlan,
    actions: list[FileAction],
    shipped: set[str],
    backup_dir: Path,
    log_path: Path,
    unreconciled: set[str],
    declared_inputs: dict[str, tuple[str, ...]] | None = None,
    not_run_by: str = "",
) -> list[RegenOutcome]:
    """Run each region's program, unless one of its paths is in conflict or deleted, or one
    of its inputs (declared with the region, or by the profile for its id) fell back to a
    whole-file conflict: suppression is per region, never for every region at once.
    ``not_run_by``: the switch that stops every release program this run (--no-programs);
    each region is then skipped, naming it."""
    if not any(decl.regenerate is not None for decl in plan.declarations):
        return []
    from tether.flows.regen import (
        DEFAULT_EXCLUDE,
        NotRun,
        NotRunWhy,
        run_regeneration,
        skipped_outcome,
    )
    from tether.flows.safety import check_own_paths_after

    by_path = {a.path: a for a in actions}
    exclude = DEFAULT_EXCLUDE | {
        project.profile.backup_root,
        project.profile.merge_dir,
        project.profile.cache_dir,
        os.path.dirname(project.profile.state_file),
    }
    outcomes = []
    for decl in plan.declarations:
        if decl.regenerate is None:
            continue
        inputs = decl.inputs or (declared_inputs or {}).get(decl.id, ())
        held = _held_back(decl, by_path, inputs, unreconciled)
        if not_run_by:
            outcomes.append(skipped_outcome(decl, NotRunWhy(NotRun.PROGRAMS_OFF, not_run_by)))
            continue
        if held:
            outcomes.append(skipped_outcome(decl, NotRunWhy(NotRun.HELD_BACK, held=held)))
            continue
        outcomes.append(
            run_regeneration(
                project.root,
                decl,
                shipped,
                log_path=log_path,
                backup_dir=backup_dir,
                exclude=frozenset(exclude),
            )
        )
        # The program may have made one of tether's own folders a link: stop before the
        # next region's backup or log goes through it.
        check_own_paths_after(project.root, project.profile, outcomes[-1].command)
    return outcomes
