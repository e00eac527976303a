"""``tether verify``: prove that a merged file kept every line the adopter wrote.

Exit 0 when RESULT preserves CURRENT's changes relative to BASELINE, 1 when a line was dropped or a
deleted line came back (each listed with its line number).
"""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_removed, print_json
from tether.engine.textmerge import TEXT_MERGE_MAX_BYTES
from tether.engine.verify import verify_preserved
from tether.errors import VERIFY_LINES_LOST, Exit
from tether.fsio import read_named_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline", required=True, metavar="FILE", help="the release's file as installed"
    )
    parser.add_argument("--current", required=True, metavar="FILE", help="the adopter's file")
    add_removed(parser, "--base", "use --baseline FILE")
    add_removed(parser, "--ours", "use --current FILE")
    parser.add_argument("--result", required=True, metavar="FILE", help="the merged file to check")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether.report.verify import render, to_json

    base = _read(args.baseline, "baseline")
    ours = _read(args.current, "current")
    result = _read(args.result, "result")
    verdict = verify_preserved(base, ours, result)
    if args.json:
        print_json(to_json(verdict))
    else:
        print(render(verdict, ours=args.current, base=args.baseline, result=args.result))
    return Exit.OK if verdict.preserved else VERIFY_LINES_LOST


def _read(path: str, role: str) -> bytes:
    return read_named_file(
        path, f"the {role} file", TEXT_MERGE_MAX_BYTES, "tether verifies at most"
    )
