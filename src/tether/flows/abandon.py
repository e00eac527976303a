"""``tether update --abandon``: undo an interrupted run: every file it wrote put back from
its backup, git's index as it was, the update branch it made left when nothing was
committed on it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.errors import TetherError
from tether.flows.project import Project, open_project
from tether.flows.replay import checked_unfinished_run
from tether.flows.runtime_paths import check_runtime_paths
from tether.flows.update_report import UpdateReport, UpdateStatus
from tether.state.journal import Journal, RunRecord
from tether.state.lock import ProjectLock
from tether.templates import TemplateOptions

if TYPE_CHECKING:
    from tether.flows.restore import Restored


def abandon_update(
    root: Path, profile: str | None = None, template: TemplateOptions | None = None
) -> UpdateReport:
    """Undo an interrupted run: restore every file it wrote from its backup, put git's
    index back, and leave the update branch it made when nothing was committed on it."""
    from tether.flows.restore import restore_index, restore_run

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
        restored = restore_run(project, journal, unfinished)
        migrated = _migrations_not_undone(journal, unfinished)
        git_notes: list[str] = []
        unstaged: list[str] = []
        if _head_moved(project, unfinished):
            if unfinished.index_saved:
                git_notes.append(
                    "git's index left as it is: commits were made since the update started"
                )
        else:
            unstaged = restore_index(project, unfinished)
        git_notes += _leave_update_branch(project, unfinished)
        journal.run_abandoned(unfinished.run_id)
    report = UpdateReport(
        project.profile.name,
        "",
        unfinished.from_version or "",
        unfinished.to_version,
        UpdateStatus.ABANDONED,
        merge_dir=project.profile.merge_dir,
        run_id=unfinished.run_id,
    )
    report.notes.append(_put_back_words(project, unfinished, restored))
    report.notes += migrated
    if unstaged:
        report.notes.append(
            f"put git's index back for {len(unstaged)} file(s) the run had marked unmerged"
        )
    report.notes += git_notes
    return report


def _put_back_words(project: Project, run: RunRecord, restored: Restored) -> str:
    """How many of the files the run wrote are back as they were, and which are not."""
    if restored.wrote == 0:
        return "the interrupted run had written no file yet: nothing to put back"
    backups = f"{project.profile.backup_root}/{run.run_id}"
    how = f"{len(restored.restored)} restored from {backups}, "
    how += f"{len(restored.removed)} it created removed"
    if not restored.left:
        count = "the" if restored.wrote == 1 else f"all {restored.wrote}"
        noun = "file" if restored.wrote == 1 else "files"
        return f"put back {count} {noun} the interrupted run wrote ({how})"
    left = ", ".join(f"{path} ({why})" for path, why in sorted(restored.left.items()))
    return (
        f"put back {restored.put_back} of the {restored.wrote} files the interrupted run wrote "
        f"({how}); left as they are: {left}"
    )


def _migrations_not_undone(journal: Journal, run: RunRecord) -> list[str]:
    """What the run's migrations changed is not put back: tether keeps no copy of what a
    release's program moves or rewrites (GAIA's SPEC folder moves). One note per migration
    that ran, unless it reported doing nothing (a summary of 0)."""
    from tether.flows.lifecycle_steps import journaled_migrations

    finished, started = journaled_migrations(journal, run.run_id)
    notes = []
    for result in finished.values():
        if result.status in ("skipped", "refused", "planned", "pending"):
            continue
        if result.status == "ok" and (result.summary or "").strip() == "0":
            continue
        said = f"; {result.label or 'it reported'}: {result.summary}" if result.summary else ""
        notes.append(
            f"not undone: what migration {result.id} changed (`{result.command}`, "
            f"{result.status}{said}); tether keeps no copy of what a migration moves or "
            "rewrites: review it with git status"
        )
    notes += [
        f"not undone: whatever migration {migration} changed before the run stopped (it was "
        "running); tether keeps no copy of what a migration moves or rewrites: review it with "
        "git status"
        for migration in sorted(started)
    ]
    return notes


def _head_moved(project: Project, run: RunRecord) -> bool:
    from tether import git

    start = run.git.get("start_commit")
    return bool(start) and git.head_commit(project.root) != start


def _leave_update_branch(project: Project, run: RunRecord) -> list[str]:
    """Back to the branch the run started on, when the run switched to an update branch
    that has no commits of its own; a branch the run created is then deleted."""
    from tether import git

    context = run.git
    branch = context.get("created_branch") or context.get("reused_branch")
    start_branch, start_commit = context.get("start_branch"), context.get("start_commit")
    if not branch or not start_branch or git.work_tree_top(project.root) is None:
        return []
    head, current = git.checked_out(project.root)
    if current != branch:
        return [f"left branch {branch} as it is: you are on {current or 'a detached HEAD'} now"]
    if head != start_commit:
        return [
            f"stayed on branch {branch}: it has commits of its own; "
            f"'git switch {start_branch}' takes you back"
        ]
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
        return [f"switched back to {start_branch} and deleted the update branch {branch}"]
    return [f"switched back to {start_branch}"]
