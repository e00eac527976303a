"""Before tether acts on an unfinished run of its journal (resume, abandon, status), it checks
that the run is one tether started here and that every path it names is one tether could
have written. See docs/security.md, "Records tether reads back".

- the journal is a regular file of the project, not a link and not under a link leading out;
- the run id has exactly the shape ``new_run_id`` makes (it names a backup folder);
- neither the journal nor the run's backup folder is tracked by git: both are git-ignored
  runtime files, so a tracked one arrived through a commit, not from a run of tether here;
- every record's ``path`` passes the one path rule and is not one of tether's own paths; a
  ``target`` is that path or a conflict artifact in the merge folder; a ``backup`` is
  exactly where this run backs that path up (``<backup root>/<run id>/<path>[.<n>]``), a
  regular file; a ``repo_path`` passes the path rule (``restore_index`` also checks that it
  is the path's own place in the git work tree).

Anything else stops the command with one line naming the journal and the record, before
anything is read, written or deleted on the run's behalf.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from tether.errors import TetherError
from tether.flows.project import Project
from tether.flows.safety import PathGuard
from tether.pathrules import project_path_problem
from tether.state.journal import (
    STEP_FILE_BACKED_UP,
    STEP_INDEX_SAVED,
    Journal,
    RunRecord,
    is_run_id,
    unfinished_run,
)

# Steps whose record is about one project path (the others name none).
_PATH_STEPS = frozenset(
    {
        STEP_FILE_BACKED_UP,
        "file-intent",
        "file-written",
        "file-deleted",
        "file-skipped",
        "file-failed",
        "file-restored",
        "file-unwritten",
        STEP_INDEX_SAVED,
    }
)

_Rule = Callable[[str], str | None]


def checked_unfinished_run(project: Project, journal: Journal) -> RunRecord | None:
    """The journal's unfinished run, once it passed every check above; None when there is
    none. A run that fails a check is a TetherError naming the journal and the record."""
    label = project.profile.journal_file
    check_journal_file(project.root, label)
    records = journal.records()
    run = unfinished_run(records)
    if run is None:
        return None
    if not is_run_id(run.run_id):
        raise TetherError(
            f"{label}: run id {run.run_id!r} is not one tether makes; not replaying that run"
        )
    checker = _RunChecker(project, label, run.run_id)
    for record in records:
        if record.get("run") == run.run_id:
            checker.check(record)
    _refuse_tracked(project, label, run.run_id)
    return run


def check_journal_file(root: Path, label: str) -> None:
    """The journal at ``root/label`` is a regular file inside the project, or absent: never
    a link (appends would land where it points) nor under a folder leading out."""
    problem, info = PathGuard(root).inspect(label)
    if info is not None and stat.S_ISDIR(info.st_mode):
        problem = "is a folder, not tether's journal file"
    if problem:
        raise TetherError(f"{label}: {problem}; not reading it as tether's journal")


def _refuse_tracked(project: Project, label: str, run_id: str) -> None:
    from tether import git

    backups = f"{project.profile.backup_root}/{run_id}"
    tracked = git.tracked_paths(project.root, [label, backups])
    if tracked:
        raise TetherError(
            f"{label}: run {run_id}: {tracked[0]} is tracked by git, but tether's journal and "
            "backups are never committed, so tether did not start this run here; not "
            f"replaying it (remove it from git: git rm -r --cached {tracked[0]})"
        )


class _RunChecker:
    def __init__(self, project: Project, label: str, run_id: str) -> None:
        self.project = project
        self.label = label
        self.run_id = run_id
        profile = project.profile
        self.reserved = profile.reserved_paths()
        self.merge_dir = profile.merge_dir
        self.backup_dir = f"{profile.backup_root}/{run_id}"
        self.guard = PathGuard(project.root)

    def check(self, record: Mapping[str, object]) -> None:
        step = str(record.get("step"))
        if step not in _PATH_STEPS:
            return
        path = self._field(record, "path", self._path_problem)
        if "target" in record:
            self._field(record, "target", lambda t: self._target_problem(path, t))
        if step == STEP_FILE_BACKED_UP:
            self._field(record, "backup", lambda b: self._backup_problem(path, b))
        if step == STEP_INDEX_SAVED:
            self._field(record, "repo_path", project_path_problem)

    def _field(self, record: Mapping[str, object], name: str, rule: _Rule) -> str:
        value = record.get(name)
        problem = rule(value) if isinstance(value, str) else "missing or not a string"
        if problem:
            raise TetherError(
                f"{self.label}: run {self.run_id}, record {record.get('seq')} "
                f"({record.get('step')}): {name} {value!r}: {problem}; not replaying that run"
            )
        return str(value)

    def _path_problem(self, path: str) -> str | None:
        return project_path_problem(path) or self.reserved.problem(path)

    def _target_problem(self, path: str, target: str) -> str | None:
        problem = project_path_problem(target)
        if problem or target == path or target.startswith(self.merge_dir + "/"):
            return problem
        return f"a write goes to the path itself or to a conflict artifact in {self.merge_dir}/"

    def _backup_problem(self, path: str, backup: str) -> str | None:
        own = f"{self.backup_dir}/{path}"
        if backup != own and not re.fullmatch(re.escape(own) + r"\.[0-9]+", backup):
            return f"a backup of {path!r} lies at {own} (or {own}.<n>)"
        problem, info = self.guard.inspect(backup)
        if problem:
            return problem
        if info is not None and not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        return None
