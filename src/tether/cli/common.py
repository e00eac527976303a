"""Options several commands share, and the one way to print a JSON document."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tether.errors import UsageError


def add_project_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-C", dest="dir_option", metavar="DIR", help="project directory")
    parser.add_argument("dir", nargs="?", metavar="DIR", help="project directory (default: .)")


def project_dir(args: argparse.Namespace) -> Path:
    if args.dir_option and args.dir and args.dir_option != args.dir:
        raise UsageError("give the project directory once (-C DIR or DIR)")
    return Path(args.dir_option or args.dir or ".")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def print_json(document: Any) -> None:
    # One write: json.dump would hand stdout every token separately (tens of thousands
    # for an update of a large project).
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")


def add_all(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all", dest="list_all", action="store_true", help="list every path, not the first 20"
    )


def list_limit(args: argparse.Namespace) -> int | None:
    from tether.report.human import LIST_LIMIT

    return None if args.list_all else LIST_LIMIT


def add_status_arguments(parser: argparse.ArgumentParser, latest_help: str) -> None:
    """What ``status`` and ``check`` both take."""
    add_all(parser)
    parser.add_argument("--check-latest", action="store_true", help=latest_help)
    parser.add_argument("--source", metavar="SRC", help="override the recorded source")
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    parser.add_argument(
        "--no-regions",
        action="store_true",
        help="compare generated-region files whole, as if no region were declared",
    )
    add_json(parser)
    add_project_dir(parser)
