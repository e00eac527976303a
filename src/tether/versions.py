"""Semantic-version parsing and ordering (SemVer 2.0 precedence), pure."""

from __future__ import annotations

import re
from functools import total_ordering

from tether.valueclass import valueclass

# Compiled on first use (re keeps it): a clean status compares no versions.
_SEMVER = (
    r"^v?(?P<major>0|[1-9]\d*)(?:\.(?P<minor>0|[1-9]\d*))?(?:\.(?P<patch>0|[1-9]\d*))?"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@total_ordering
@valueclass(frozen=True)
class SemVer:
    """A semantic version, ordered as semver orders them."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: str = ""

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        # A release sorts after all of its prereleases; numeric identifiers sort
        # before alphanumeric ones and compare as numbers.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + self.build
        return text


def parse_version(text: str) -> SemVer | None:
    """Parse ``1.2.3``, ``v1.2.3-rc.1``, ``1.2`` or ``1``; None when it is not a version."""
    match = re.match(_SEMVER, text.strip())
    if match is None:
        return None
    pre = match.group("pre")
    return SemVer(
        int(match.group("major")),
        int(match.group("minor") or 0),
        int(match.group("patch") or 0),
        tuple(pre.split(".")) if pre else (),
        match.group("build") or "",
    )


def is_version(text: str) -> bool:
    return parse_version(text) is not None


def sort_versions(versions: list[str], include_prereleases: bool = True) -> list[str]:
    """Ascending semver order; strings that are not versions are dropped.

    Without ``include_prereleases`` prereleases are left out; with it they take
    their semver place (before the release they lead up to).
    """
    parsed = [(parse_version(v), v) for v in versions]
    kept = [
        (sv, v)
        for sv, v in parsed
        if sv is not None and (include_prereleases or not sv.is_prerelease)
    ]
    kept.sort(key=lambda item: (item[0], item[1]))
    return [v for _, v in kept]


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1; raises ValueError when either is not a version."""
    va, vb = parse_version(a), parse_version(b)
    if va is None or vb is None:
        raise ValueError(f"not a version: {a if va is None else b!r}")
    return (va > vb) - (va < vb)


def strip_v(version: str) -> str:
    return version[1:] if version[:1] in ("v", "V") and is_version(version) else version


def release_version(text: str) -> str:
    """The version a person or a tag names, as tether records and compares it: ``v2.0.0``
    and ``2.0.0`` are one release, recorded as ``2.0.0``; text that is no version (a
    template's branch or commit) is kept as given, without surrounding blanks."""
    return strip_v(text.strip())


def same_release(left: str, right: str) -> bool:
    """``left`` and ``right`` name the same release: equal by version precedence when both
    are versions (``v2.0.0``, ``2.0.0`` and ``2.0`` are one), else equal as text."""
    parsed_left, parsed_right = parse_version(left), parse_version(right)
    if parsed_left is not None and parsed_right is not None:
        return parsed_left == parsed_right and parsed_left.build == parsed_right.build
    return left.strip() == right.strip()
