"""``tether projects add|list|show|remove``: the only commands that write the registry."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.cli.common import add_json, print_json
from tether.errors import TetherError, UsageError

if TYPE_CHECKING:
    from tether.fleet.registry import ProjectRecord, Registry


def add_registry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        metavar="PATH",
        help="the projects file (default: $TETHER_REGISTRY, else "
        "$XDG_CONFIG_HOME/tether/projects.json)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="register a project", description="register a project")
    add.add_argument("path", metavar="PATH", help="the project's folder")
    add.add_argument("--name", metavar="N", help="its name in the registry (default: folder name)")
    add.add_argument(
        "--keywords",
        action="append",
        metavar="K[,K…]",
        help="keywords to select it by (comma-separated, repeatable)",
    )
    add.add_argument("--description", metavar="TEXT", default="", help="a line about it")
    listing = sub.add_parser(
        "list", help="list registered projects", description="list registered projects"
    )
    show = sub.add_parser("show", help="show one project", description="show one project")
    show.add_argument("name", metavar="NAME")
    remove = sub.add_parser(
        "remove",
        help="unregister a project (its files are not touched)",
        description="unregister a project (its files are not touched)",
    )
    remove.add_argument("name", metavar="NAME")
    for each in (add, listing, show, remove):
        add_registry(each)
        add_json(each)


def run(args: argparse.Namespace) -> int:
    from tether.fleet.registry import load_registry, registry_path

    registry = load_registry(registry_path(args.registry))
    actions = {"add": _add, "list": _list, "show": _show, "remove": _remove}
    return actions[args.action](registry, args)


def _keywords(values: list[str] | None) -> tuple[str, ...]:
    found: list[str] = []
    for value in values or ():
        for word in value.split(","):
            if word.strip() and word.strip() not in found:
                found.append(word.strip())
    return tuple(found)


def _checked_name(name: str) -> str:
    # --projects splits on commas, so a name holding one could never be selected.
    if not name.strip() or "," in name or name != name.strip():
        raise UsageError(f"invalid project name {name!r}: no commas, no surrounding spaces")
    return name


def _add(registry: Registry, args: argparse.Namespace) -> int:
    from tether.fleet.registry import add_project, new_record, save_registry

    path = Path(args.path).expanduser().resolve()
    if not path.is_dir():
        raise TetherError(f"{args.path}: no such directory")
    record = new_record(
        _checked_name(args.name or path.name), path, _keywords(args.keywords), args.description
    )
    add_project(registry, record)
    save_registry(registry)
    note = _tether_note(path)
    if args.json:
        print_json({"registry": str(registry.path), "added": dict(record.raw), "note": note})
    else:
        print(f"registered {record.name} ({path}) in {registry.path}")
        if note:
            print(f"note: {note}")
    return 0


def _tether_note(path: Path) -> str:
    from tether.flows.project import open_project

    try:
        open_project(path)
    except TetherError:
        return "no tether install there yet: fleet commands skip it until 'tether init' runs"
    return ""


def _list(registry: Registry, args: argparse.Namespace) -> int:
    from tether.fleet.selection import EMPTY_REGISTRY

    rows = [_record_json(registry, r) for r in registry.projects.values()]
    if args.json:
        print_json({"registry": str(registry.path), "projects": rows})
        return 0
    if not rows:
        print(EMPTY_REGISTRY)
        return 0
    print("| name | path | keywords | description |\n|---|---|---|---|")
    for row in rows:
        path = row["path"] + ("" if row["exists"] else " (missing)")
        print(f"| {row['name']} | {path} | {', '.join(row['keywords'])} | {row['description']} |")
    return 0


def _record_json(registry: Registry, record: ProjectRecord) -> dict[str, Any]:
    resolved = registry.resolve(record)
    return {
        **record.raw,
        "name": record.name,
        "keywords": list(record.keywords),
        "description": record.description,
        "exists": resolved.exists(),
    }


def _show(registry: Registry, args: argparse.Namespace) -> int:
    record = registry.projects.get(args.name)
    if record is None:
        raise TetherError(f"no project named {args.name!r} in the registry {registry.path}")
    data = _record_json(registry, record)
    data["tether"] = _install_summary(registry.resolve(record))
    if args.json:
        print_json(data)
        return 0
    for key, value in data.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        print(f"{key}: {shown}")
    return 0


def _install_summary(path: Path) -> str:
    """What is installed there, in a few words; reads only local files."""
    from tether.flows.status import project_status

    if not path.exists():
        return "path missing"
    try:
        report = project_status(path)
    except TetherError as error:
        return f"not tethered ({error})"
    return f"{report.upstream} {report.installed_version} ({report.profile} profile)"


def _remove(registry: Registry, args: argparse.Namespace) -> int:
    from tether.fleet.registry import remove_project, save_registry

    record = remove_project(registry, args.name)
    save_registry(registry)
    if args.json:
        print_json({"registry": str(registry.path), "removed": dict(record.raw)})
    else:
        print(f"unregistered {record.name} ({record.path}); its files are untouched")
    return 0
