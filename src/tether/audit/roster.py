"""Members and remits: who reviews which files, and which files the gate itself runs on.

A remit is a list of gitignore-style globs (``**`` crosses folders, a glob without ``/``
matches at any depth, ``!`` re-includes). Members come from a roster file or, ad hoc, from
repeated ``--remit`` options.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from tether import git
from tether.audit.workspace import Layout
from tether.errors import TetherError, UsageError
from tether.fsio import read_bytes
from tether.parselimits import NESTED_TOO_DEEPLY, shape_problem

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
    framework_machinery: tuple[str, ...] = ()  # from the framework's list (gaia), as globs

    @property
    def shared_machinery(self) -> tuple[str, ...]:
        """Every member's machinery: the framework's list, the roster's, the roster file."""
        own = (*self.machinery, *((self.path,) if self.path else ()))
        return (*self.framework_machinery, *own)

    def member(self, name: str) -> Member:
        for member in self.members:
            if member.name == name:
                return member
        if self.path is None:
            raise TetherError(f"no roster found; name the files with --remit GLOB ({name!r})")
        known = ", ".join(m.name for m in self.members) or "none"
        raise TetherError(f"{self.path}: no member {name!r} (members: {known})")


def glob_problem(glob: str) -> str | None:
    """Why ``glob`` is not a valid gitignore-style glob, or None."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([glob])
    except (ValueError, re.error) as error:  # pathspec's pattern errors are ValueErrors
        return str(error).splitlines()[0] if str(error) else type(error).__name__
    return None


def check_globs(globs: Iterable[str], where: str, error: type[TetherError] = TetherError) -> None:
    """Raise ``error`` naming the first invalid glob: one line, never a traceback later."""
    for glob in globs:
        problem = glob_problem(glob)
        if problem is not None:
            raise error(f"{where}: invalid glob {glob!r} ({problem})")


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
    framework = framework_machinery(root, layout)
    if not path.is_file():
        return Roster(path=None, hooks=layout.default_hooks, framework_machinery=framework)
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
        framework_machinery=framework,
    )


_MACHINERY_LIST: Final = re.compile(
    r"^AUDIT_MACHINERY_PATHS=\"\$\(cat <<'?(\w+)'?\n(.*?)^\1$", re.MULTILINE | re.DOTALL
)
_GLOB_SPECIAL: Final = re.compile(r"([\\*?\[])")


def framework_machinery(root: Path, layout: Layout) -> tuple[str, ...]:
    """The framework's own machinery list, from HEAD's bytes, as gitignore globs.

    GAIA names it once, in ``AUDIT_MACHINERY_PATHS`` of its machinery library: an entry
    ending in ``/**`` is every file under that folder, any other entry one exact path, and
    a ``.bats`` suite is never machinery. Read from the committed tree (the digest is over
    HEAD), never hard-coded, so an edit to the list is honoured by the next digest. A
    library without the list fails closed: a digest missing the machinery would keep
    every marker valid across an edit to the gate itself.
    """
    if layout.machinery_list is None:
        return ()
    data = git.read_blob(root, f"HEAD:{layout.machinery_list}")
    if data is None:
        return ()
    match = _MACHINERY_LIST.search(data.decode("utf-8", "replace"))
    if match is None:
        raise TetherError(
            f"{layout.machinery_list}: cannot find the AUDIT_MACHINERY_PATHS list; the "
            "digest would leave the gate machinery out"
        )
    globs = []
    for line in match.group(2).splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.endswith("/**"):
            globs.append("/" + _GLOB_SPECIAL.sub(r"\\\1", entry[:-2]) + "**")
        else:
            globs.append("/" + _GLOB_SPECIAL.sub(r"\\\1", entry))
    return (*globs, "!*.bats") if globs else ()


def _read_yaml(path: Path, where: str) -> dict[str, Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

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
    globs = tuple(g.strip() for g in value)
    check_globs(globs, where)
    return globs


def read_remit_file(path: str) -> list[str]:
    """Globs from a file, one a line; blank lines and ``#`` comments are skipped."""
    try:
        text = read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--remit-file {path}: {error}") from None
    lines = (line.strip() for line in text.splitlines())
    globs = [line for line in lines if line and not line.startswith("#")]
    check_globs(globs, f"--remit-file {path}", UsageError)
    return globs


def resolve_remit(
    roster: Roster,
    *,
    remits: Sequence[str] = (),
    member: str | None = None,
    machinery: Sequence[str] = (),
    require_member: bool = False,
) -> Remit:
    """The remit a command works on: ad hoc globs, a roster member, or every file.

    Ad hoc globs bring ``--machinery`` and the framework's machinery list (gaia) with them;
    a roster member also brings the roster's machinery and the roster file itself, whose
    edits change every remit.
    """
    check_globs(remits, "--remit", UsageError)
    check_globs(machinery, "--machinery", UsageError)
    if remits:
        if require_member and not member:
            raise UsageError("--member NAME is required to name the ad hoc remit")
        shared = roster.framework_machinery  # the framework's gate: every member's
        return Remit(member=member, globs=tuple(remits), machinery=(*shared, *machinery))
    if member:
        found = roster.member(member)
        return Remit(
            member=found.name, globs=found.globs, machinery=(*roster.shared_machinery, *machinery)
        )
    if require_member:
        raise UsageError("--member NAME is required")
    return Remit(member=None, globs=())
