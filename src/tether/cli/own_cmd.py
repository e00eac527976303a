"""``tether own PATH…``: take shipped files over (``--undo``: give them back)."""

from __future__ import annotations

import argparse

from tether.cli.common import (
    add_json,
    add_project_dir,
    add_template_arguments,
    installed_project_dir,
    path_arguments,
    print_json,
    template_options,
)
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="shipped files or folders to take over (relative to the current folder, or to -C "
        "DIR); a deleted one stays deleted",
    )
    parser.add_argument(
        "--undo",
        action="store_true",
        help="give the files back: updates merge them again and status reports their drift",
    )
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    add_template_arguments(parser, data=False)
    add_json(parser)
    add_project_dir(parser, refuse_argument=False)


def run(args: argparse.Namespace) -> int:
    from tether.flows.own import own_paths
    from tether.report.own import render_own

    report = own_paths(
        installed_project_dir(args),
        path_arguments(args, args.paths),
        undo=args.undo,
        profile=args.profile,
        template=template_options(args),
    )
    if args.json:
        print_json(report.to_json())
    else:
        print(render_own(report))
    return Exit.OK
