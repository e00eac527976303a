"""``tether update --abandon``: undo an interrupted run: every file it wrote put back from
its backup, git's index as it was, the update branch it made left when nothing was
committed on it. What was done is returned as facts (``Abandoned``); ``report/abandon.py``
words them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tether import git
from tether.errors import TetherError
from tether.flows.project import Project, open_project
from tether.flows.replay import checked_unfinished_run
from tether.flows.restore import Restored, restore_index, restore_run
from tether.flows.runtime_paths import check_runtime_paths
from tether.flows.update_report import UpdateReport, UpdateStatus
from tether.state.journal import Journal, RunRecord
from tether.state.lock import ProjectLock
from tether.templates import TemplateOptions


@dataclass(frozen=True)
class MigrationNotUndone:
    """A migration the run carried out (or was running when it stopped): tether keeps no copy
    of what a release's program moves or rewrites, so an abandon cannot undo it."""

    id: str
    running: bool = False  # it was running when the run stopped: no result was recorded
    command: str = ""
    status: str = ""
    label: str = ""
    summary: str | None = None


@dataclass(frozen=True)
class BranchLeft:
    """What the abandon did about the update branch the run had switched to: ``elsewhere``
    (you are on another branch now: left alone), ``stayed`` (it has commits of its own),
    ``switched`` back to the start branch, or ``switched-deleted`` (the branch the run made,
    with no commit of its own, deleted)."""

    outcome: str
    branch: str
    start_branch: str = ""
    current: str | None = None


@dataclass
class Abandoned:
    """What an abandon put back and what it could not."""

    backups: str  # the run's backup folder, relative to the project
    restored: Restored
    migrations: list[MigrationNotUndone] = field(default_factory=list)
    index_left: bool = False  # commits made since the run started: git's index left as it is
    unstaged: int = 0  # files the run had marked unmerged in git's index, put back
    branch: BranchLeft | None = None


def abandon_update(
    root: Path, profile: str | None = None, template: TemplateOptions | None = None
) -> UpdateReport:
    """Undo an interrupted run: restore every file it wrote from its backup, put git's
    index back, and leave the update branch it made when nothing was committed on it."""
    project = open_project(root, profile, template)
    journal = project.journal()
    with ProjectLock(project.path(project.profile.lock_file), command="update --abandon"):
        check_runtime_paths(project)
        unfinished = checked_unfinished_run(project, journal)
        if unfinished is None:
            raise TetherError(f"{project.root}: no interrupted update to abandon")
        if unfinished.state_written:
            raise TetherError(
                f"the update to {unfinished.to_version} already recorded its new state; it cannot "
                "be abandoned, only reviewed (git diff) and committed or reverted with git"
            )
        done = Abandoned(
            f"{project.profile.backup_root}/{unfinished.run_id}",
            restore_run(project, journal, unfinished),
            _migrations_not_undone(journal, unfinished),
        )
        if _head_moved(project, unfinished):
            done.index_left = bool(unfinished.index_saved)
        else:
            done.unstaged = len(restore_index(project, unfinished))
        done.branch = _leave_update_branch(project, unfinished)
        journal.run_abandoned(unfinished.run_id)
    return UpdateReport(
        project.profile.name,
        "",
        unfinished.from_version or "",
        unfinished.to_version,
        UpdateStatus.ABANDONED,
        merge_dir=project.profile.merge_dir,
        run_id=unfinished.run_id,
        abandoned=done,
    )


def _migrations_not_undone(journal: Journal, run: RunRecord) -> list[MigrationNotUndone]:
    """What the run's migrations changed is not put back (GAIA's SPEC folder moves): one
    per migration that ran, unless it reported doing nothing (a summary of 0), then one per
    migration that was running when the run stopped."""
    from tether.flows.lifecycle_steps import journaled_migrations

    finished, started = journaled_migrations(journal, run.run_id)
    found = [
        MigrationNotUndone(
            result.id,
            command=result.command,
            status=result.status,
            label=result.label or "",
            summary=result.summary,
        )
        for result in finished.values()
        if result.status not in ("skipped", "refused", "planned", "pending")
        and not (result.status == "ok" and (result.summary or "").strip() == "0")
    ]
    return found + [MigrationNotUndone(migration, running=True) for migration in sorted(started)]


def _head_moved(project: Project, run: RunRecord) -> bool:
    start = run.git.get("start_commit")
    return bool(start) and git.head_commit(project.root) != start


def _leave_update_branch(project: Project, run: RunRecord) -> BranchLeft | None:
    """Back to the branch the run started on, when the run switched to an update branch
    that has no commits of its own; a branch the run created is then deleted."""
    context = run.git
    branch = context.get("created_branch") or context.get("reused_branch")
    start_branch, start_commit = context.get("start_branch"), context.get("start_commit")
    if not branch or not start_branch or git.work_tree_top(project.root) is None:
        return None
    head, current = git.checked_out(project.root)
    if current != branch:
        return BranchLeft("elsewhere", branch, start_branch, current)
    if head != start_commit:
        return BranchLeft("stayed", branch, start_branch)
    git.switch_branch(project.root, start_branch)
    # Deleted only when its commit is already on the branch switched back to: whatever the
    # journal's context says, deleting the branch then loses no commit.
    lossless = (
        start_commit is not None and git.merge_base(project.root, start_commit) == start_commit
    )
    if (
        context.get("created_branch")
        and git.branch_commit(project.root, branch) == start_commit
        and lossless
    ):
        git.delete_branch(project.root, branch)
        return BranchLeft("switched-deleted", branch, start_branch)
    return BranchLeft("switched", branch, start_branch)
