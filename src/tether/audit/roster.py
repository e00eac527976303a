"""Members and remits: who reviews which files, and which files the gate itself runs on.

A remit is a list of gitignore-style globs (``**`` crosses folders, a glob without ``/``
matches at any depth, ``!`` re-includes). Members come from a roster file or, ad hoc, from
repeated ``--remit`` options.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tether.audit.workspace import Layout
from tether.errors import TetherError, UsageError
from tether.fsio import read_bytes

DEFAULT_POSIX_GLOBS = (".husky/**",)


@dataclass(frozen=True)
class Member:
    name: str
    globs: tuple[str, ...]


@dataclass(frozen=True)
class Roster:
    path: str | None  # relative roster path, None when the project has none
    members: tuple[Member, ...] = ()
    machinery: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    posix: tuple[str, ...] = DEFAULT_POSIX_GLOBS

    def member(self, name: str) -> Member:
        for member in self.members:
            if member.name == name:
                return member
        if self.path is None:
            raise TetherError(f"no roster found; name the files with --remit GLOB ({name!r})")
        known = ", ".join(m.name for m in self.members) or "none"
        raise TetherError(f"{self.path}: no member {name!r} (members: {known})")


class GlobSet:
    """Gitignore-style matching of relative POSIX paths; an empty set matches nothing."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(globs)

    @cached_property
    def _spec(self) -> Any:
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self.globs)

    def matches(self, path: str) -> bool:
        return bool(self.globs) and bool(self._spec.match_file(path))


@dataclass(frozen=True)
class Remit:
    """The files one review covers. No globs and no member: every file (scope only)."""

    member: str | None
    globs: tuple[str, ...]
    machinery: tuple[str, ...] = ()
    _sets: dict[str, GlobSet] = field(default_factory=dict, compare=False, repr=False)

    def covers(self, path: str) -> bool:
        if not self.globs:
            return self.member is None
        return self._set("globs", self.globs).matches(path)

    def is_machinery(self, path: str) -> bool:
        return self._set("machinery", self.machinery).matches(path)

    def _set(self, name: str, globs: tuple[str, ...]) -> GlobSet:
        if name not in self._sets:
            self._sets[name] = GlobSet(globs)
        return self._sets[name]


def load_roster(root: Path, layout: Layout) -> Roster:
    """The roster at the layout's path; an empty one when the file does not exist."""
    path = root / layout.roster_path
    if not path.is_file():
        return Roster(path=None, hooks=layout.default_hooks)
    document = _read_yaml(path, layout.roster_path)
    where = layout.roster_path
    raw_members = document.get(layout.roster_key)
    raw_members = [] if raw_members is None else raw_members
    if not isinstance(raw_members, list):
        raise TetherError(f"{where}: {layout.roster_key} must be a list")
    members = tuple(
        _member(item, f"{where}: {layout.roster_key}[{i}]") for i, item in enumerate(raw_members)
    )
    return Roster(
        path=layout.roster_path,
        members=members,
        machinery=_globs(document.get("machinery"), f"{where}: machinery"),
        hooks=_globs(document.get("hooks", list(layout.default_hooks)), f"{where}: hooks"),
        posix=_globs(document.get("posix", list(DEFAULT_POSIX_GLOBS)), f"{where}: posix"),
    )


def _read_yaml(path: Path, where: str) -> dict[str, Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from tether.parselimits import NESTED_TOO_DEEPLY, shape_problem

    try:
        document = YAML(typ="safe").load(read_bytes(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, YAMLError) as error:
        raise TetherError(f"{where}: cannot read the roster: {error}") from None
    except RecursionError:
        raise TetherError(f"{where}: cannot read the roster: {NESTED_TOO_DEEPLY}") from None
    beyond = shape_problem(document)
    if beyond is not None:
        raise TetherError(f"{where}: cannot read the roster: {beyond}")
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise TetherError(f"{where}: the roster must be a mapping")
    return document


def _member(item: object, where: str) -> Member:
    if not isinstance(item, dict):
        raise TetherError(f"{where}: must be a mapping with name and globs")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TetherError(f"{where}: name must be a non-empty string")
    globs = _globs(item.get("globs"), f"{where}: globs")
    if not globs:
        raise TetherError(f"{where}: globs must list at least one glob")
    return Member(name=name.strip(), globs=globs)


def _globs(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
        raise TetherError(f"{where}: must be a list of non-empty glob strings")
    return tuple(g.strip() for g in value)


def read_remit_file(path: str) -> list[str]:
    """Globs from a file, one a line; blank lines and ``#`` comments are skipped."""
    try:
        text = read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--remit-file {path}: {error}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def resolve_remit(
    roster: Roster,
    *,
    remits: Sequence[str] = (),
    member: str | None = None,
    machinery: Sequence[str] = (),
    require_member: bool = False,
) -> Remit:
    """The remit a command works on: ad hoc globs, a roster member, or every file.

    Ad hoc globs bring only ``--machinery`` with them; a roster member also brings the
    roster's machinery and the roster file itself, whose edits change every remit.
    """
    if remits:
        if require_member and not member:
            raise UsageError("--member NAME is required to name the ad hoc remit")
        return Remit(member=member, globs=tuple(remits), machinery=tuple(machinery))
    if member:
        found = roster.member(member)
        shared = (*roster.machinery, *((roster.path,) if roster.path else ()))
        return Remit(member=found.name, globs=found.globs, machinery=(*shared, *machinery))
    if require_member:
        raise UsageError("--member NAME is required")
    return Remit(member=None, globs=())
