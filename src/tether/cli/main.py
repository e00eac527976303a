"""Entry point: a table of commands, each in its own module, imported only when chosen.

Every command module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from tether import __version__
from tether.errors import TetherError

# name -> (module, one-line help). Keep the help short: `tether --help` lists them all.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("tether.cli.demo_cmd", "build a small upstream and adopter project and update it"),
    "init": ("tether.cli.init_cmd", "install a release into a project"),
    "status": ("tether.cli.status_cmd", "show the installed release and drift per file"),
    "check": ("tether.cli.check_cmd", "exit 3 on owned drift, an available update or conflicts"),
    "diff": ("tether.cli.diff_cmd", "show local changes to shipped files as a unified diff"),
    "update": ("tether.cli.update_cmd", "move the project to a newer release, keeping local edits"),
    "pr": ("tether.cli.pr_cmd", "push a committed update's branch and open its pull request"),
    "projects": (
        "tether.cli.projects_cmd",
        "register projects for fleet commands (add, list, show, remove)",
    ),
    "fleet": ("tether.cli.fleet_cmd", "status or update every registered project at once"),
    "audit": (
        "tether.cli.audit_cmd",
        "audit gate for shipped shell: scope, shellcheck, lenses, findings, clearance",
    ),
    "deps": ("tether.cli.deps_cmd", "move dependencies across the registered projects"),
    "snapshot": ("tether.cli.snapshot_cmd", "record a tree's file hashes, or check them"),
    "changelog": (
        "tether.cli.changelog_cmd",
        "show release notes and follow-ups between two versions",
    ),
    "manifest": (
        "tether.cli.manifest_cmd",
        "build the release manifest from tether.toml (publishers)",
    ),
    "release": ("tether.cli.release_cmd", "pack a reproducible release tarball and its .sha256"),
    "merge-fields": (
        "tether.cli.merge_fields_cmd",
        "field-aware merge of one JSON, YAML or TOML file",
    ),
    "verify": ("tether.cli.verify_cmd", "check that a merged file kept the adopter's lines"),
    "merge-driver": ("tether.cli.merge_driver_cmd", "git merge driver: field-aware or line merge"),
    "reapply": (
        "tether.cli.reapply_cmd",
        "merge saved local patches back into a fresh install (GSD-style)",
    ),
    "refresh": ("tether.cli.refresh_cmd", "refresh files copied into this repo from a recipe"),
    "region-compare": (
        "tether.cli.region_compare_cmd",
        "compare a region file's three sides with the region body masked",
    ),
}


def _chosen_command(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tether",
        description=(
            "Keep a project in step with its upstream release without losing local changes."
        ),
    )
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _chosen_command(argv)
    for name, (module_name, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args))
    except TetherError as error:
        print(f"tether: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("tether: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
