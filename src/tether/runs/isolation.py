"""Where one project's changes land in a multi-project run: in place, on a new branch, or in
a new worktree. ``fleet update`` and ``deps apply`` both isolate through ``isolate``.

``branch`` checks that the branch can be made; with ``switch`` it is checked out at once
(deps edits files right after), without it the caller switches (the fleet leaves that to
``run_update``, after its lock and dirty check). ``worktree`` adds a git worktree beside the
repository on that branch, so the user's checkout is never touched. A second run finds its
own branch or worktree (same repository, same branch) and reuses it; someone else's branch
or folder is never reused. Projects that share one git top level share its one worktree.

An isolation that cannot be set up never blocks the rest of the run. ``fleet`` and ``deps``
both ask for ``skip`` (``used`` is then ``skipped``; the fleet fails the project, deps skips
it): a person who asked for isolation never finds the checkout edited. Nothing here
commits or pushes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import git
from tether.errors import TetherError

MODES = ("none", "branch", "worktree")
# The safer of the two defaults fleet and deps used to have: a run's changes never land on
# the branch the person was working on (docs/fleet.md, docs/deps.md).
DEFAULT_MODE = "branch"


@dataclass(frozen=True)
class Isolation:
    requested: str
    used: str  # none | branch | worktree | skipped (the isolation could not be had)
    root: Path  # where the run works: the project, or its copy inside the worktree
    branch: str | None = None
    worktree: Path | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "used": self.used,
            "project_dir": str(self.root),
            "branch": self.branch,
            "worktree_dir": str(self.worktree) if self.worktree else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class Target:
    """What one run isolates onto."""

    branch: str
    label: str  # the worktree is ``<repository>-tether-<label>`` beside the repository
    # Project files the run cannot work without: a fresh worktree lacking one the checkout
    # has (it was never committed) is taken away again.
    required: tuple[str, ...] = ()


class IsolationUnavailable(Exception):
    """Why an isolation cannot be set up."""


class NotARepository(IsolationUnavailable):
    """Outside git there is no checkout to keep apart from."""


def isolate(
    root: Path,
    mode: str,
    target: Target,
    *,
    switch: bool = False,
    skip: bool = False,
    in_place_outside_git: bool = False,
    workspace: Path | None = None,
) -> Isolation:
    """Set ``mode`` up for ``root``. When it fails: degrade to none with the reason, or
    with ``skip`` mark the project ``skipped`` (the caller then leaves it alone). With
    ``in_place_outside_git`` (the mode was a default, not asked for) a folder outside git
    still degrades to none: there is no branch there to protect.

    ``workspace``: a folder above ``root`` the run also writes in (a workspace root, with
    its workspace file and lockfile). It must be in the same git repository as ``root``:
    a branch or worktree of the project's repository cannot hold a file above it, and a
    worktree of an outer repository does not hold a nested one."""
    if mode == "none":
        return Isolation("none", "none", root)
    try:
        if workspace is not None:
            _same_repository(root, workspace)
        if mode == "branch":
            return _branch(root, target.branch, switch)
        return _worktree(root, target)
    except IsolationUnavailable as reason:
        lenient = in_place_outside_git and isinstance(reason, NotARepository)
        used = "skipped" if skip and not lenient else "none"
        return Isolation(mode, used, root, note=f"{mode} isolation not possible: {reason}")


def _same_repository(root: Path, workspace: Path) -> None:
    top = git.work_tree_top(root)
    outer = git.work_tree_top(workspace)
    if top is None and outer is None:
        raise NotARepository("not a git repository")
    if top is not None and outer is not None and top.resolve() == outer.resolve():
        return
    where = "outside git" if outer is None else f"in another git repository ({outer})"
    mine = f"the project's repository {top}" if top is not None else "a project outside git"
    raise IsolationUnavailable(
        f"the workspace root {workspace} is {where}, so a branch or worktree of "
        f"{mine} cannot hold what the run writes there"
    )


def _branch(root: Path, name: str, switch: bool) -> Isolation:
    if git.work_tree_top(root) is None:
        raise NotARepository("not a git repository")
    if git.current_branch(root) == name:
        return Isolation("branch", "branch", root, name, note="already on it (an earlier run)")
    if git.has_ref(root, f"refs/heads/{name}"):
        raise IsolationUnavailable(f"branch {name} already exists")
    if switch:
        try:
            git.switch_to_new_branch(root, name)
        except TetherError as error:
            raise IsolationUnavailable(str(error)) from None
    return Isolation("branch", "branch", root, name)


def worktree_path(top: Path, label: str) -> Path:
    """``<repository>-tether-<label>`` beside the repository the project lives in."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", label).strip("-") or "next"
    return top.parent / f"{top.name}-tether-{safe}"


def _worktree(root: Path, target: Target) -> Isolation:
    found = git.work_tree_top(root)
    if found is None:
        raise NotARepository("not a git repository")
    top = found.resolve()
    dest = worktree_path(top, target.label)
    inner = dest / root.resolve().relative_to(top)
    name = target.branch
    if dest.exists():
        if _is_our_worktree(dest, top, name):
            _inside(inner, root, top)
            note = "reusing the worktree an earlier run made"
            return Isolation("worktree", "worktree", inner, name, dest, note=note)
        raise IsolationUnavailable(f"{dest} already exists")
    if git.has_ref(top, f"refs/heads/{name}"):
        raise IsolationUnavailable(f"branch {name} already exists")
    try:
        git.worktree_add(top, dest, name)
    except TetherError as error:
        raise IsolationUnavailable(str(error)) from None
    _require(root, inner, top, dest, target)
    _inside(inner, root, top)
    return Isolation("worktree", "worktree", inner, name, dest, note=_uncommitted_note(top))


def _inside(inner: Path, root: Path, top: Path) -> None:
    # A project folder never committed is missing from the worktree (which holds only HEAD).
    if not inner.is_dir():
        rel = root.resolve().relative_to(top).as_posix()
        raise IsolationUnavailable(f"{rel} is not committed, so the worktree does not contain it")


def _uncommitted_note(top: Path) -> str:
    # The worktree starts from HEAD: edits not yet committed in the checkout are not in it.
    dirty = git.dirty_paths(top, ["."])
    if not dirty:
        return ""
    return f"{len(dirty)} uncommitted change(s) in the checkout are not in the worktree"


def earlier_worktree(top: Path, target: Target) -> Path | None:
    """The worktree an earlier run onto ``target`` made for the repository ``top`` (the one a
    run now reuses), when it is there."""
    dest = worktree_path(top, target.label)
    return dest if dest.exists() and _is_our_worktree(dest, top, target.branch) else None


def _is_our_worktree(dest: Path, top: Path, branch: str) -> bool:
    tree = git.work_tree(dest)
    main = tree.linked_main if tree is not None else None
    return main is not None and main.resolve() == top and git.current_branch(dest) == branch


def _require(root: Path, inner: Path, top: Path, dest: Path, target: Target) -> None:
    """A worktree holds only committed files: without a required one the run cannot work
    there, so take the fresh worktree and branch away again and say why."""
    for rel in target.required:
        if (root / rel).is_file() and not (inner / rel).is_file():
            git.worktree_remove(top, dest)
            git.delete_branch(top, target.branch)
            raise IsolationUnavailable(
                f"{rel} is not committed, so a worktree would not contain it"
            )
