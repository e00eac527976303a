from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from tether.cli.common import (
    add_all,
    add_json,
    add_project_dir,
    list_limit,
    print_json,
    project_dir,
)
from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.flows.update import PreparedUpdate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", metavar="V", help="the release to move to (default: the newest)")
    parser.add_argument("--source", metavar="SRC", help="override the recorded source")
    parser.add_argument("--profile", metavar="P", help="native or gaia (default: detected)")
    parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    parser.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    parser.add_argument(
        "--conflict",
        choices=("markers", "patch"),
        help="how to leave a conflict (default: the profile's)",
    )
    parser.add_argument(
        "--auto", choices=("keep-mine", "take-theirs"), help="settle every conflict this way"
    )
    parser.add_argument(
        "--delete-removed",
        action="store_true",
        help="remove files dropped upstream that you never changed (backed up)",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="proceed although files the update changes have uncommitted edits",
    )
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument(
        "--branch", metavar="NAME", help="switch to this new branch before applying"
    )
    branch.add_argument(
        "--no-branch",
        action="store_true",
        help="apply on the current branch even when it is main or master",
    )
    parser.add_argument(
        "--pr",
        action="store_true",
        help="deprecated, pushes nothing: commit the update, then run 'tether pr'",
    )
    parser.add_argument(
        "--no-regions",
        action="store_true",
        help="ignore generated-region declarations for this run",
    )
    parser.add_argument(
        "--abandon",
        action="store_true",
        help="undo an interrupted update, restoring its files from the backup",
    )
    add_all(parser)
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


_CHOICES = "[m]ine, [t]heirs, [w]rite markers, [d]iff, [k]eep mine for all, [a]ll theirs"


def choose_conflicts(
    prepared: PreparedUpdate, ask: Callable[[str], str], show: Callable[[str], None]
) -> None:
    """Ask, file by file, how to settle each line-merge conflict; decisions land in the plan."""
    from tether.engine.patches import unified_patch
    from tether.flows.plan import can_resettle, resettle

    for_all: str | None = None
    actions = prepared.plan.actions
    for index, action in enumerate(actions):
        if not can_resettle(action):
            continue
        choice = for_all
        while choice is None:
            answer = ask(f"{action.path}: both sides changed the same lines. {_CHOICES}? ").strip()
            if answer == "d":
                assert action.sides is not None
                show(
                    unified_patch(action.path, action.sides[1], action.sides[2]).decode(
                        errors="replace"
                    )
                )
            elif answer in ("k", "a"):
                for_all = choice = "keep-mine" if answer == "k" else "take-theirs"
            elif answer in ("m", "t", "w"):
                choice = {"m": "keep-mine", "t": "take-theirs", "w": "markers"}[answer]
        actions[index] = resettle(prepared.project, action, choice)


def _ask_conflicts(prepared: PreparedUpdate, as_json: bool) -> bool:
    out = sys.stderr if as_json else sys.stdout

    def ask(prompt: str) -> str:
        out.write(prompt)
        out.flush()
        return sys.stdin.readline()

    if not _ask(prepared, as_json):
        return False
    choose_conflicts(prepared, ask, lambda text: print(text, file=out))
    return True


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

        def confirm(prepared: PreparedUpdate) -> bool:
            if args.yes:
                return True
            if args.auto:
                return _ask(prepared, args.json)
            return _ask_conflicts(prepared, args.json)

        report = run_update(request, confirm)
    if args.json:
        print_json(report.to_json())
    else:
        print(render_update(report, list_limit(args)))
    return report.exit_code()
