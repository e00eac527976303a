"""Which registered projects a multi-project command works on: ``--projects``, ``--keyword``,
or all. ``fleet`` and ``deps`` select the same way through ``choose``.

A registered path that is gone is dropped and reported, never an abort: one moved project
must not stop a hundred others from being checked. A name given with ``--projects`` that
the registry lacks is an error before anything is read (``check_names``, campaigns too): a
typo must not run a command on fewer projects than the person meant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tether.errors import TetherError

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
    missing: tuple[Member, ...] = ()  # matched the filter but the path is gone

    @property
    def matched_nothing(self) -> bool:
        return not self.chosen and not self.missing


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


def check_names(registry: Registry, names: Sequence[str]) -> None:
    """Every name given must be registered: one line naming the registry and each name it
    lacks, before anything is read or run."""
    unknown = [name for name in names if name not in registry.projects]
    if unknown:
        listed = ", ".join(unknown)
        raise TetherError(
            f"{registry.path}: not in the registry: {listed} (see 'tether projects list')"
        )


def select(registry: Registry, names: Sequence[str], keywords: Sequence[str]) -> Selection:
    """Projects matching every given filter, in registry order (not the order asked); the
    names were checked (``check_names``)."""
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
    return Selection(tuple(chosen), tuple(missing))


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
    """No project to work on: the registry is empty, the filter matched none, every matched
    project's path is gone, or the person picked none (exit 0). ``document`` is the
    command's own document with nothing in it, which ``--json`` prints: one shape per
    command, whatever was selected."""

    registry: str
    message: str
    missing: tuple[Member, ...] = ()  # every matched project's path is gone
    document: Mapping[str, Any] = field(default_factory=dict)

    @property
    def selection(self) -> Selection:
        return Selection((), self.missing)

    def with_document(self, document: Mapping[str, Any]) -> NothingSelected:
        return replace(self, document=document)

    def lines(self) -> list[str]:
        drifted = [f"- {m.name} — {m.path}" for m in self.missing]
        return [self.message, *drifted]


# A person's pick among the selectable projects: their names, registry order ([]: none).
Pick = Callable[[Sequence[Member]], list[str]]


def choose(filters: Filters, pick: Pick | None = None) -> Chosen | NothingSelected:
    """Read the registry (never written here) and select from it. An empty registry says
    so first (as Commander's procedure does); then a name it lacks is an error
    (``check_names``). With ``pick`` (a person is there) and no filter given, the person
    picks among the selectable projects; picking none ends the run (exit 0)."""
    registry = load_registry(registry_path(filters.registry))
    if not registry.projects:
        return NothingSelected(str(registry.path), EMPTY_REGISTRY)
    names = split_names(filters.projects)
    check_names(registry, names)
    selection = select(registry, names, filters.keywords)
    if pick is not None and not filters.projects and not filters.keywords and selection.chosen:
        picked = set(pick(selection.chosen))
        if not picked:
            return NothingSelected(str(registry.path), NOTHING_PICKED)
        chosen = tuple(m for m in selection.chosen if m.name in picked)
        selection = Selection(chosen, selection.missing)
    if selection.matched_nothing:
        return NothingSelected(str(registry.path), NO_MATCH)
    if not selection.chosen:
        return NothingSelected(str(registry.path), NO_SELECTABLE, selection.missing)
    return Chosen(registry, selection)
