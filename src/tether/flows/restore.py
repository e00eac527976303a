"""Abandoning an unfinished run: put back what it changed, files and git's index."""

from __future__ import annotations

import os

from tether import progress
from tether.errors import TetherError
from tether.flows.apply import resume_info
from tether.flows.project import Project
from tether.flows.safety import PathGuard
from tether.fsio import file_mode, read_bytes, sha256_bytes, sha256_file
from tether.state.journal import Journal, RunRecord


def restore_run(project: Project, journal: Journal, run: RunRecord) -> list[str]:
    """Put back what an unfinished run changed: first backups return, files it created
    where nothing stood (and its conflict artifacts) go. ``run`` must have passed
    ``replay.checked_unfinished_run``. Every path is checked first: one the guard refuses
    (its folder became a link leading out, say) stops the abandon before anything is
    restored, so the run can be abandoned once it is fixed. A backup is copied back only
    when its bytes still hash as journaled, and a file is removed only when it holds
    exactly what the run wrote: every backup is checked before the first change."""
    guard = PathGuard(project.root)
    info = resume_info(journal, run.run_id)
    created = [
        done
        for path, writes in info.done.items()
        for done in writes
        if not (path in run.backed_up and done.target == path)  # restored from its backup
    ]
    for rel in [*(done.target for done in created), *run.backed_up]:
        problem = guard.problem(rel)
        if problem:
            raise TetherError(
                f"{project.path(rel)}: {problem}; nothing was restored (fix it, then run "
                f"the abandon again to restore run {run.run_id})"
            )
    backups = {path: _verified_backup(project, run, path) for path in run.backed_up}
    restored: list[str] = []
    for done in progress.tracked("undoing writes", created):
        target = project.path(done.target)
        if target.exists() and sha256_file(target) == done.sha256:
            guard.remove(done.target)
            restored.append(done.target)
    for path, (data, mode) in progress.tracked("restoring backups", backups.items()):
        guard.write(path, data, mode=mode)
        restored.append(path)
    return restored


def _verified_backup(project: Project, run: RunRecord, path: str) -> tuple[bytes, int]:
    """The bytes and mode of the run's first backup of ``path``, when they are what the
    journal says it saved; else a TetherError, so nothing is restored from a bad backup."""
    backup = run.backed_up[path]
    source = project.path(backup.backup)
    try:
        data = read_bytes(source)
    except OSError as error:
        problem = error.strerror or str(error)
    else:
        if sha256_bytes(data) == backup.sha256:
            return data, file_mode(source)
        problem = "its bytes are not the ones the run backed up"
    raise TetherError(
        f"{project.profile.journal_file}: run {run.run_id}: the backup {backup.backup} of "
        f"{path} cannot be used ({problem}); nothing was restored"
    )


def restore_index(project: Project, run: RunRecord) -> list[str]:
    """Put back git's index entries of every path the run marked unmerged; the paths."""
    if not run.index_saved:
        return []
    from tether import git

    top = git.work_tree_top(project.root)
    if top is None:
        return []
    restored = []
    for path, (repo_path, entries) in sorted(run.index_saved.items()):
        own = os.path.relpath(project.path(path).resolve(), top.resolve())
        if repo_path != own:
            raise TetherError(
                f"{project.profile.journal_file}: run {run.run_id} names the index path "
                f"{repo_path!r} for {path!r}, whose place in the work tree is {own!r}; "
                "not touching git's index"
            )
        git.restore_index_entries(top, repo_path, entries)
        restored.append(path)
    return restored
