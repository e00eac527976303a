"""``tether diff [-C DIR] [PATH…]``: local changes to shipped files as a unified diff.

PATHs are positional, so the project folder is given with ``-C DIR`` only (the positional
DIR other commands take would be read as a PATH).
"""

from __future__ import annotations

import argparse
import os
import sys

from tether.cli.common import add_json, print_json, project_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="only these shipped files or folders (relative to the project folder)",
    )
    parser.add_argument("-C", dest="dir_option", metavar="DIR", help="project directory")
    parser.set_defaults(dir=None)
    parser.add_argument(
        "--stat", action="store_true", help="per-file added and removed line counts only"
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit 3 when there are differences"
    )
    parser.add_argument(
        "--no-regions", action="store_true", help="compare generated-region files whole"
    )
    parser.add_argument("--source", metavar="SRC", help="override the recorded source")
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether.cli.check_cmd import EXIT_DRIFT
    from tether.flows.localdiff import local_diff
    from tether.report.human import render_diff

    report = local_diff(
        project_dir(args),
        args.paths,
        args.profile,
        args.source,
        stat_only=args.stat,
        no_regions=args.no_regions,
    )
    if args.json:
        print_json(report.to_json())
    else:
        _write(render_diff(report, color=_colour_wanted()))
    return EXIT_DRIFT if args.exit_code and report.files else 0


def _colour_wanted() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _write(text: str) -> None:
    """The text as bytes: a patch of a file that is not UTF-8 keeps its bytes (they reach
    the text as surrogate escapes), so it still applies."""
    if not text:
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()
