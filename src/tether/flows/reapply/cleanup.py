"""``--remove-backups``: the saved patches are removed only after a fully verified run.

The whole patches folder given or found goes (GSD's ``gsd-local-patches/``; for a folder of
``--save`` runs, every save in it: an earlier save left behind would be taken up by the next
run and merged over this one). It is first renamed to a dot-name beside it, in one step, so
a crash part-way through the removal never leaves a half-deleted patch set that a later run
would take for a backup.
"""

from __future__ import annotations

import os
import shutil

from tether.flows.reapply.patches import PatchSet
from tether.flows.reapply.report import CONFLICT, ReapplyReport

REMOVING_PREFIX = ".removing-"


def why_keep(report: ReapplyReport) -> str | None:
    """Why the patches must stay, or None when the run verified every file."""
    if report.dry_run:
        return "dry run"
    if report.failures:
        return f"{report.failures} file(s) failed; your copies are needed to merge by hand"
    if report.count(CONFLICT):
        return f"{report.count(CONFLICT)} conflict(s) left; your copies are needed to settle them"
    return None


def remove_patches(report: ReapplyReport, patch_set: PatchSet, run_id: str) -> None:
    """Remove the patch set when the run allows it; record what happened in the report."""
    reason = why_keep(report)
    if reason is not None:
        report.backups_kept_because = reason
        return
    root = patch_set.folder.absolute()
    doomed = root.parent / f"{REMOVING_PREFIX}{root.name}-{run_id}"
    os.rename(root, doomed)
    shutil.rmtree(doomed)
    report.backups_removed = root
