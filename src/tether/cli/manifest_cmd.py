"""`tether manifest build`: write ``.tether/manifest.json`` from ``tether.toml``.

Run by publishers in the upstream repository; see docs/publishing.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, print_json, project_dir
from tether.errors import Exit, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="manifest_verb", metavar="VERB", required=True)
    build = verbs.add_parser(
        "build",
        help="write .tether/manifest.json from tether.toml",
        description="Write .tether/manifest.json from tether.toml and the tracked files.",
    )
    build.add_argument(
        "--config", type=Path, metavar="FILE", help="publisher config (default: DIR/tether.toml)"
    )
    build.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 3 and show the difference when the manifest is stale",
    )
    add_json(build)
    add_project_dir(build)


def _run_build(args: argparse.Namespace) -> int:
    from tether.publish.manifest import build_manifest
    from tether.report.publish import render_manifest_build

    report = build_manifest(project_dir(args), args.config, check=args.check)
    if args.json:
        print_json(report.to_json())
    else:
        print(render_manifest_build(report))
    return Exit.FOUND if report.stale_left else Exit.OK


def run(args: argparse.Namespace) -> int:
    if args.manifest_verb == "build":
        return _run_build(args)
    raise UsageError(f"unknown manifest verb {args.manifest_verb!r} (known: build)")
