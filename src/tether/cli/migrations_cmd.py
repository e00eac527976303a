from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_project_dir, installed_project_dir, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pending",
        action="store_true",
        help="only migrations the next update runs again (not finished: conflict, error, skipped)",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="run the pending migrations again now (after settling by hand what stopped them) "
        "and record the results",
    )
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.lifecycle_steps import list_migrations, rerun_pending_migrations
    from tether.report.lifecycle_steps import migrations_document, render_migrations

    if args.rerun:
        report = rerun_pending_migrations(installed_project_dir(args), args.profile)
    else:
        report = list_migrations(installed_project_dir(args), args.profile, args.pending)
    if args.json:
        print_json(migrations_document(report))
    else:
        print(render_migrations(report))
    return report.exit_code()
