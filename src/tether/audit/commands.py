"""``tether audit shell`` and ``tether audit gate`` as one library call each. Nothing here prints.

The command line parses its flags into a request and renders the document (or entries) it
gets back; choosing the files, running the tools and settling the members happen here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tether.audit.clearance import GateEntry, gate
from tether.audit.result_cache import ResultCache
from tether.audit.roster import Remit, check_globs, load_roster, resolve_remit
from tether.errors import TetherError, UsageError


@dataclass(frozen=True)
class ShellRequest:
    base_ref: str | None = None  # scope the run to what this branch changed since REF
    diff_only: bool = False  # findings outside changed lines become suggestions
    paths: Sequence[str] = ()  # explicit files (relative to the root, or absolute)
    hooks: Sequence[str] | None = None  # None: the roster's
    posix: Sequence[str] | None = None  # None: the roster's
    jobs: int = 1
    cache: ResultCache | None = None  # None: no cache
    vocabulary: str = "tether"


def audit_shell(root: Path, layout: Any, remit: Remit, request: ShellRequest) -> dict[str, Any]:
    """The shell report (docs/audit.md): files, findings, counts, tools, and the scope's
    base when ``base_ref`` was given."""
    from tether import git
    from tether.audit import shell
    from tether.audit.scope import compute_scope
    from tether.audit.tools import default_tools

    if request.diff_only and not request.base_ref:
        raise UsageError("--diff-only needs --base-ref REF")
    roster = load_roster(root, layout)
    check_globs(request.hooks or (), "--hooks", UsageError)
    check_globs(request.posix or (), "--posix", UsageError)
    options = shell.ShellOptions(
        hooks=tuple(request.hooks if request.hooks is not None else roster.hooks),
        posix=tuple(request.posix if request.posix is not None else roster.posix),
        jobs=request.jobs,
        cache=request.cache if request.cache is not None else ResultCache(None),
    )
    scope = compute_scope(root, request.base_ref, remit) if request.base_ref else None
    tracked = git.ls_files(root)  # one listing for every step below: nothing here stages
    if request.paths:
        paths = shell.expand_paths(root, [_relative(root, p) for p in request.paths])
    elif scope is not None:
        paths = list(scope.files)
    else:
        paths = [p for p in tracked if remit.covers(p)]
    targets = shell.select_targets(root, paths, options)
    tools = default_tools()
    results = shell.analyse(root, targets, tools, options, tracked)
    if request.diff_only and scope is not None:
        results = shell.downgrade_inherited(root, scope.merge_base, results, tools, options)
    deleted = list(scope.deleted) if scope is not None and not request.paths else []
    gone = shell.deleted_suites(root, scope.merge_base, deleted) if scope is not None else []
    if scope is not None:
        gone += shell.compare_suites(root, scope.merge_base, targets, tools, options.cache)
    gone += shell.missing_hook_scripts(root, remit, tracked)
    checked = _policy_findings(root, layout, paths, scope.merge_base if scope else None)
    gone += [f for found in checked.values() for f in found]
    domain = remit if remit.globs else None
    document = shell.report(results, tools, request.vocabulary, gone, domain)
    # A file in the remit that no lens reads is said, never silently skipped; without a
    # remit (every tracked file) the list would be the whole tree.
    if scope is not None:
        document["callers"] = shell.callers(root, [t.path for t in targets if not t.bats], tracked)
    examined = {t.path for t in targets} | set(checked)
    listed = bool(remit.globs or request.paths)
    document["not_analysed"] = sorted(set(paths) - examined) if listed else []
    if scope is None:
        return document
    return {
        "base": scope.base_ref,
        "merge_base": scope.merge_base,
        "dirty": list(scope.dirty),
        "deleted": deleted,
        **document,
    }


def _policy_findings(
    root: Path, layout: Any, paths: Sequence[str], base: str | None
) -> dict[str, list[Any]]:
    """Per declarative file among ``paths`` (audit/policy.py), what its change loosens
    against ``base``; a run without a base reads only what needs none (dated rates)."""
    from tether import git
    from tether.audit import policy
    from tether.fsio import read_bytes

    today = git.commit_day(root) or ""
    folder = layout.generated_copies
    copies = git.tracked_paths(root, [folder]) if folder and (root / folder).is_dir() else []
    found: dict[str, list[Any]] = {}
    for path in paths:
        kind = policy.policy_kind(path, layout.roster_path)
        if kind is None:
            continue
        try:
            after = read_bytes(root / path)
        except OSError:
            continue  # a deleted or unreadable file: the scope and the shell run say so
        before = git.read_blob(root, f"{base}:{path}") if base else None
        found[path] = policy.check(
            policy.PolicyFile(path, kind), before, after, today, layout.roster_key, copies
        )
    return found


def _relative(root: Path, given: str) -> str:
    from tether.pathrules import relpath_problem

    path = Path(given)
    absolute = path if path.is_absolute() else root / path  # relative to the root, like git's
    try:
        rel = absolute.resolve().relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{given} is outside the checkout {root}") from None
    problem = relpath_problem(rel)
    if problem:
        raise UsageError(f"{given}: {problem}")
    return rel


def audit_gate(
    root: Path,
    layout: Any,
    names: Sequence[str],
    machinery: Sequence[str],
    ad_hoc: Remit | None = None,
) -> list[GateEntry]:
    """Each member's state: an ``ad_hoc`` remit gates its one member; otherwise ``names``
    are resolved from the roster. Without names, the gate waits for the members the whole
    branch dispatches (see ``dispatched``); a member it does not is ``not-dispatched``."""
    if ad_hoc is not None:
        return gate(root, layout, [ad_hoc])
    roster = load_roster(root, layout)
    chosen = list(names) or [m.name for m in roster.members]
    if not chosen:
        raise UsageError("no members to gate: give --members or a roster")
    remits = [resolve_remit(roster, member=n, machinery=list(machinery)) for n in chosen]
    entries = gate(root, layout, remits)
    if names:
        return entries  # named members are awaited whatever the branch changed
    waiting = dispatched(root, remits)
    return [
        replace(entry, status="not-dispatched", why="not-dispatched")
        if entry.status == "pending" and not waiting[entry.member]
        else entry
        for entry in entries
    ]


def dispatched(root: Path, remits: Sequence[Remit]) -> dict[str, bool]:
    """Per member: does the whole branch (since its fork from the default branch) change,
    add or delete a file in its remit or the gate machinery? A branch that does not
    dispatch a member is not held for that member's clearance. When the fork point
    cannot be found, every member is awaited: membership that cannot be computed must
    not read as "nobody needs to review this"."""
    from tether import git
    from tether.audit.incremental import full_base

    try:
        _, fork = full_base(root)
    except TetherError:
        return {remit.member or "": True for remit in remits}
    changed = [path for _, path in git.diff_name_status(root, fork, "HEAD")]
    return {
        remit.member or "": any(remit.covers(p) or remit.is_machinery(p) for p in changed)
        for remit in remits
    }
