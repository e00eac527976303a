"""What a workspace root's files say: the package folders it names and the catalogs it
keeps (pure functions of the parsed files).

A registered project can be one package of a pnpm / npm / yarn / Bun workspace. Its lockfile,
its workspace file and its catalogs live at the workspace root, and its install runs there;
``tether.deps.manifests.find_workspace_root`` finds that root on disk.
"""

from __future__ import annotations

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
