"""``deps scan``, ``deps plan`` and ``deps apply`` as one library call each. Nothing here prints.

The command line passes in how to talk to the person (``Prompts``: questions, progress,
the plan shown before the gate) and renders the document it gets back. Everything a run
writes (the plan folder, the run folder with its logs and summary) is written here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tether import git
from tether.deps import flow, plans
from tether.deps.align import DEFAULT_POLICY, Plan, build_plan
from tether.deps.apply import GoOn, isolation_target
from tether.deps.dossier import Improvement, dossier_document, gate_digest, read_improvements
from tether.deps.dossier import write as write_dossier
from tether.deps.flow import Decided, Registries
from tether.deps.model import Level
from tether.deps.overrides import BoundOverride, parse_decisions, undecided
from tether.deps.overrides import default_path as default_overrides_path
from tether.deps.owed import Owed
from tether.deps.owed import find as find_owed
from tether.deps.plans import STALE_AFTER, Pruned, moved_since
from tether.deps.programs import registry_env
from tether.deps.project_lock import sweep_stale_lock
from tether.deps.registries import DEFAULT_JOBS, DEFAULT_RETRIES, DEFAULT_TIMEOUT, HttpClient
from tether.deps.scan import ScanResult, scan_document, unreachable, unreachable_error
from tether.deps.subset import Chosen, GateAnswer, check_select, check_skip
from tether.deps.work import ApplyOptions, ApplyRun
from tether.errors import Exit, TetherError, UsageError
from tether.report.deps import (
    improvement_step,
    newest_plan_folder,
    pruned_notice,
    render_summary,
)
from tether.runs.isolation import DEFAULT_MODE, Target
from tether.runs.rundir import RunFolder
from tether.runs.selection import Filters, NothingSelected, Pick, choose, split_names
from tether.sources.limits import INSTALL_TIME, OVERRIDE_TIME

Doc = dict[str, Any]


@dataclass(frozen=True)
class DepsRequest:
    level: Level
    filters: Filters = field(default_factory=Filters)
    target: Level | None = None  # how far versions move (None: the level)
    converge_engines: bool = False  # engines: a pin above the target moves down to it too
    registries: Registries = field(default_factory=Registries)
    min_release_age: str | None = None  # 7d, 12h, 90m
    plan_dir: Path | None = None  # also write the scan (and the plan) here
    conflict_policy: str | None = None  # None: the default for plan; apply asks once
    overrides: Path | None = None  # None: the documented default file, if present
    override_actions: Sequence[str] = ()  # ID=ACTION
    skip_packages: Sequence[str] = ()  # package names (comma lists) left out of apply
    yes: bool = False  # apply without asking; conflicts then need conflict_policy
    install: bool = True
    continue_on_failure: bool = False
    isolate: str | None = None  # None: DEFAULT_MODE, not asked for
    resume: str | None = None  # a run id: finish only the installs that run owes
    deep: bool = False  # plan: keep the plan in a new plan folder (deep mode)
    select: Sequence[str] = ()  # apply only these: package names, improvement titles (parts)
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass(frozen=True)
class Prompts:
    """How a run talks to the person; a run under ``yes`` never asks."""

    say: Callable[[str], None]  # a line that explains a question
    show_plan: Callable[[Doc], None]  # the plan document, before the one confirmation
    # The one confirmation: the plan, how many updates move, the improvements a dossier
    # offers → apply or not, and what was picked.
    gate: Callable[[Plan, int, list[Improvement] | None], GateAnswer] = (
        lambda plan, count, offered: GateAnswer(False)
    )
    # One policy for every conflicting package (None: no clear answer).
    policy: Callable[[Plan], str | None] = lambda plan: None
    # What an override family does in every project it affects (None: no clear answer).
    override: Callable[[BoundOverride], str | None] = lambda override: None
    progress: Callable[[str], None] = lambda line: None  # a digest line per project applied
    # After a project failed: go on with the rest? (project, step, exit code, how many are
    # left). None: stop, as a run without a person does.
    go_on: GoOn | None = None
    # Which projects, when no filter was given and a person is there (None: every one).
    pick: Pick | None = None


SILENT = Prompts(say=lambda line: None, show_plan=lambda doc: None)


@dataclass(frozen=True)
class DepsResult:
    document: Doc
    exit_code: int = 0


# Each command asks git of a folder once (``git.one_command``): reading a project, isolating
# it and carrying its configuration ask again of the same folders (three times a project in a
# workspace), and a deps command neither makes nor removes the repository around a project.


def scan(request: DepsRequest, prompts: Prompts = SILENT) -> DepsResult | NothingSelected:
    """Every selected project's dependencies and their targets; reads only."""
    with git.one_command():
        return _scan_command(request, prompts)


