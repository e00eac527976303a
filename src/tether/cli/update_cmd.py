from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tether.cli.common import add_json, add_project_dir, print_json, project_dir
from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.flows.update import PreparedUpdate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", metavar="V", help="the release to move to (default: the newest)")
    parser.add_argument("--source", metavar="SRC", help="override the recorded source")
    parser.add_argument("--profile", metavar="P", help="native or gaia (default: detected)")
    parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    parser.add_argument("--conflict", choices=("markers", "patch"),
                        help="how to leave a conflict (default: the profile's)")
    parser.add_argument("--auto", choices=("keep-mine", "take-theirs"),
                        help="settle every conflict this way")
    parser.add_argument("--delete-removed", action="store_true",
                        help="remove files dropped upstream that you never changed (backed up)")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="proceed although files the update changes have uncommitted edits")
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument("--branch", metavar="NAME", help="switch to this new branch before applying")
    branch.add_argument("--no-branch", action="store_true",
                        help="apply on the current branch even when it is main or master")
    parser.add_argument("--pr", action="store_true",
                        help="push the branch and open or update a pull request (needs gh)")
    parser.add_argument("--no-regions", action="store_true",
                        help="ignore generated-region declarations for this run")
    parser.add_argument("--abandon", action="store_true",
                        help="undo an interrupted update, restoring its files from the backup")
    add_json(parser)
    add_project_dir(parser)


def _ask(prepared: PreparedUpdate, as_json: bool) -> bool:
    from tether.report.human import render_plan_summary

    out = sys.stderr if as_json else sys.stdout
    print(render_plan_summary(prepared.report("plan")), file=out)
    out.write("Apply this update? [y/N] ")
    out.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    from tether.flows.plan import UpdateOptions
    from tether.flows.preflight import GitOptions
    from tether.flows.project import open_project
    from tether.flows.update import (
        UpdateRequest,
        abandon_update,
        run_update,
    )
    from tether.report.human import render_update

    root = project_dir(args)
    if args.abandon:
        report = abandon_update(root, args.profile)
    else:
        profile = open_project(root, args.profile).profile
        options = UpdateOptions(
            conflict_style=args.conflict or profile.default_conflict_style,
            auto=args.auto,
            delete_removed=args.delete_removed,
            no_regions=args.no_regions,
        )
        command = "update" + (f" --to {args.to}" if args.to else "")
        git_options = GitOptions(args.allow_dirty, args.branch, args.no_branch, args.pr)
        request = UpdateRequest(
            root, args.to, args.source, args.profile, args.dry_run, options, command, git_options
        )
        if not (args.yes or args.dry_run or sys.stdin.isatty()):
            raise TetherError(
                "not running on a terminal: pass --yes to apply the update (nothing was written)"
            )
        confirm = (lambda p: True) if args.yes else (lambda p: _ask(p, args.json))
        report = run_update(request, confirm)
    if args.json:
        print_json(report.to_json())
    else:
        print(render_update(report))
    return report.exit_code()
