"""The projects registry: one JSON file naming the adopter projects a person keeps in step.

Schema version 2, shared with the Commander registry::

    {"version": 2, "projects": {"<name>": {"name", "path", "keywords": [], "description",
      "createdAt", "updatedAt", "repoType"?, "specialRules"?, "monorepoRoot"?}}}

A record may name a **remote** repository instead of a local checkout: ``"url"`` (any URL
git fetches from) and optionally ``"default_branch"``, with or without a ``path``. Only
``tether campaign`` works on remote records; the commands that need a checkout count a
record without a path as missing (docs/campaigns.md).

Another tool writes this file too, so tether keeps every key it does not use (at the top
level and in each record) exactly as it found it, and keeps the projects' order. Reading
never creates or rewrites the file; only ``save_registry`` writes, atomically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import atomic_write, cannot_read, read_bytes
from tether.parselimits import MAX_NESTING, json_loads

REGISTRY_VERSION = 2
# The registry's camelCase fields and their names in tether's own JSON documents (``projects
# --json``); the file itself keeps the shared spelling.
# The shared record's fields as tether's documents spell them: snake_case, and a folder is
# a ``*_dir`` (docs/cli.md, "One name per concept").
DOCUMENT_FIELDS = {
    "path": "project_dir",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
    "repoType": "repo_type",
    "specialRules": "special_rules",
    "monorepoRoot": "monorepo_dir",
}
ENV_VAR = "TETHER_REGISTRY"
# Version 1 records lack the optional keys of version 2 and are otherwise the same shape; the
# shared contract reads every version up to 2 (0 included) normally and refuses only newer ones.
NEWEST_READABLE_VERSION = 2


@dataclass(frozen=True)
class ProjectRecord:
    """One registered project. ``raw`` is the record as stored, unknown keys included."""

    name: str
    raw: Mapping[str, Any]

    @property
    def path(self) -> str:
        """The local checkout; empty for a remote-only record."""
        found = self.raw.get("path")
        return found if isinstance(found, str) else ""

    @property
    def url(self) -> str:
        """The remote repository a campaign fetches from; empty for a local-only record."""
        found = self.raw.get("url")
        return found if isinstance(found, str) else ""

    @property
    def default_branch(self) -> str | None:
        found = self.raw.get("default_branch")
        return found if isinstance(found, str) and found else None

    @property
    def keywords(self) -> tuple[str, ...]:
        found = self.raw.get("keywords")
        return tuple(str(k) for k in found) if isinstance(found, list) else ()

    @property
    def description(self) -> str:
        found = self.raw.get("description")
        return found if isinstance(found, str) else ""


@dataclass
class Registry:
    path: Path
    exists: bool
    document: dict[str, Any] = field(default_factory=dict)  # the top level as read
    projects: dict[str, ProjectRecord] = field(default_factory=dict)  # insertion order

    def resolve(self, record: ProjectRecord) -> Path:
        """The record's path on disk; a relative one is read against the registry's folder."""
        return self._on_disk(record.path)

    def monorepo_root(self, record: ProjectRecord) -> Path | None:
        """The record's ``monorepoRoot`` on disk (read like ``path``), None when unset."""
        found = record.raw.get("monorepoRoot")
        return self._on_disk(found) if isinstance(found, str) and found.strip() else None

    def _on_disk(self, stored: str) -> Path:
        path = Path(os.path.expanduser(stored))
        return path if path.is_absolute() else self.path.parent / path


