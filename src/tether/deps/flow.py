"""The steps of the deps commands as library calls: scan, plan, decide, apply. Nothing here
prints.

``tether.deps.commands`` strings them into one call per command; a script can drive the
same steps one by one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tether.deps import overrides as ov
from tether.deps.align import Plan, build_plan, exclude_packages, plan_document
from tether.deps.apply import GoOn, apply_projects
from tether.deps.engines import NodeIndex, scan_engines_of, scan_engines_projects
from tether.deps.manifests import scan_dependencies
from tether.deps.model import Ecosystem, Level
from tether.deps.notes import metadata_document
from tether.deps.owed import Owed
from tether.deps.plans import METADATA_FILE, PLAN_FILE, SCAN_FILE, plan_folder_shape
from tether.deps.registries import (
    DEFAULT_JOBS,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    Fetcher,
    HttpClient,
    Source,
    npm_source,
    pypi_source,
)
from tether.deps.scan import ScanResult, scan_document, scan_projects
from tether.deps.work import ApplyOptions, ApplyRun, works_from_plan
from tether.deps.worktree_view import as_the_worktree_holds
from tether.errors import UsageError
from tether.report.deps import overrides_default_notice
from tether.runs.isolation import Target
from tether.runs.rundir import RunFolder
from tether.runs.selection import Selection

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([dhm])\s*$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def system_now() -> datetime:
    """The clock; tests replace it to judge release ages against fixed dates."""
    return datetime.now(UTC)


def parse_age(text: str | None) -> timedelta | None:
    """``7d``, ``12h``, ``90m``; a bare number is refused (pnpm counts minutes, others days)."""
    if text is None:
        return None
    match = _AGE.match(text)
    if match is None:
        raise UsageError(f"--min-release-age {text!r}: give a number and a unit: 7d, 12h, 90m")
    return timedelta(**{_UNITS[match[2]]: float(match[1])})


@dataclass(frozen=True)
class Registries:
    npm: str | None = None
    pypi: str | None = None
    node_index: str | None = None
    jobs: int = DEFAULT_JOBS
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES


def make_fetcher(
    config: Registries, env: Mapping[str, str], cwd: Path, dedupe: bool = True
) -> Fetcher:
    client = HttpClient(timeout=config.timeout, retries=config.retries)
    sources: dict[Ecosystem, Source] = {
        "npm": npm_source(config.npm, env, cwd, client),
        "pypi": pypi_source(config.pypi, env, client),
    }

    def project_sources(folders: Sequence[Path]) -> dict[Ecosystem, Source]:
        # Each project reads its own .npmrc files (and the user's), as npm does there.
        return {"npm": npm_source(config.npm, env, cwd, client, folders)}

    return Fetcher(sources, config.jobs, dedupe, project_sources)


def node_index(config: Registries) -> NodeIndex:
    if config.node_index:
        return NodeIndex(config.node_index, HttpClient(config.timeout, config.retries))
    return NodeIndex(client=HttpClient(config.timeout, config.retries))


def scan(
    selection: Selection,
    level: Level,
    config: Registries,
    fetcher: Fetcher,
    now: datetime,
    min_release_age: timedelta | None,
    target: Level | None = None,
    converge: bool = False,
    worktree: Target | None = None,
) -> ScanResult:
    """``worktree``: the run isolates onto that worktree, so each project is scanned as the
    worktree will hold it (``deps.worktree_view``)."""
    members = list(selection.chosen)
    if level == "engines":
        engines = (
            scan_engines_of
            if worktree is None
            else as_the_worktree_holds(scan_engines_of, worktree)
        )
        result = scan_engines_projects(
            members, fetcher, node_index(config), now, min_release_age, converge, engines
        )
    else:
        read = (
            scan_dependencies
            if worktree is None
            else as_the_worktree_holds(scan_dependencies, worktree)
        )
        result = scan_projects(members, level, fetcher, now, min_release_age, read, target=target)
    result.missing = list(selection.missing)
    return result


@dataclass
class Decided:
    """A plan with every decision taken: policy, overrides, exclusions."""

    plan: Plan
    overrides: list[ov.BoundOverride] = field(default_factory=list)
    overrides_file: Path | None = None


def plan_with_overrides(result: ScanResult, policy: str, overrides_file: Path | None) -> Decided:
    """The plan under ``policy`` with the override families bound to it. At the engines
    level no family is consulted (the file is not even read): package-name families mean
    nothing for runtime and package-manager pins."""
    plan = build_plan(result, policy)
    if result.level == "engines":
        overrides_file = None
    entries = ov.load(overrides_file) if overrides_file is not None else []
    if overrides_file is not None and overrides_file == ov.default_path():
        plan.warnings.append(overrides_default_notice(overrides_file))
    return Decided(plan, ov.bind(entries, plan), overrides_file)


def settle(decided: Decided, decisions: Mapping[str, str], exclude: Sequence[str]) -> None:
    """Record the override decisions and the pick-subset (names already validated)."""
    ov.decide(decided.overrides, dict(decisions))
    decided.overrides = ov.keep(decided.overrides)
    exclude_packages(decided.plan, list(exclude))
    decided.overrides = ov.without_excluded(decided.overrides, decided.plan)


def plan_json(decided: Decided) -> dict[str, Any]:
    extra = {
        "overrides": [b.to_json() for b in decided.overrides],
        "overrides_file": str(decided.overrides_file) if decided.overrides_file else None,
    }
    return plan_document(decided.plan, extra)


def write_plan_dir(directory: Path, result: ScanResult, decided: Decided | None) -> list[Path]:
    """Pretty-printed ``scan-by-project.json`` (and ``cross-project-plan.json`` with the
    registry metadata of the packages that move, ``package-metadata.json``)."""
    from tether.fsio import atomic_write

    written = []
    documents = [(SCAN_FILE, plan_folder_shape(scan_document(result)))]
    if decided is not None:
        plan = plan_json(decided)
        documents.append((PLAN_FILE, plan_folder_shape(plan)))
        documents.append((METADATA_FILE, metadata_document(plan, result.infos)))
    for name, doc in documents:
        path = directory / name
        atomic_write(path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode())
        written.append(path)
    return written


def execute(
    decided: Decided,
    options: ApplyOptions,
    folder: RunFolder,
    progress: Callable[[str], None],
    owed: Sequence[Owed] = (),
    go_on: GoOn | None = None,
) -> ApplyRun:
    """Apply: each project's install is noted as owed before its manifests are written and
    cleared (from every run that owed it) once it succeeded (``tether.deps.owed``)."""
    works = works_from_plan(decided.plan, decided.overrides, owed_commands(owed))
    return apply_projects(works, options, folder, progress, go_on)


def owed_commands(owed: Sequence[Owed]) -> dict[str, list[list[str]]]:
    return {o.name: [list(c) for c in o.commands] for o in owed}


# Why a run has nothing to apply (``nothing_to_apply`` in the apply document).
NO_UPDATES = "no-updates"  # no package moves anywhere at this level (after the policy)
ALL_SKIPPED_BY_OVERRIDE = "skipped-by-override"  # every one that moves is skip-matched
ALL_EXCLUDED = "excluded"  # the person left out every one that was left


def nothing_reason(decided: Decided) -> str:
    moving = [p for p in decided.plan.packages if any(o.changes for o in p.occurrences)]
    if not moving:
        return NO_UPDATES
    if all((p.skipped_by or "").startswith("override:") for p in moving):
        return ALL_SKIPPED_BY_OVERRIDE
    return ALL_EXCLUDED


def has_work(decided: Decided, owed: Sequence[Owed] = ()) -> bool:
    return bool(works_from_plan(decided.plan, decided.overrides, owed_commands(owed)))
