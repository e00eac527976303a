"""The sections both multi-project summaries (``fleet update``, ``deps apply``) word the same way.

They read the shapes ``tether.runs.sections`` builds. Text is bounded (a conversation reads
it): only the first failing projects get their log's last lines; the run folder keeps the
whole document.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, assert_never

if TYPE_CHECKING:
    from tether.runs.isolation import Isolation, IsolationNote, Unavailable

Doc = dict[str, Any]
EMPTY_REGISTRY = "No projects registered. Use tether projects add to register one."
NO_MATCH = "No projects matched the filter."
NO_SELECTABLE = "No selectable projects after path-drift filtering."
NOTHING_PICKED = "No projects selected. Cancelled."
PICK_QUESTION = "Which projects (names or numbers, comma-separated; all for every one)? "


def pick_lines(projects: Sequence[tuple[str, str]]) -> list[str]:
    """The registered projects a person picks from: numbered, with their folders."""
    return [f"{number}. {name} — {path}" for number, (name, path) in enumerate(projects, 1)]


def not_registered(unknown: Sequence[str]) -> str:
    names = ", ".join(unknown)
    return f"Not registered: {names}. Answer with names or numbers of the list, or all."


TAILS_SHOWN = 3


def failed_section(failed: list[Doc]) -> list[str]:
    """Each failed project, its step (and the step's exit code when it has one), its log."""
    if not failed:
        return []
    title = "## Failed project" if len(failed) == 1 else f"## Failed projects ({len(failed)})"
    lines = ["", title]
    for index, item in enumerate(failed):
        code = f" (exit {item['exit_code']})" if item.get("exit_code") is not None else ""
        lines.append(f"- {item['name']}: failed at step {item['step']}{code}: {item['error']}")
        lines.append(f"  log: {item['log']}")
        if index < TAILS_SHOWN and item["log_tail"]:
            lines.append(f"  last {len(item['log_tail'])} lines of its log:")
            lines += [f"    {line}" for line in item["log_tail"]]
    return lines


def isolation_line(where: Isolation) -> str:
    """Where the project's changes land, and why not where asked when that could not be."""
    place = {
        "none": "in place",
        "branch": f"on branch {where.branch}",
        "worktree": f"in worktree {where.worktree} (branch {where.branch})",
        "skipped": "not possible, so the project is left alone",
    }[where.used]
    return f"isolation: {place}" + (f" ({where.note})" if where.note else "")


def isolation_note(note: IsolationNote) -> str:
    """What to know about where a project's changes land (an isolation's ``note``)."""
    kind = note.kind
    if kind == "not-possible":
        assert note.why is not None
        return f"{note.mode} isolation not possible: {unavailable(note.why)}"
    if kind == "on-branch-already":
        return "already on it (an earlier run)"
    if kind == "reused-worktree":
        return "reusing the worktree an earlier run made"
    if kind == "uncommitted":
        return f"{note.count} uncommitted change(s) in the checkout are not in the worktree"
    assert_never(kind)


def unavailable(why: Unavailable) -> str:
    """Why an isolation cannot be set up."""
    cause = why.cause
    if cause == "not-a-repository":
        return "not a git repository"
    if cause == "branch-exists":
        return f"branch {why.branch} already exists"
    if cause == "folder-exists":
        return f"{why.path} already exists"
    if cause == "not-committed":
        return f"{why.path} is not committed, so the worktree does not contain it"
    if cause == "required-not-committed":
        return f"{why.path} is not committed, so a worktree would not contain it"
    if cause == "workspace-apart":
        where = f"in another git repository ({why.outer})" if why.outer else "outside git"
        mine = f"the project's repository {why.top}" if why.top else "a project outside git"
        return (
            f"the workspace root {why.path} is {where}, so a branch or worktree of "
            f"{mine} cannot hold what the run writes there"
        )
    if cause == "git-refused":
        return why.message
    assert_never(cause)


def isolation_lines(projects: list[Doc]) -> list[str]:
    """One line per project: where its changes are."""
    lines = []
    for item in projects:
        where = {
            "none": "in place",
            "branch": f"branch {item['branch']}",
            "worktree": f"worktree {item['worktree_dir']} (branch {item['branch']})",
            "skipped": "skipped, nothing written",
        }[item["used"]]
        note = f" — {item['note']}" if item["note"] else ""
        lines.append(f"- {item['name']}: {where}{note}")
    return lines
