"""PEP 440 requirements: which ones tether rewrites, and version arithmetic via ``packaging``.

A requirement is rewritten only when it has one specifier whose operator keeps its meaning
with a newer version: ``==V`` (exact), ``>=V`` (a floor) and ``~=V`` (compatible release,
written back with as many components as it had). Only the version text changes: the name,
extras, spacing and markers stay as written.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tether.deps.model import Declared, LeftAlone, Unmovable

_REWRITABLE = ("==", ">=", "~=")


def canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def classify(requirement: str) -> tuple[str, Declared | LeftAlone]:
    """(canonical name, the declaration to rewrite or why it is left alone)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return requirement.strip(), LeftAlone(Unmovable.NOT_PEP508)
    name = canonical(parsed.name)
    if parsed.url:
        return name, LeftAlone(Unmovable.DIRECT_REFERENCE)
    specs = list(parsed.specifier)
    if not specs:
        return name, LeftAlone(Unmovable.NO_SPECIFIER)
    if len(specs) > 1:
        if any(s.operator in ("<", "<=") for s in specs):
            return name, LeftAlone(Unmovable.UPPER_BOUNDED_SET)
        return name, LeftAlone(Unmovable.SEVERAL_SPECIFIERS)
    spec = specs[0]
    if spec.operator not in _REWRITABLE:
        return name, LeftAlone(Unmovable.OPERATOR, spec.operator)
    if spec.version.endswith(".*"):
        return name, LeftAlone(Unmovable.WILDCARD)
    if parse(spec.version) is None or "+" in spec.version:
        return name, LeftAlone(Unmovable.NOT_PLAIN_RELEASE)
    declared = _locate(requirement, spec.operator, spec.version)
    if declared is None:
        return name, LeftAlone(Unmovable.SPECIFIER_NOT_FOUND)
    return name, declared


def _locate(requirement: str, op: str, version: str) -> Declared | None:
    # Markers come after ";" and may hold the same version text, so search before it.
    head = requirement.split(";", 1)[0]
    match = re.search(rf"(?P<op>{re.escape(op)}\s*)(?P<v>{re.escape(version)})", head)
    if match is None:
        return None
    precision = len(version.split(".")) if op == "~=" else None
    return Declared(
        prefix=requirement[: match.start("op")],
        op=match["op"],
        version=version,
        suffix=requirement[match.end("v") :],
        precision=precision,
    )


@functools.lru_cache(maxsize=1 << 16)
def parse(version: str) -> Any:
    """A ``packaging`` Version, or None for text that is not PEP 440."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version)
    except InvalidVersion:
        return None


def valid(version: str) -> bool:
    return parse(version) is not None


def is_prerelease(version: str) -> bool:
    parsed = parse(version)
    return bool(parsed is not None and (parsed.is_prerelease or parsed.is_devrelease))


def sort_key(version: str) -> Any:
    return parse(version)


def compare(left: str, right: str) -> int:
    a, b = parse(left), parse(right)
    return int(a > b) - int(a < b)


def parts(version: str) -> tuple[int, int, int]:
    release = (*parse(version).release, 0, 0, 0)
    return int(release[0]), int(release[1]), int(release[2])


def admits(specifier: str, version: str) -> bool:
    """Whether ``specifier`` admits ``version``; prereleases never (packaging >= 26 would)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return bool(SpecifierSet(specifier).contains(version, prereleases=False))
    except InvalidSpecifier:
        return False
