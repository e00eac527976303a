"""``tether merge-driver %O %A %B %P``: a git merge driver.

Files with a field-merge rule (from the project's manifest or profile) merge key by key;
everything else gets tether's line merge. The result is written to %A, as git expects;
exit 0 when clean, 1 when conflicts remain (git then marks the path unmerged). With
``--json`` it also prints what it did (git ignores a driver's output).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tether.cli.common import add_json, print_json
from tether.errors import MERGE_DRIVER_CONFLICTS, Exit, TetherError
from tether.parselimits import json_loads


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ancestor", metavar="%O", help="the merge base's version (a temp file)")
    parser.add_argument("current", metavar="%A", help="our version; the result is written here")
    parser.add_argument("other", metavar="%B", help="their version (a temp file)")
    parser.add_argument("path", metavar="%P", help="the path being merged, relative to the repo")
    parser.add_argument("--preset", metavar="P", help="force a field-merge preset for this file")
    add_json(parser)


def _read(role: str, name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except OSError as error:
        raise TetherError(f"{name}: cannot read the {role} version ({error.strerror})") from None


def rule_for_path(root: Path, rel: str) -> dict[str, Any] | None:
    """The field-merge rule a project declares for ``rel``: its installed manifest's
    ``merge`` entry, else its profile's default preset."""
    from tether.profiles import PROFILES

    for profile in PROFILES.values():
        manifest = root / profile.manifest_path
        if manifest.is_file():
            try:
                merge = json_loads(manifest.read_bytes()).get("merge") or {}
            except (ValueError, AttributeError):
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
    if result.parse_error is not None or result.conflicts:
        return None
    return result.new_text


def run(args: argparse.Namespace) -> int:
    from tether.engine.textmerge import merge3
    from tether.fsio import atomic_write

    base = _read("ancestor", args.ancestor)
    ours = _read("current", args.current)
    theirs = _read("other", args.other)
    spec = {"preset": args.preset} if args.preset else rule_for_path(Path.cwd(), args.path)
    merged = _structured(args.path, spec, base, ours, theirs) if spec else None
    if merged is not None:
        atomic_write(Path(args.current), merged)
        return _done(args, "fields", 0, binary=False)
    result = merge3(base, ours, theirs)
    atomic_write(Path(args.current), result.merged)
    return _done(args, "lines", result.conflicts, binary=result.binary)


def _done(args: argparse.Namespace, merge: str, conflicts: int, *, binary: bool) -> int:
    clean = conflicts == 0 and not binary
    if args.json:
        document = {
            "path": args.path,
            "written": args.current,
            "merge": merge,
            "clean": clean,
            "conflicts": conflicts,
            "binary": binary,
        }
        print_json(document)
    return Exit.OK if clean else MERGE_DRIVER_CONFLICTS
