"""``tether campaign start|run|status``: one upstream release across many repositories."""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, print_json
from tether.cli.projects_cmd import add_registry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = sub.add_parser(
        "start",
        help="create a campaign: one record per registered repository",
        description="create a campaign folder with one pending record per repository",
    )
    start.add_argument("name", metavar="NAME", help="the campaign's name (a folder name)")
    start.add_argument(
        "--upstream", required=True, metavar="SRC", help="the upstream the repositories follow"
    )
    start.add_argument("--to", required=True, metavar="V", help="the release to move them to")
    start.add_argument(
        "--projects",
        action="append",
        metavar="A,B",
        help="only these registered names (comma-separated, repeatable)",
    )
    start.add_argument(
        "--on-conflict",
        choices=("hold", "commit"),
        default="hold",
        help="hold: record conflicts, commit nothing (default); commit: commit the markers",
    )
    add_registry(start)
    run = sub.add_parser(
        "run",
        help="update every repository not finished yet",
        description="fetch, update and commit each unfinished repository in tether's worktree",
    )
    status = sub.add_parser(
        "status", help="the state of each repository", description="the campaign's records"
    )
    for each in (run, status):
        each.add_argument("name", metavar="NAME", help="the campaign's name")
    for each in (start, run, status):
        each.add_argument(
            "--dir",
            metavar="DIR",
            help="the folder campaigns live in (default: tether's state folder)",
        )
        add_json(each)


def run(args: argparse.Namespace) -> int:
    from tether.campaign import flow
    from tether.report.campaign import render_campaign

    if args.action == "start":
        request = flow.StartRequest(
            args.name,
            args.upstream,
            args.to,
            args.registry,
            args.projects,
            args.dir,
            args.on_conflict,
        )
        result = flow.start_campaign(request)
    elif args.action == "run":
        result = flow.run_campaign(args.name, args.dir)
    else:
        result = flow.campaign_status(args.name, args.dir)
    print_json(result.document) if args.json else print(render_campaign(result.document))
    return result.exit_code
