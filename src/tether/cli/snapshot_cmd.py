"""``tether snapshot --dir D --out F`` and ``tether snapshot check --dir D --baseline F``."""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, print_json
from tether.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", dest="record_dir", metavar="D", help="the tree to record")
    parser.add_argument("--out", metavar="F", help="where to write the snapshot (JSON)")
    _add_exclude(parser, "record_exclude")
    add_json(parser)
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    check = sub.add_parser(
        "check",
        help="exit 1 and list what changed since a snapshot",
        description="compare a tree with a snapshot; exit 1 with changed[] when anything "
        "outside --allow changed",
    )
    check.add_argument("--dir", dest="check_dir", required=True, metavar="D")
    check.add_argument("--baseline", required=True, metavar="F", help="a snapshot file")
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


def _add_exclude(parser: argparse.ArgumentParser, dest: str) -> None:
    parser.add_argument(
        "--exclude",
        dest=dest,
        action="append",
        metavar="GLOB",
        help="also leave matching paths out (.git always is); repeatable",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check(args)
    return _record(args)


def _record(args: argparse.Namespace) -> int:
    from tether.deps.snapshot import DEFAULT_EXCLUDE, record

    if not args.record_dir or not args.out:
        raise UsageError("tether snapshot needs --dir D and --out F (or: snapshot check …)")
    exclude = [*DEFAULT_EXCLUDE, *(args.record_exclude or [])]
    doc = record(Path(args.record_dir), Path(args.out), exclude)
    if args.json:
        print_json({"root": doc["root"], "out": args.out, "files": len(doc["files"])})
    else:
        print(f"recorded {len(doc['files'])} file(s) of {doc['root']} in {args.out}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from tether.deps.snapshot import changes, load, split_allowed

    baseline = load(Path(args.baseline))
    changed, allowed = split_allowed(changes(baseline, Path(args.check_dir)), args.allow)
    if args.json:
        print_json({"baseline": args.baseline, "changed": changed, "allowed": allowed})
    else:
        for item in changed:
            print(f"{item['change']}: {item['path']}")
        for item in allowed:
            print(f"{item['change']} (allowed): {item['path']}")
        if not changed:
            print("unchanged" if not allowed else "only allowed paths changed")
    return 1 if changed else 0
