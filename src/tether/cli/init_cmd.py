from __future__ import annotations

import argparse

from tether.cli.common import (
    add_json,
    add_project_dir,
    add_removed,
    add_source,
    add_to,
    print_json,
    project_dir,
)
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_source(parser, "where releases come from", required=True)
    add_to(parser, "the release to install (default: the newest the source offers)")
    add_removed(parser, "--version", "use --to V")
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    parser.add_argument("--force", action="store_true", help="reinstall over an existing install")
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="for a release without a manifest: leave matching paths out of every release "
        "(gitignore syntax, recorded for later updates); repeatable",
    )
    parser.add_argument(
        "--restore-missing",
        action="store_true",
        help="into an existing project: write the release's files it lacks too (default: "
        "they stay deleted, recorded as yours; asked on a terminal)",
    )
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.cli import interact
    from tether.flows.install import install_release
    from tether.report.init import init_document, render_init

    ask = None
    if not args.restore_missing and interact.stdin_is_terminal():
        ask = interact.ask_restore_missing
    report = install_release(
        project_dir(args),
        args.source,
        args.to,
        args.profile,
        args.force,
        tuple(args.exclude),
        restore_missing=args.restore_missing,
        ask_restore=ask,
    )
    if args.json:
        print_json(init_document(report))
    else:
        print(render_init(report))
    return Exit.OK
