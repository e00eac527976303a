"""Where one project's dependency update lands: in place, on a new branch, or a worktree.

The branch is ``deps/<level>-<YYYY-MM-DD>``. A worktree is added beside the repository on
that branch, so the user's checkout is never touched (its installs run there too). As in
the fleet update, an isolation that cannot be set up degrades to ``none`` with a note: one
odd repository must not block the rest. tether never commits or pushes here.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tether import git
from tether.errors import TetherError
from tether.fleet.isolation import (
    Isolation,
    IsolationUnavailable,
    check_new_branch,
    worktree_path,
)

MODES = ("none", "branch", "worktree")


def branch_name(level: str, day: date) -> str:
    return f"deps/{level}-{day.isoformat()}"


def isolate(root: Path, mode: str, level: str, day: date) -> Isolation:
    """Set ``mode`` up for ``root`` now; degrade to none (with the reason) when it fails."""
    if mode == "none":
        return Isolation("none", "none", root)
    name = branch_name(level, day)
    try:
        return _branch(root, name) if mode == "branch" else _worktree(root, name, level, day)
    except IsolationUnavailable as reason:
        return Isolation(mode, "none", root, note=f"{mode} isolation not possible: {reason}")


def _branch(root: Path, name: str) -> Isolation:
    """The fleet's checks, then the switch now (deps edits files right after)."""
    isolation = check_new_branch(root, name)
    if isolation.note:
        return isolation  # already on it
    try:
        git.switch_to_new_branch(root, name)
    except TetherError as error:
        raise IsolationUnavailable(str(error)) from None
    return isolation


def _worktree(root: Path, name: str, level: str, day: date) -> Isolation:
    found = git.work_tree_top(root)
    if found is None:
        raise IsolationUnavailable("not a git repository")
    top = found.resolve()
    dest = worktree_path(top, f"deps-{level}-{day.isoformat()}")
    if dest.exists():
        raise IsolationUnavailable(f"{dest} already exists")
    if git.has_ref(top, f"refs/heads/{name}"):
        raise IsolationUnavailable(f"branch {name} already exists")
    try:
        git.worktree_add(top, dest, name)
    except TetherError as error:
        raise IsolationUnavailable(str(error)) from None
    inner = dest / root.resolve().relative_to(top)
    note = _uncommitted_note(top)
    return Isolation("worktree", "worktree", inner, name, dest, note=note)


def _uncommitted_note(top: Path) -> str:
    # The worktree starts from HEAD: manifest edits not yet committed are not in it.
    dirty = git.dirty_paths(top, ["."])
    if not dirty:
        return ""
    return f"{len(dirty)} uncommitted change(s) in the checkout are not in the worktree"
