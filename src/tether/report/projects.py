"""The words of ``tether projects add|list|show|remove``: each reads the document the command
prints under ``--json`` (``tether.runs.projects`` builds them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, assert_never

from tether.report.runs import EMPTY_REGISTRY

if TYPE_CHECKING:
    from tether.runs.projects import InstallFound

Doc = dict[str, Any]
# The ``note`` of ``projects add`` for a folder with nothing installed yet.
NOT_TETHERED_NOTE = "no tether install there yet: fleet commands skip it until 'tether init' runs"


def install_summary(found: InstallFound) -> str:
    """What is installed in a registered folder, in a few words (``projects show``)."""
    state = found.state
    if state == "path-missing":
        return "path missing"
    if state == "not-tethered":
        return f"not tethered ({found.error})"
    if state == "installed":
        return f"{found.upstream} {found.version} ({found.profile} profile)"
    assert_never(state)


def render_added(doc: Doc) -> str:
    added = doc["added"]
    lines = [f"registered {added['name']} ({added['project_dir']}) in {doc['registry']}"]
    if doc["note"]:
        lines.append(f"note: {doc['note']}")
    return "\n".join(lines)


def render_list(doc: Doc) -> str:
    if not doc["projects"]:
        return EMPTY_REGISTRY
    lines = ["| name | path | keywords | description |", "|---|---|---|---|"]
    for row in doc["projects"]:
        path = row["project_dir"] + ("" if row["exists"] else " (missing)")
        lines.append(
            f"| {row['name']} | {path} | {', '.join(row['keywords'])} | {row['description']} |"
        )
    return "\n".join(lines)


def render_show(doc: Doc) -> str:
    lines = []
    for key, value in doc.items():
        shown = ", ".join(value) if isinstance(value, list) else value
        lines.append(f"{key}: {shown}")
    return "\n".join(lines)


def render_removed(doc: Doc) -> str:
    path = doc["removed"]["project_dir"]
    return f"unregistered {doc['name']} ({path}); its files are untouched"


# The renderer of each ``projects`` action.
RENDER: dict[str, Callable[[Doc], str]] = {
    "add": render_added,
    "list": render_list,
    "show": render_show,
    "remove": render_removed,
}
