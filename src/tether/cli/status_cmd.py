from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_project_dir, print_json, project_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check-latest", action="store_true", help="ask the source for its newest version"
    )
    parser.add_argument("--source", metavar="SRC", help="override the recorded source")
    parser.add_argument("--profile", metavar="P", help="native or gaia (default: detected)")
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.status import project_status
    from tether.report.human import render_status

    report = project_status(project_dir(args), args.profile, args.source, args.check_latest)
    if args.json:
        print_json(report.to_json())
    else:
        print(render_status(report))
    return 0
