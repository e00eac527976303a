"""The project lock ``deps apply`` takes while it isolates, edits and installs a project: the
one ``update`` and ``init`` take (docs/init.md), so two runs never write one project at
once. In a folder tether does not manage the lock leaves no trace: it is removed with the
folders it needed on release, and one an earlier killed run left is swept before the run.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from tether.errors import TetherError
from tether.state.lock import ProjectLock, read_owner

LOCK_COMMAND = "deps apply"  # who holds a lock, as its file records it


def lock_project(root: Path) -> Callable[[], None]:
    """Take the lock ``update`` and ``init`` take on ``root`` (docs/init.md), for while the
    project is isolated, edited and installed; returns its release. A folder without a
    tether install is locked where ``init`` would lock it, and on release the lock file and
    the folders holding it (when nothing else is in them) go again, so a project that is
    not tether's keeps no trace of it. Raises TetherError, naming the holder, while another
    run holds it."""
    from tether.flows.project import profile_for_new_install

    if not root.is_dir():
        return lambda: None  # nothing to lock: the isolation reports the missing folder
    profile = profile_for_new_install(root, None)
    path = root / profile.lock_file
    # Removed again on release: a lock in a folder tether does not manage that this run
    # makes, or that an earlier deps apply left (killed while it held it, or emptied).
    ours = not (root / profile.state_file).is_file() and _left_by_deps(path)
    lock = ProjectLock(path, command=LOCK_COMMAND)
    lock.acquire()

    def release() -> None:
        try:
            if ours:
                _leave_no_lock(root, path)
        finally:
            lock.release()

    return release


def _left_by_deps(path: Path) -> bool:
    """No lock file yet, or one that names nobody or an earlier ``deps apply``."""
    if not os.path.lexists(path):
        return True
    if path.is_symlink() or not path.is_file():
        return False
    owner = read_owner(path)
    return owner is None or owner.command == LOCK_COMMAND


def _leave_no_lock(root: Path, path: Path) -> None:
    """The lock file (while still held), then each folder between it and ``root`` that is
    left empty, innermost first: a folder with anything else in it stays."""
    with contextlib.suppress(OSError):
        path.unlink()
    folder = path.parent
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def sweep_stale_lock(root: Path) -> None:
    """A lock an earlier ``deps apply`` left in a folder tether does not manage (killed
    while it held it): nobody holds it now, so it is taken and removed with its empty
    folders. A lock another command wrote, or one held right now, is left alone."""
    from tether.flows.project import profile_for_new_install

    if not root.is_dir():
        return
    profile = profile_for_new_install(root, None)
    path = root / profile.lock_file
    if (root / profile.state_file).is_file() or not path.is_file() or not _left_by_deps(path):
        return
    try:
        release = lock_project(root)
    except TetherError:
        return  # held: a run is working there now
    release()
