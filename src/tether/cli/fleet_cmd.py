"""``tether fleet status`` and ``tether fleet update``: one command over registered projects."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tether.cli.common import (
    add_jobs,
    add_json,
    add_removed,
    add_selection,
    print_json,
    print_nothing_selected,
    selection_filters,
)
from tether.cli.common import jobs as jobs_of
from tether.cli.interact import ask_yes_no, require_consent
from tether.runs.isolation import DEFAULT_MODE, MODES

if TYPE_CHECKING:
    from tether.fleet.runner import FleetRun


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    status = sub.add_parser(
        "status",
        help="installed, newest and drift per project",
        description="installed, newest and drift per project (reads only)",
    )
    update = sub.add_parser(
        "update",
        help="update every selected project",
        description="plan every selected project, ask once, apply in order",
    )
    update.add_argument("--to", metavar="V", help="the release to move to (default: each newest)")
    update.add_argument("--dry-run", action="store_true", help="show the plans, write nothing")
    update.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    update.add_argument(
        "--isolate",
        choices=MODES,
        default=None,
        help="apply in place, on a new branch, or in a new worktree "
        f"(default: {DEFAULT_MODE}; a project where the isolation asked for is not possible "
        "fails, nothing written)",
    )
    update.add_argument(
        "--continue-on-failure",
        action="store_true",
        help="go on with the next project after one fails",
    )
    add_removed(update, "--pr", "commit in each project, then run 'tether pr' there")
    update.add_argument(
        "--allow-dirty",
        action="store_true",
        help="proceed although files an update changes have uncommitted edits",
    )
    for each in (status, update):
        add_selection(each)
        add_jobs(each, "projects planned or checked")
        add_json(each)


def run(args: argparse.Namespace) -> int:
    jobs = jobs_of(args)
    if args.action == "update":
        require_consent("apply the fleet update", yes=args.yes, dry_run=args.dry_run)
    return _status(args, jobs) if args.action == "status" else _update(args, jobs)


def _status(args: argparse.Namespace, jobs: int) -> int:
    from tether.fleet import commands
    from tether.report.fleet import render_status

    result = commands.status(selection_filters(args), jobs)
    if not isinstance(result, commands.StatusResult):
        return print_nothing_selected(result, args.json)
    print_json(result.document) if args.json else print(render_status(result.document))
    return result.exit_code


def _update(args: argparse.Namespace, jobs: int) -> int:
    from tether.fleet import commands
    from tether.fleet.runner import FleetRequest

    request = FleetRequest(
        args.to,
        args.dry_run,
        args.isolate or DEFAULT_MODE,
        args.continue_on_failure,
        jobs,
        args.allow_dirty,
        isolate_asked=args.isolate is not None,
    )
    confirm = None if args.yes else _confirm
    result = commands.update(selection_filters(args), request, confirm)
    if not isinstance(result, commands.UpdateResult):
        return print_nothing_selected(result, args.json)
    from tether.report.fleet import render_update_result

    print_json(result.document) if args.json else print(render_update_result(result))
    return result.exit_code


def _confirm(run: FleetRun) -> bool:
    """The plan table and the one question, on stderr (cli/interact.py)."""
    from tether.report.fleet import confirm_question, render_plan_table

    return ask_yes_no(confirm_question(run), before=render_plan_table(run))
