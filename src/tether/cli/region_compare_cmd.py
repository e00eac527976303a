"""`tether region-compare`: compare three copies of a region file with the region masked."""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, print_json
from tether.engine.regions import marker_problem
from tether.errors import Exit, UsageError


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
    parser.add_argument(
        "--start-marker", required=True, metavar="LINE", help="the line that opens the region"
    )
    parser.add_argument(
        "--end-marker", required=True, metavar="LINE", help="the line that closes the region"
    )
    add_json(parser)


def _check_markers(start: str, end: str) -> None:
    for option, marker in (("--start-marker", start), ("--end-marker", end)):
        problem = marker_problem(marker)
        if problem:
            raise UsageError(f"{option}: {problem}")
    if start == end:
        raise UsageError("--start-marker and --end-marker must differ")


def run(args: argparse.Namespace) -> int:
    from tether.flows.region_compare import compare_region_files
    from tether.report.regions import render_comparison

    _check_markers(args.start_marker, args.end_marker)
    comparison = compare_region_files(
        args.baseline, args.latest, args.current, args.start_marker, args.end_marker
    )
    if args.json:
        print_json(comparison.document(), versioned=False)  # GAIA fixes this shape
    else:
        print(render_comparison(comparison))
    return Exit.OK
