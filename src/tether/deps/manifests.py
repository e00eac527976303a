"""Read one project's manifests into occurrences: no network, no writes.

npm: ``dependencies``, ``devDependencies``, ``optionalDependencies`` and ``packageManager``
of the root package.json and of every workspace package (``workspaces`` in package.json,
``packages`` in pnpm-workspace.yaml); pnpm catalogs (``catalog`` and each
``catalogs.<name>``, a named catalog keeping its own name so it is aligned apart from the
default line); Python: ``project.dependencies`` and every ``project.optional-dependencies``
group of pyproject.toml. ``peerDependencies`` are a library's promise to its users, never a
bump target, so they are not read.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from tether.deps import npmspec, pyspec
from tether.deps.model import Declared, Locus, Occurrence, Skipped
from tether.fsio import read_bytes

Format = Literal["json", "yaml", "toml"]
NPM_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
PNPM_WORKSPACE = "pnpm-workspace.yaml"
# Lockfile → package manager, in the order used when several are present.
LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
)
PYTHON_LOCKS = (("uv.lock", "uv"), ("poetry.lock", "poetry"), ("pdm.lock", "pdm"))
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")


class ScanError(Exception):
    """A manifest that cannot be read: the whole project is reported as scan-failed."""


@dataclass
class ProjectScan:
    name: str
    root: Path
    occurrences: list[Occurrence] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # manifests read, relative POSIX paths
    package_manager: str | None = None
    package_manager_source: str = ""  # the lockfile, "packageManager", or "default"
    python_tool: str | None = None  # uv / poetry / pdm, from the lockfile
    release_age: timedelta | None = None  # pnpm's minimumReleaseAge
    release_age_exclude: tuple[str, ...] = ()
    error: str | None = None


class ProjectFiles:
    """A project's manifests, each read and parsed once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._docs: dict[str, dict[str, Any] | None] = {}

    def doc(self, rel: str, fmt: Format) -> dict[str, Any] | None:
        if rel not in self._docs:
            self._docs[rel] = _read(self.root, rel, fmt)
        return self._docs[rel]

    def workspace_manifests(self) -> list[str]:
        """package.json of every workspace package (not the root), sorted."""
        patterns = _npm_workspaces(self.doc("package.json", "json"))
        pnpm = self.doc(PNPM_WORKSPACE, "yaml")
        if pnpm is not None and isinstance(pnpm.get("packages"), list):
            patterns += [str(p) for p in pnpm["packages"]]
        return expand_workspaces(self.root, patterns)


def _read(root: Path, rel: str, fmt: Format) -> dict[str, Any] | None:
    from tether.engine.structured.formats import ParseProblem, decode, parse

    try:
        data = read_bytes(root / rel)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ScanError(f"{rel}: cannot read: {error.strerror}") from None
    try:
        return parse(fmt, decode(data).body)
    except ParseProblem as problem:
        raise ScanError(f"{rel}: {problem}") from None


def _npm_workspaces(package: dict[str, Any] | None) -> list[str]:
    if package is None:
        return []
    found = package.get("workspaces")
    if isinstance(found, dict):
        found = found.get("packages")
    return [str(p) for p in found] if isinstance(found, list) else []


def expand_workspaces(root: Path, patterns: list[str]) -> list[str]:
    include = [_clean(p) for p in patterns if not p.startswith("!")]
    exclude = [_clean(p[1:]) for p in patterns if p.startswith("!")]
    found: set[str] = set()
    for pattern in include:
        for folder in root.glob(pattern):
            rel = folder.relative_to(root).as_posix()
            if "node_modules" in folder.relative_to(root).parts or rel == ".":
                continue
            if any(fnmatch.fnmatchcase(rel, p) for p in exclude):
                continue
            if (folder / "package.json").is_file():
                found.add(f"{rel}/package.json")
    return sorted(found)


def _clean(pattern: str) -> str:
    return pattern.strip().removeprefix("./").strip("/")


def detect_package_manager(scan: ProjectScan, files: ProjectFiles) -> None:
    root = scan.root
    locked = list(dict.fromkeys(pm for name, pm in LOCKFILES if (root / name).exists()))
    declared = _declared_manager(files.doc("package.json", "json"))
    if len(locked) > 1:
        scan.warnings.append(
            f"{scan.name}: mixed package managers: lockfiles of {', '.join(locked)}"
        )
    if declared and locked and declared not in locked:
        scan.warnings.append(
            f"{scan.name}: packageManager names {declared} but the lockfile is {locked[0]}'s"
        )
    if declared and (declared in locked or not locked):
        scan.package_manager, scan.package_manager_source = declared, "packageManager"
    elif locked:
        lockfile = next(
            name for name, pm in LOCKFILES if pm == locked[0] and (root / name).exists()
        )
        scan.package_manager, scan.package_manager_source = locked[0], lockfile
    elif files.doc("package.json", "json") is not None:
        scan.package_manager, scan.package_manager_source = "npm", "default"
    scan.python_tool = next((tool for name, tool in PYTHON_LOCKS if (root / name).exists()), None)


def _declared_manager(package: dict[str, Any] | None) -> str | None:
    value = package.get("packageManager") if package else None
    if not isinstance(value, str):
        return None
    name = value.split("@", 1)[0]
    return name if name in PACKAGE_MANAGERS else None


