"""``tether completion bash|zsh|fish``: print a completion script (docs/cli.md, "Shell
completion")."""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, print_json
from tether.errors import Exit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tether.cli.completion import SHELLS

    parser.add_argument("shell", choices=SHELLS, help="the shell to complete for")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from tether import __version__
    from tether.cli.completion import script
    from tether.cli.main import build_full_parser

    text = script(args.shell, build_full_parser(), __version__)
    if args.json:
        print_json({"shell": args.shell, "script": text})
    else:
        print(text, end="")
    return Exit.OK
