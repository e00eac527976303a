"""``tether merge-driver``: git's merge driver. Files with a field-merge rule (from the
project's manifest or profile) merge key by key; everything else gets tether's line merge.
The result is written over the current version, as git expects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.fsio import atomic_write, read_bytes, read_named_file
from tether.parselimits import json_loads


@dataclass(frozen=True)
class DriverResult:
    """What the driver did to ``path``; ``written`` is the file git gave as %A."""

    path: str
    written: str
    merge: str  # "fields" or "lines"
    conflicts: int
    binary: bool

    @property
    def clean(self) -> bool:
        return self.conflicts == 0 and not self.binary

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "written": self.written,
            "merge": self.merge,
            "clean": self.clean,
            "conflicts": self.conflicts,
            "binary": self.binary,
        }


def _read(role: str, name: str) -> bytes:
    from tether.engine.textmerge import TEXT_MERGE_MAX_BYTES

    return read_named_file(
        name, f"the {role} version", TEXT_MERGE_MAX_BYTES, "tether merges at most; merge it by hand"
    )


def rule_for_path(root: Path, rel: str) -> dict[str, Any] | None:
    """The field-merge rule a project declares for ``rel``: its installed manifest's
    ``merge`` entry, else its profile's default preset."""
    from tether.profiles import PROFILES

    for profile in PROFILES.values():
        manifest = root / profile.manifest_path
        if manifest.is_file():
            try:
                merge = json_loads(read_bytes(manifest)).get("merge") or {}
            except (OSError, ValueError, AttributeError):
                merge = {}
            if isinstance(merge, dict) and isinstance(merge.get(rel), dict):
                return dict(merge[rel])
            if rel in profile.field_merges:
                return {"preset": profile.field_merges[rel]}
    return None


def _structured(
    rel: str, spec: dict[str, Any], base: bytes, ours: bytes, theirs: bytes
) -> bytes | None:
    """The key-by-key result when it is clean; None to fall back to the line merge."""
    from tether.engine.structured import merge_structured, rules_for

    try:
        rules = rules_for(rel, spec)
    except ValueError:
        return None
    result = merge_structured(rel, rules, base, theirs, ours)
    if result.unread or result.conflicts:
        return None
    return result.new_text


def merge_driver(
    ancestor: str, current: str, other: str, path: str, preset: str | None, root: Path
) -> DriverResult:
    """Merge ``ancestor`` (%O), ``current`` (%A) and ``other`` (%B) into ``current``;
    ``path`` (%P) picks the rule (``preset`` forces one) in the repository at ``root``."""
    from tether.flows.merging import merge_sides

    base = _read("ancestor", ancestor)
    ours = _read("current", current)
    theirs = _read("other", other)
    spec = {"preset": preset} if preset else rule_for_path(root, path)
    merged = _structured(path, spec, base, ours, theirs) if spec else None
    if merged is not None:
        atomic_write(Path(current), merged)
        return DriverResult(path, current, "fields", 0, binary=False)
    result, _note = merge_sides(base, ours, theirs)
    atomic_write(Path(current), result.merged)
    return DriverResult(path, current, "lines", result.conflicts, binary=result.binary)
