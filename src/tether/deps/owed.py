"""Installs a run still owes: manifests bumped, the install not (yet) done.

The record is written ahead: before a run writes a project's manifests it notes the
project's install as owed in its run folder (``owed-installs.json``), and it removes the
note only once that install succeeded. So a run that fails at the install, is stopped by
Ctrl-C during it or is killed outright keeps the install owed. A rerun finds the manifests
already at their targets, so without the record it would plan nothing for that project and
the install would never run. The next ``deps apply`` over the same projects (or
``--resume RUN`` naming that run) runs the owed install, even with nothing left to bump;
only when it succeeds is the project's record cleared from every run that kept one. A
rerun that fails earlier (the lock is held, isolation is not possible) or at the install
again leaves the record where it is.
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


@dataclass(frozen=True)
class Owed:
    name: str
    path: str
    commands: tuple[tuple[str, ...], ...]
    run_id: str


def runs_root() -> Path:
    return state_home() / "tether" / "runs"


class OwedLedger:
    """This run's owed installs, kept on disk in its run folder as they change."""

    def __init__(self, folder: RunFolder) -> None:
        self.path = folder.root / OWED_FILE
        self.rows: dict[str, dict[str, Any]] = {}

    def owe(self, name: str, path: Path, commands: Sequence[Sequence[str]]) -> None:
        """Note ``name``'s install as owed, durably, before its manifests are written."""
        self.rows[name] = {"name": name, "path": str(path), "commands": [list(c) for c in commands]}
        _write_rows(self.path, list(self.rows.values()))

    def settled(self, name: str, path: Path) -> None:
        """``name``'s install succeeded: nothing is owed to it any more, by any run."""
        if self.rows.pop(name, None) is not None:
            _write_rows(self.path, list(self.rows.values()))
        clear(name, path)


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    if rows:
        atomic_write(path, (json.dumps(rows, indent=2) + "\n").encode())
    else:
        path.unlink(missing_ok=True)


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


def clear(name: str, path: Path) -> None:
    """Drop the project's owed install from every run that recorded it."""
    root = runs_root()
    for owed_file in sorted(root.glob(f"*/{OWED_FILE}")) if root.is_dir() else []:
        rows = _rows(owed_file.parent)
        left = [r for r in rows if (r.get("name"), r.get("path")) != (name, str(path))]
        if len(left) != len(rows):
            _write_rows(owed_file, left)
