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
from typing import Any, Literal

from tether import git
from tether.errors import TetherError
from tether.report.runs import isolation_note

MODES = ("none", "branch", "worktree")
# The safer of the two defaults fleet and deps used to have: a run's changes never land on
# the branch the person was working on (docs/fleet.md, docs/deps.md).
DEFAULT_MODE = "branch"


UnavailableCause = Literal[
    "not-a-repository",  # outside git there is no checkout to keep apart from
    "branch-exists",  # branch: someone's branch of that name is never reused
    "folder-exists",  # path: the worktree's folder is someone else's
    "not-committed",  # path: the project folder is not in the worktree (only HEAD is)
    "required-not-committed",  # path: a file the run needs is not committed
    "workspace-apart",  # path, outer, top: the workspace root is not in the project's repository
    "git-refused",  # message: git's own line
]


@dataclass(frozen=True)
class Unavailable:
    """Why an isolation cannot be set up, with the data its words quote: worded by
    ``report/runs.isolation_note``."""

    cause: UnavailableCause
    path: str = ""  # the folder, the project-relative path or the workspace root
    branch: str = ""
    outer: str = ""  # workspace-apart: the repository holding the workspace root; "": none
    top: str = ""  # workspace-apart: the project's repository; "": outside git
    message: str = ""


IsolationNoteKind = Literal[
    "not-possible",  # mode, why: the isolation asked for could not be had
    "on-branch-already",  # the branch is checked out already (an earlier run)
    "reused-worktree",  # the worktree an earlier run made
    "uncommitted",  # count: edits of the checkout the new worktree does not have
]


@dataclass(frozen=True)
class IsolationNote:
    """What a person should know about where a project's changes land: worded by
    ``report/runs.isolation_note`` (an isolation's ``note``)."""

    kind: IsolationNoteKind
    mode: str = ""
    why: Unavailable | None = None
    count: int = 0


@dataclass(frozen=True)
class Isolation:
    requested: str
    used: str  # none | branch | worktree | skipped (the isolation could not be had)
    root: Path  # where the run works: the project, or its copy inside the worktree
    branch: str | None = None
    worktree: Path | None = None
    remark: IsolationNote | None = None
    # A caller's own notes, worded already (deps: the configuration carried into a worktree).
    added: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """Every note in words, the isolation's own first."""
        own = (isolation_note(self.remark),) if self.remark is not None else ()
        return "; ".join((*own, *self.added))

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

    def __init__(self, why: Unavailable) -> None:
        super().__init__(why.cause)
        self.why = why


class NotARepository(IsolationUnavailable):
    """Outside git there is no checkout to keep apart from."""

    def __init__(self) -> None:
        super().__init__(Unavailable("not-a-repository"))


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
        remark = IsolationNote("not-possible", mode, reason.why)
        return Isolation(mode, used, root, remark=remark)


def _same_repository(root: Path, workspace: Path) -> None:
    top = git.work_tree_top(root)
    outer = git.work_tree_top(workspace)
    if top is None and outer is None:
        raise NotARepository()
    if top is not None and outer is not None and top.resolve() == outer.resolve():
        return
    raise IsolationUnavailable(
        Unavailable(
            "workspace-apart",
            str(workspace),
            outer=str(outer) if outer is not None else "",
            top=str(top) if top is not None else "",
        )
    )


def _branch(root: Path, name: str, switch: bool) -> Isolation:
    if git.work_tree_top(root) is None:
        raise NotARepository()
    if git.current_branch(root) == name:
        remark = IsolationNote("on-branch-already")
        return Isolation("branch", "branch", root, name, remark=remark)
    if git.has_ref(root, f"refs/heads/{name}"):
        raise IsolationUnavailable(Unavailable("branch-exists", branch=name))
    if switch:
        try:
            git.switch_to_new_branch(root, name)
        except TetherError as error:
            raise IsolationUnavailable(Unavailable("git-refused", message=str(error))) from None
    return Isolation("branch", "branch", root, name)


def worktree_path(top: Path, label: str) -> Path:
    """``<repository>-tether-<label>`` beside the repository the project lives in."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", label).strip("-") or "next"
    return top.parent / f"{top.name}-tether-{safe}"


def _worktree(root: Path, target: Target) -> Isolation:
    found = git.work_tree_top(root)
    if found is None:
        raise NotARepository()
    top = found.resolve()
    dest = worktree_path(top, target.label)
    inner = dest / root.resolve().relative_to(top)
    name = target.branch
    if dest.exists():
        if _is_our_worktree(dest, top, name):
            _inside(inner, root, top)
            remark = IsolationNote("reused-worktree")
            return Isolation("worktree", "worktree", inner, name, dest, remark=remark)
        raise IsolationUnavailable(Unavailable("folder-exists", str(dest)))
    if git.has_ref(top, f"refs/heads/{name}"):
        raise IsolationUnavailable(Unavailable("branch-exists", branch=name))
    try:
        git.worktree_add(top, dest, name)
    except TetherError as error:
        raise IsolationUnavailable(Unavailable("git-refused", message=str(error))) from None
    _require(root, inner, top, dest, target)
    _inside(inner, root, top)
    return Isolation("worktree", "worktree", inner, name, dest, remark=_uncommitted(top))


def _inside(inner: Path, root: Path, top: Path) -> None:
    # A project folder never committed is missing from the worktree (which holds only HEAD).
    if not inner.is_dir():
        rel = root.resolve().relative_to(top).as_posix()
        raise IsolationUnavailable(Unavailable("not-committed", rel))


def _uncommitted(top: Path) -> IsolationNote | None:
    # The worktree starts from HEAD: edits not yet committed in the checkout are not in it.
    dirty = git.dirty_paths(top, ["."])
    return IsolationNote("uncommitted", count=len(dirty)) if dirty else None


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
            raise IsolationUnavailable(Unavailable("required-not-committed", rel))
