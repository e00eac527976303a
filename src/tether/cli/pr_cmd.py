"""``tether pr``: after committing an update, push its branch and open its pull request."""

from __future__ import annotations

import argparse

from tether.cli.common import (
    add_json,
    add_project_dir,
    add_removed,
    installed_project_dir,
    print_json,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-ref",
        dest="base_ref",
        metavar="BRANCH",
        help="the branch the pull request goes into (default: the remote's default branch)",
    )
    add_removed(parser, "--base", "use --base-ref BRANCH")
    parser.add_argument(
        "--remote", default="origin", metavar="NAME", help="where to push (default: origin)"
    )
    parser.add_argument(
        "--title", metavar="TEXT", help="default: chore: update <upstream> to <version>"
    )
    parser.add_argument("--body", metavar="TEXT", help="default: a summary of the update")
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.pullrequest import PullRequestRequest, open_pull_request
    from tether.report.pullrequest import pull_request_document, render_pull_request

    request = PullRequestRequest(
        installed_project_dir(args), args.base_ref, args.remote, args.title, args.body
    )
    report = open_pull_request(request)
    if args.json:
        print_json(pull_request_document(report))
    else:
        print(render_pull_request(report))
    return report.exit_code()
