"""``deps scan``, ``deps plan`` and ``deps apply`` as one library call each. Nothing here prints.

The command line passes in how to talk to the person (``Prompts``: questions, progress,
the plan shown before the gate) and renders the document it gets back. Everything a run
writes (the plan folder, the run folder with its logs and summary) is written here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.deps import flow
from tether.deps.align import DEFAULT_POLICY
from tether.deps.apply import ApplyOptions, ApplyRun
from tether.deps.flow import Decided, Registries
from tether.deps.model import Level
from tether.deps.owed import Owed
from tether.deps.scan import ScanResult
from tether.errors import Exit, TetherError, UsageError
from tether.runs.isolation import DEFAULT_MODE
from tether.runs.rundir import RunFolder
from tether.runs.selection import Filters, NothingSelected, choose, split_names

Doc = dict[str, Any]


@dataclass(frozen=True)
class DepsRequest:
    level: Level
    filters: Filters = field(default_factory=Filters)
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
    cwd: Path = field(default_factory=Path.cwd)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass(frozen=True)
class Prompts:
    """How a run talks to the person; a run under ``yes`` never asks."""

    ask: Callable[[str], str]  # a question → the answer ("" at the end of input)
    say: Callable[[str], None]  # a line that explains a question
    show_plan: Callable[[Doc], None]  # the plan document, before the one confirmation
    note: Callable[[str], None] = lambda line: None  # selection notes (names not found)
    progress: Callable[[str], None] = lambda line: None  # a digest line per project applied


SILENT = Prompts(ask=lambda question: "", say=lambda line: None, show_plan=lambda doc: None)


@dataclass(frozen=True)
class DepsResult:
    document: Doc
    exit_code: int = 0


def scan(request: DepsRequest, prompts: Prompts = SILENT) -> DepsResult | NothingSelected:
    """Every selected project's dependencies and their targets; reads only."""
    from tether.deps.scan import scan_document

    result = _scan(request, prompts)
    if isinstance(result, NothingSelected):
        return result
    if request.plan_dir is not None:
        flow.write_plan_dir(request.plan_dir, result, None)
    return DepsResult(scan_document(result))


def plan(request: DepsRequest, prompts: Prompts = SILENT) -> DepsResult | NothingSelected:
    """One target per package across the projects; reads only (the plan folder aside)."""
    result = _scan(request, prompts)
    if isinstance(result, NothingSelected):
        return result
    decided = flow.plan_with_overrides(
        result, request.conflict_policy or DEFAULT_POLICY, _overrides_file(request)
    )
    if request.plan_dir is not None:
        flow.write_plan_dir(request.plan_dir, result, decided)
    return DepsResult(flow.plan_json(decided))


def apply(request: DepsRequest, prompts: Prompts) -> DepsResult | NothingSelected:
    """Plan, take every decision (policy, overrides, the gate), then apply project by
    project. Nothing is written before the person (or ``yes``) approved the plan."""
    from tether.deps.gate import check_skip

    result = _scan(request, prompts)
    if isinstance(result, NothingSelected):
        return result
    decided = _decided(result, request, prompts)
    skip = check_skip(split_names(request.skip_packages), decided.plan)
    flow.settle(decided, _override_decisions(decided, request, prompts), skip)
    owed = _owed(result, request)
    if not flow.has_work(decided, owed):
        return _finish(decided, request, None, "nothing", None)
    if not request.yes and not _approved(decided, prompts):
        return _finish(decided, request, None, "cancelled", None)
    folder = RunFolder.create()
    flow.write_plan_dir(folder.root, result, decided)
    if request.plan_dir is not None:
        flow.write_plan_dir(request.plan_dir, result, decided)
    run = flow.execute(decided, _apply_options(request), folder, prompts.progress, owed)
    return _finish(decided, request, run, run.status, folder)


def _owed(result: ScanResult, request: DepsRequest) -> list[Owed]:
    """Installs earlier runs owe the selected projects (``--resume``: that run's only)."""
    from tether.deps.owed import find

    if not request.install:
        return []
    return find([(p.name, p.root) for p in result.scanned], request.resume)