def _scan_command(request: DepsRequest, prompts: Prompts) -> DepsResult | NothingSelected:
    result = _scan(request, prompts)
    if isinstance(result, NothingSelected):
        return result.with_document(scan_document(_scanned_none(request, result)))
    if request.plan_dir is not None:
        flow.write_plan_dir(request.plan_dir, result, None)
    return DepsResult(scan_document(result), _reached(result))


def _reached(result: ScanResult) -> int:
    """A registry that could not be asked fails the command (its document still says what
    was read); a package a registry does not know is only a warning."""
    return Exit.ERROR if unreachable(result) else Exit.OK


def plan(request: DepsRequest, prompts: Prompts = SILENT) -> DepsResult | NothingSelected:
    """One target per package across the projects; reads only (the plan folder aside)."""
    with git.one_command():
        return _plan_command(request, prompts)


def _plan_command(request: DepsRequest, prompts: Prompts) -> DepsResult | NothingSelected:
    result = _scan(request, prompts)
    if isinstance(result, NothingSelected):
        nothing = _decided_none(request, result)
        return result.with_document({**flow.plan_json(nothing), **_plan_folder_json(None, [])})
    decided = flow.plan_with_overrides(
        result, request.conflict_policy or DEFAULT_POLICY, _overrides_file(request)
    )
    doc = flow.plan_json(decided)
    folder, pruned = _plan_folder(request)
    if folder is not None:
        flow.write_plan_dir(folder, result, decided)
    doc.update(_plan_folder_json(folder, pruned))
    doc["warnings"] += [pruned_notice(p, STALE_AFTER.days) for p in pruned]
    return DepsResult(doc, _reached(result))


def _plan_folder_json(folder: Path | None, pruned: Sequence[Pruned]) -> Doc:
    return {
        "plan_dir": str(folder) if folder is not None else None,
        "pruned_plan_folders": [p.to_json() for p in pruned],
    }


def _scanned_none(request: DepsRequest, nothing: NothingSelected) -> ScanResult:
    """The scan of no project, for each command's own document when nothing was selected
    (the projects whose path is gone still listed)."""
    return ScanResult(request.level, [], missing=list(nothing.missing))


def _decided_none(request: DepsRequest, nothing: NothingSelected) -> Decided:
    policy = request.conflict_policy or DEFAULT_POLICY
    return Decided(build_plan(_scanned_none(request, nothing), policy))


def _plan_folder(request: DepsRequest) -> tuple[Path | None, list[Pruned]]:
    """Where the plan is kept: the folder named, else a new one for ``--deep``; writing a
    plan is when tether's stale plan folders are removed (never the one in use)."""
    if request.plan_dir is None and not request.deep:
        return None, []
    now = flow.system_now()
    folder = request.plan_dir or plans.create(request.level, now, request.env)
    pruned = plans.prune(now, [folder], request.env)
    plans.mark_used(folder, now)
    return folder, pruned


def apply(request: DepsRequest, prompts: Prompts) -> DepsResult | NothingSelected:
    """Plan, take every decision (policy, overrides, the gate), then apply project by
    project. Nothing is written before the person (or ``yes``) approved the plan."""
    with git.one_command():
        return _apply_command(request, prompts)


