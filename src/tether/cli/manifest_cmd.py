"""`tether manifest build`: write ``.tether/manifest.json`` from ``tether.toml``.

Run by publishers in the upstream repository; see docs/publishing.md.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, print_json, project_dir
from tether.errors import UsageError
from tether.publish.manifest import MANIFEST_PATH, ManifestBuild, manifest_build, write_manifest

EXIT_STALE = 3


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


def _summary(build: ManifestBuild) -> str:
    manifest = build.manifest
    counts = Counter(c.value for c in manifest.files.values())
    per_class = ", ".join(f"{n} {cls}" for cls, n in sorted(counts.items()))
    text = f"{manifest.name} {manifest.version}: {len(manifest.files)} files"
    text += f" ({per_class})" if per_class else ""
    if manifest.sentinels:
        text += f", {len(manifest.sentinels)} sentinel{'s' if len(manifest.sentinels) > 1 else ''}"
    return text


def _run_build(args: argparse.Namespace) -> int:
    build = manifest_build(project_dir(args), args.config, check_committed=args.check)
    written = False if args.check else write_manifest(build)
    stale_left = args.check and build.stale
    if args.json:
        manifest = build.manifest
        print_json(
            {
                "path": MANIFEST_PATH,
                "name": manifest.name,
                "version": manifest.version,
                "files": len(manifest.files),
                "sentinels": len(manifest.sentinels),
                "stale": build.stale,
                "written": written,
                "diff": build.diff() if build.stale else "",
            }
        )
    elif stale_left:
        print(build.diff(), end="")
        print(f"{MANIFEST_PATH} is stale; run 'tether manifest build' and commit it")
    elif written:
        print(f"wrote {MANIFEST_PATH}: {_summary(build)}")
    else:
        print(f"{MANIFEST_PATH} is up to date: {_summary(build)}")
    return EXIT_STALE if stale_left else 0


def run(args: argparse.Namespace) -> int:
    if args.manifest_verb == "build":
        return _run_build(args)
    raise UsageError(f"unknown manifest verb {args.manifest_verb!r} (known: build)")
