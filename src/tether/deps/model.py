"""Plain values of the deps work: where a version is declared, what the registry knows.

Everything is a frozen dataclass so scans, plans and results compare in tests and cross
threads without anyone mutating them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

Ecosystem = Literal["npm", "pypi", "engine"]
Level = Literal["patch", "minor", "major", "engines"]
FileFormat = Literal["json", "yaml", "toml", "text"]

LEVELS: tuple[Level, ...] = ("patch", "minor", "major", "engines")
DataPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Locus:
    """Where one version string sits: a file of the project and the place inside it.

    ``data_path`` addresses the string value for the structured writers (mapping keys and
    list indexes); for a plain-text file (``.nvmrc``) it is the line index.
    """

    source_file: str  # POSIX path relative to the project root
    location: str  # what a person reads: "dependencies", "catalogs.react17", ".nvmrc", …
    fmt: FileFormat
    data_path: DataPath


@dataclass(frozen=True)
class Declared:
    """A rewritable declaration: ``prefix + op + version + suffix`` is the stored string.

    ``op`` is the range operator kept on rewrite (``^``, ``~``, ``==``, ``>=``, or empty for
    an exact version); ``prefix``/``suffix`` are structure around it that stays (a Python
    requirement's name and markers, ``pnpm@`` of ``packageManager``). ``precision`` is the
    number of version components written back (None: the whole target); ``drop_suffix``
    says the suffix no longer holds for another version (``packageManager``'s hash).
    """

    prefix: str
    op: str
    version: str
    suffix: str = ""
    precision: int | None = None
    drop_suffix: bool = False

    @property
    def raw(self) -> str:
        return f"{self.prefix}{self.op}{self.version}{self.suffix}"

    @property
    def shown(self) -> str:
        """The part a person compares: operator and version."""
        return f"{self.op}{self.version}"

    def with_version(self, version_text: str) -> Declared:
        return replace(self, version=version_text, suffix="" if self.drop_suffix else self.suffix)


@dataclass(frozen=True)
class Occurrence:
    """One declared version of one package in one project."""

    project: str
    ecosystem: Ecosystem
    name: str
    declared: Declared
    locus: Locus
    catalog: str | None = None  # a named pnpm catalog: its own version line, aligned apart
    min_version: str = ""  # the lowest version the declared range admits

    @property
    def group_key(self) -> tuple[str, str, str]:
        return (self.ecosystem, self.name, self.catalog or "")


class Unmovable(StrEnum):
    """Why ``deps`` leaves a declaration as it is: the code of a ``LeftAlone``, worded by
    ``report/deps.left_alone`` into a ``Skipped``'s ``reason``."""

    NOT_A_STRING = "not-a-string"
    REFERENCE = "reference"  # ``detail``: what it refers to (a git dependency, a file…)
    UNION_RANGE = "union-range"
    HYPHEN_RANGE = "hyphen-range"
    UPPER_BOUNDED_RANGE = "upper-bounded-range"
    PARTIAL_VERSION = "partial-version"
    OPEN_RANGE = "open-range"
    NOT_SEMVER = "not-semver"
    COMPOUND_RANGE = "compound-range"
    NOT_PEP508 = "not-pep508"
    DIRECT_REFERENCE = "direct-reference"
    NO_SPECIFIER = "no-specifier"
    UPPER_BOUNDED_SET = "upper-bounded-set"
    SEVERAL_SPECIFIERS = "several-specifiers"
    OPERATOR = "operator"  # ``detail``: the operator
    WILDCARD = "wildcard"
    NOT_PLAIN_RELEASE = "not-plain-release"
    SPECIFIER_NOT_FOUND = "specifier-not-found"
    MANAGER_NOT_NAME_AT_VERSION = "manager-not-name-at-version"
    MANAGER_NOT_FULL_VERSION = "manager-not-full-version"
    ENGINE_ALIAS = "engine-alias"
    ENGINE_NOT_SIMPLE = "engine-not-simple"
    SEVERAL_ON_A_LINE = "several-on-a-line"
    PUBLISHED_ENGINES = "published-engines"
    EXPRESSION = "expression"
    DIGEST = "digest"
    MATRIX = "matrix"
    NOT_PLAIN_VERSION = "not-plain-version"  # ``detail``: the value as written


@dataclass(frozen=True)
class LeftAlone:
    code: Unmovable
    detail: str = ""


@dataclass(frozen=True)
class Skipped:
    """A declaration tether will not rewrite, and why (never silently dropped)."""

    project: str
    ecosystem: Ecosystem
    name: str
    current: str
    locus: Locus
    reason: str
    kind: str = "unsupported-range"  # | unknown-package | registry-error | published-engines

    def to_json(self) -> dict[str, Any]:
        return {
            "project_name": self.project,
            "ecosystem": self.ecosystem,
            "name": self.name,
            "current_version": self.current,
            "location": self.locus.location,
            "source_file": self.locus.source_file,
            "kind": self.kind,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Release:
    version: str
    published: datetime | None  # None: the registry gave no time, so its age is unknown
    withdrawn: bool = False  # npm deprecated, PyPI yanked
    note: str = ""  # why it was withdrawn, as the registry says (npm's deprecation message)
    peers: tuple[str, ...] = ()  # the names its peerDependencies declare (npm)


@dataclass(frozen=True)
class PackageInfo:
    ecosystem: Ecosystem
    name: str
    releases: tuple[Release, ...]
    latest: str | None  # npm's `latest` dist-tag, PyPI's info.version
    repository: str | None = None  # where its source lives, as the registry names it
    directory: str | None = None  # the package's folder inside that repository (monorepos)


@dataclass(frozen=True)
class ReleaseGate:
    """How old a release must be, the setting that says so (shown in reasons) and the
    package-name patterns it spares."""

    setting: str
    age: timedelta
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class HeldBack:
    """A newer version a release-age gate kept from being the target, and why."""

    version: str
    reason: str


@dataclass(frozen=True)
class Resolved:
    """An occurrence and its own target (None: nothing newer for it at this level)."""

    occurrence: Occurrence
    target: str | None
    held_back: HeldBack | None = None

    @property
    def target_declared(self) -> Declared:
        if self.target is None:
            return self.occurrence.declared
        return self.occurrence.declared.with_version(
            render_precision(self.target, self.occurrence.declared.precision)
        )


def render_precision(version: str, precision: int | None) -> str:
    """``22.11.0`` at precision 1 is ``22``: a declaration keeps how many parts it had."""
    if precision is None:
        return version
    core = version.split("-", 1)[0].split("+", 1)[0]
    return ".".join(core.split(".")[:precision])