def _scan(request: DepsRequest, prompts: Prompts) -> ScanResult | NothingSelected:
    min_age = flow.parse_age(request.min_release_age)  # a usage error before any reading
    chosen = choose(request.filters, prompts.note)
    if isinstance(chosen, NothingSelected):
        return chosen
    fetcher = flow.make_fetcher(request.registries, request.env, request.cwd)
    now = flow.system_now()
    return flow.scan(chosen.selection, request.level, request.registries, fetcher, now, min_age)


def _overrides_file(request: DepsRequest) -> Path | None:
    from tether.deps.overrides import default_path

    return request.overrides if request.overrides is not None else default_path()


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
    from tether.deps.gate import ask_policy, conflict_lines

    conflicts = decided.plan.conflicts
    if request.yes:
        names = ", ".join(p.label for p in conflicts)
        raise UsageError(
            f"{len(conflicts)} package(s) have conflicting targets ({names}): "
            "choose --conflict-policy use-max-where-possible|per-project|skip-package "
            "(nothing was written)"
        )
    for line in conflict_lines(decided.plan):
        prompts.say(line)
    chosen = ask_policy(len(conflicts), prompts.ask)
    if chosen is None:
        raise TetherError("no conflict policy chosen (nothing was written)")
    return chosen


def _override_decisions(decided: Decided, request: DepsRequest, prompts: Prompts) -> dict[str, str]:
    from tether.deps.gate import ask_override
    from tether.deps.overrides import parse_decisions, undecided

    decisions = parse_decisions(list(request.override_actions) or None, decided.overrides)
    if request.yes:
        undecided(decided.overrides, decisions)
        return decisions
    for override in decided.overrides:
        if override.entry.id not in decisions:
            chosen = ask_override(override, prompts.ask)
            if chosen is None:
                raise TetherError(f"no decision for override {override.entry.id} (nothing written)")
            decisions[override.entry.id] = chosen
    return decisions


def _approved(decided: Decided, prompts: Prompts) -> bool:
    from tether.deps.gate import ask_gate

    prompts.show_plan(flow.plan_json(decided))
    count = sum(1 for p in decided.plan.packages if p.applies)
    answer = ask_gate(decided.plan, count, prompts.ask, prompts.say)
    if answer.approved and answer.excluded:
        flow.settle(decided, {}, answer.excluded)
    return answer.approved


def _apply_options(request: DepsRequest) -> ApplyOptions:
    return ApplyOptions(
        request.level,
        flow.system_now().date(),
        install=request.install,
        continue_on_failure=request.continue_on_failure,
        isolate=request.isolate or DEFAULT_MODE,
        isolate_asked=request.isolate is not None,
        env=_tool_env(request),
    )


def _tool_env(request: DepsRequest) -> dict[str, str] | None:
    """The install uses the registry the targets came from when one was named."""
    npm = request.registries.npm
    if not npm or "://" not in npm:
        return None
    return {**request.env, "npm_config_registry": npm}


def _finish(
    decided: Decided,
    request: DepsRequest,
    run: ApplyRun | None,
    status: str,
    folder: RunFolder | None,
) -> DepsResult:
    from tether.deps.summary import summary_document
    from tether.report.deps import render_summary

    meta = {
        "level": request.level,
        **(folder.to_json() if folder else {"run_id": None, "run_dir": None}),
        "conflict_policy": decided.plan.policy,
        "isolate": request.isolate or DEFAULT_MODE,
        "install": request.install,
        "continue_on_failure": request.continue_on_failure,
    }
    doc = summary_document(decided.plan, decided.overrides, run, status, meta)
    if folder is not None:
        folder.keep_summary(doc, render_summary(doc))
    if status == "interrupted":
        return DepsResult(doc, Exit.INTERRUPTED)
    return DepsResult(doc, Exit.ERROR if doc["failed"] else Exit.OK)