def _apply_command(request: DepsRequest, prompts: Prompts) -> DepsResult | NothingSelected:
    options = _apply_options(request)  # a bad time limit stops the run before it starts
    worktree = isolation_target(options) if options.isolate == "worktree" else None
    result = _scan(request, prompts, None if request.yes else prompts.pick, worktree)
    if isinstance(result, NothingSelected):
        nothing = _finish(_decided_none(request, result), request, None, "nothing-selected", None)
        return result.with_document(nothing.document)
    unreached = unreachable_error(result)
    if unreached is not None:
        raise TetherError(f"{unreached}; nothing was written (run again once it answers)")
    for scanned in result.projects:  # what a killed run left in folders tether does not manage
        sweep_stale_lock(scanned.root)
    kept = _researched_plan(request)
    if kept is not None and request.conflict_policy is None:
        request = replace(request, conflict_policy=kept["conflict_policy"])
    decided = _decided(result, request, prompts)
    if kept is not None:
        _refuse_if_moved(request.plan_dir, kept, flow.plan_json(decided))
    skip = check_skip(split_names(request.skip_packages), decided.plan)
    offered = read_improvements(request.plan_dir)
    chosen = check_select(split_names(request.select), decided.plan, offered, request.plan_dir)
    decisions, shown = _override_decisions(decided, request, prompts)
    flow.settle(decided, decisions, skip + chosen.excluded)
    owed = _owed(result, request)
    if not flow.has_work(decided, owed):
        return _finish(decided, request, None, "nothing", None, chosen)
    if not request.yes:
        _show_dossier(request.plan_dir, prompts)
        approved = _approved(decided, prompts, chosen, shown)
        if approved is None:
            return _finish(decided, request, None, "cancelled", None)
        chosen = approved
        if not flow.has_work(decided, owed):  # the subset picked leaves nothing to apply
            return _finish(decided, request, None, "nothing", None, chosen)
    folder = RunFolder.create()
    flow.write_plan_dir(folder.root, result, decided)  # the plan folder keeps its own
    go_on = None if request.yes or request.continue_on_failure else prompts.go_on
    run = flow.execute(decided, options, folder, prompts.progress, owed, go_on)
    return _finish(decided, request, run, run.status, folder, chosen)


def _show_dossier(folder: Path | None, prompts: Prompts) -> None:
    """Before the one confirmation of a deep run: the dossier by path and digest."""
    from tether.report.dossier import render_gate_digest

    digest = gate_digest(folder)
    if digest is not None:
        for line in render_gate_digest(digest):
            prompts.say(line)


def _researched_plan(request: DepsRequest) -> Doc | None:
    """The plan a ``--plan-dir`` folder keeps (the one its notes and dossier are about), or
    None without one."""
    if request.plan_dir is None or not (request.plan_dir / plans.PLAN_FILE).is_file():
        return None
    return plans.read_plan(request.plan_dir)


def _refuse_if_moved(folder: Path | None, kept: Doc, now: Doc) -> None:
    """Apply the researched plan or nothing: a project or the registry that changed since
    is named, and nothing is written."""
    moved = moved_since(kept, now)
    if not moved:
        return
    shown = "; ".join(moved[:3]) + (f"; +{len(moved) - 3} more" if len(moved) > 3 else "")
    raise TetherError(
        f"{folder}: the plan kept there is not what the projects give now ({shown}); "
        "nothing was written (plan again with --plan-dir, or apply without it)"
    )


def _owed(result: ScanResult, request: DepsRequest) -> list[Owed]:
    """Installs earlier runs owe the selected projects (``--resume``: that run's only)."""
    if not request.install:
        return []
    return find_owed([(p.name, p.root) for p in result.scanned], request.resume)


