"""``tether fleet status`` and ``tether fleet update``: one command over registered projects."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from tether.cli.common import add_json, print_json
from tether.cli.projects_cmd import add_registry
from tether.errors import TetherError, UsageError

if TYPE_CHECKING:
    from tether.fleet.registry import Registry
    from tether.fleet.runner import FleetRun
    from tether.fleet.selection import Selection


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
        choices=("none", "branch", "worktree"),
        default="branch",
        help="apply in place, on a new branch (default), or in a new worktree",
    )
    update.add_argument(
        "--continue-on-failure",
        action="store_true",
        help="go on with the next project after one fails",
    )
    update.add_argument(
        "--pr",
        action="store_true",
        help="deprecated, pushes nothing: commit in each project, then run 'tether pr' there",
    )
    update.add_argument(
        "--allow-dirty",
        action="store_true",
        help="proceed although files an update changes have uncommitted edits",
    )
    for each in (status, update):
        _add_selection(each)
        add_registry(each)
        add_json(each)


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--projects",
        action="append",
        metavar="A,B",
        help="only these registered names (comma-separated, repeatable)",
    )
    parser.add_argument(
        "--keyword",
        action="append",
        default=[],
        metavar="K",
        help="only projects carrying this keyword (repeatable: all must match)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        metavar="N",
        help="projects planned or checked at once (default: CPUs + 4, at most 8)",
    )


def run(args: argparse.Namespace) -> int:
    from tether.fleet.registry import load_registry, registry_path
    from tether.fleet.runner import default_jobs

    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.action == "update" and not (args.yes or args.dry_run or sys.stdin.isatty()):
        raise TetherError(
            "not running on a terminal: pass --yes to apply the fleet update (nothing was written)"
        )
    registry = load_registry(registry_path(args.registry))
    selection = _selection(registry, args)
    if selection is None:
        return 0
    if args.action == "status":
        return _status(registry, selection, jobs, args.json)
    return _update(registry, selection, jobs, args)


def _selection(registry: Registry, args: argparse.Namespace) -> Selection | None:
    """The chosen projects, or None after saying why there are none (exit 0)."""
    from tether.fleet.selection import EMPTY_REGISTRY, NO_MATCH, select, split_names

    if not registry.projects:
        _say(args.json, str(registry.path), EMPTY_REGISTRY, [])
        return None
    selection = select(registry, split_names(args.projects), args.keyword)
    if selection.matched_nothing:
        _say(args.json, str(registry.path), NO_MATCH, list(selection.not_found))
        return None
    if not args.json:
        for line in selection.not_found_lines():
            print(line)
    return selection


def _say(as_json: bool, registry: str, message: str, not_found: list[str]) -> None:
    if as_json:
        print_json(
            {
                "registry": registry,
                "message": message,
                "filter_not_found": not_found,
                "projects": [],
            }
        )
        return
    for name in not_found:
        print(f"Filter name not found: {name}")
    print(message)


def _status(registry: Registry, selection: Selection, jobs: int, as_json: bool) -> int:
    from tether.fleet.runner import fleet_status
    from tether.fleet.summary import render_status, status_document

    rows = fleet_status(selection, jobs)
    doc = status_document(str(registry.path), selection, rows)
    if as_json:
        print_json(doc)
    else:
        print(render_status(doc))
    return 1 if any(row.state == "error" for _, row in rows) else 0


def _update(registry: Registry, selection: Selection, jobs: int, args: argparse.Namespace) -> int:
    from tether.fleet.rundir import RunFolder
    from tether.fleet.runner import FleetRequest, apply_fleet, cancel, plan_fleet
    from tether.fleet.summary import render_plan_table, render_update, update_document

    request = FleetRequest(
        args.to,
        args.dry_run,
        args.isolate,
        args.continue_on_failure,
        jobs,
        args.pr,
        args.allow_dirty,
    )
    run = plan_fleet(selection, request, RunFolder.create())
    table = render_plan_table(run)
    shown = False
    if not args.dry_run:
        if run.to_apply and not args.yes:
            shown = True
            if not _ask(table, len(run.to_apply), args.json):
                cancel(run)
        if run.status != "cancelled":
            apply_fleet(run)
    doc = update_document(run, str(registry.path))
    text = render_update(doc)
    _keep(run, doc, table, text)
    if args.json:
        print_json(doc)
    else:
        print(text if shown else f"{table}\n\n{text}")
    return _exit_code(run)


def _ask(table: str, count: int, as_json: bool) -> bool:
    out = sys.stderr if as_json else sys.stdout
    print(table, file=out)
    out.write(f"Apply the update to {count} project(s), in the order above? [y/N] ")
    out.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _keep(run: FleetRun, doc: dict[str, object], table: str, text: str) -> None:
    """The whole summary stays in the run folder; stdout carries the bounded digest."""
    run.folder.write(run.folder.root / "summary.json", [json.dumps(doc, indent=2)])
    run.folder.write(run.folder.root / "summary.md", [table, "", text])


def _exit_code(run: FleetRun) -> int:
    if run.status == "interrupted":
        return 130
    if any(e.result == "failed" for e in run.entries):
        return 1
    if run.status == "dry-run" and any(e.plan.counts.get("failed") for e in run.to_apply):
        return 1  # as `tether update --dry-run`: files that will fail to be written
    if any(e.outcome and e.outcome.conflicts for e in run.entries):
        return 4
    return 0
