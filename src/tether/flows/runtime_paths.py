"""Before a run changes anything: tether's own files and folders are of the right kind and
can be written. A folder where the journal should be, a file where the backups go, or a
read-only state folder would otherwise stop the run halfway, after project files were
already written; this check stops it first, with one line naming the path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.errors import TetherError
from tether.flows.project import Project


def check_runtime_paths(project: Project) -> None:
    """Raise ``TetherError`` for the first runtime path a writing run could not use."""
    profile = project.profile
    # Links, and files where tether's folders belong, were refused when the project was
    # opened (``safety.check_own_paths``); here: records that are not files, and rights.
    _expect(project.path(profile.state_file), "state file", folder=False)
    _expect(project.path(profile.journal_file), "journal", folder=False)
    folders = {
        project.path(rel).parent
        for rel in (profile.state_file, profile.journal_file, profile.lock_file)
    }
    folders |= {project.path(profile.cache_dir), project.backup_root, project.merge_dir}
    for folder in sorted(folders):
        _writable(project, folder)


_KINDS = ((stat.S_ISDIR, "folder"), (stat.S_ISLNK, "link"), (stat.S_ISREG, "file"))


def _wrong_kind(path: Path, mode: int, what: str) -> TetherError:
    """The one-line error for something other than tether's own file or folder at ``path``."""
    found = next((name for test, name in _KINDS if test(mode)), "special file")
    return TetherError(f"{path}: a {found} stands where tether keeps its {what}")


def _expect(path: Path, what: str, *, folder: bool) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise TetherError(f"{path}: cannot look at it ({error.strerror})") from None
    if not (stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)):
        raise _wrong_kind(path, mode, what)


def _writable(project: Project, folder: Path) -> None:
    """``folder``, or the nearest existing folder it would be made in, takes new files.
    ``os.access`` asks the kernel with the real ids, which is who runs tether."""
    existing = folder
    while not existing.exists() and existing != project.root:
        existing = existing.parent
    if not existing.is_dir():
        return  # a file on the way: the kind check above or the write itself says so
    if not os.access(existing, os.W_OK | os.X_OK):
        raise TetherError(
            f"{existing}: cannot write in this folder (permission denied); tether keeps its "
            "state, journal, backups and cache there"
        )
