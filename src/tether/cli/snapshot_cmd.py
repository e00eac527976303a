"""``tether snapshot -C DIR --out FILE`` and ``tether snapshot check -C DIR --baseline FILE``.

``-C`` may come before ``check`` as well (``tether snapshot -C DIR check ...``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, add_removed, print_json, verbose_line
from tether.errors import SNAPSHOT_CHANGED, Exit, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_dir(parser, refuse_argument=False, help="the tree to record")
    add_removed(parser, "--dir", "use -C DIR")
    parser.add_argument("--out", metavar="FILE", help="where to write the snapshot (JSON)")
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="also leave matching paths out (.git always is); repeatable",
    )
    add_json(parser)
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    check = sub.add_parser(
        "check",
        help="exit 3 and list what changed since a snapshot",
        description="compare a tree with a snapshot; exit 3 with changed[] when anything "
        "outside --allow changed",
    )
    tree = add_project_dir(check, refuse_argument=False, help="the tree to compare")
    add_removed(check, "--dir", "use -C DIR")
    # Left unset unless given here: a default would undo a -C given before "check".
    tree.default = argparse.SUPPRESS
    check.add_argument("--baseline", required=True, metavar="FILE", help="a snapshot file")
    check.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="GLOB",
        help="changes to these paths are expected (listed as allowed, exit 0)",
    )
    # Left unset unless given here: a default would undo a --json given before "check".
    check.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON document"
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check(args)
    return _record(args)


def _record(args: argparse.Namespace) -> int:
    from tether.flows.snapshot import record_tree
    from tether.report.snapshot import render_recorded

    if not args.project or not args.out:
        raise UsageError("tether snapshot needs -C DIR and --out FILE (or: snapshot check …)")
    verbose_line(args, f"project {Path(args.project).absolute()}")
    recorded = record_tree(Path(args.project), args.out, args.exclude or [])
    print_json(recorded.to_json()) if args.json else print(render_recorded(recorded))
    return Exit.OK


def _check(args: argparse.Namespace) -> int:
    from tether.flows.snapshot import check_tree
    from tether.report.snapshot import render_checked

    if not args.project:
        raise UsageError("tether snapshot check needs -C DIR (the tree to compare)")
    verbose_line(args, f"project {Path(args.project).absolute()}")
    checked = check_tree(Path(args.project), args.baseline, args.allow)
    print_json(checked.to_json()) if args.json else print(render_checked(checked))
    return SNAPSHOT_CHANGED if checked.changed else Exit.OK
