"""``--remove-backups``: the saved patches are removed only after a fully verified run, and
only the folders an installer (or ``--save``) made for them.

What goes is the folder holding ``backup-meta.json`` (GSD's ``gsd-local-patches/``) and, when
``--patches`` named a folder of ``--save`` runs, every other save in it (an earlier save left
behind would be taken up by the next run and merged over this one); never the folder given
when it only holds the patch folder (a config folder named with ``--patches``), never a
folder that holds the installed release, never a folder reached through a link, and never a
folder holding anything its ``backup-meta.json`` does not list (an older backup's copy left
there would be lost). A user's copy that is in no file the run leaves (a conflict settled
``take-theirs``, ``theirs`` with clashing hunks that took the release's side, or a file the
new release dropped that the user dropped too) keeps the patches: it would be the only copy.

Each folder is first renamed to a dot-name beside it, in one step, so a crash part-way
through the removal never leaves a half-deleted patch set that a later run would take for
a backup.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tether.errors import TetherError
from tether.flows.reapply.patches import META_FILE, PatchSet, load_patch_set
from tether.flows.reapply.report import (
    CONFLICT,
    RESOLVED,
    FileResult,
    KeptBecause,
    ReapplyReport,
)
from tether.state.journal import is_run_id

REMOVING_PREFIX = ".removing-"


class _Kept(Exception):
    """A folder that must stay, and why."""

    def __init__(self, why: KeptBecause) -> None:
        super().__init__(why.kind)
        self.why = why


def why_keep(report: ReapplyReport) -> KeptBecause | None:
    """Why the patches must stay, or None when the run verified every file and every saved
    copy is in the file the run leaves."""
    if report.dry_run:
        return KeptBecause("dry-run")
    if report.failures:
        return KeptBecause("failed", report.failures)
    if report.count(CONFLICT):
        return KeptBecause("conflicts", report.count(CONFLICT))
    theirs = tuple(
        (r.file, str(r.resolution))
        for r in report.results
        if r.status == RESOLVED and _dropped_yours(r)
    )
    return KeptBecause("settled-theirs", settled=theirs) if theirs else None


def _dropped_yours(result: FileResult) -> bool:
    """The file the run leaves lacks some of the user's change: taken whole from the
    installed release, or clashing hunks that took the release's side."""
    return result.resolution in ("take-theirs", "drop") or (
        result.resolution == "theirs" and result.settled_hunks > 0
    )


def remove_patches(report: ReapplyReport, patch_set: PatchSet, run_id: str) -> None:
    """Remove the patch set when the run allows it; record what happened in the report."""
    reason = why_keep(report)
    doomed: list[tuple[Path, list[str]]] = []
    if reason is None:
        assert report.target is not None
        try:
            doomed = _removable(patch_set, report.target)
        except _Kept as kept:
            reason = kept.why
        except TetherError as error:
            reason = KeptBecause("error", message=str(error))
    if reason is not None:
        report.backups_kept_because = reason
        return
    for folder, files in doomed:
        moved = folder.parent / f"{REMOVING_PREFIX}{folder.name}-{run_id}"
        os.rename(folder, moved)
        shutil.rmtree(moved)
        report.removed_files.extend(str(folder / rel) for rel in files)
    report.backups_removed = doomed[0][0]


def _removable(patch_set: PatchSet, target: Path) -> list[tuple[Path, list[str]]]:
    """Each folder to remove with the files it holds (the one used first); ``_Kept`` when
    one of them must stay (TetherError when a save cannot be read)."""
    folders = [(patch_set.root.absolute(), list(patch_set.files))]
    given = patch_set.folder.absolute()
    if folders[0][0] != given:
        folders += [(save, list(load_patch_set(save).files)) for save in _other_saves(patch_set)]
    return [(folder, _check_removable(folder, files, target)) for folder, files in folders]


def _other_saves(patch_set: PatchSet) -> list[Path]:
    """The other ``--save`` runs in the folder of saves (named as ``--save`` names them)."""
    root = patch_set.root.absolute()
    return sorted(
        child
        for child in patch_set.folder.absolute().iterdir()
        if child != root
        and is_run_id(child.name)
        and not child.is_symlink()
        and child.is_dir()
        and (child / META_FILE).is_file()
    )


def _check_removable(folder: Path, files: list[str], target: Path) -> list[str]:
    """The files ``folder`` holds, when all of them are its backup's; else why it stays."""
    if folder.is_symlink():
        raise _Kept(KeptBecause("folder-is-link", folder=str(folder)))
    real, install = Path(os.path.realpath(folder)), Path(os.path.realpath(target))
    if install == real or install.is_relative_to(real):
        raise _Kept(KeptBecause("holds-install", folder=str(folder), target=str(target)))
    expected, found = {META_FILE, *files}, []
    for top, dirs, names in os.walk(folder):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            rel = Path(top, name).relative_to(folder).as_posix()
            if rel not in expected:
                raise _Kept(KeptBecause("unlisted", folder=str(folder), path=rel))
            found.append(rel)
    return sorted(found)
