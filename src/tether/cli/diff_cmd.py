"""``tether diff [-C DIR] [PATH…]``: local changes to shipped files as a unified diff.

PATHs are positional, so the project folder is given with ``-C DIR`` only (the positional
DIR other commands take would be read as a PATH).
"""

from __future__ import annotations

import argparse
import os
import sys

from tether.cli.common import (
    add_json,
    add_project_dir,
    add_source,
    add_template_arguments,
    installed_project_dir,
    path_arguments,
    print_json,
    template_options,
)
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="only these shipped files or folders (relative to the current folder, or to -C DIR)",
    )
    add_project_dir(parser, refuse_argument=False)
    parser.add_argument(
        "--stat", action="store_true", help="per-file added and removed line counts only"
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit 3 when there are differences"
    )
    parser.add_argument(
        "--no-regions", action="store_true", help="compare generated-region files whole"
    )
    add_source(parser)
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    add_template_arguments(parser, data=False)
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.localdiff import local_diff
    from tether.report.diff import diff_document, render_diff
    from tether.report.style import colour_wanted

    report = local_diff(
        installed_project_dir(args),
        path_arguments(args, args.paths),
        args.profile,
        args.source,
        stat_only=args.stat,
        no_regions=args.no_regions,
        template=template_options(args),
    )
    if args.json:
        print_json(diff_document(report))
    else:
        colour = colour_wanted(sys.stdout, os.environ, args.no_color)
        _write(render_diff(report, color=colour))
    return Exit.FOUND if args.exit_code and report.files else Exit.OK


def _write(text: str) -> None:
    """The text as bytes: a patch of a file that is not UTF-8 keeps its bytes (they reach
    the text as surrogate escapes), so it still applies."""
    if not text:
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()
