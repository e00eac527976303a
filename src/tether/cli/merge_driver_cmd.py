"""``tether merge-driver %O %A %B %P``: a git merge driver (tether.flows.merge_driver).

Files with a field-merge rule (from the project's manifest or profile) merge key by key;
everything else gets tether's line merge. The result is written to %A, as git expects;
exit 0 when clean, 1 when conflicts remain (git then marks the path unmerged). With
``--json`` it also prints what it did (git ignores a driver's output).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, print_json
from tether.errors import MERGE_DRIVER_CONFLICTS, Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ancestor", metavar="%O", help="the merge base's version (a temp file)")
    parser.add_argument("current", metavar="%A", help="our version; the result is written here")
    parser.add_argument("other", metavar="%B", help="their version (a temp file)")
    parser.add_argument("path", metavar="%P", help="the path being merged, relative to the repo")
    parser.add_argument("--preset", metavar="P", help="force a field-merge preset for this file")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.merge_driver import merge_driver

    result = merge_driver(
        args.ancestor, args.current, args.other, args.path, args.preset, Path.cwd()
    )
    if args.json:
        print_json(result.to_json())
    return Exit.OK if result.clean else MERGE_DRIVER_CONFLICTS
