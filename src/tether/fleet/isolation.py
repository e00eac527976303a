"""Where one project's fleet update lands: in place, on a new branch, or in a new worktree.

``branch`` only checks here that the branch can be made; the switch itself happens inside
``run_update`` after its lock and dirty check (the single-project code path). ``worktree``
adds a git worktree beside the project on that branch, so the user's checkout is never
touched. Any isolation that cannot be set up degrades to ``none`` with a note: the issue
asks that one odd repository never block the fleet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import git
from tether.errors import TetherError
from tether.flows.preflight import GitOptions, default_branch_name
from tether.flows.project import open_project

MODES = ("none", "branch", "worktree")


@dataclass(frozen=True)
class Isolation:
    requested: str
    used: str  # none | branch | worktree
    root: Path  # where the update runs: the project, or its copy inside the worktree
    branch: str | None = None
    worktree: Path | None = None
    note: str = ""

    def git_options(self, *, pr: bool, allow_dirty: bool) -> GitOptions:
        """The single-project git options that carry this isolation out. The fleet's own
        worktree is made for the run, so the single-project worktree refusal is lifted."""
        return GitOptions(
            allow_dirty=allow_dirty,
            branch=self.branch if self.used == "branch" else None,
            no_branch=self.used != "branch",  # none: stay put; worktree: already on its branch
            pr=pr,
            allow_linked_worktree=self.used == "worktree",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "used": self.used,
            "root": str(self.root),
            "branch": self.branch,
            "worktree": str(self.worktree) if self.worktree else None,
            "note": self.note,
        }

    def describe(self) -> str:
        where = {
            "none": "in place",
            "branch": f"on branch {self.branch}",
            "worktree": f"in worktree {self.worktree} (branch {self.branch})",
        }[self.used]
        return f"isolation: {where}" + (f" ({self.note})" if self.note else "")


def isolate(root: Path, mode: str, upstream: str, version: str) -> Isolation:
    """Prepare ``mode`` for updating ``root`` to ``version``; degrade to none when it fails."""
    if mode == "none":
        return Isolation("none", "none", root)
    branch = default_branch_name(upstream, version)
    try:
        if mode == "branch":
            return check_new_branch(root, branch)
        return _worktree(root, branch, version)
    except IsolationUnavailable as reason:
        return Isolation(mode, "none", root, note=f"{mode} isolation not possible: {reason}")


class IsolationUnavailable(Exception):
    """Why an isolation cannot be set up (the project is then updated in place)."""


def check_new_branch(root: Path, name: str) -> Isolation:
    """Whether ``name`` can be made in ``root`` (not switched to yet); shared with deps."""
    if git.work_tree_top(root) is None:
        raise IsolationUnavailable("not a git repository")
    if git.current_branch(root) == name:
        return Isolation("branch", "branch", root, name, note="already on it (an earlier run)")
    if git.has_ref(root, f"refs/heads/{name}"):
        raise IsolationUnavailable(f"branch {name} already exists")
    return Isolation("branch", "branch", root, name)


def worktree_path(top: Path, version: str) -> Path:
    """``<project>-tether-<version>`` beside the repository the project lives in."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", version).strip("-") or "next"
    return top.parent / f"{top.name}-tether-{safe}"


def _worktree(root: Path, name: str, version: str) -> Isolation:
    found = git.work_tree_top(root)
    if found is None:
        raise IsolationUnavailable("not a git repository")
    top = found.resolve()
    dest = worktree_path(top, version)
    inner = dest / root.resolve().relative_to(top)
    if dest.exists():
        if _is_our_worktree(dest, top, name):
            return Isolation(
                "worktree",
                "worktree",
                inner,
                name,
                dest,
                note="reusing the worktree an earlier run made",
            )
        raise IsolationUnavailable(f"{dest} already exists")
    if git.has_ref(top, f"refs/heads/{name}"):
        raise IsolationUnavailable(f"branch {name} already exists")
    try:
        git.worktree_add(top, dest, name)
    except TetherError as error:
        raise IsolationUnavailable(str(error)) from None
    _require_install(root, inner, top, dest, name)
    return Isolation("worktree", "worktree", inner, name, dest, note=_uncommitted_note(top))


def _uncommitted_note(top: Path) -> str:
    # The worktree starts from HEAD: edits not yet committed in the checkout are not in it.
    dirty = git.dirty_paths(top, ["."])
    if not dirty:
        return ""
    return f"{len(dirty)} uncommitted change(s) in the checkout are not in the worktree"


def _is_our_worktree(dest: Path, top: Path, branch: str) -> bool:
    if git.work_tree_top(dest) is None:
        return False
    main = git.linked_worktree_main(dest)
    return main is not None and main.resolve() == top and git.current_branch(dest) == branch


def _require_install(root: Path, inner: Path, top: Path, dest: Path, branch: str) -> None:
    """A worktree holds only committed files: without tether's state it cannot be updated,
    so take the fresh worktree and branch away again and say why."""
    state_file = open_project(root).profile.state_file
    if (root / state_file).is_file() and not (inner / state_file).is_file():
        git.worktree_remove(top, dest)
        git.delete_branch(top, branch)
        raise IsolationUnavailable(
            f"{state_file} is not committed, so a worktree would not contain it"
        )
