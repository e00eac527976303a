"""What ``deps apply`` does to each project, built from the approved plan, and what came of
it: the bumps, override commands and installs of one project (``ProjectWork``), the run's
options, and each project's result with its steps.

Members of one workspace share one install at the workspace root: the last of them in
registry order runs it for the others (``_share_installs``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from tether.deps.align import Plan
from tether.deps.edit import Change
from tether.deps.overrides import BoundOverride, commands_for
from tether.runs.isolation import DEFAULT_MODE, Isolation
from tether.sources.limits import INSTALL_TIME, OVERRIDE_TIME, TimeLimit


@dataclass(frozen=True)
class Bump:
    package: str
    ecosystem: str
    current: str
    target: str
    change: Change

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.package,
            "ecosystem": self.ecosystem,
            "current_version": self.current,
            "target_version": self.target,
            "location": self.change.locus.location,
            "source_file": self.change.locus.source_file,
        }


@dataclass
class ProjectWork:
    name: str
    root: Path
    package_manager: str | None
    python_tool: str | None
    bumps: list[Bump] = field(default_factory=list)
    # From the project to its workspace root, where the bumps' paths start and the install
    # runs ("." for a project that is its own root).
    workspace: str = "."
    owed: list[list[str]] = field(default_factory=list)  # installs an earlier run owes
    overrides: list[BoundOverride] = field(default_factory=list)
    # Members of one workspace share one install, run by the last of them in registry order:
    # ``install_with`` names that member (None: the project runs its own), and the member
    # that runs it ``covers`` the others (its install is theirs too).
    install_with: str | None = None
    covers: list[ProjectWork] = field(default_factory=list)

    @property
    def install_root(self) -> Path:
        """The folder the install runs in: the workspace root (the project itself when it
        is its own root)."""
        return Path(os.path.normpath(self.root / self.workspace)).resolve()


@dataclass
class Step:
    name: str  # isolation | edit | override:<id> | install (a failed_step may also be lock)
    command: str
    exit_code: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.name,
            "command": self.command,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class ProjectResult:
    work: ProjectWork
    log: Path
    state: str = "pending"  # pending | applied | failed | skipped (isolation not possible)
    steps: list[Step] = field(default_factory=list)
    failed_step: str | None = None
    exit_code: int | None = None
    error: str = ""
    isolation: Isolation | None = None
    files: list[str] = field(default_factory=list)
    running: str | None = None  # the step under way (what a Ctrl-C interrupts)


@dataclass(frozen=True)
class ApplyOptions:
    level: str
    day: date
    install: bool = True
    continue_on_failure: bool = False
    isolate: str = DEFAULT_MODE
    isolate_asked: bool = False  # --isolate was given (not the default)
    env: Mapping[str, str] | None = None  # the tools' environment (None: tether's own)
    # How long each install (or lock) and each override command may run before its process
    # group is stopped (``TETHER_LIMIT_INSTALL_SECONDS``, ``TETHER_LIMIT_OVERRIDE_SECONDS``).
    install_seconds: float = INSTALL_TIME.default
    override_seconds: float = OVERRIDE_TIME.default

    def time_limit(self, step: str) -> tuple[float, TimeLimit]:
        """The seconds a step's program may run, and the limit that sets them."""
        if step == "install":
            return self.install_seconds, INSTALL_TIME
        return self.override_seconds, OVERRIDE_TIME


@dataclass
class ApplyRun:
    results: list[ProjectResult]
    status: str = "done"  # done | stopped | interrupted


def works_from_plan(
    plan: Plan,
    bound: Sequence[BoundOverride],
    owed: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> list[ProjectWork]:
    """One unit per project that has a bump, an override to run or an install an earlier
    run owes (``owed``: project → its install commands), registry order."""
    works = {
        p.name: ProjectWork(
            p.name,
            p.root,
            p.package_manager,
            p.python_tool,
            workspace=os.path.relpath(p.edit_root.resolve(), p.root.resolve()),
        )
        for p in plan.scan.scanned
    }
    for package in plan.packages:
        if not package.applies:
            continue
        for planned in package.occurrences:
            if not planned.changes:
                continue
            occurrence = planned.resolved.occurrence
            declared, new = occurrence.declared, planned.effective_declared
            change = Change(occurrence.locus, declared.raw, new.raw)
            works[occurrence.project].bumps.append(
                Bump(occurrence.name, occurrence.ecosystem, declared.shown, new.shown, change)
            )
    for name, work in works.items():
        work.overrides = commands_for(list(bound), name)
        work.owed = [list(c) for c in (owed or {}).get(name, ())]
    kept = [w for w in works.values() if w.bumps or w.overrides or w.owed]
    _share_installs(kept)
    return kept


def _share_installs(works: Sequence[ProjectWork]) -> None:
    """Registered packages of one workspace install once, after the last of them is
    edited: the lockfile is the workspace root's, and an install per member would rewrite
    it again for each."""
    groups: dict[tuple[Path, str | None], list[ProjectWork]] = {}
    for work in works:
        groups.setdefault((work.install_root, work.package_manager), []).append(work)
    for members in groups.values():
        *earlier, last = members
        for work in earlier:
            work.install_with = last.name
            last.covers.append(work)
