"""Which registered projects a multi-project command works on: ``--projects``, ``--keyword``,
or all. ``fleet`` and ``deps`` select the same way through ``choose``.

A registered path that is gone is dropped and reported, never an abort: one moved project
must not stop a hundred others from being checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The messages are words, so they live with the other words of runs (and stay importable here).
from tether.report.runs import EMPTY_REGISTRY as EMPTY_REGISTRY
from tether.report.runs import NO_MATCH as NO_MATCH
from tether.report.runs import NO_SELECTABLE as NO_SELECTABLE
from tether.report.runs import NOTHING_PICKED as NOTHING_PICKED
from tether.runs.registry import ProjectRecord, Registry, load_registry, registry_path


@dataclass(frozen=True)
class Member:
    """A selected project: its registry name and where it is on disk."""

    name: str
    path: Path
    monorepo_root: Path | None = None  # the record's monorepoRoot, when it names one


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Member, ...]  # registry order, paths present
    missing: tuple[Member, ...]  # matched the filter but the path is gone
    not_found: tuple[str, ...]  # names given with --projects that the registry lacks

    @property
    def matched_nothing(self) -> bool:
        return not self.chosen and not self.missing

    def not_found_lines(self) -> list[str]:
        return not_found_lines(self.not_found)


def not_found_lines(names: Sequence[str]) -> list[str]:
    return [f"Filter name not found: {name}" for name in names]


def picked_names(answer: str, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """A picker's answer: names, 1-based numbers of the list, or ``all`` (comma-separated)
    → (the names picked, the tokens that name nothing)."""
    tokens = split_names([answer])
    if any(token.lower() == "all" for token in tokens):
        return list(names), [t for t in tokens if t.lower() != "all" and _names(t, names) is None]
    picked: list[str] = []
    unknown: list[str] = []
    for token in tokens:
        found = _names(token, names)
        if found is None:
            unknown.append(token)
        elif found not in picked:
            picked.append(found)
    return picked, unknown


def _names(token: str, names: Sequence[str]) -> str | None:
    if token in names:
        return token
    if token.isdigit() and 1 <= int(token) <= len(names):
        return names[int(token) - 1]
    return None


def split_names(values: Sequence[str] | None) -> list[str]:
    """``--projects a,b --projects c`` → ``[a, b, c]``, blanks dropped, first spelling kept
    (every comma-list option: ``--projects``, ``--skip-package``, ``projects add --keywords``)."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return names


def carries(record: ProjectRecord, keywords: Sequence[str]) -> bool:
    """``record`` carries every one of ``keywords`` (any case): what ``--keyword`` selects."""
    return {k.casefold() for k in keywords} <= {k.casefold() for k in record.keywords}


def select(registry: Registry, names: Sequence[str], keywords: Sequence[str]) -> Selection:
    """Projects matching every given filter, in registry order (not the order asked)."""
    wanted = set(names)
    chosen: list[Member] = []
    missing: list[Member] = []
    for name, record in registry.projects.items():
        if wanted and name not in wanted:
            continue
        if not carries(record, keywords):
            continue
        member = Member(name, registry.resolve(record), registry.monorepo_root(record))
        # Drift is judged as the shared contract does: the path must be a directory; a file
        # left where a project was is as gone as no path at all. A remote-only record has no
        # checkout here: missing for every command but campaign.
        here = bool(record.path) and member.path.is_dir()
        (chosen if here else missing).append(member)
    not_found = tuple(n for n in names if n not in registry.projects)
    return Selection(tuple(chosen), tuple(missing), not_found)


@dataclass(frozen=True)
class Filters:
    """The selection a command was given: the registry to read and the two filters."""

    registry: str | None = None  # --registry; None: $TETHER_REGISTRY, then the XDG default
    projects: Sequence[str] | None = None  # --projects values as typed (comma lists)
    keywords: Sequence[str] = ()


@dataclass(frozen=True)
class Chosen:
    registry: Registry
    selection: Selection


@dataclass(frozen=True)
class NothingSelected:
    """No project to work on: the registry is empty or the filter matched none (exit 0)."""

    registry: str
    message: str
    not_found: tuple[str, ...]
    missing: tuple[Member, ...] = ()  # every matched project's path is gone

    def to_json(self) -> dict[str, Any]:
        return {
            "registry": self.registry,
            "message": self.message,
            "filter_not_found": list(self.not_found),
            "path_missing": [{"name": m.name, "path": str(m.path)} for m in self.missing],
            "projects": [],
        }

    def lines(self) -> list[str]:
        drifted = [f"- {m.name} — {m.path}" for m in self.missing]
        return [*not_found_lines(self.not_found), self.message, *drifted]


# A person's pick among the selectable projects: their names, registry order ([]: none).
Pick = Callable[[Sequence[Member]], list[str]]


def choose(
    filters: Filters,
    note: Callable[[str], None] = lambda line: None,
    pick: Pick | None = None,
) -> Chosen | NothingSelected:
    """Read the registry (never written here) and select from it. When projects are left,
    each name the registry lacks is noted before the run starts. With ``pick`` (a person is
    there) and no filter given, the person picks among the selectable projects; picking
    none ends the run (exit 0)."""
    registry = load_registry(registry_path(filters.registry))
    if not registry.projects:
        return NothingSelected(str(registry.path), EMPTY_REGISTRY, ())
    selection = select(registry, split_names(filters.projects), filters.keywords)
    if pick is not None and not filters.projects and not filters.keywords and selection.chosen:
        picked = set(pick(selection.chosen))
        if not picked:
            return NothingSelected(str(registry.path), NOTHING_PICKED, ())
        chosen = tuple(m for m in selection.chosen if m.name in picked)
        selection = Selection(chosen, selection.missing, selection.not_found)
    if selection.matched_nothing:
        return NothingSelected(str(registry.path), NO_MATCH, selection.not_found)
    if not selection.chosen:
        return NothingSelected(
            str(registry.path), NO_SELECTABLE, selection.not_found, selection.missing
        )
    for line in selection.not_found_lines():
        note(line)
    return Chosen(registry, selection)
