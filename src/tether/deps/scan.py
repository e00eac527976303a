"""Scan the selected projects: read every manifest, fetch each package once, resolve targets.

The projects are read first (local files only), then every package named anywhere is
fetched in one batch, so a package used by fifty projects costs one request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tether import progress
from tether.deps.manifests import ProjectScan, scan_dependencies
from tether.deps.model import Level, Occurrence, PackageInfo, Resolved, Skipped
from tether.deps.registries import Answer, Fetcher, Key
from tether.deps.targets import AgePolicy, resolve
from tether.report.deps import (
    managers_mixed_warning,
    not_fetched_reason,
    not_fetched_warning,
    unreachable_line,
)
from tether.runs.sections import path_missing
from tether.runs.selection import Member


@dataclass
class ScanResult:
    level: Level
    projects: list[ProjectScan]  # scanned, registry order (failed ones included)
    resolved: dict[str, list[Resolved]] = field(default_factory=dict)  # by project name
    missing: list[Member] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # every project's, in order
    warnings: list[str] = field(default_factory=list)
    infos: dict[Key, PackageInfo] = field(default_factory=dict)
    policies: dict[str, AgePolicy] = field(default_factory=dict)  # by project name
    registries: dict[str, str] = field(default_factory=dict)
    now: datetime | None = None
    # How far each version moves (npm-check-updates' ``--target``); None: the level. The
    # level names the run (its branch, plan folder and summary).
    target: Level | None = None

    @property
    def window(self) -> Level:
        """The level whose window every target is chosen from (and alignment stays in)."""
        return self.target or self.level

    @property
    def scanned(self) -> list[ProjectScan]:
        return [p for p in self.projects if p.error is None]

    @property
    def failed(self) -> list[ProjectScan]:
        return [p for p in self.projects if p.error is not None]


def policy_for(project: ProjectScan, flag: timedelta | None) -> AgePolicy:
    return AgePolicy(flag, tuple(project.release_gates))


def scan_projects(
    members: Sequence[Member],
    level: Level,
    fetcher: Fetcher,
    now: datetime,
    min_release_age: timedelta | None = None,
    reader: Callable[[str, Path, Path | None], ProjectScan] = scan_dependencies,
    target: Level | None = None,
) -> ScanResult:
    projects = [
        reader(m.name, m.path, m.monorepo_root)
        for m in progress.tracked("reading projects", members, "projects")
    ]
    result = ScanResult(level, projects, now=now, target=target)
    result.registries = {eco: s.describe() for eco, s in fetcher.sources.items()}
    asked = len({(o.ecosystem, o.name) for p in result.scanned for o in p.occurrences})
    with progress.phase("asking the registries", None, "packages") as step:
        answers = _fetch(fetcher, result.scanned)
        step.advance(asked)
    for project in result.scanned:
        result.infos.update((k, a.info) for k, a in answers[project.name].items() if a.info)
    for project in result.scanned:
        result.policies[project.name] = policy_for(project, min_release_age)
        result.resolved[project.name] = _resolve_project(
            project, answers[project.name], result, result.window, now
        )
        result.warnings += project.warnings
    result.warnings += _unknown_warnings(result.skipped, result.registries)
    result.warnings += _manager_mix(result.scanned)
    return result


def config_folders(project: ProjectScan) -> list[Path]:
    """Where the project's own registry configuration lives, outermost first."""
    return [f for f in (project.workspace_root, project.root) if f is not None]


def _fetch(fetcher: Fetcher, projects: Sequence[ProjectScan]) -> dict[str, dict[Key, Answer]]:
    """Every project's packages in one batch, each asked of that project's registries."""
    requests = []
    for project in projects:
        sources = fetcher.sources_for(config_folders(project))
        requests += [(project.name, sources, (o.ecosystem, o.name)) for o in project.occurrences]
    asked = fetcher.fetch_routed([(sources, key) for _, sources, key in requests])
    answers: dict[str, dict[Key, Answer]] = {p.name: {} for p in projects}
    for (name, _, key), answer in zip(requests, asked, strict=True):
        answers[name][key] = answer
    return answers


def _resolve_project(
    project: ProjectScan,
    answers: dict[Key, Answer],
    result: ScanResult,
    level: Level,
    now: datetime,
) -> list[Resolved]:
    policy = result.policies[project.name]
    resolved = []
    for occurrence in project.occurrences:
        answer = answers[(occurrence.ecosystem, occurrence.name)]
        if answer.info is None:
            result.skipped.append(_not_fetched(occurrence, answer))
            continue
        resolved.append(resolve(occurrence, answer.info, level, policy, now))
    result.skipped += project.skipped
    return resolved


