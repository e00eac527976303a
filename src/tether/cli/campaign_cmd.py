"""``tether campaign start|run|status``: one upstream release across many repositories."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from tether.campaign.model import DEFAULT_ON_CONFLICT, ON_CONFLICT
from tether.cli.common import (
    add_auto,
    add_jobs,
    add_json,
    add_keyword,
    add_projects,
    add_registry,
    jobs,
    print_json,
)
from tether.model.plan import CONFLICT_STYLES

if TYPE_CHECKING:
    from tether.campaign.coordinator import RunOptions


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
    add_projects(start)
    add_keyword(start, "only repositories carrying every keyword given")
    start.add_argument(
        "--on-conflict",
        choices=ON_CONFLICT,
        default=DEFAULT_ON_CONFLICT,
        help="hold: record conflicts, commit nothing (default); commit: commit the markers",
    )
    start.add_argument(
        "--conflict",
        choices=CONFLICT_STYLES,
        help="how each update leaves a conflict (default: each repository's profile's)",
    )
    add_auto(start, "settle every conflict of every update this way")
    add_registry(start)
    run = sub.add_parser(
        "run",
        help="update every repository not finished yet",
        description="fetch, update and commit each unfinished repository in tether's worktree",
    )
    status = sub.add_parser(
        "status", help="the state of each repository", description="the campaign's records"
    )
    status.add_argument(
        "--refresh", action="store_true", help="first read each open pull request's state from gh"
    )
    publishing = add_publishing(sub)
    for each in (run, status, *publishing):
        each.add_argument("name", metavar="NAME", help="the campaign's name")
    _add_run_arguments(run)
    status.add_argument(
        "--html", metavar="FILE", help="also write the status as one self-contained web page"
    )
    for each in (start, run, status, *publishing):
        each.add_argument(
            "--dir",
            metavar="DIR",
            help="the folder campaigns live in (default: tether's state folder)",
        )
        add_json(each)


def add_publishing(sub: Any) -> list[argparse.ArgumentParser]:
    """push, pr, close, retry (campaign/publish.py)."""
    push = sub.add_parser(
        "push",
        help="push each committed update's campaign branch",
        description="push the campaign branch of every updated repository to its remote",
    )
    pr = sub.add_parser(
        "pr",
        help="push and open (or update) each repository's pull request through gh",
        description="push each committed update and open its pull request, or update the "
        "open one, within the pacing limits",
    )
    pr.add_argument(
        "--max-open-prs",
        type=int,
        metavar="N",
        help="never more than N of the campaign's pull requests open at once",
    )
    pr.add_argument(
        "--prs-per-hour",
        type=int,
        metavar="N",
        help="open at most N pull requests in any hour, then stop (see --wait)",
    )
    pr.add_argument(
        "--wait",
        action="store_true",
        help="when --prs-per-hour is spent, sleep until it has room instead of stopping",
    )
    close = sub.add_parser(
        "close",
        help="close the campaign's pull requests and delete its branches",
        description="close the open pull requests the campaign opened, delete the branches "
        "it pushed and its own, and mark every repository closed",
    )
    retry = sub.add_parser(
        "retry",
        help="run the failed repositories again",
        description="put failed repositories back to pending and run the campaign",
    )
    retry.add_argument("--failed", action="store_true", help="the failed repositories (required)")
    return [push, pr, close, retry]


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    from tether.campaign.executors import EXECUTORS, LOCAL

    add_jobs(run, "repositories worked on (local; dask: the workers it starts)")
    run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=LOCAL,
        help="local: processes on this machine (default); dask: a Dask cluster",
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the Dask scheduler to use (tcp://host:8786); default: start one here",
    )
    run.add_argument(
        "--canary",
        type=int,
        metavar="K",
        help="the first K repositories first; stop if any fails or conflicts",
    )
    run.add_argument("--wave-size", type=int, metavar="M", help="then the others M at a time")
    run.add_argument(
        "--pause", metavar="DURATION", help="wait this long between waves (30s, 5m, 1h)"
    )


def _run_options(args: argparse.Namespace) -> RunOptions:
    from tether.campaign.coordinator import RunOptions
    from tether.errors import UsageError

    if args.scheduler is not None and args.jobs is not None:
        raise UsageError("-j does not go with --scheduler: the scheduler's workers decide")
    return RunOptions(
        args.executor, jobs(args), args.scheduler, args.canary, args.wave_size, args.pause
    )


def run(args: argparse.Namespace) -> int:
    from tether.campaign import commands

    if args.action in PUBLISHING:
        return _publish(args)
    if args.action == "start":
        request = commands.StartRequest(
            args.name,
            args.upstream,
            args.to,
            args.registry,
            args.projects,
            args.dir,
            args.on_conflict,
            args.conflict,
            args.auto,
            keywords=args.keyword,
        )
        result = commands.start_campaign(request)
    elif args.action == "run":
        result = commands.run_campaign(args.name, args.dir, _run_options(args))
    elif args.refresh:
        return _publish(args)
    elif args.html is not None:
        from tether.campaign.pages import write_status_page

        result = write_status_page(args.name, args.dir, args.html)
    else:
        result = commands.campaign_status(args.name, args.dir)
    print_json(result.document) if args.json else print(_text(result.document, args))
    return result.exit_code


PUBLISHING = ("push", "pr", "close", "retry")


def _publish(args: argparse.Namespace) -> int:
    from tether.campaign import publish
    from tether.campaign.pacing import Pacing
    from tether.report.campaign_publish import render_step

    if args.action == "push":
        result = publish.push_campaign(args.name, args.dir)
    elif args.action == "pr":
        pacing = Pacing(args.max_open_prs, args.prs_per_hour, args.wait)
        result = publish.open_pull_requests(
            publish.PullRequestsRequest(args.name, args.dir, pacing)
        )
    elif args.action == "close":
        result = publish.close_campaign(args.name, args.dir)
    elif args.action == "retry":
        result = publish.retry_campaign(args.name, args.dir, failed=args.failed)
    else:
        result = publish.refresh_campaign(args.name, args.dir)
    print_json(result.document) if args.json else print(render_step(result.document))
    return result.exit_code


def _text(document: dict[str, Any], args: argparse.Namespace) -> str:
    from tether.report.campaign import render_campaign

    text = render_campaign(document)
    if getattr(args, "html", None) is None:
        return text
    from tether.report.campaign_html import page_written

    return f"{text}\n{page_written(args.html)}"
