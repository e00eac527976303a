"""Abandoning an unfinished run: put back what it changed, files and git's index."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from tether import progress
from tether.errors import TetherError
from tether.flows.apply import DoneWrite, resume_info
from tether.flows.project import Project
from tether.flows.safety import PathGuard
from tether.fsio import (
    file_mode,
    flush_to_disk,
    read_bytes,
    remove_stale_temps_beside,
    remove_stale_temps_under,
    sha256_bytes,
    sha256_file,
)
from tether.state.journal import (
    STEP_ABANDON_STARTED,
    STEP_FILE_RESTORED,
    STEP_FILE_UNWRITTEN,
    Journal,
    RunRecord,
)

# Puts back are made durable, then journaled, in groups of this many (as the update's writes).
RESTORE_BATCH = 512


@dataclass
class Restored:
    """What an abandon put back, out of what the interrupted run wrote: ``restored`` from
    their backups, ``removed`` (files the run created), and ``left`` as they are: files the
    run created that were changed since (``report/abandon`` says so). A path a killed
    abandon already put back counts as put back, so a rerun says what an uninterrupted
    abandon says."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    @property
    def put_back(self) -> int:
        return len(self.restored) + len(self.removed)

    @property
    def wrote(self) -> int:
        return self.put_back + len(self.left)


def restore_run(project: Project, journal: Journal, run: RunRecord) -> Restored:
    """Put back what an unfinished run changed: first backups return, files it created
    where nothing stood (and its conflict artifacts) go. ``run`` must have passed
    ``replay.checked_unfinished_run``. Every path is checked first: one the guard refuses
    (its folder became a link leading out, say) stops the abandon before anything is
    restored, so the run can be abandoned once it is fixed. A backup is copied back only
    when its bytes still hash as journaled, and a file is removed only when it holds
    exactly what the run wrote: every backup is checked before the first change.

    Crash-safe: each step is journaled (``abandon-started``, then ``file-unwritten`` and
    ``file-restored`` per file, made durable before their records), and every step is one
    an abandon run again repeats to the same bytes, so a killed abandon is simply run again.
    Temporary files a killed write left beside any path the run named (its writes, or a
    killed abandon's) are removed first."""
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
    earlier = _put_back_earlier(journal, run)
    journal.append(run.run_id, STEP_ABANDON_STARTED)
    _sweep_temps(project, run, [*(done.target for done in created), *run.backed_up])
    outcome = Restored()
    steps: list[tuple[str, str]] = []  # (step, path), journaled once their batch is durable
    for target_path, writes in progress.tracked("undoing writes", _by_target(created)):
        target = project.path(target_path)
        held = sha256_file(target) if target.is_file() else None
        if held is not None and held in writes:
            guard.remove(target_path)
            outcome.removed.append(target_path)
            steps.append((STEP_FILE_UNWRITTEN, target_path))
            _commit_if_due(journal, run, steps, project)
        elif earlier.get(target_path) == STEP_FILE_UNWRITTEN:
            outcome.removed.append(target_path)
        elif target.exists():
            outcome.left.append(target_path)
    for path, (data, mode) in progress.tracked("restoring backups", backups.items()):
        current = project.path(path)
        changed = not current.is_file() or sha256_file(current) != run.backed_up[path].sha256
        guard.write(path, data, mode=mode, durable=False)
        if changed or earlier.get(path) == STEP_FILE_RESTORED:
            outcome.restored.append(path)
        steps.append((STEP_FILE_RESTORED, path))
        _commit_if_due(journal, run, steps, project)
    _commit(journal, run, steps, project)
    return outcome


def _by_target(created: list[DoneWrite]) -> list[tuple[str, set[str]]]:
    """Each path the run created, with every content it wrote (or meant to write) there."""
    targets: dict[str, set[str]] = {}
    for done in created:
        targets.setdefault(done.target, set()).add(done.sha256)
    return list(targets.items())


def _put_back_earlier(journal: Journal, run: RunRecord) -> dict[str, str]:
    """Paths an earlier (killed) abandon of ``run`` already put back, with how."""
    return {
        str(record.get("path")): str(record["step"])
        for record in journal.records()
        if record.get("run") == run.run_id
        and record.get("step") in (STEP_FILE_RESTORED, STEP_FILE_UNWRITTEN)
    }


def _commit_if_due(
    journal: Journal, run: RunRecord, steps: list[tuple[str, str]], project: Project
) -> None:
    if len(steps) >= RESTORE_BATCH:
        _commit(journal, run, steps, project)


def _commit(
    journal: Journal, run: RunRecord, steps: list[tuple[str, str]], project: Project
) -> None:
    """Make the batch's put-backs and removals durable, then journal them with one fsync."""
    if not steps:
        return
    flush_to_disk([project.path(path) for _, path in steps])
    journal.append_many(run.run_id, [(step, {"path": path}) for step, path in steps])
    steps.clear()


def _sweep_temps(project: Project, run: RunRecord, paths: list[str]) -> None:
    """A killed write (the update's, or an earlier abandon's) leaves its temporary file
    beside its target, or in the run's backup folder: remove them, never through a folder
    the guard refuses."""
    guard = PathGuard(project.root)
    with contextlib.suppress(OSError):
        remove_stale_temps_beside(
            [project.path(rel) for rel in paths if guard.problem(rel) is None]
        )
    backups = f"{project.profile.backup_root}/{run.run_id}"
    if guard.problem(f"{backups}/x") is None and project.path(backups).is_dir():
        with contextlib.suppress(OSError):
            remove_stale_temps_under(project.path(backups))


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
