"""The ``engines`` level: one Node version and one version per package manager for the run.

Targets: Node → the newest LTS release of a release index (nodejs.org's ``index.json``
shape, from a URL or a file); pnpm, npm, yarn and bun → their newest stable release on the
npm registry (yarn 2+ is published as ``@yarnpkg/cli-dist``). Every project's runtime loci
converge to that one target: ``packageManager``, ``volta``, ``.nvmrc``, ``.node-version``,
``.tool-versions``, and ``engines`` — but only in a private package: a published library's
``engines`` is a support range its users rely on, never a runtime pin. A locus is never
moved down, and each keeps its precision (``20`` becomes ``22``, ``v20.11.1`` ``v22.11.0``).
Dockerfiles, CI, mise, ``devEngines`` and ``.bun-version`` are read by ``tether.deps.surfaces``.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tether.deps import npmspec
from tether.deps.manifests import (
    ProjectFiles,
    ProjectScan,
    ScanError,
    detect_package_manager,
    read_lines,
    read_release_gates,
)
from tether.deps.manifests import split_package_manager as _split_pm
from tether.deps.model import (
    Declared,
    LeftAlone,
    Locus,
    Occurrence,
    PackageInfo,
    Release,
    Resolved,
    Skipped,
    Unmovable,
)
from tether.deps.registries import Fetcher, FetchError, HttpClient, parse_time
from tether.deps.scan import ScanResult, policy_for
from tether.deps.surfaces import (
    LEFT_AS_IS,
    TOOLS,
    engine_declared,
    read_dev_engines,
    read_surfaces,
)
from tether.deps.targets import AgePolicy, pick
from tether.fsio import read_bytes
from tether.parselimits import json_loads
from tether.report.deps import (
    NO_RUNTIME_VERSION,
    left_alone,
    no_engine_target_warning,
    pinned_above_warning,
    pinned_apart_warning,
    yarn_migration_warning,
)
from tether.runs.selection import Member

DEFAULT_NODE_INDEX = "https://nodejs.org/dist/index.json"
_TOOL_VERSIONS_NAMES = {
    "nodejs": "node",
    "node": "node",
    "npm": "npm",
    "pnpm": "pnpm",
    "yarn": "yarn",
    "bun": "bun",
}
_VERSION_FILES = (".nvmrc", ".node-version")


# --- reading the loci --------------------------------------------------------------------


def floor_of(version: str) -> str:
    parts = [*version.split("."), "0", "0"][:3]
    return ".".join(parts)


def scan_engines_of(name: str, root: Path, monorepo_root: Path | None = None) -> ProjectScan:
    """``scan_engines`` in the shape of a project reader (runtime pins are read in the
    project's own folder, whatever workspace holds it)."""
    return scan_engines(name, root)


def scan_engines(name: str, root: Path) -> ProjectScan:
    scan = ProjectScan(name, root)
    files = ProjectFiles(root)
    try:
        _package_loci(scan, files)
        for rel in _VERSION_FILES:
            _version_file(scan, rel)
        _tool_versions(scan)
        read_surfaces(scan, _add_surface)
        detect_package_manager(scan, files)
        read_release_gates(scan, files)
    except ScanError as error:
        return ProjectScan(name, root, error=str(error))
    if not scan.files:
        scan.error = NO_RUNTIME_VERSION
    return scan


def _add(
    scan: ProjectScan, tool: str, text: str, locus: Locus, result: Declared | LeftAlone
) -> None:
    if isinstance(result, LeftAlone):
        reason = left_alone(result)
        scan.skipped.append(Skipped(scan.name, "engine", tool, text.strip(), locus, reason))
        return
    occurrence = Occurrence(
        scan.name, "engine", tool, result, locus, None, floor_of(result.version)
    )
    scan.occurrences.append(occurrence)


def _add_surface(
    scan: ProjectScan, tool: str, text: str, locus: Locus, result: Declared | LeftAlone
) -> None:
    """A surface's pin converges like any locus; anything else is listed as left as is."""
    if isinstance(result, LeftAlone):
        reason = left_alone(result)
        skipped = Skipped(scan.name, "engine", tool, text.strip(), locus, reason, LEFT_AS_IS)
        scan.skipped.append(skipped)
        return
    _add(scan, tool, text, locus, result)


def _package_loci(scan: ProjectScan, files: ProjectFiles) -> None:
    manifests = ["package.json", *files.workspace_manifests()]
    for rel in manifests:
        doc = files.doc(rel, "json")
        if doc is None:
            continue
        scan.files.append(rel)
        if rel == "package.json":
            _package_manager(scan, rel, doc)
            _tool_map(scan, rel, doc, "volta")
            read_dev_engines(scan, rel, doc, _add_surface)
        if doc.get("private") is True:
            _tool_map(scan, rel, doc, "engines")
        elif isinstance(doc.get("engines"), dict):
            for tool, value in doc["engines"].items():
                if tool in TOOLS:
                    locus = Locus(rel, f"engines.{tool}", "json", ("engines", tool))
                    reason = left_alone(LeftAlone(Unmovable.PUBLISHED_ENGINES))
                    scan.skipped.append(
                        Skipped(
                            scan.name,
                            "engine",
                            tool,
                            str(value),
                            locus,
                            reason,
                            "published-engines",
                        )
                    )


def _package_manager(scan: ProjectScan, rel: str, doc: dict[str, Any]) -> None:
    value = doc.get("packageManager")
    if isinstance(value, str):
        tool, result = _split_pm(value)
        _add(scan, tool, value, Locus(rel, "packageManager", "json", ("packageManager",)), result)


def _tool_map(scan: ProjectScan, rel: str, doc: dict[str, Any], section: str) -> None:
    entries = doc.get(section)
    if not isinstance(entries, dict):
        return
    for tool, value in entries.items():
        if tool not in TOOLS or not isinstance(value, str):
            continue
        locus = Locus(rel, f"{section}.{tool}", "json", (section, tool))
        _add(scan, tool, value, locus, engine_declared(value))


def _version_file(scan: ProjectScan, rel: str) -> None:
    lines = read_lines(scan, rel)
    if lines is None:
        return
    for index, line in enumerate(lines):
        if line.strip() and not line.strip().startswith("#"):
            locus = Locus(rel, rel, "text", (index,))
            _add(scan, "node", line, locus, engine_declared(line))
            return


def _tool_versions(scan: ProjectScan) -> None:
    rel = ".tool-versions"
    lines = read_lines(scan, rel)
    for index, line in enumerate(lines or []):
        body = line.partition("#")[0]
        fields = body.split()
        if len(fields) < 2 or fields[0] not in _TOOL_VERSIONS_NAMES:
            continue
        tool = _TOOL_VERSIONS_NAMES[fields[0]]
        locus = Locus(rel, f"{rel} {fields[0]}", "text", (index,))
        if len(fields) > 2:
            _add(scan, tool, line, locus, LeftAlone(Unmovable.SEVERAL_ON_A_LINE))
            continue
        # Everything but the version stays: the tool's name, spacing, a trailing comment.
        start = body.index(fields[1], len(fields[0]))
        result = engine_declared(fields[1])
        if isinstance(result, Declared):
            result = Declared(
                line[:start],
                result.op,
                result.version,
                line[start + len(fields[1]) :],
                result.precision,
            )
        _add(scan, tool, line, locus, result)


# --- targets -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeIndex:
    """Where Node's release list comes from: a URL or a file of ``index.json``'s shape."""

    location: str = DEFAULT_NODE_INDEX
    client: HttpClient | None = None

    def fetch(self) -> PackageInfo:
        doc = self._load()
        if not isinstance(doc, list):
            raise FetchError(f"{self.location}: not a Node release index")
        releases = []
        for entry in doc:
            if not isinstance(entry, dict) or not entry.get("lts"):
                continue  # only LTS lines are targets
            version = str(entry.get("version", "")).lstrip("v")
            if npmspec.valid(version):
                releases.append(Release(version, parse_time(entry.get("date"))))
        return PackageInfo("engine", "node", tuple(releases), None)

    def _load(self) -> Any:
        parsed = urllib.parse.urlparse(self.location)
        if parsed.scheme in ("http", "https"):
            found = (self.client or HttpClient()).get_json(self.location)
            if found is None:
                raise FetchError(f"{self.location}: not found")
            return found
        path = Path(parsed.path if parsed.scheme == "file" else self.location)
        try:
            return json_loads(read_bytes(path))
        except (OSError, json.JSONDecodeError) as error:
            raise FetchError(f"{path}: {error}") from None


def _registry_name(tool: str, occurrences: Sequence[Occurrence]) -> str:
    modern_yarn = any(
        o.name == "yarn" and npmspec.parts(o.min_version)[0] >= 2 for o in occurrences
    )
    return "@yarnpkg/cli-dist" if tool == "yarn" and modern_yarn else tool


def engine_targets(
    occurrences: Sequence[Occurrence],
    fetcher: Fetcher,
    node_index: NodeIndex,
    policy: AgePolicy,
    now: datetime,
) -> tuple[dict[str, str | None], list[str]]:
    """One target per engine in use (None: unknown), and warnings."""
    tools = list(dict.fromkeys(o.name for o in occurrences))
    warnings: list[str] = []
    infos: dict[str, PackageInfo | None] = {}
    names = {t: _registry_name(t, occurrences) for t in tools if t != "node"}
    answers = fetcher.fetch_all([("npm", n) for n in names.values()])
    for tool, name in names.items():
        answer = answers[("npm", name)]
        infos[tool] = answer.info
        if answer.info is None:
            warnings.append(no_engine_target_warning(tool, answer.error or f"{name} not found"))
    if "node" in tools:
        try:
            infos["node"] = node_index.fetch()
        except FetchError as error:
            infos["node"] = None
            warnings.append(no_engine_target_warning("node", str(error)))
    targets = {
        tool: pick(info, "0.0.0", "major", policy, now) if info is not None else None
        for tool, info in infos.items()
    }
    return targets, warnings


def scan_engines_projects(
    members: Sequence[Member],
    fetcher: Fetcher,
    node_index: NodeIndex,
    now: datetime,
    min_release_age: timedelta | None = None,
    converge: bool = False,
    reader: Callable[[str, Path, Path | None], ProjectScan] | None = None,
) -> ScanResult:
    """``converge``: a pin above the run's target moves down to it too (asked for: by
    default it is surfaced and left higher). ``reader`` scans one project (name, folder,
    monorepo root); by default ``scan_engines`` reads its folder."""
    read = reader or scan_engines_of
    projects = [read(m.name, m.path, m.monorepo_root) for m in members]
    result = ScanResult("engines", projects, now=now)
    result.registries = {eco: s.describe() for eco, s in fetcher.sources.items()}
    result.registries["node"] = node_index.location
    occurrences = [o for p in result.scanned for o in p.occurrences]
    # One target for the whole run, so the strictest cooldown of any project holds.
    ages = [a for a in [min_release_age, *(p.release_age for p in result.scanned)] if a]
    policy = AgePolicy(max(ages) if ages else None)
    targets, warnings = engine_targets(occurrences, fetcher, node_index, policy, now)
    for project in result.scanned:
        result.policies[project.name] = policy_for(project, min_release_age)
        result.resolved[project.name] = [
            _converge(o, targets.get(o.name), result, converge) for o in project.occurrences
        ]
        result.skipped += project.skipped
        result.warnings += project.warnings
        result.warnings += misaligned(project, targets)
    result.warnings += warnings
    return result


def misaligned(project: ProjectScan, targets: dict[str, str | None]) -> list[str]:
    """Pins of one tool that disagree inside one project (another major, or two different
    full versions): reported, and converged with every other locus."""
    lines = []
    for tool in dict.fromkeys(o.name for o in project.occurrences):
        pins = [
            o for o in project.occurrences if o.name == tool and o.declared.op in ("", "v", "=")
        ]
        majors = {npmspec.parts(o.min_version)[0] for o in pins}
        full = {o.declared.version for o in pins if o.declared.precision == 3}
        if len(majors) < 2 and len(full) < 2:
            continue
        pinned = [(o.declared.shown, o.locus.source_file) for o in pins]
        lines.append(pinned_apart_warning(project.name, tool, pinned, targets.get(tool)))
    return lines


def _converge(
    occurrence: Occurrence, target: str | None, result: ScanResult, down: bool = False
) -> Resolved:
    if target is None:
        return Resolved(occurrence, None)
    if npmspec.compare(occurrence.min_version, target) > 0:
        result.warnings.append(pinned_above_warning(occurrence, target, down))
        return Resolved(occurrence, target if down else None)
    if occurrence.name == "yarn" and _crosses_yarn_2(occurrence.min_version, target):
        result.warnings.append(yarn_migration_warning(occurrence, target))
        return Resolved(occurrence, None)
    resolved = Resolved(occurrence, target)
    if resolved.target_declared.raw == occurrence.declared.raw:
        return Resolved(occurrence, None)
    return resolved


def _crosses_yarn_2(current: str, target: str) -> bool:
    return npmspec.parts(current)[0] < 2 <= npmspec.parts(target)[0]