def _scan(
    request: DepsRequest,
    prompts: Prompts,
    pick: Pick | None = None,
    worktree: Target | None = None,
) -> ScanResult | NothingSelected:
    min_age = flow.parse_age(request.min_release_age)  # a usage error before any reading
    _check_target(request)
    chosen = choose(request.filters, pick)
    if isinstance(chosen, NothingSelected):
        return chosen
    fetcher = flow.make_fetcher(request.registries, request.env, request.cwd)
    now = flow.system_now()
    return flow.scan(
        chosen.selection,
        request.level,
        request.registries,
        fetcher,
        now,
        min_age,
        request.target,
        request.converge_engines,
        worktree,
    )


def _check_target(request: DepsRequest) -> None:
    """A target is a dependency level for a dependency run; engines go with engines."""
    if request.converge_engines and request.level != "engines":
        raise UsageError("--converge-engines goes with --level engines only")
    if request.target is None or request.target == request.level:
        return
    if "engines" in (request.target, request.level):
        raise UsageError(
            f"--target-level {request.target} does not go with --level {request.level}: engines "
            "are not a dependency target (give both as engines, or neither)"
        )


def _overrides_file(request: DepsRequest) -> Path | None:
    return request.overrides if request.overrides is not None else default_overrides_path()


def _decided(result: ScanResult, request: DepsRequest, prompts: Prompts) -> Decided:
    """The plan under the given policy; with conflicts and none given, the one the person
    chooses (the plan is made again under it)."""
    policy = request.conflict_policy or DEFAULT_POLICY
    decided = flow.plan_with_overrides(result, policy, _overrides_file(request))
    if decided.plan.conflicts and not request.conflict_policy:
        chosen = _policy_for_conflicts(decided, request, prompts)
        if chosen != policy:
            decided = flow.plan_with_overrides(result, chosen, _overrides_file(request))
    return decided


def _policy_for_conflicts(decided: Decided, request: DepsRequest, prompts: Prompts) -> str:
    conflicts = decided.plan.conflicts
    if request.yes:
        names = ", ".join(p.label for p in conflicts)
        raise UsageError(
            f"{len(conflicts)} package(s) have conflicting targets ({names}): "
            "choose --conflict-policy use-max-where-possible|per-project|skip-package "
            "(nothing was written)"
        )
    chosen = prompts.policy(decided.plan)
    if chosen is None:
        raise TetherError("no conflict policy chosen (nothing was written)")
    return chosen


def _override_decisions(
    decided: Decided, request: DepsRequest, prompts: Prompts
) -> tuple[dict[str, str], bool]:
    """One decision per override entry (flags, else a question each) and whether the plan
    was shown for those questions."""
    decisions = parse_decisions(list(request.override_actions) or None, decided.overrides)
    if request.yes:
        undecided(decided.overrides, decisions)
        return decisions, False
    asking = [o for o in decided.overrides if o.entry.id not in decisions]
    if asking:  # the plan first, then the questions about it
        prompts.show_plan(flow.plan_json(decided))
    for override in asking:
        chosen = prompts.override(override)
        if chosen is None:
            raise TetherError(f"no decision for override {override.entry.id} (nothing written)")
        decisions[override.entry.id] = chosen
    return decisions, bool(asking)


def _approved(
    decided: Decided, prompts: Prompts, chosen: Chosen, shown: bool = False
) -> Chosen | None:
    """The one confirmation (the plan shown first, unless the override questions just
    followed it); the subset picked there (None: cancelled)."""
    if not shown:
        prompts.show_plan(flow.plan_json(decided))
    count = sum(1 for p in decided.plan.packages if p.applies)
    answer = prompts.gate(decided.plan, count, chosen.offered)
    if not answer.approved:
        return None
    if answer.excluded:
        flow.settle(decided, {}, answer.excluded)
    if answer.improvements is None:
        return chosen
    return Chosen(chosen.offered, answer.excluded, answer.improvements)


def _apply_options(request: DepsRequest) -> ApplyOptions:
    return ApplyOptions(
        request.level,
        flow.system_now().date(),
        install=request.install,
        continue_on_failure=request.continue_on_failure,
        isolate=request.isolate or DEFAULT_MODE,
        isolate_asked=request.isolate is not None,
        env=_tool_env(request),
        install_seconds=INSTALL_TIME.seconds(),
        override_seconds=OVERRIDE_TIME.seconds(),
    )