def split_package_manager(value: str) -> tuple[str, Declared | str]:
    """``pnpm@9.1.0+sha512.…`` → (``pnpm``, its declaration); the hash goes on rewrite."""
    name, at, rest = value.partition("@")
    if not at or not name:
        return value, "packageManager is not name@version"
    version, plus, digest = rest.partition("+")
    if not npmspec.valid(version) or version != version.strip():
        return name, "packageManager version is not a full semver version"
    return name, Declared(
        prefix=f"{name}@", op="", version=version, suffix=plus + digest, drop_suffix=True
    )


# --- occurrences -------------------------------------------------------------------------


def _add(
    scan: ProjectScan,
    ecosystem: Any,
    name: str,
    result: Declared | str,
    locus: Locus,
    current: str,
    catalog: str | None = None,
) -> None:
    if isinstance(result, str):
        scan.skipped.append(Skipped(scan.name, ecosystem, name, current, locus, result))
        return
    scan.occurrences.append(
        Occurrence(scan.name, ecosystem, name, result, locus, catalog, result.version)
    )


def read_package_json(scan: ProjectScan, rel: str, doc: dict[str, Any], is_root: bool) -> None:
    for section in NPM_SECTIONS:
        entries = doc.get(section)
        if not isinstance(entries, dict):
            continue
        for name, spec in entries.items():
            locus = Locus(rel, section, "json", (section, name))
            _npm_entry(scan, name, spec, locus)
    manager = doc.get("packageManager")
    if is_root and isinstance(manager, str):
        name, result = split_package_manager(manager)
        _add(
            scan,
            "npm",
            name,
            result,
            Locus(rel, "packageManager", "json", ("packageManager",)),
            manager,
        )


def _npm_entry(
    scan: ProjectScan, name: str, spec: Any, locus: Locus, catalog: str | None = None
) -> None:
    if not isinstance(spec, str):
        _add(scan, "npm", name, "not a string", locus, str(spec), catalog)
        return
    kind = npmspec.reference_kind(spec)
    if kind in ("workspace reference", "catalog reference"):
        return  # the workspace package or catalog entry is read itself
    _add(scan, "npm", name, npmspec.classify(spec), locus, spec, catalog)


def read_pnpm_workspace(scan: ProjectScan, doc: dict[str, Any]) -> None:
    default = doc.get("catalog")
    if isinstance(default, dict):
        for name, spec in default.items():
            _npm_entry(
                scan, str(name), spec, Locus(PNPM_WORKSPACE, "catalog", "yaml", ("catalog", name))
            )
    named = doc.get("catalogs")
    if isinstance(named, dict):
        for catalog, entries in named.items():
            if not isinstance(entries, dict):
                continue
            # pnpm treats catalogs.default as the default catalog: same version line.
            line = None if catalog == "default" else str(catalog)
            for name, spec in entries.items():
                locus = Locus(
                    PNPM_WORKSPACE, f"catalogs.{catalog}", "yaml", ("catalogs", catalog, name)
                )
                _npm_entry(scan, str(name), spec, locus, line)
    _release_age(scan, doc)


def _release_age(scan: ProjectScan, doc: dict[str, Any]) -> None:
    minutes = doc.get("minimumReleaseAge")
    if isinstance(minutes, int) and not isinstance(minutes, bool) and minutes > 0:
        scan.release_age = timedelta(minutes=minutes)
    exclude = doc.get("minimumReleaseAgeExclude")
    if isinstance(exclude, list):
        scan.release_age_exclude = tuple(str(p) for p in exclude)


def read_pyproject(scan: ProjectScan, doc: dict[str, Any]) -> None:
    project = doc.get("project")
    if not isinstance(project, dict):
        return
    groups: list[tuple[str, tuple[str | int, ...], Any]] = [
        ("project.dependencies", ("project", "dependencies"), project.get("dependencies"))
    ]
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for group, entries in extras.items():
            groups.append(
                (
                    f"project.optional-dependencies.{group}",
                    ("project", "optional-dependencies", group),
                    entries,
                )
            )
    for location, path, entries in groups:
        if not isinstance(entries, list):
            continue
        for index, requirement in enumerate(entries):
            if not isinstance(requirement, str):
                continue
            name, result = pyspec.classify(requirement)
            locus = Locus("pyproject.toml", location, "toml", (*path, index))
            _add(scan, "pypi", name, result, locus, requirement)


def scan_dependencies(name: str, root: Path) -> ProjectScan:
    """Every occurrence of a patch/minor/major scan; a broken manifest fails the project."""
    scan = ProjectScan(name, root)
    files = ProjectFiles(root)
    try:
        _collect(scan, files)
    except ScanError as error:
        return ProjectScan(name, root, error=str(error))
    if not scan.files:
        scan.error = "no package.json, pnpm-workspace.yaml or pyproject.toml"
    return scan


def _collect(scan: ProjectScan, files: ProjectFiles) -> None:
    root_package = files.doc("package.json", "json")
    if root_package is not None:
        scan.files.append("package.json")
        read_package_json(scan, "package.json", root_package, is_root=True)
    pnpm = files.doc(PNPM_WORKSPACE, "yaml")
    if pnpm is not None:
        scan.files.append(PNPM_WORKSPACE)
        read_pnpm_workspace(scan, pnpm)
    for rel in files.workspace_manifests():
        doc = files.doc(rel, "json")
        if doc is not None:
            scan.files.append(rel)
            read_package_json(scan, rel, doc, is_root=False)
    pyproject = files.doc("pyproject.toml", "toml")
    if pyproject is not None:
        scan.files.append("pyproject.toml")
        read_pyproject(scan, pyproject)
    detect_package_manager(scan, files)
