"""Rules every source kind shares: how an asked version is read, matched and reported."""

from __future__ import annotations

from collections.abc import Mapping

from tether.errors import TetherError
from tether.versions import parse_version, sort_versions, strip_v

# The not-found message lists at most this many versions (newest first kept).
_SHOWN = 10


def asked_version(version: str, spec: str) -> str:
    """The asked version without a leading ``v``; TetherError when it is not a version."""
    stripped = strip_v(version.strip())
    if parse_version(stripped) is None or stripped.startswith("v"):
        raise TetherError(f"{version!r} is not a version (expected e.g. 1.2.0) for source {spec}")
    return stripped


def match_version(version: str, offered: Mapping[str, str]) -> str | None:
    """The entry of ``offered`` (listed version -> its name at the source) for ``version``.

    An exact match wins; otherwise semver equality, so ``1.2`` finds ``1.2.0``.
    """
    if version in offered:
        return offered[version]
    wanted = parse_version(version)
    for listed in sort_versions(list(offered)):
        if parse_version(listed) == wanted:
            return offered[listed]
    return None


def not_found(version: str, spec: str, offered: list[str]) -> TetherError:
    ordered = sort_versions(offered, include_prereleases=True)
    shown = ", ".join(ordered[-_SHOWN:]) or "none"
    if len(ordered) > _SHOWN:
        shown = f"... {shown}"
    return TetherError(f"version {version} not found in {spec} (available: {shown})")


def version_names(names: list[str]) -> dict[str, str]:
    """Map listed version -> name for the names (folders, tags) that are versions.

    ``v1.2.0`` and ``1.2.0`` list as ``1.2.0``; when both exist the unprefixed one wins.
    """
    offered: dict[str, str] = {}
    for name in sorted(names, key=lambda n: n.startswith("v")):
        if parse_version(name) is None:
            continue
        offered.setdefault(strip_v(name), name)
    return offered