def _not_fetched(occurrence: Occurrence, answer: Answer) -> Skipped:
    kind = "unknown-package" if answer.unknown else "registry-error"
    reason = not_fetched_reason(answer.unknown, occurrence.ecosystem, answer.error)
    return Skipped(
        occurrence.project,
        occurrence.ecosystem,
        occurrence.name,
        occurrence.declared.shown,
        occurrence.locus,
        reason,
        kind,
    )


def unreachable(result: ScanResult) -> list[Skipped]:
    """The occurrences whose registry could not be asked (not: did not know the package)."""
    return [s for s in result.skipped if s.kind == "registry-error"]


def unreachable_error(result: ScanResult) -> str | None:
    """One line naming what could not be asked and why, or None when every registry
    answered: a plan missing those packages' updates must not read as "nothing to do"."""
    failed = unreachable(result)
    return unreachable_line(failed) if failed else None


def _unknown_warnings(skipped: list[Skipped], registries: dict[str, str]) -> list[str]:
    """One warning per unknown or unreachable package, naming the projects using it."""
    users: dict[tuple[str, str, str], list[str]] = {}
    for item in skipped:
        if item.kind in ("unknown-package", "registry-error"):
            key = (item.kind, item.ecosystem, item.name)
            users.setdefault(key, [])
            if item.project not in users[key]:
                users[key].append(item.project)
    return [
        not_fetched_warning(kind, name, ecosystem, registries.get(ecosystem, ecosystem), projects)
        for (kind, ecosystem, name), projects in users.items()
    ]


def _manager_mix(projects: list[ProjectScan]) -> list[str]:
    counts: dict[str, int] = {}
    for project in projects:
        if project.package_manager:
            counts[project.package_manager] = counts.get(project.package_manager, 0) + 1
    if len(counts) < 2:
        return []
    return [managers_mixed_warning(counts)]


# --- JSON --------------------------------------------------------------------------------


def occurrence_json(resolved: Resolved) -> dict[str, Any]:
    occurrence = resolved.occurrence
    out: dict[str, Any] = {
        "name": occurrence.name,
        "ecosystem": occurrence.ecosystem,
        "current_version": occurrence.declared.shown,
        "target_version": resolved.target_declared.shown,
        "update": resolved.target is not None,
        "location": occurrence.locus.location,
        "source_file": occurrence.locus.source_file,
        "skipped_by_release_age": resolved.held_back is not None,
    }
    if occurrence.catalog:
        out["catalog"] = occurrence.catalog
    return out


def held_back_json(resolved: Resolved) -> dict[str, Any]:
    """One version a release-age gate held back: where, what it was held at, and why."""
    occurrence = resolved.occurrence
    assert resolved.held_back is not None
    return {
        "project_name": occurrence.project,
        "ecosystem": occurrence.ecosystem,
        "name": occurrence.name,
        "current_version": occurrence.declared.shown,
        "target_version": resolved.target_declared.shown,
        "held_back_version": resolved.held_back.version,
        "location": occurrence.locus.location,
        "source_file": occurrence.locus.source_file,
        "reason": resolved.held_back.reason,
    }


def scan_document(result: ScanResult) -> dict[str, Any]:
    """``scan-by-project.json``: every project's occurrences with their own targets."""
    projects = []
    for project in result.projects:
        entry: dict[str, Any] = {"name": project.name, "project_dir": str(project.root)}
        if project.error is not None:
            entry["error"] = project.error
        else:
            entry["package_manager"] = project.package_manager
            entry["package_manager_source"] = project.package_manager_source
            if project.workspace_root is not None:
                entry["workspace_root"] = str(project.workspace_root)
            entry["files"] = project.files
            entry["dependencies"] = [occurrence_json(r) for r in result.resolved[project.name]]
            entry["skipped"] = [s.to_json() for s in result.skipped if s.project == project.name]
        projects.append(entry)
    return {
        "level": result.level,
        "target": result.window,
        "registries": result.registries,
        "projects": projects,
        **common_sections(result),
    }


def common_sections(result: ScanResult) -> dict[str, Any]:
    return {
        "scan_failed": [
            {"name": p.name, "project_dir": str(p.root), "error": p.error} for p in result.failed
        ],
        "skipped_path_missing": path_missing(result.missing),
        "skipped": [s.to_json() for s in result.skipped],
        "skipped_by_release_age": [
            held_back_json(r)
            for project in result.scanned
            for r in result.resolved.get(project.name, [])
            if r.held_back is not None
        ],
        "warnings": list(result.warnings),
    }
