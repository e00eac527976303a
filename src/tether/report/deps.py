"""The deps commands' words: the text of ``deps scan``, ``deps plan`` and ``deps apply``.

Text is always built from the command's JSON document, so both say the same thing. Text is
bounded (a conversation reads it): long lists are cut with a pointer to the run folder,
which keeps the whole document; only the first failures get their log's last lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.report.runs import failed_section, isolation_lines

CANCELLED = "Cancelled. No files modified."
LEFT = "left-as-is"  # the kind of an engine surface that is not a simple pin

Doc = dict[str, Any]


LIST_CAP = 20


_HEADLINES = {
    "planned": "planned",
    "cancelled": CANCELLED,
    "nothing": "nothing to update",
    "done": "finished",
    "stopped": "stopped at the first failure",
    "interrupted": "interrupted",
}


def render_summary(doc: Doc) -> str:
    if doc["status"] == "cancelled":
        return _HEADLINES["cancelled"]
    lines = [f"tether deps {doc.get('level', '')}: {_HEADLINES.get(doc['status'], doc['status'])}"]
    if doc.get("run_dir"):
        lines[0] += f" (logs in {doc['run_dir']})"
    lines += _applied(doc["applied"])
    lines += failed_section(doc["failed"])
    lines += _list("Pending projects", [_pending_line(p) for p in doc["pending"]])
    lines += _list(
        "Skipped (isolation not possible)",
        [f"{m['name']}: {m['reason']}" for m in doc.get("skipped_isolation", [])],
    )
    lines += _list(
        "Skipped (path missing)", [f"{m['name']}: {m['path']}" for m in doc["skipped_path_missing"]]
    )
    lines += _list(
        "Skipped (scan-failed)", [f"{m['name']}: {m['error']}" for m in doc["skipped_scan_failed"]]
    )
    lines += _list("Skipped by user", [_package_line(p) for p in doc["skipped_by_user"]])
    lines += _list(
        "Skipped by conflict policy", [_package_line(p) for p in doc["skipped_by_conflict_policy"]]
    )
    lines += _list(
        "Skipped by override",
        [
            f"{p['name']} ({p['skipped_by'].removeprefix('override:')})"
            for p in doc["skipped_by_override"]
        ],
    )
    lines += _list(
        "Skipped (unsupported range)", [skipped_line(s) for s in doc["skipped_unsupported_range"]]
    )
    lines += _list("Left as is", [skipped_line(s) for s in doc["left_as_is"]])
    lines += _held_back(doc["skipped_by_release_age"])
    lines += _list("Warnings", doc["warnings"])
    lines += _isolation_section(doc["isolation"])
    lines += ["", "## Suggested next steps (not executed)"]
    lines += [f"{i}. {step}" for i, step in enumerate(doc["suggested_next_steps"], 1)]
    return "\n".join(lines)


def _applied(applied: list[Doc]) -> list[str]:
    if not applied:
        return []
    lines = ["", f"## Applied projects ({len(applied)})"]
    for project in applied:
        lines.append(f"- {project['name']}")
        for bump in project["bumps"][:LIST_CAP]:
            lines.append(f"  - {bump_line(bump)}")
        lines += _more(project["bumps"], "  ")
        for override in project["overrides"]:
            lines.append(f"  - override {override['id']}: {override['command']}")
    return lines


def bump_line(bump: Doc) -> str:
    where = f"{bump['source_file']} {bump['location']}"
    return f"{bump['name']} {bump['current_version']} → {bump['target_version']} ({where})"


def _held_back(items: list[Doc]) -> list[str]:
    return _list("Skipped by release age", [held_back_line(h) for h in items])


def held_back_line(item: Doc) -> str:
    where = f"{item['source_file']} {item['location']}"
    head = f"{item['project_name']}: {item['name']} {item['current_version']}"
    kept = f"kept at {item['target_version']}"
    return f"{head} ({where}) {kept}, not {item['held_back_version']}: {item['reason']}"


def skipped_line(item: Doc) -> str:
    where = f"{item['source_file']} {item['location']}"
    head = f"{item['project_name']}: {item['name']} {item['current_version']}"
    return f"{head} ({where}): {item['reason']}"


def _package_line(package: Doc) -> str:
    return f"{package['name']} → {package['proposed_target']}"


def _pending_line(project: Doc) -> str:
    extra = f", {len(project['overrides'])} override(s)" if project["overrides"] else ""
    return f"{project['name']} ({len(project['bumps'])} bump(s){extra})"


def _list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    lines = ["", f"## {title} ({len(items)})"]
    lines += [f"- {item}" for item in items[:LIST_CAP]]
    return lines + _more(items, "")


def _more(items: Sequence[Any], indent: str) -> list[str]:
    if len(items) <= LIST_CAP:
        return []
    return [f"{indent}- … and {len(items) - LIST_CAP} more (see the run folder's summary.json)"]


def _isolation_section(isolation: Doc) -> list[str]:
    lines = ["", f"## Isolation: {isolation['requested']}", *isolation_lines(isolation["projects"])]
    if not isolation["projects"]:
        lines.append("- no project was changed")
    return lines


def render_scan(doc: Doc) -> str:
    lines = [f"tether deps scan ({doc['level']})"]
    for project in doc["projects"]:
        if "error" in project:
            continue
        updates = [d for d in project["dependencies"] if d["update"]]
        manager = project["package_manager"] or "no package manager"
        lines += ["", f"## {project['name']} ({manager}): {len(updates)} update(s)"]
        lines += [f"- {bump_line(d)}" for d in updates[:LIST_CAP]]
        lines += _more(updates, "")
        current = len(project["dependencies"]) - len(updates)
        if current:
            lines.append(f"- {current} already at their newest {doc['level']} version")
    lines += _tail_sections(doc)
    return "\n".join(lines)


def render_plan(doc: Doc) -> str:
    lines = [
        f"tether deps plan ({doc['level']}; conflict policy: {doc['conflict_policy']})",
        "",
        "| package | current → target | projects | note |",
        "|---|---|--:|---|",
    ]
    for package in doc["packages"]:
        lines.append(_plan_row(package))
    if not doc["packages"]:
        lines.append("| (nothing to update) | | | |")
    overrides = doc.get("overrides") or []
    if overrides:
        lines += ["", f"## Overrides ({len(overrides)})"]
        for item in overrides:
            lines.append(
                f"- {item['id']} [{item['decision']}]: {item['command']} "
                f"(packages {', '.join(item['packages'])}; projects {', '.join(item['projects'])})"
            )
    lines += _tail_sections(doc)
    return "\n".join(lines)


def _plan_row(package: Doc) -> str:
    occurrences = package["occurrences"]
    currents = ", ".join(dict.fromkeys(o["current_version"] for o in occurrences))
    targets = ", ".join(
        dict.fromkeys(o["effective_target"] for o in occurrences if o["effective_target"])
    )
    projects = len({o["project_name"] for o in occurrences})
    notes = []
    if package["conflict"]:
        notes.append(f"conflict (max {package['proposed_target']})")
    if package.get("skipped_by"):
        notes.append(f"skipped by {package['skipped_by']}")
    if package.get("override"):
        notes.append(f"override {package['override']}")
    name = package["name"] + (f" (catalog {package['catalog']})" if package.get("catalog") else "")
    return f"| {name} | {currents} → {targets} | {projects} | {'; '.join(notes)} |"


def _tail_sections(doc: Doc) -> list[str]:
    lines: list[str] = []
    lines += _list(
        "Skipped (isolation not possible)",
        [f"{m['name']}: {m['reason']}" for m in doc.get("skipped_isolation", [])],
    )
    lines += _list(
        "Skipped (path missing)", [f"{m['name']}: {m['path']}" for m in doc["path_missing"]]
    )
    lines += _list(
        "Skipped (scan-failed)", [f"{m['name']}: {m['error']}" for m in doc["scan_failed"]]
    )
    lines += _list(
        "Skipped (unsupported range)",
        [skipped_line(s) for s in doc["skipped"] if s["kind"] == "unsupported-range"],
    )
    lines += _list("Left as is", [skipped_line(s) for s in doc["skipped"] if s["kind"] == LEFT])
    lines += _held_back(doc["skipped_by_release_age"])
    lines += _list("Warnings", doc["warnings"])
    return lines
