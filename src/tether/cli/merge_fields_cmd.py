"""``tether merge-fields``: the field-aware merge of one file, for scripts and agents.

Reads baseline, latest and current, prints the verdicts, and with ``--write`` applies the
applied items to the current file in place. Exit 0 on any verdict; 1 when a file is missing
or does not parse (the message names its role).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tether.cli.common import add_json, print_json
from tether.errors import Exit, TetherError

_ROLES = ("baseline", "latest", "current")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tether.engine.structured.presets import preset_names

    names = preset_names()
    parser.add_argument(
        "--preset", required=True, choices=names, metavar="P", help=f"one of: {', '.join(names)}"
    )
    parser.add_argument(
        "--baseline", required=True, metavar="FILE", help="the installed release's file"
    )
    parser.add_argument("--latest", required=True, metavar="FILE", help="the new release's file")
    parser.add_argument("--current", required=True, metavar="FILE", help="the project's file")
    add_json(parser)
    parser.add_argument(
        "--write", action="store_true", help="apply the applied items to the current file"
    )


def _read(role: str, path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise TetherError(f"{role} file not found: {path}") from None
    except IsADirectoryError:
        raise TetherError(f"{role} file is a directory: {path}") from None
    except OSError as error:
        raise TetherError(f"cannot read {role} file {path}: {error.strerror}") from None


def run(args: argparse.Namespace) -> int:
    from tether.engine.structured import merge_structured, rules_for, summary_line
    from tether.fsio import atomic_write

    sides = {role: _read(role, getattr(args, role)) for role in _ROLES}
    try:
        rules = rules_for(args.current, {"preset": args.preset})
    except ValueError as error:
        raise TetherError(str(error)) from None
    result = merge_structured(
        args.current, rules, sides["baseline"], sides["latest"], sides["current"]
    )
    if result.parse_error is not None:
        raise TetherError(result.parse_error)
    written = args.write and result.new_text != sides["current"]
    if written:
        atomic_write(Path(args.current), result.new_text)
    if args.json:
        print_json(result.to_json(), versioned=False)  # GAIA fixes this shape
        return Exit.OK
    print(summary_line(args.current, result))
    _print_items(result.to_json())
    if written:
        print(f"wrote {args.current}")
    elif result.applied and not args.write:
        print("nothing written (add --write to apply)")
    return Exit.OK


def _print_items(report: dict[str, list[dict[str, Any]]]) -> None:
    for heading, items in report.items():
        if not items:
            continue
        print(f"{heading}:")
        for item in items:
            where = f"{item['section']} " if "section" in item else ""
            reason = f" ({item['reason']})" if "reason" in item else ""
            print(f"  {where}{item['key']}{reason}")
