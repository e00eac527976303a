"""Rules every source kind shares: how an asked version is read, matched and reported."""

from __future__ import annotations

from collections.abc import Mapping

from tether.errors import TetherError
from tether.model.source_notes import SourceNote, SourceSaid
from tether.versions import parse_version, sort_versions, strip_v

# The not-found message lists at most this many versions (newest first kept).
_SHOWN = 10

# A path or URL naming tarballs: which releases, and what a tarball's name ends with. Here,
# not in the tarball kind, so telling the kinds apart imports none of them.
PLACEHOLDERS = ("{version}", "{tag}")
TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


def has_placeholder(text: str) -> bool:
    return any(p in text for p in PLACEHOLDERS)


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


class Offered(dict[str, str]):
    """Listed version -> its name at the source, and ``shadowed``: listed version -> the
    other name of a version two names spell (``v1.2.0`` beside ``1.2.0``)."""

    def __init__(self) -> None:
        super().__init__()
        self.shadowed: dict[str, str] = {}


def version_names(names: list[str]) -> Offered:
    """Map listed version -> name for the names (folders, tags) that are versions.

    ``v1.2.0`` and ``1.2.0`` list as ``1.2.0``; when both exist the unprefixed one wins, and
    the other is kept in ``shadowed`` so the choice can be said (``twin_note``).
    """
    offered = Offered()
    for name in sorted(names, key=lambda n: n.startswith("v")):
        if parse_version(name) is None:
            continue
        listed = strip_v(name)
        if listed in offered:
            offered.shadowed.setdefault(listed, name)
        else:
            offered[listed] = name
    return offered


def twin_note(spec: str, offered: Mapping[str, str], used: str) -> SourceNote | None:
    """The note saying which of two names of one version was used; None when it had no
    twin."""
    listed = next((version for version, name in offered.items() if name == used), None)
    other = getattr(offered, "shadowed", {}).get(listed) if listed is not None else None
    if listed is None or other is None:
        return None
    return SourceNote(SourceSaid.TWIN_NAMES, spec, used, other, listed)
