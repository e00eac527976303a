from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_project_dir, print_json, project_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", required=True, metavar="SRC", help="where releases come from")
    parser.add_argument(
        "--version",
        dest="release_version",
        metavar="V",
        help="the release to install (not needed when the source is one recipe folder)",
    )
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    parser.add_argument("--force", action="store_true", help="reinstall over an existing install")
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.install import install_release
    from tether.report.human import render_init

    report = install_release(
        project_dir(args), args.source, args.release_version, args.profile, args.force
    )
    if args.json:
        print_json(report.to_json())
    else:
        print(render_init(report))
    return 0
