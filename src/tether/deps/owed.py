"""Installs a run still owes: manifests bumped, the install failed.

A run that bumped a project's manifests and then failed at its install writes the owed
install into its run folder (``owed-installs.json``). A rerun finds the manifests already at
their targets, so without this record it would plan nothing for that project and the
install would never run. The next ``deps apply`` over the same projects (or
``--resume RUN`` naming that run) runs the owed install, even with nothing left to bump, and
clears the record once it has tried.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import atomic_write, read_bytes
from tether.runs.rundir import RunFolder, state_home

OWED_FILE = "owed-installs.json"
PENDING = "Manifests already bumped; install pending"


@dataclass(frozen=True)
class Owed:
    name: str
    path: str
    commands: tuple[tuple[str, ...], ...]
    run_id: str


def runs_root() -> Path:
    return state_home() / "tether" / "runs"


def record(folder: RunFolder, owed: Sequence[tuple[str, Path, list[list[str]]]]) -> None:
    """Keep this run's owed installs: (project, path, install commands) each."""
    if not owed:
        return
    rows = [{"name": n, "path": str(p), "commands": c} for n, p, c in owed]
    atomic_write(folder.root / OWED_FILE, (json.dumps(rows, indent=2) + "\n").encode())


def find(selected: Sequence[tuple[str, Path]], resume: str | None) -> list[Owed]:
    """The owed installs of the selected projects (same name, same folder): the latest
    run's for each, or only ``resume``'s when a run is named."""
    root = runs_root()
    if resume is not None:
        if not (root / resume).is_dir() or "/" in resume or resume.startswith("."):
            raise TetherError(f"--resume {resume}: no such run in {root}")
        runs = [root / resume]
    else:
        runs = sorted(root.iterdir()) if root.is_dir() else []
    wanted = {(name, str(path)) for name, path in selected}
    found: dict[str, Owed] = {}
    for run in runs:
        for row in _rows(run):
            if (row.get("name"), row.get("path")) in wanted:
                commands = tuple(tuple(str(a) for a in c) for c in row.get("commands", []))
                found[row["name"]] = Owed(row["name"], row["path"], commands, run.name)
    if resume is not None and not found:
        raise TetherError(f"--resume {resume}: that run owes no install to the selected projects")
    return list(found.values())


def _rows(run: Path) -> list[dict[str, Any]]:
    try:
        rows = json.loads(read_bytes(run / OWED_FILE))
    except (OSError, ValueError):
        return []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def clear(taken: Sequence[Owed]) -> None:
    """Drop the owed installs this run tried from the runs that recorded them."""
    by_run: dict[str, set[str]] = {}
    for owed in taken:
        by_run.setdefault(owed.run_id, set()).add(owed.name)
    for run_id, names in by_run.items():
        path = runs_root() / run_id / OWED_FILE
        left = [r for r in _rows(path.parent) if r.get("name") not in names]
        if left:
            atomic_write(path, (json.dumps(left, indent=2) + "\n").encode())
        else:
            path.unlink(missing_ok=True)
