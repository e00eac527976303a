"""Read one project's manifests into occurrences: no network, no writes.

npm: ``dependencies``, ``devDependencies``, ``optionalDependencies`` and ``packageManager``
of the root package.json and of every workspace package (``workspaces`` in package.json,
``packages`` in pnpm-workspace.yaml); catalogs (pnpm-workspace.yaml's, and Bun's in the root
package.json: ``catalog`` and each ``catalogs.<name>``, a named catalog keeping its own name
so it is aligned apart from the default line). A project that is one package of a workspace
(``tether.deps.workspace``) is read from the workspace root: its own package.json, the
catalog entries its ``catalog:`` references name, and the root's lockfile decides its package
manager; every path is then relative to the workspace root. A ``catalog:`` reference no
catalog holds is a warning. Python: ``project.dependencies`` and every
``project.optional-dependencies`` group of pyproject.toml. ``peerDependencies`` are a
library's promise to its users, never a bump target, so they are not read.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from tether import git
from tether.deps import npmspec, pyspec, release_gates
from tether.deps.model import (
    Declared,
    LeftAlone,
    Locus,
    Occurrence,
    ReleaseGate,
    Skipped,
    Unmovable,
)
from tether.deps.workspace import PNPM_WORKSPACE, bun_catalogs, workspace_patterns
from tether.fsio import cannot_read, read_bytes
from tether.report.deps import (
    NO_MANIFEST,
    catalog_missing_warning,
    left_alone,
    lockfiles_mixed_warning,
    manager_not_locked_warning,
)

Format = Literal["json", "yaml", "toml"]
NPM_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
# Lockfile → package manager, in the order used when several are present.
LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
    ("deno.lock", "deno"),
)
PYTHON_LOCKS = (("uv.lock", "uv"), ("poetry.lock", "poetry"), ("pdm.lock", "pdm"))
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun", "deno")


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
    # Release-age gates of the project's own configuration (``tether.deps.release_gates``).
    release_gates: list[ReleaseGate] = field(default_factory=list)
    error: str | None = None
    # A workspace package: the workspace root, where paths start and the install runs.
    workspace_root: Path | None = None
    # ``catalog:`` references: (package, catalog name, the manifest naming it).
    catalog_refs: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def release_age(self) -> timedelta | None:
        """The strictest of the project's own gates (for rules that ignore exclusions)."""
        return max((g.age for g in self.release_gates), default=None)

    @property
    def edit_root(self) -> Path:
        return self.workspace_root or self.root


