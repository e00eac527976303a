"""``tether merge-fields``: the field-aware merge of one file, for scripts and agents.

Reads baseline, latest and current, prints the verdicts, and with ``--write`` applies the
applied items to the current file in place. Exit 4 while conflicts are left, 0 otherwise; 1
when a file is missing or does not parse (the message names its role).
"""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tether.engine.structured.presets import preset_names

    names = preset_names()
    parser.add_argument(
        "--preset", required=True, choices=names, metavar="P", help=f"one of: {', '.join(names)}"
    )
    parser.add_argument(
        "--baseline", required=True, metavar="FILE", help="the installed release's file"
    )
    parser.add_argument("--latest", required=True, metavar="FILE", help="the new release's file")
    parser.add_argument("--current", required=True, metavar="FILE", help="the project's file")
    add_json(parser)
    parser.add_argument(
        "--write", action="store_true", help="apply the applied items to the current file"
    )


def run(args: argparse.Namespace) -> int:
    from tether.flows.merge_fields import merge_fields
    from tether.report.merge_fields import render_fields
    from tether.report.reasons import side_problems

    report = merge_fields(
        args.preset,
        args.baseline,
        args.latest,
        args.current,
        unread_words=side_problems,
        write=args.write,
    )
    if args.json:
        print_json(report.result.to_json(), versioned=False)  # GAIA fixes this shape
    else:
        print(render_fields(report))
    return report.exit_code()
