"""`tether release pack`: a reproducible tarball of the release and its ``.sha256``.

Run by publishers in the upstream repository; see docs/publishing.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, print_json, project_dir
from tether.errors import Exit, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="release_verb", metavar="VERB", required=True)
    pack = verbs.add_parser(
        "pack",
        help="write <name>-v<V>.tar.gz and its .sha256",
        description="Pack the manifest's files into <name>-v<V>.tar.gz (same input, same "
        "bytes) and write its .sha256 beside it.",
    )
    pack.add_argument(
        "--version", required=True, metavar="V", help="the version to pack (the manifest's)"
    )
    pack.add_argument("--out", type=Path, metavar="DIR", help="where to write (default: DIR/dist)")
    add_json(pack)
    add_project_dir(pack)


def _run_pack(args: argparse.Namespace) -> int:
    from tether.publish.pack import pack_release
    from tether.report.publish import render_pack

    result = pack_release(project_dir(args), args.version, args.out)
    if args.json:
        print_json(result.to_json())
    else:
        print(render_pack(result))
    return Exit.OK


def run(args: argparse.Namespace) -> int:
    if args.release_verb == "pack":
        return _run_pack(args)
    raise UsageError(f"unknown release verb {args.release_verb!r} (known: pack)")
