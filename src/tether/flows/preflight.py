"""Git pre-flight for an update: where it may run, what it may touch, which branch it
lands on. tether never commits; the pull request is its own step (flows/pullrequest.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tether import git
from tether.errors import TetherError
from tether.model.plan import Op, Plan

PROTECTED_BRANCHES = ("main", "master")


@dataclass(frozen=True)
class GitOptions:
    allow_dirty: bool = False
    branch: str | None = None  # None: the default name when on main/master
    no_branch: bool = False
    pr: bool = False  # deprecated: only adds the 'commit, then tether pr' next step
    allow_linked_worktree: bool = False  # the caller made this worktree for the run (fleet)


def default_branch_name(upstream: str, version: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", upstream).strip("-") or "upstream"
    return f"chore/update-{safe}-{version}"


def touched_paths(plan: Plan) -> list[str]:
    paths = []
    for action in plan.actions:
        if action.op in (Op.WRITE, Op.MARKERS, Op.REMOVE):
            paths.append(action.path)
    return paths


def refuse_linked_worktree(root: Path, installed: str, latest: str) -> None:
    main = git.linked_worktree_main(root) if git.work_tree_top(root) else None
    if main is not None:
        raise TetherError(
            f"{root} is a linked worktree; run the update in the main checkout {main} "
            f"(installed {installed}, latest {latest})"
        )


def refuse_dirty(root: Path, plan: Plan, options: GitOptions) -> list[str]:
    """Files the plan would change that hold uncommitted edits: an error unless allowed."""
    if git.work_tree_top(root) is None:
        return []
    dirty = git.dirty_paths(root, touched_paths(plan))
    if dirty and not options.allow_dirty:
        shown = ", ".join(dirty[:5]) + (" …" if len(dirty) > 5 else "")
        raise TetherError(
            f"uncommitted changes in files this update changes ({shown}); commit or stash them, "
            "or pass --allow-dirty (tether backs them up either way)"
        )
    return dirty


def branch_for_update(root: Path, upstream: str, version: str, options: GitOptions) -> str | None:
    """After confirmation: move off main/master to the update branch. The new branch's name."""
    if options.no_branch or git.work_tree_top(root) is None:
        return None
    current = git.current_branch(root)
    if options.branch is None and current not in PROTECTED_BRANCHES:
        return None
    name = options.branch or default_branch_name(upstream, version)
    if name == current:
        return None
    git.switch_to_new_branch(root, name)
    return name
