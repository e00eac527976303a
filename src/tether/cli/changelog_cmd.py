"""`tether changelog`: the release notes between two versions, and the follow-ups
(removals) that still apply to this project. Nothing is ever run."""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, installed_project_dir, print_json
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="from_version", required=True, metavar="V", help="the version you have"
    )
    parser.add_argument("--to", required=True, metavar="V", help="the version to read up to")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--file", type=Path, metavar="PATH", help="read this changelog file")
    where.add_argument(
        "--source", metavar="SRC", help="read the --to release's changelog from this source"
    )
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.changelog import changelog_report
    from tether.report.changelog import render

    report = changelog_report(
        installed_project_dir(args),
        args.from_version,
        args.to,
        file=args.file,
        source=args.source,
    )
    if args.json:
        print_json(report.to_json())
    else:
        print(render(report))
    return Exit.OK
