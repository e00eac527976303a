"""``tether projects add|list|show|remove``: the only commands that write the registry."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tether.cli.common import add_json, add_list, add_removed, print_json
from tether.errors import Exit

if TYPE_CHECKING:
    from tether.runs.selection import Filters, NothingSelected


def add_registry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        metavar="PATH",
        help="the projects file (default: $TETHER_REGISTRY, else "
        "$XDG_CONFIG_HOME/tether/projects.json)",
    )


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The registry and the filters every multi-project command (fleet, deps) takes."""
    add_projects(parser)
    add_keyword(parser, "only projects carrying every keyword given")
    add_registry(parser)


def add_projects(parser: argparse.ArgumentParser) -> None:
    add_list(parser, "--projects", metavar="NAME", help="only these registered names")


def add_keyword(parser: argparse.ArgumentParser, help: str) -> None:
    add_list(parser, "--keyword", metavar="K", help=help)


def selection_filters(args: argparse.Namespace) -> Filters:
    from tether.runs.selection import Filters

    return Filters(args.registry, args.projects, args.keyword)


def print_nothing_selected(result: NothingSelected, as_json: bool) -> int:
    """Nothing to work on: under ``--json`` the command's own document, with no project."""
    print_json(dict(result.document)) if as_json else print("\n".join(result.lines()))
    return Exit.OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="register a project", description="register a project")
    add.add_argument("path", metavar="PATH", help="the project's folder")
    add.add_argument("--name", metavar="N", help="its name in the registry (default: folder name)")
    add_keyword(add, "keywords to select it by")
    add_removed(add, "--keywords", "use --keyword K")
    add.add_argument("--description", metavar="TEXT", default="", help="a line about it")
    listing = sub.add_parser(
        "list", help="list registered projects", description="list registered projects"
    )
    show = sub.add_parser("show", help="show one project", description="show one project")
    show.add_argument("name", metavar="NAME", help="the project's name in the registry")
    remove = sub.add_parser(
        "remove",
        help="unregister a project (its files are not touched)",
        description="unregister a project (its files are not touched)",
    )
    remove.add_argument("name", metavar="NAME", help="the project's name in the registry")
    for each in (add, listing, show, remove):
        add_registry(each)
        add_json(each)


def run(args: argparse.Namespace) -> int:
    from tether.report.projects import RENDER
    from tether.runs import projects

    if args.action == "add":
        doc = projects.add(args.registry, args.path, args.name, args.keyword, args.description)
    elif args.action == "list":
        doc = projects.listing(args.registry)
    elif args.action == "show":
        doc = projects.show(args.registry, args.name)
    else:
        doc = projects.remove(args.registry, args.name)
    if args.json:
        print_json(doc)
    else:
        print(RENDER[args.action](doc))
    return Exit.OK
