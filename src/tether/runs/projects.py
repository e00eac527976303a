"""``tether projects add|list|show|remove`` as library calls: each returns its JSON document.

``add`` and ``remove`` are the only writers of the registry (atomically, through
``save_registry``); ``list`` and ``show`` only read, the project folders included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tether.errors import TetherError, UsageError
from tether.report.projects import NOT_TETHERED_NOTE, install_summary
from tether.runs.registry import (
    ProjectRecord,
    Registry,
    add_project,
    load_registry,
    new_record,
    record_document,
    registry_path,
    remove_project,
    save_registry,
)
from tether.runs.selection import split_names

Doc = dict[str, Any]


@dataclass(frozen=True)
class InstallFound:
    """What ``projects show`` finds installed in a registered folder: worded by
    ``report/projects.install_summary`` (the document's ``tether``)."""

    state: Literal["path-missing", "not-tethered", "installed"]
    error: str = ""  # not-tethered: why the folder opens as no project
    upstream: str = ""
    version: str = ""
    profile: str = ""


def _load(registry_option: str | None) -> Registry:
    return load_registry(registry_path(registry_option))


def add(
    registry_option: str | None,
    folder: str,
    name: str | None,
    keywords: Sequence[str] | None,
    description: str,
) -> Doc:
    """Register ``folder`` (stored absolute and resolved); a duplicate is refused."""
    registry = _load(registry_option)
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise TetherError(f"{folder}: no such directory")
    record = new_record(
        _checked_name(name or path.name), path, tuple(split_names(keywords)), description
    )
    add_project(registry, record)
    save_registry(registry)
    return {
        "registry": str(registry.path),
        "added": record_document(record.raw),
        "note": _tether_note(path),
    }


def _checked_name(name: str) -> str:
    # --projects splits on commas, so a name holding one could never be selected.
    if not name.strip() or "," in name or name != name.strip():
        raise UsageError(f"invalid project name {name!r}: no commas, no surrounding spaces")
    return name


def _tether_note(path: Path) -> str:
    from tether.flows.project import open_project

    try:
        open_project(path)
    except TetherError:
        return NOT_TETHERED_NOTE
    return ""


def listing(registry_option: str | None) -> Doc:
    registry = _load(registry_option)
    rows = [_record_json(registry, r) for r in registry.projects.values()]
    return {"registry": str(registry.path), "projects": rows}


def _record_json(registry: Registry, record: ProjectRecord) -> Doc:
    resolved = registry.resolve(record)
    return {
        **record_document(record.raw),
        "name": record.name,
        "keywords": list(record.keywords),
        "description": record.description,
        "exists": resolved.exists(),
    }


def show(registry_option: str | None, name: str) -> Doc:
    """One record, and what is installed there in a few words (reads local files only)."""
    registry = _load(registry_option)
    record = registry.projects.get(name)
    if record is None:
        raise TetherError(f"no project named {name!r} in the registry {registry.path}")
    data = _record_json(registry, record)
    data["tether"] = install_summary(install_found(registry.resolve(record)))
    return data


def install_found(path: Path) -> InstallFound:
    from tether.flows.status import project_status

    if not path.exists():
        return InstallFound("path-missing")
    try:
        report = project_status(path)
    except TetherError as error:
        return InstallFound("not-tethered", str(error))
    upstream, version, profile = report.upstream, report.installed_version, report.profile
    return InstallFound("installed", upstream=upstream, version=version, profile=profile)


def remove(registry_option: str | None, name: str) -> Doc:
    """Unregister ``name``; the project's files are never touched."""
    registry = _load(registry_option)
    record = remove_project(registry, name)
    save_registry(registry)
    return {
        "registry": str(registry.path),
        "name": record.name,
        "removed": record_document(record.raw),
    }