def registry_path(explicit: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """``--registry`` wins, then ``TETHER_REGISTRY``, then the XDG config folder."""
    env = os.environ if env is None else env
    if explicit:
        return Path(os.path.expanduser(explicit))
    if env.get(ENV_VAR):
        return Path(os.path.expanduser(env[ENV_VAR]))
    return _config_home(env) / "tether" / "projects.json"


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config``."""
    return _config_home(os.environ if env is None else env)


def _config_home(env: Mapping[str, str]) -> Path:
    # The XDG spec says a relative value is invalid and must be ignored.
    configured = env.get("XDG_CONFIG_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path.home() / ".config"


def utc_timestamp() -> str:
    """ISO-8601 UTC with milliseconds and ``Z``: the shape JavaScript's toISOString writes."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def load_registry(path: Path) -> Registry:
    """The registry at ``path``; a missing file is an empty registry. Never writes."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return Registry(path, exists=False)
    except OSError as error:
        raise TetherError(cannot_read(path, error, "the registry")) from None
    document = _parse(path, data)
    _check_version(path, document)
    return Registry(path, True, document, _records(path, document))


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    try:
        document = json_loads(data.decode("utf-8"), max_depth=MAX_NESTING)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TetherError(f"registry file is not valid JSON: {path}") from None
    if not isinstance(document, dict):
        raise TetherError(f"registry file is malformed: {path}: expected a JSON object")
    return document


def _check_version(path: Path, document: Mapping[str, Any]) -> None:
    version = document.get("version", 1)
    # bool is an int in Python; ``true`` is not a version.
    if isinstance(version, bool) or not isinstance(version, int):
        readable = False
    else:
        readable = version <= NEWEST_READABLE_VERSION
    if not readable:
        shown = json.dumps(version)
        raise TetherError(
            f"unsupported registry version: {shown} ({path}; this tether reads versions up to 2)"
        )


def _records(path: Path, document: Mapping[str, Any]) -> dict[str, ProjectRecord]:
    # An absent or null "projects" is an empty registry, as the shared contract reads it.
    projects = document.get("projects")
    projects = {} if projects is None else projects
    if not isinstance(projects, dict):
        raise TetherError(f'registry file is malformed: {path}: "projects" is not an object')
    records = {}
    for name, raw in projects.items():
        if not isinstance(raw, dict):
            raise TetherError(f"registry file is malformed: {path}: project {name!r} has no path")
        for key in ("path", "url", "default_branch"):
            if key in raw and not isinstance(raw[key], str):
                raise TetherError(
                    f"registry file is malformed: {path}: project {name!r}: {key} is not a string"
                )
            if "\x00" in raw.get(key, ""):
                # No folder or remote has such a name; the record is damaged or hostile.
                raise TetherError(
                    f"registry file is malformed: {path}: project {name!r}: "
                    f"{key} contains a NUL byte"
                )
        if not (raw.get("path") or raw.get("url")):
            raise TetherError(f"registry file is malformed: {path}: project {name!r} has no path")
        records[name] = ProjectRecord(name, raw)
    return records


def new_record(
    name: str, path: Path, keywords: tuple[str, ...] = (), description: str = ""
) -> ProjectRecord:
    now = utc_timestamp()
    raw = {
        "name": name,
        "path": str(path),
        "keywords": list(keywords),
        "description": description,
        "createdAt": now,
        "updatedAt": now,
    }
    return ProjectRecord(name, raw)


def add_project(registry: Registry, record: ProjectRecord) -> None:
    """Register ``record``; a name or a path already registered is refused."""
    if record.name in registry.projects:
        existing = registry.projects[record.name].path
        raise TetherError(f"a project named {record.name!r} is already registered ({existing})")
    wanted = Path(record.path).resolve()
    for other in registry.projects.values():
        if other.path and registry.resolve(other).resolve() == wanted:
            raise TetherError(f"{wanted} is already registered as {other.name!r}")
    registry.projects[record.name] = record


def remove_project(registry: Registry, name: str) -> ProjectRecord:
    try:
        return registry.projects.pop(name)
    except KeyError:
        raise TetherError(f"no project named {name!r} in the registry {registry.path}") from None


def save_registry(registry: Registry) -> None:
    """Write the registry atomically, as version 2, keeping every key tether does not use."""
    document: dict[str, Any] = dict(registry.document) or {"version": REGISTRY_VERSION}
    document["version"] = REGISTRY_VERSION
    document["projects"] = {name: dict(r.raw) for name, r in registry.projects.items()}
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    atomic_write(registry.path, data.encode("utf-8"))
    registry.exists = True
    registry.document = document


def record_document(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A registry record as tether's JSON documents spell it (``DOCUMENT_FIELDS``), every
    other key (another tool's) as it was found."""
    return {DOCUMENT_FIELDS.get(key, key): value for key, value in raw.items()}
