"""Plan folders: where deep mode keeps a plan, its registry metadata, the release notes and
the dossier.

tether's own plan folders live in ``$XDG_STATE_HOME/tether/plans/`` (else
``~/.local/state/tether/plans/``), one per ``deps plan --deep``, named
``deps-<level>-<YYYYMMDD-HHMMSS>[-N]`` and marked by a ``.tether-plan`` file whose
modification time is the folder's last use. When a plan is written, every marked folder
there unused for more than ten days is removed, and the run says which; the folder in use
never is, nor anything unmarked or outside that place (a ``--plan-dir`` a person chose is
theirs).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tether.errors import TetherError, UsageError
from tether.fsio import atomic_write, cannot_read, read_bytes
from tether.parselimits import json_loads
from tether.report.deps import moved_line
from tether.runs.rundir import state_home

MARKER = ".tether-plan"
STALE_AFTER = timedelta(days=10)
PREFIX = "deps-"
SCAN_FILE = "scan-by-project.json"
PLAN_FILE = "cross-project-plan.json"
METADATA_FILE = "package-metadata.json"

Doc = dict[str, Any]


# The fields Commander's plan-folder files spell in camelCase (its specification fixes their
# shape); every other document tether prints or keeps speaks snake_case.
PLAN_FOLDER_FIELDS = frozenset(
    {
        "project_name",
        "current_version",
        "target_version",
        "effective_target",
        "source_file",
        "proposed_target",
        "skipped_by",
        "skipped_by_release_age",
        "conflict_policy",
        "package_manager",
        "package_manager_source",
        "scan_failed",
        "overrides_file",
    }
)
# Where tether's one name for a concept is not Commander's camelCase of it.
_PLAN_FOLDER_NAMES = {"skipped_path_missing": "pathMissing", "project_dir": "path"}


def plan_folder_shape(value: Any) -> Any:
    """A copy of a scan or plan document with the plan-folder fields in camelCase. Only
    these names change, so keys that are data (registry names, paths) stay as they are."""
    if isinstance(value, dict):
        return {_CAMEL_OF.get(k, k): plan_folder_shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plan_folder_shape(item) for item in value]
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


_CAMEL_OF = {name: _camel(name) for name in PLAN_FOLDER_FIELDS} | _PLAN_FOLDER_NAMES
_SNAKE_OF = {camel: name for name, camel in _CAMEL_OF.items()}


def snake_shape(value: Any) -> Any:
    """A plan-folder file read back in the shape ``--json`` prints: ``plan_folder_shape``
    undone."""
    if isinstance(value, dict):
        return {_SNAKE_OF.get(k, k): snake_shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_shape(item) for item in value]
    return value


def plans_home(env: Mapping[str, str] | None = None) -> Path:
    return state_home(env) / "tether" / "plans"


def create(level: str, now: datetime, env: Mapping[str, str] | None = None) -> Path:
    """A new marked plan folder for ``level``, named by ``now``."""
    home = plans_home(env)
    home.mkdir(parents=True, exist_ok=True)
    base = f"{PREFIX}{level}-{now.astimezone(UTC).strftime('%Y%m%d-%H%M%S')}"
    for attempt in range(1, 1000):
        folder = home / (base if attempt == 1 else f"{base}-{attempt}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        marker = folder / MARKER
        atomic_write(marker, (json.dumps({"level": level}) + "\n").encode(), durable=False)
        mark_used(folder, now)
        return folder
    raise TetherError(f"{home}: cannot make a new plan folder named {base}")


def mark_used(folder: Path, now: datetime) -> None:
    """A marked folder counts as used ``now`` (its marker's time); others are left alone."""
    marker = folder / MARKER
    if marker.is_file():
        stamp = now.timestamp()
        os.utime(marker, (stamp, stamp))


def last_used(folder: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp((folder / MARKER).stat().st_mtime, UTC)
    except OSError:
        return None


@dataclass(frozen=True)
class Pruned:
    path: Path
    last_used: datetime
    error: str = ""  # why it could not be removed

    def to_json(self) -> Doc:
        return {
            "plan_dir": str(self.path),
            "last_used": self.last_used.isoformat(),
            "removed": not self.error,
            "error": self.error,
        }


def _marked(home: Path) -> list[Path]:
    try:
        children = sorted(home.iterdir())
    except OSError:
        return []
    return [c for c in children if c.is_dir() and not c.is_symlink() and (c / MARKER).is_file()]


def prune(
    now: datetime, in_use: Sequence[Path] = (), env: Mapping[str, str] | None = None
) -> list[Pruned]:
    """Remove tether's plan folders unused for more than ten days, never one in use."""
    keep = {os.path.realpath(p) for p in in_use}
    pruned = []
    for folder in _marked(plans_home(env)):
        used = last_used(folder)
        if used is None or os.path.realpath(folder) in keep or now - used <= STALE_AFTER:
            continue
        try:
            shutil.rmtree(folder)
        except OSError as error:
            pruned.append(Pruned(folder, used, error.strerror or str(error)))
            continue
        pruned.append(Pruned(folder, used))
    return pruned


def newest(level: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The most recently made plan folder of ``level`` (names sort by their time)."""
    found = [f for f in _marked(plans_home(env)) if f.name.startswith(f"{PREFIX}{level}-")]
    return max(found, key=lambda f: f.name) if found else None


def locate(plan_dir: Path | None, level: str | None, env: Mapping[str, str] | None = None) -> Path:
    """The folder a deep command works in: the one named, else the newest of the level."""
    if plan_dir is not None:
        if not plan_dir.is_dir():
            raise UsageError(f"--plan-dir {plan_dir}: no such folder")
        return plan_dir
    if level is None:
        raise UsageError("name the plan folder: --plan-dir DIR, or --level L for the newest")
    found = newest(level, env)
    if found is None:
        raise UsageError(
            f"no plan folder for level {level} in {plans_home(env)}: run "
            f"`tether deps plan --level {level} --deep` first (or name one with --plan-dir)"
        )
    return found


# --- reading a plan folder -----------------------------------------------------------------


def read_json(path: Path) -> Any | None:
    """A JSON file, or None when there is none; an unreadable one is a one-line error."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(path, error)) from None
    try:
        return json_loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: not valid JSON ({error})") from None


_OCCURRENCE_FIELDS = ("project_name", "current_version", "effective_target", "location")


def read_plan(folder: Path) -> Doc:
    """The plan a folder keeps (``cross-project-plan.json``), in the shape ``deps plan --json``
    prints (snake_case)."""
    path = folder / PLAN_FILE
    raw = read_json(path)
    if raw is None:
        raise TetherError(
            f"{folder}: no {PLAN_FILE} here; `tether deps plan --level L --deep` "
            "(or --plan-dir DIR) writes one"
        )
    plan = snake_shape(raw)
    problem = _plan_problem(plan)
    if problem:
        raise TetherError(f"{path}: not a plan file: {problem}")
    return dict(plan)


def _plan_problem(plan: Any) -> str:
    if not isinstance(plan, dict):
        return "expected a JSON object"
    if not isinstance(plan.get("level"), str):
        return "no level"
    packages = plan.get("packages")
    if not isinstance(packages, list):
        return "no package list"
    for index, package in enumerate(packages, 1):
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            return f"package {index} has no name"
        if not isinstance(package.get("ecosystem"), str):
            return f"package {package['name']} has no ecosystem"
        occurrences = package.get("occurrences")
        if not isinstance(occurrences, list) or not all(
            isinstance(o, dict) and all(isinstance(o.get(k), str) for k in _OCCURRENCE_FIELDS)
            for o in occurrences
        ):
            return f"package {package['name']}: occurrences lack {', '.join(_OCCURRENCE_FIELDS)}"
    return ""


def read_metadata(folder: Path) -> dict[tuple[str, str], Doc]:
    """The registry metadata the plan was made with: (ecosystem, name) → its entry."""
    doc = read_json(folder / METADATA_FILE)
    packages = doc.get("packages") if isinstance(doc, dict) else None
    if not isinstance(packages, list):
        return {}
    return {
        (p["ecosystem"], p["name"]): p
        for p in packages
        if isinstance(p, dict)
        and isinstance(p.get("name"), str)
        and isinstance(p.get("ecosystem"), str)
    }


# --- the researched plan, at apply ---------------------------------------------------------

Move = tuple[str, str, str, str, str]  # project, package (catalog), file, location, current


def moves(plan: Doc) -> dict[Move, str]:
    """What a plan document writes: every occurrence that moves, with its new value."""
    found: dict[Move, str] = {}
    for package in plan.get("packages", []):
        if package.get("skipped_by"):
            continue
        label = package["name"] + (
            f" (catalog {package['catalog']})" if package.get("catalog") else ""
        )
        for o in package.get("occurrences", []):
            if o.get("effective_target") != o.get("current_version"):
                key = (
                    o["project_name"],
                    label,
                    o["source_file"],
                    o["location"],
                    o["current_version"],
                )
                found[key] = o["effective_target"]
    return found


def moved_since(kept: Doc, now: Doc) -> list[str]:
    """How the plan made now differs from the one a plan folder keeps (researched and
    shown), one line per difference: [] when they write the same."""
    before, after = moves(kept), moves(now)
    lines = []
    for key in sorted(set(before) | set(after)):
        project, package, _, _, current = key
        was, will = before.get(key), after.get(key)
        if was == will:
            continue
        lines.append(moved_line(project, package, current, was, will))
    return lines
