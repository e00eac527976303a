"""`tether region-compare`: compare three copies of a region file with the region masked."""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, print_json
from tether.engine.regions import (
    SIDES,
    RegionComparison,
    SideScan,
    compare_region_file,
    marker_problem,
)
from tether.errors import Exit, TetherError, UsageError

_VERDICT_TEXT = {
    "no-upstream-change": "upstream did not change the file outside the region: keep current",
    "no-adopter-drift": "current matches the baseline outside the region: take latest",
    "already-latest": "current already matches latest outside the region: keep current",
    "conflict": "both sides changed the file outside the region",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline", required=True, type=Path, metavar="FILE", help="the installed release's file"
    )
    parser.add_argument(
        "--latest", required=True, type=Path, metavar="FILE", help="the new release's file"
    )
    parser.add_argument(
        "--current", required=True, type=Path, metavar="FILE", help="the project's file"
    )
    parser.add_argument("--start-marker", required=True, metavar="LINE")
    parser.add_argument("--end-marker", required=True, metavar="LINE")
    add_json(parser)


def _check_markers(start: str, end: str) -> None:
    for option, marker in (("--start-marker", start), ("--end-marker", end)):
        problem = marker_problem(marker)
        if problem:
            raise UsageError(f"{option}: {problem}")
    if start == end:
        raise UsageError("--start-marker and --end-marker must differ")


def _read(option: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise TetherError(f"cannot read {option} {path}: {error.strerror or error}") from error


def _side_text(name: str, side: SideScan) -> str:
    scan = side.scan
    if scan.kind == "region":
        where = f"region at lines {scan.start_line}-{scan.end_line}"
    elif scan.kind == "absent":
        where = "no markers"
    else:
        where = f"malformed markers ({scan.reason})"
    return f"  {name}: {where}, {'masked' if side.masked else 'compared raw'}"


def _summary(comparison: RegionComparison) -> str:
    lines = [f"{comparison.verdict}: {_VERDICT_TEXT[comparison.verdict]}"]
    lines += [_side_text(name, comparison.side(name)) for name in SIDES]
    if comparison.bailed:
        lines.append("  fallback: malformed-markers (no side masked)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    _check_markers(args.start_marker, args.end_marker)
    baseline, latest, current = (_read(f"--{name}", getattr(args, name)) for name in SIDES)
    comparison = compare_region_file(baseline, latest, current, args.start_marker, args.end_marker)
    if args.json:
        print_json(comparison.document(), versioned=False)  # GAIA fixes this shape
    else:
        print(_summary(comparison))
    return Exit.OK
