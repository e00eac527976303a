"""Each occurrence's own target for a level, with release-age gating.

The meaning is npm-check-updates': the window is measured from the lowest version the
declared range admits, so ``^1.2.3`` at ``patch`` looks at 1.2.x, at ``minor`` at 1.x, and at
``major`` takes the newest stable release up to the ``latest`` dist-tag (PyPI: the version
its JSON API calls current). Prereleases and deprecated or yanked releases are never
targets. A release whose publish time the registry does not give is never old enough: the
gate fails closed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from tether.deps import npmspec, pyspec
from tether.deps.model import (
    Ecosystem,
    HeldBack,
    Level,
    Occurrence,
    PackageInfo,
    Release,
    ReleaseGate,
    Resolved,
)
from tether.report.deps import held_back_reason


class Dialect(Protocol):
    """Version arithmetic of one ecosystem (``npmspec`` and ``pyspec`` both provide it)."""

    def valid(self, version: str) -> bool: ...
    def is_prerelease(self, version: str) -> bool: ...
    def compare(self, left: str, right: str) -> int: ...
    def parts(self, version: str) -> tuple[int, int, int]: ...
    def admits(self, spec: str, version: str) -> bool: ...
    def sort_key(self, version: str) -> Any: ...


def dialect_of(ecosystem: Ecosystem) -> Dialect:
    # Node and package-manager versions are semver, so engines use npm's arithmetic.
    return cast(Dialect, pyspec if ecosystem == "pypi" else npmspec)


FLAG_SETTING = "--min-release-age"


@dataclass(frozen=True)
class AgePolicy:
    """How old a release must be: ``flag`` (the command line) applies to every package, each
    of ``gates`` (the project's own configuration) to the names it does not spare. The
    strictest applicable one wins."""

    flag: timedelta | None = None
    gates: tuple[ReleaseGate, ...] = ()

    def strictest(self, name: str) -> ReleaseGate | None:
        found = [ReleaseGate(FLAG_SETTING, self.flag)] if self.flag else []
        found += [g for g in self.gates if g.age and not _excluded(name, g.exclude)]
        return max(found, key=lambda g: g.age) if found else None

    def min_age(self, name: str) -> timedelta | None:
        gate = self.strictest(name)
        return gate.age if gate else None

    def old_enough(self, release: Release, name: str, now: datetime) -> bool:
        return _old_enough(release, self.min_age(name), now)


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def in_window(candidate: tuple[int, int, int], floor: tuple[int, int, int], level: Level) -> bool:
    if level == "patch":
        return candidate[:2] == floor[:2]
    if level == "minor":
        return candidate[0] == floor[0]
    return True


def pick(
    info: PackageInfo,
    floor_version: str,
    level: Level,
    policy: AgePolicy,
    now: datetime,
) -> str | None:
    """The newest eligible version in the level's window above ``floor_version``, or None."""
    dialect = dialect_of(info.ecosystem)
    if not dialect.valid(floor_version):
        return None
    floor = dialect.parts(floor_version)
    cap = info.latest if level == "major" and _stable(dialect, info.latest) else None
    needed = policy.min_age(info.name)
    key = _stable_key(dialect)
    best: str | None = None
    for release in info.releases:
        version = release.version
        if release.withdrawn or not _stable(dialect, version):
            continue
        if not in_window(dialect.parts(version), floor, level):
            continue
        if cap is not None and key(version) > key(cap):
            continue
        if best is not None and key(version) <= key(best):
            continue
        if _old_enough(release, needed, now):
            best = version
    if best is None or dialect.compare(best, floor_version) <= 0:
        return None
    return best


def _stable_key(dialect: Dialect) -> Callable[[str], Any]:
    # Among stable semver versions precedence is the (major, minor, patch) tuple, much
    # cheaper than node-semver's comparison, which a large plan makes ~100,000 times.
    return npmspec.parts if dialect is cast(Dialect, npmspec) else dialect.sort_key


def _old_enough(release: Release, needed: timedelta | None, now: datetime) -> bool:
    if needed is None:
        return True
    if release.published is None:
        return False  # no publish time: its age cannot be shown, so it is too new
    return now - release.published >= needed


def _stable(dialect: Dialect, version: str | None) -> bool:
    return version is not None and dialect.valid(version) and not dialect.is_prerelease(version)


def resolve(
    occurrence: Occurrence,
    info: PackageInfo,
    level: Level,
    policy: AgePolicy,
    now: datetime,
) -> Resolved:
    """The occurrence with its own target; None when the written text would not change."""
    target = pick(info, occurrence.min_version, level, policy, now)
    held = held_back(info, occurrence.min_version, level, policy, now, target)
    resolved = Resolved(occurrence, target, held)
    if target is not None and resolved.target_declared.raw == occurrence.declared.raw:
        return Resolved(occurrence, None, held)  # ``~=2.31`` already admits 2.31.4
    return resolved


def held_back(
    info: PackageInfo,
    floor_version: str,
    level: Level,
    policy: AgePolicy,
    now: datetime,
    target: str | None,
) -> HeldBack | None:
    """The version the level would take without any age gate, when a gate kept it out."""
    gate = policy.strictest(info.name)
    if gate is None:
        return None
    free = pick(info, floor_version, level, AgePolicy(), now)
    if free is None or (
        target is not None and dialect_of(info.ecosystem).compare(free, target) <= 0
    ):
        return None
    release = next(r for r in info.releases if r.version == free)
    age = None if release.published is None else now - release.published
    return HeldBack(free, held_back_reason(release.version, age, gate.setting, gate.age))


def eligible(
    info: PackageInfo, version: str, policy: AgePolicy, now: datetime, name: str | None = None
) -> bool:
    """Whether ``version`` is a release the policy lets this occurrence move to."""
    for release in info.releases:
        if release.version == version:
            return not release.withdrawn and policy.old_enough(release, name or info.name, now)
    return False
