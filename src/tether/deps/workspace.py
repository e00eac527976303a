"""Where a project's workspace root is, and the catalogs kept there: local files only.

A registered project can be one package of a pnpm / npm / yarn / Bun workspace. Its lockfile,
its workspace file and its catalogs live at the workspace root, and its install runs there.
The root is the record's ``monorepoRoot`` when set; otherwise the nearest folder above the
project, up to the git top level, whose workspace patterns include the project.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PNPM_WORKSPACE = "pnpm-workspace.yaml"


def workspace_patterns(package: dict[str, Any] | None, pnpm: dict[str, Any] | None) -> list[str]:
    """The package folders a workspace root names: package.json ``workspaces`` (a list, or
    its ``packages``) and pnpm-workspace.yaml ``packages``."""
    patterns: list[str] = []
    found = package.get("workspaces") if package else None
    if isinstance(found, dict):
        found = found.get("packages")
    if isinstance(found, list):
        patterns += [str(p) for p in found]
    if pnpm is not None and isinstance(pnpm.get("packages"), list):
        patterns += [str(p) for p in pnpm["packages"]]
    return patterns


def find_workspace_root(project: Path, monorepo_root: Path | None) -> Path | None:
    """The workspace root holding ``project`` (never ``project`` itself), or None."""
    from tether import git

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
    from tether.deps.manifests import ScanError, expand_workspaces, read_doc

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


def bun_catalogs(package: dict[str, Any] | None) -> list[tuple[str, tuple[str, ...], Any]]:
    """Bun keeps catalogs in the root package.json, at the top or under ``workspaces``:
    (location, key path, entries) for ``catalog`` and each ``catalogs.<name>``."""
    if package is None:
        return []
    found: list[tuple[str, tuple[str, ...], Any]] = []
    for base in ((), ("workspaces",)):
        holder: Any = package
        for key in base:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if not isinstance(holder, dict):
            continue
        prefix = "".join(f"{k}." for k in base)
        if isinstance(holder.get("catalog"), dict):
            found.append((f"{prefix}catalog", (*base, "catalog"), holder["catalog"]))
        named = holder.get("catalogs")
        if isinstance(named, dict):
            for name, entries in named.items():
                path = (*base, "catalogs", str(name))
                found.append((f"{prefix}catalogs.{name}", path, entries))
    return found
