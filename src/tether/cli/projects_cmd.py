"""``tether projects add|list|show|remove``: the only commands that write the registry."""

from __future__ import annotations

import argparse

from tether.cli.common import add_json, add_keyword, add_registry, add_removed, print_json
from tether.errors import Exit


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