class ProjectFiles:
    """A project's manifests, each read and parsed once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._docs: dict[str, dict[str, Any] | None] = {}

    def doc(self, rel: str, fmt: Format) -> dict[str, Any] | None:
        if rel not in self._docs:
            self._docs[rel] = read_doc(self.root, rel, fmt)
        return self._docs[rel]

    def workspace_manifests(self) -> list[str]:
        """package.json of every workspace package (not the root), sorted."""
        patterns = workspace_patterns(
            self.doc("package.json", "json"), self.doc(PNPM_WORKSPACE, "yaml")
        )
        return expand_workspaces(self.root, patterns)


def read_doc(root: Path, rel: str, fmt: Format) -> dict[str, Any] | None:
    from tether.engine.structured.formats import ParseProblem, decode, parse

    try:
        data = read_bytes(root / rel)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ScanError(cannot_read(rel, error)) from None
    try:
        return parse(fmt, decode(data).body)
    except ParseProblem as problem:
        raise ScanError(f"{rel}: {problem}") from None


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


def find_workspace_root(project: Path, monorepo_root: Path | None) -> Path | None:
    """The workspace root holding ``project`` (never ``project`` itself), or None: the
    record's ``monorepoRoot`` when set; otherwise the nearest folder above the project, up to
    the git top level, whose workspace patterns include the project."""
    if monorepo_root is not None:
        found = monorepo_root.resolve()
        return found if found != project.resolve() and found.is_dir() else None
    here = project.resolve()
    top = git.work_tree_top(here)
    if top is None or here == top.resolve():
        return None
    for folder in here.parents:
        if _includes(folder, here):
            return folder
        if folder == top.resolve():
            return None
    return None


def _includes(folder: Path, project: Path) -> bool:
    try:
        patterns = workspace_patterns(
            read_doc(folder, "package.json", "json"), read_doc(folder, PNPM_WORKSPACE, "yaml")
        )
    except ScanError:
        return False
    if not patterns:
        return False
    rel = project.relative_to(folder).as_posix()
    return f"{rel}/package.json" in expand_workspaces(folder, patterns)


def _clean(pattern: str) -> str:
    return pattern.strip().removeprefix("./").strip("/")


def detect_package_manager(scan: ProjectScan, files: ProjectFiles) -> None:
    root = files.root
    locked = list(dict.fromkeys(pm for name, pm in LOCKFILES if (root / name).exists()))
    declared = _declared_manager(files.doc("package.json", "json"))
    if len(locked) > 1:
        scan.warnings.append(lockfiles_mixed_warning(scan.name, locked))
    if declared and locked and declared not in locked:
        scan.warnings.append(manager_not_locked_warning(scan.name, declared, locked[0]))
    if declared and (declared in locked or not locked):
        scan.package_manager, scan.package_manager_source = declared, "packageManager"
    elif locked:
        lockfile = next(
            name for name, pm in LOCKFILES if pm == locked[0] and (root / name).exists()
        )
        scan.package_manager, scan.package_manager_source = locked[0], lockfile
    elif files.doc("package.json", "json") is not None:
        scan.package_manager, scan.package_manager_source = "npm", "default"
    python_roots = (scan.root, root)
    scan.python_tool = next(
        (tool for top in python_roots for name, tool in PYTHON_LOCKS if (top / name).exists()),
        None,
    )


def _declared_manager(package: dict[str, Any] | None) -> str | None:
    value = package.get("packageManager") if package else None
    if not isinstance(value, str):
        return None
    name = value.split("@", 1)[0]
    return name if name in PACKAGE_MANAGERS else None


def split_package_manager(value: str) -> tuple[str, Declared | LeftAlone]:
    """``pnpm@9.1.0+sha512.…`` → (``pnpm``, its declaration); the hash goes on rewrite."""
    name, at, rest = value.partition("@")
    if not at or not name:
        return value, LeftAlone(Unmovable.MANAGER_NOT_NAME_AT_VERSION)
    version, plus, digest = rest.partition("+")
    if not npmspec.valid(version) or version != version.strip():
        return name, LeftAlone(Unmovable.MANAGER_NOT_FULL_VERSION)
    return name, Declared(
        prefix=f"{name}@", op="", version=version, suffix=plus + digest, drop_suffix=True
    )


# --- occurrences -------------------------------------------------------------------------


def _add(
    scan: ProjectScan,
    ecosystem: Any,
    name: str,
    result: Declared | LeftAlone,
    locus: Locus,
    current: str,
    catalog: str | None = None,
) -> None:
    if isinstance(result, LeftAlone):
        reason = left_alone(result)
        scan.skipped.append(Skipped(scan.name, ecosystem, name, current, locus, reason))
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
        _add(scan, "npm", name, LeftAlone(Unmovable.NOT_A_STRING), locus, str(spec), catalog)
        return
    kind = npmspec.reference_kind(spec)
    if kind == "catalog reference":
        catalog = spec.removeprefix("catalog:").strip() or "default"
        scan.catalog_refs.append((name, catalog, locus.source_file))
        return  # the catalog entry is read itself
    if kind == "workspace reference":
        return  # the workspace package is read itself
    _add(scan, "npm", name, npmspec.classify(spec), locus, spec, catalog)


Catalog = tuple[str, str, Format, tuple[str, ...], dict[str, Any]]  # name, file, …


def catalogs(files: ProjectFiles) -> list[Catalog]:
    """Every catalog of a workspace root: (catalog name, file, format, key path, entries);
    ``default`` is the default catalog (pnpm treats ``catalogs.default`` as the same line)."""
    found: list[Catalog] = []
    pnpm = files.doc(PNPM_WORKSPACE, "yaml")
    if pnpm is not None:
        if isinstance(pnpm.get("catalog"), dict):
            found.append(("default", PNPM_WORKSPACE, "yaml", ("catalog",), pnpm["catalog"]))
        named = pnpm.get("catalogs")
        if isinstance(named, dict):
            for catalog, entries in named.items():
                if isinstance(entries, dict):
                    path = ("catalogs", str(catalog))
                    found.append((str(catalog), PNPM_WORKSPACE, "yaml", path, entries))
    for _location, key, entries in bun_catalogs(files.doc("package.json", "json")):
        if isinstance(entries, dict):
            name = key[-1] if key[-2] == "catalogs" else "default"
            found.append((name, "package.json", "json", key, entries))
    return found


def read_catalogs(
    scan: ProjectScan, files: ProjectFiles, wanted: set[tuple[str, str]] | None = None
) -> set[tuple[str, str]]:
    """Catalog entries as occurrences: all of them, or only the (catalog, package) pairs in
    ``wanted``. Returns every pair the catalogs hold."""
    held: set[tuple[str, str]] = set()
    for catalog, rel, fmt, key, entries in catalogs(files):
        line = None if catalog == "default" else catalog
        for name, spec in entries.items():
            held.add((catalog, str(name)))
            if wanted is not None and (catalog, str(name)) not in wanted:
                continue
            locus = Locus(rel, ".".join(key), fmt, (*key, name))
            _npm_entry(scan, str(name), spec, locus, line)
    return held


def warn_unresolved(scan: ProjectScan, held: set[tuple[str, str]]) -> None:
    """A ``catalog:`` reference no catalog resolves is a warning, never silence."""
    for name, catalog, where in scan.catalog_refs:
        if (catalog, name) not in held:
            scan.warnings.append(catalog_missing_warning(scan.name, where, name, catalog))


def read_release_gates(scan: ProjectScan, files: ProjectFiles) -> None:
    """The gates the project's package managers enforce (``tether.deps.release_gates``);
    read after the package manager is known."""
    found = []
    pnpm = files.doc(PNPM_WORKSPACE, "yaml")
    if pnpm is not None:
        found.append(release_gates.pnpm_gate(pnpm, PNPM_WORKSPACE))
    yarnrc = files.doc(".yarnrc.yml", "yaml")
    if yarnrc is not None:
        found.append(release_gates.yarn_gate(yarnrc, ".yarnrc.yml"))
    if yarnrc is None or "npmMinimalAgeGate" not in yarnrc:
        found.append(_home_yarn_gate(list(dict.fromkeys([files.root, scan.root]))))
    bunfig = files.doc("bunfig.toml", "toml")
    if bunfig is not None:
        found.append(release_gates.bun_gate(bunfig, "bunfig.toml"))
    if scan.package_manager == "npm":
        folders = list(dict.fromkeys([files.root, scan.root]))
        found.append(release_gates.npm_gate(release_gates.npm_settings(folders)))
    for gate, warnings in found:
        scan.warnings += [f"{scan.name}: {w}" for w in warnings]
        if gate is not None:
            scan.release_gates.append(gate)


def _home_yarn_gate(folders: list[Path]) -> tuple[ReleaseGate | None, list[str]]:
    """yarn berry's gate from the user's ``~/.yarnrc.yml`` when the project's own files set
    none (yarn layers the home file under the project's); a file tether cannot read is a
    warning, never the project's failure."""
    from tether.deps.registries import home_yarnrc

    home = home_yarnrc(os.environ, folders)
    if home is None:
        return None, []
    label = "~/.yarnrc.yml"
    try:
        doc = read_doc(home.parent, home.name, "yaml")
    except ScanError as error:
        return None, [f"{label}: {str(error).split(': ', 1)[-1]}; ignored"]
    return release_gates.yarn_gate(doc, label) if isinstance(doc, dict) else (None, [])


def read_pyproject(scan: ProjectScan, doc: dict[str, Any], rel: str = "pyproject.toml") -> None:
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
            locus = Locus(rel, location, "toml", (*path, index))
            _add(scan, "pypi", name, result, locus, requirement)


def scan_dependencies(name: str, root: Path, monorepo_root: Path | None = None) -> ProjectScan:
    """Every occurrence of a patch/minor/major scan; a broken manifest fails the project."""
    scan = ProjectScan(name, root)
    try:
        workspace = find_workspace_root(root, monorepo_root)
        if workspace is None:
            _collect(scan, ProjectFiles(root))
        else:
            scan.workspace_root = workspace
            _collect_member(scan, ProjectFiles(workspace))
    except ScanError as error:
        return ProjectScan(name, root, error=str(error))
    if not scan.files:
        scan.error = NO_MANIFEST
    return scan


def _collect(scan: ProjectScan, files: ProjectFiles) -> None:
    root_package = files.doc("package.json", "json")
    if root_package is not None:
        scan.files.append("package.json")
        read_package_json(scan, "package.json", root_package, is_root=True)
    if files.doc(PNPM_WORKSPACE, "yaml") is not None:
        scan.files.append(PNPM_WORKSPACE)
    held = read_catalogs(scan, files)
    for rel in files.workspace_manifests():
        doc = files.doc(rel, "json")
        if doc is not None:
            scan.files.append(rel)
            read_package_json(scan, rel, doc, is_root=False)
    warn_unresolved(scan, held)
    pyproject = files.doc("pyproject.toml", "toml")
    if pyproject is not None:
        scan.files.append("pyproject.toml")
        read_pyproject(scan, pyproject)
    detect_package_manager(scan, files)
    read_release_gates(scan, files)


def _collect_member(scan: ProjectScan, files: ProjectFiles) -> None:
    """One package of a workspace: its own manifests, read from the workspace root."""
    base = scan.root.resolve().relative_to(files.root.resolve()).as_posix()
    own = f"{base}/package.json"
    package = files.doc(own, "json")
    if package is not None:
        scan.files.append(own)
        read_package_json(scan, own, package, is_root=True)
    if scan.catalog_refs:
        held = read_catalogs(scan, files, {(c, n) for n, c, _ in scan.catalog_refs})
        scan.files += sorted({o.locus.source_file for o in scan.occurrences} - {own})
        warn_unresolved(scan, held)
    pyproject = files.doc(f"{base}/pyproject.toml", "toml")
    if pyproject is not None:
        scan.files.append(f"{base}/pyproject.toml")
        read_pyproject(scan, pyproject, f"{base}/pyproject.toml")
    detect_package_manager(scan, files)
    read_release_gates(scan, files)


def read_lines(scan: ProjectScan, rel: str) -> list[str] | None:
    """A project file's lines (None when it is absent), recorded as read by the scan."""
    try:
        text = read_bytes(scan.root / rel).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ScanError(cannot_read(rel, error)) from None
    scan.files.append(rel)
    return [line.removesuffix("\r") for line in text.split("\n")]
