"""The words of ``tether update --abandon`` (and ``refresh --abandon``): what was put back,
what was not (a migration's changes), and what became of git's index and the update branch.
They are the abandon report's notes, in its words and in its JSON document."""

from __future__ import annotations

from tether.report.notes import worded_notes

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.flows.abandon import Abandoned, BranchLeft, MigrationNotUndone
    from tether.flows.restore import Restored
    from tether.flows.update_report import UpdateReport

_NO_COPY = "tether keeps no copy of what a migration moves or rewrites: review it with git status"


def abandon_notes(done: Abandoned) -> list[str]:
    notes = [_put_back(done.restored, done.backups)]
    notes += [_not_undone(migration) for migration in done.migrations]
    if done.index_left:
        notes.append("git's index left as it is: commits were made since the update started")
    if done.unstaged:
        notes.append(
            f"put git's index back for {done.unstaged} file(s) the run had marked unmerged"
        )
    if done.branch is not None:
        notes.append(_branch(done.branch))
    return notes


def with_abandon_notes(report: UpdateReport) -> list[str]:
    """The report's notes in words, an abandon's first."""
    done = report.abandoned
    return (abandon_notes(done) if done is not None else []) + worded_notes(report.notes)


def _put_back(restored: Restored, backups: str) -> str:
    """How many of the files the run wrote are back as they were, and which are not."""
    if restored.wrote == 0:
        return "the interrupted run had written no file yet: nothing to put back"
    how = f"{len(restored.restored)} restored from {backups}, "
    how += f"{len(restored.removed)} it created removed"
    if not restored.left:
        count = "the" if restored.wrote == 1 else f"all {restored.wrote}"
        noun = "file" if restored.wrote == 1 else "files"
        return f"put back {count} {noun} the interrupted run wrote ({how})"
    left = ", ".join(f"{path} (changed since the run wrote it)" for path in sorted(restored.left))
    return (
        f"put back {restored.put_back} of the {restored.wrote} files the interrupted run wrote "
        f"({how}); left as they are: {left}"
    )


def _not_undone(migration: MigrationNotUndone) -> str:
    if migration.running:
        return (
            f"not undone: whatever migration {migration.id} changed before the run stopped "
            f"(it was running); {_NO_COPY}"
        )
    said = f"; {migration.label or 'it reported'}: {migration.summary}" if migration.summary else ""
    return (
        f"not undone: what migration {migration.id} changed (`{migration.command}`, "
        f"{migration.status}{said}); {_NO_COPY}"
    )


def _branch(left: BranchLeft) -> str:
    if left.outcome == "elsewhere":
        now = left.current or "a detached HEAD"
        return f"left branch {left.branch} as it is: you are on {now} now"
    if left.outcome == "stayed":
        return (
            f"stayed on branch {left.branch}: it has commits of its own; "
            f"'git switch {left.start_branch}' takes you back"
        )
    if left.outcome == "switched-deleted":
        return f"switched back to {left.start_branch} and deleted the update branch {left.branch}"
    return f"switched back to {left.start_branch}"
