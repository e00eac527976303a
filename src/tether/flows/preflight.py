"""Git pre-flight for an update: where it may run, what it may touch, which branch it
lands on. tether never commits; the pull request is its own step (flows/pullrequest.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tether import git
from tether.errors import TetherError
from tether.model.plan import Op, UpdatePlan
from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.flows.project import Project

PROTECTED_BRANCHES = ("main", "master")


@valueclass(frozen=True)
class GitOptions:
    """The git switches of one run: a dirty tree allowed, the branch to switch to, or none."""

    allow_dirty: bool = False
    branch: str | None = None  # None: the default name when on main/master
    no_branch: bool = False
    allow_linked_worktree: bool = False  # the caller made this worktree for the run (fleet)


def default_branch_name(upstream: str, version: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", upstream).strip("-") or "upstream"
    return f"chore/update-{safe}-{version}"


def touched_paths(plan: UpdatePlan) -> list[str]:
    paths = []
    for action in plan.actions:
        if action.op in (Op.WRITE, Op.MARKERS, Op.REMOVE):
            paths.append(action.path)
    return paths


def refuse_linked_worktree(project: Project) -> None:
    """An update changes the installed release for every branch: it belongs in the main
    checkout. Checked first, before anything is written (the lock, the release cache), also
    for a dry run and when there is nothing to update; the refusal says what the main
    checkout knows (GAIA: its cached update check) so the person sees whether an update is
    pending at all."""
    tree = git.work_tree(project.root)
    if tree is None or tree.linked_main is None:
        return
    here = project.root.resolve().relative_to(tree.top.resolve())
    main = tree.linked_main / here
    raise TetherError(
        f"{project.root} is a linked worktree: an update belongs in the main checkout {main}; "
        f"{_main_state(project, main)}; run 'cd {main}' and update there"
    )


def _main_state(project: Project, main: Path) -> str:
    """What the main checkout records about updates, in one clause."""
    import json

    from tether.fsio import read_regular

    profile = project.profile
    if profile.update_check_cache is None:
        marker = profile.version_file or profile.state_file
        return f"its {marker} says which release is installed"
    try:
        cache = json.loads(read_regular(main / profile.update_check_cache))
    except (OSError, ValueError):
        cache = None
    current = cache.get("gaiaCurrent") if isinstance(cache, dict) else None
    latest = cache.get("gaiaLatest") if isinstance(cache, dict) else None
    if not (isinstance(current, str) and current and isinstance(latest, str) and latest):
        return profile.update_check_unavailable or "cached state unavailable on main"
    assert isinstance(cache, dict)
    pending = "available" if cache.get("gaiaHasUpdate") is True else "not-available"
    name = profile.display_name or profile.name
    return f"cached on main: {name} {current} installed; latest {latest} (update {pending})"


def refuse_dirty(
    root: Path, plan: UpdatePlan, options: GitOptions, own_writes: frozenset[str] = frozenset()
) -> list[str]:
    """Files the plan would change that hold uncommitted edits: an error unless allowed.
    ``own_writes``: paths holding exactly the bytes an interrupted run of this update
    wrote; they are tether's work, not the adopter's."""
    if git.work_tree_top(root) is None:
        return []
    dirty = [p for p in git.dirty_paths(root, touched_paths(plan)) if p not in own_writes]
    if dirty and not options.allow_dirty:
        shown = ", ".join(dirty[:5]) + (" …" if len(dirty) > 5 else "")
        raise TetherError(
            f"uncommitted changes in files this update changes ({shown}); commit or stash them, "
            "or pass --allow-dirty (tether backs them up either way)"
        )
    return dirty


@valueclass(frozen=True)
class BranchPlan:
    """Where in git an update lands: the branch it starts on and the one it switches to."""

    root: Path
    start_branch: str | None
    start_commit: str | None
    name: str | None  # the branch to switch to; None: stay where we are
    exists: bool = False  # ``name`` is already there, at the start commit: reused
    # ``name`` is an update branch an earlier run made, behind the start commit with no
    # commit of its own: it is moved up to the start commit (from this one) and reused.
    behind_at: str | None = None

    def context(self) -> dict[str, str | None]:
        """What the journal keeps so an abandon can come back here."""
        return {
            "start_branch": self.start_branch,
            "start_commit": self.start_commit,
            "created_branch": self.name if self.name and not self.exists else None,
            "reused_branch": self.name if self.name and self.exists else None,
        }


def plan_branch(
    root: Path,
    upstream: str,
    version: str,
    options: GitOptions,
    made_by_tether: frozenset[str] = frozenset(),
) -> BranchPlan | None:
    """Before confirmation, without changing anything: the branch the update will use.
    An update branch that already exists is reused when it points at the commit the
    update starts from (nothing of anyone's is on it), or when an earlier update made it
    (``made_by_tether``, from the journal) and every commit on it is already on the start
    commit (it is moved up to it: no commit is lost). Otherwise the run is refused."""
    if git.work_tree_top(root) is None:
        return None
    name = options.branch or default_branch_name(upstream, version)
    start, current, existing = git.checked_out_and_branch(root, name)  # one git call
    if options.no_branch or (options.branch is None and current not in PROTECTED_BRANCHES):
        return BranchPlan(root, current, start, None)
    if name == current:
        return BranchPlan(root, current, start, None)
    if existing is None:
        return BranchPlan(root, current, start, name)
    if existing == start:
        return BranchPlan(root, current, start, name, exists=True)
    ours = name in made_by_tether
    if ours and start is not None and git.is_ancestor(root, existing, start):
        return BranchPlan(root, current, start, name, exists=True, behind_at=existing)
    earlier = (
        f" (an earlier update made it: 'git switch {name}' to go on with that update there)"
        if ours
        else ""
    )
    raise TetherError(
        f"a branch named {name} already exists and has commits of its own{earlier}; pass "
        "--branch NAME to update on another branch, or delete it (git branch -D "
        f"{name}) if it is a leftover"
    )


def branch_for_update(plan: BranchPlan | None) -> str | None:
    """After confirmation: move to the update branch (created, or reused). Its name."""
    if plan is None or plan.name is None:
        return None
    if plan.exists:
        if plan.behind_at is not None and plan.start_commit is not None:
            git.move_branch(plan.root, plan.name, plan.start_commit, plan.behind_at)
        git.switch_branch(plan.root, plan.name)
    else:
        git.switch_to_new_branch(plan.root, plan.name)
    return plan.name
