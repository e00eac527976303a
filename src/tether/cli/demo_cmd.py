"""`tether demo`: build a small upstream and an adopter project, then update it (tether.demo)."""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_project_dir, add_removed, print_json, verbose_line
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_dir(
        parser,
        refuse_argument=False,
        help="build the demo here, a new or empty folder (default: a new temporary one)",
    )
    add_removed(parser, "--dir", "use -C DIR")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether.demo import run_demo
    from tether.report.demo import demo_document, render_demo

    report = run_demo(args.project, lambda base: verbose_line(args, f"project {base.absolute()}"))
    print_json(demo_document(report)) if args.json else print(render_demo(report))
    return Exit.OK
