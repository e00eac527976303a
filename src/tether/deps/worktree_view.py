"""What a worktree run scans: the files its worktrees will hold, not the checkout's.

A worktree starts from HEAD (or is the one an earlier run of the same day and level made).
A manifest the person changed and did not commit reads one way in the checkout and another
in the worktree: a plan made from the checkout would then name versions the worktree does
not hold, and its edit there would be refused as changed since the scan. So under
``--isolate worktree`` a project is scanned where its edits will land: in the earlier run's
worktree when there is one; otherwise, when a file the scan read differs from HEAD (or is
not committed), in a scratch copy of HEAD's files under the scanned folder, with the
package-manager configuration git ignores beside it (the run carries it into the worktree
too). The scan then names the checkout's folders again, so the apply isolates the project
as it would any other. A checkout whose scanned files match HEAD is scanned as it is.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tether import git
from tether.deps.carry import CONFIG_FILES, folders_between
from tether.deps.manifests import ProjectScan
from tether.errors import TetherError
from tether.fsio import read_bytes
from tether.runs.isolation import Target, earlier_worktree

# (project name, its folder, the registry's monorepoRoot) → the project's scan.
Reader = Callable[[str, Path, Path | None], ProjectScan]


def as_the_worktree_holds(read: Reader, target: Target) -> Reader:
    """``read``, made to scan what the worktree of ``target`` will hold."""

    def scan(name: str, root: Path, monorepo_root: Path | None) -> ProjectScan:
        checkout = read(name, root, monorepo_root)
        if checkout.error is not None:
            return checkout
        base = checkout.edit_root.resolve()
        found = git.work_tree_top(base)
        if found is None:
            return checkout  # no worktree can be made: the isolation says so
        top = found.resolve()
        own = git.work_tree_top(root)
        if own is None or own.resolve() != top:
            return checkout  # two repositories: the isolation refuses the project
        earlier = earlier_worktree(top, target)
        if earlier is not None:
            return _scanned_in(read, checkout, earlier, top, monorepo_root)
        if not _differs_from_head(top, base, checkout.files):
            return checkout
        with tempfile.TemporaryDirectory(prefix="tether-deps-head-") as scratch:
            copy = Path(scratch)
            try:
                _copy_head(top, base.relative_to(top).as_posix(), copy)
            except TetherError:
                return checkout  # no commit to start a worktree from: isolation says so
            _copy_ignored_config(top, copy, folders_between(top, base, root))
            return _scanned_in(read, checkout, copy, top, monorepo_root)

    return scan


def _differs_from_head(top: Path, base: Path, files: list[str]) -> bool:
    """Whether a file the scan read (relative to ``base``) is changed or not committed."""
    rels = [(base / rel).relative_to(top).as_posix() for rel in files]
    if git.dirty_paths(top, rels):
        return True
    return len(set(git.tracked_paths(top, rels))) < len(set(rels))


def _scanned_in(
    read: Reader, checkout: ProjectScan, tree: Path, top: Path, monorepo_root: Path | None
) -> ProjectScan:
    """The project scanned in ``tree`` (a copy of the repository ``top``), naming the
    checkout's folders."""

    def moved(folder: Path) -> Path:
        return tree / folder.resolve().relative_to(top)

    inner_monorepo = None
    if monorepo_root is not None and monorepo_root.resolve().is_relative_to(top):
        inner_monorepo = moved(monorepo_root)
    scanned = read(checkout.name, moved(checkout.root), inner_monorepo)
    if scanned.error is not None:
        # Not committed, so the worktree will not hold the project: the isolation says so.
        return checkout
    return replace(scanned, root=checkout.root, workspace_root=checkout.workspace_root)


def _copy_head(top: Path, base: str, dest: Path) -> None:
    """HEAD's files under ``base`` (from the repository ``top``) into ``dest``, at the same
    relative paths; links and submodules are left out, as the scan never follows them."""
    prefix = f"{base}/" if base and base != "." else ""
    entries = [
        (oid, path)
        for mode, kind, oid, path in git.tree_listing(top, "HEAD")
        if kind == "blob" and mode != "120000" and path.startswith(prefix) and _plain(path)
    ]
    blobs = git.read_blobs(top, sorted({oid for oid, _ in entries}))
    for oid, path in entries:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[oid])


def _plain(path: str) -> bool:
    """A committed path that stays inside the copy (git refuses others; a crafted
    repository is not trusted to)."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and ".git" not in parts


def _copy_ignored_config(top: Path, dest: Path, folders: list[str]) -> None:
    """The package-manager configuration of ``folders`` that HEAD lacks (git-ignored: the run
    carries it into the worktree) from the checkout into the copy."""
    for folder in folders:
        for name in CONFIG_FILES:
            rel = f"{folder}/{name}" if folder else name
            if os.path.isfile(top / rel) and not os.path.lexists(dest / rel):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(read_bytes(top / rel))  # never through a link
