"""Which registered projects a fleet command works on: ``--projects``, ``--keyword``, or all.

A registered path that is gone is dropped and reported, never an abort: one moved project
must not stop a hundred others from being checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.fleet.registry import Registry

EMPTY_REGISTRY = "No projects registered. Use tether projects add to register one."
NO_MATCH = "No projects matched the filter."


@dataclass(frozen=True)
class Member:
    """A selected project: its registry name and where it is on disk."""

    name: str
    path: Path


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Member, ...]  # registry order, paths present
    missing: tuple[Member, ...]  # matched the filter but the path is gone
    not_found: tuple[str, ...]  # names given with --projects that the registry lacks

    @property
    def matched_nothing(self) -> bool:
        return not self.chosen and not self.missing

    def not_found_lines(self) -> list[str]:
        return [f"Filter name not found: {name}" for name in self.not_found]


def split_names(values: Sequence[str] | None) -> list[str]:
    """``--projects a,b --projects c`` → ``[a, b, c]``, blanks dropped, first spelling kept."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return names


def select(registry: Registry, names: Sequence[str], keywords: Sequence[str]) -> Selection:
    """Projects matching every given filter, in registry order (not the order asked)."""
    wanted = set(names)
    needed = {k.casefold() for k in keywords}
    chosen: list[Member] = []
    missing: list[Member] = []
    for name, record in registry.projects.items():
        if wanted and name not in wanted:
            continue
        if not needed <= {k.casefold() for k in record.keywords}:
            continue
        member = Member(name, registry.resolve(record))
        (chosen if member.path.exists() else missing).append(member)
    not_found = tuple(n for n in names if n not in registry.projects)
    return Selection(tuple(chosen), tuple(missing), not_found)