def _tool_env(request: DepsRequest) -> dict[str, str] | None:
    """The install uses the registry the targets came from when one was named."""
    npm = request.registries.npm
    if not npm or "://" not in npm:
        return None
    return registry_env(request.env, npm)


def _finish(
    decided: Decided,
    request: DepsRequest,
    run: ApplyRun | None,
    status: str,
    folder: RunFolder | None,
    chosen: Chosen | None = None,
) -> DepsResult:
    from tether.deps.summary import improvement_sections, summary_document

    meta: Doc = {
        "level": request.level,
        "target": request.target or request.level,
        **(folder.to_json() if folder else {"run_id": None, "run_dir": None}),
        "conflict_policy": decided.plan.policy,
        "isolate": request.isolate or DEFAULT_MODE,
        "install": request.install,
        "continue_on_failure": request.continue_on_failure,
    }
    meta["nothing_to_apply"] = flow.nothing_reason(decided) if status == "nothing" else None
    doc = summary_document(decided.plan, decided.overrides, run, status, meta)
    projects = [p.name for p in decided.plan.scan.scanned]
    doc.update(improvement_sections(chosen, doc, projects))
    doc["suggested_next_steps"] += improvement_step(doc)
    if folder is not None:
        folder.keep_summary(doc, render_summary(doc))
    if status == "interrupted":
        return DepsResult(doc, Exit.INTERRUPTED)
    return DepsResult(doc, Exit.ERROR if doc["failed"] else Exit.OK)


# --- deep mode: release notes and the dossier, in a plan folder ----------------------------


@dataclass(frozen=True)
class DeepRequest:
    """``deps notes`` and ``deps dossier``: they work in a plan folder, never on projects."""

    level: str | None = None  # with no plan_dir: the newest plan folder of this level
    plan_dir: Path | None = None
    github_api: str | None = None  # None: $GITHUB_API_URL, else api.github.com
    jobs: int = DEFAULT_JOBS
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def _deep_folder(request: DeepRequest) -> tuple[Path, Doc, list[str]]:
    """The plan folder, the plan it keeps, and a notice when it was found, not named."""
    folder = plans.locate(request.plan_dir, request.level, request.env)
    plan = plans.read_plan(folder)
    if request.level is not None and plan["level"] != request.level:
        raise UsageError(
            f"{folder} keeps a {plan['level']} plan, not {request.level} "
            "(drop --level, or name another --plan-dir)"
        )
    plans.mark_used(folder, flow.system_now())
    notices = []
    if request.plan_dir is None:
        notices.append(newest_plan_folder(folder, request.level))
    return folder, plan, notices


def notes(request: DeepRequest) -> DepsResult:
    """Every bump's release notes: kept ones read from the plan folder, the rest fetched
    and kept there."""
    from tether.deps.notes import DEFAULT_API, ReleasePages, gather, notes_document

    folder, plan, notices = _deep_folder(request)
    api = request.github_api or request.env.get("GITHUB_API_URL") or DEFAULT_API
    token = request.env.get("GITHUB_TOKEN") or request.env.get("GH_TOKEN") or None
    pages = ReleasePages(api, HttpClient(request.timeout, request.retries), token)
    found = gather(folder, plan, plans.read_metadata(folder), pages, request.jobs)
    return DepsResult(notes_document(plan["level"], folder, found, notices))


def dossier(request: DeepRequest) -> DepsResult:
    """The dossier skeleton from the plan folder (its plan, metadata and kept notes); asks
    no server."""
    from tether.deps.bumps import bump_list
    from tether.deps.notes import read_kept

    folder, plan, notices = _deep_folder(request)
    kept = {item.label: read_kept(folder, item) for item in bump_list(plan)}
    doc = dossier_document(folder, plan, plans.read_metadata(folder), kept)
    doc["notices"] = notices
    return DepsResult(write_dossier(folder, doc))
