"""The words of deep mode: the dossier skeleton (``dossier.md``) and the digests
``deps notes`` and ``deps dossier`` print.

Everything is rendered from the commands' documents. The dossier's headings are named here
once: ``tether.deps.dossier`` reads the filled dossier back by them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.deps.bumps import Together

Doc = dict[str, Any]

BREAKING = "Breaking changes and migration"
IMPROVEMENTS = "Improvements"
WORKAROUNDS = "Workarounds resolved"
NONE_YET = "_none yet_"
NOTES_SHOWN = 10  # release notes listed per package; the file keeps every one
NAMES_SHOWN = 5
LINES_SHOWN = 20  # packages listed by deps notes' text

# What each section to fill is for, and the shape of one bullet (the title is what
# ``deps apply --select`` matches; the parenthetical is optional).
TO_FILL = {
    BREAKING: "one bullet per change that breaks: `- <package>: <what changes> — <what to do>`",
    IMPROVEMENTS: "one bullet per thing a project can adopt once bumped: "
    "`- <title> (group: <group id>; affects: <project>, <project>)`",
    WORKAROUNDS: "one bullet per workaround the update makes unnecessary: "
    "`- <package>: <the workaround> (affects: <project>)`",
}


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" +{len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def sections_to_fill(level: str) -> list[str]:
    first = [BREAKING] if level in ("major", "engines") else []
    return [*first, IMPROVEMENTS, WORKAROUNDS]


def render_dossier_md(doc: Doc) -> str:
    """The skeleton a person or an agent fills: the research sections first, then what
    tether knows (bump set, groups, PR plan, release notes, what went missing)."""
    projects = doc["projects"]
    lines = [
        f"# Dependency dossier: {doc['level']} update",
        "",
        f"Plan folder: `{doc['plan_dir']}`. {len(doc['bumps'])} package(s) move across "
        f"{len(projects)} project(s): {_names(projects)}.",
        "",
        "<!-- Written by `tether deps dossier` from the plan folder. Fill the sections marked "
        f"'to fill' by replacing their {NONE_YET} line with bullets; leave the headings as they "
        "are. `tether deps apply --plan-dir <this folder> --select ITEMS` picks package names "
        "exactly and improvements by any part of their title. -->",
    ]
    for title in sections_to_fill(doc["level"]):
        lines += ["", f"## {title}", "", f"<!-- to fill: {TO_FILL[title]} -->", NONE_YET]
    lines += _unavailable(doc["unavailable"])
    lines += _bump_table(doc["bumps"])
    lines += _groups(doc["groups"])
    if doc.get("pr_plan") is not None:
        lines += _pr_plan(doc["pr_plan"])
    lines += _notes(doc["notes"], doc["plan_dir"])
    lines += _drift(doc)
    return "\n".join(lines) + "\n"


def _unavailable(items: list[Doc]) -> list[str]:
    lines = ["", "## Unavailable", ""]
    if not items:
        return [*lines, "_nothing_"]
    return lines + [f"- {item['package']}: {item['reason']}" for item in items]


def _bump_table(bumps: list[Doc]) -> list[str]:
    lines = [
        "",
        "## Bump set",
        "",
        "| package | current (most common) | target | projects | group |",
    ]
    lines.append("|---|---|---|---|---|")
    for bump in bumps:
        label = _label(bump) + (" (breaking)" if bump["breaking"] else "")
        lines.append(
            f"| {label} | {bump['current_version']} | {bump['target_version']} "
            f"| {_names(bump['projects'])} | `{bump['group']}` |"
        )
    if not bumps:
        lines.append("| (nothing moves) | | | | |")
    return lines


def _label(item: Doc) -> str:
    catalog = item.get("catalog")
    return f"{item['name']} (catalog {catalog})" if catalog else str(item["name"])


def _groups(groups: list[Doc]) -> list[str]:
    lines = ["", "## Groups", ""]
    lines += [f"- `{g['id']}` ({g['kind']}): {', '.join(g['packages'])}" for g in groups]
    return lines if groups else [*lines, "_none_"]


def _pr_plan(pr_plan: Doc) -> list[str]:
    counts = pr_plan["counts"]
    lines = [
        "",
        "## PR plan",
        "",
        f"{counts['buckets']} pull request(s): {counts['non_breaking']} without and "
        f"{counts['breaking']} with a breaking change; {counts['kept_together_by_override']} "
        f"kept together by an override family, {counts['kept_together_by_peers']} by peers.",
        "",
    ]
    for index, bucket in enumerate(pr_plan["buckets"], 1):
        kind = "breaking" if bucket["breaking"] else "non-breaking"
        line = f"{index}. `{bucket['id']}` ({kind}): {', '.join(bucket['packages'])}"
        line += f" — projects {_names(bucket['projects'])}"
        if bucket["together"]:
            line += "; together because " + "; ".join(bucket["together"])
        lines.append(line)
    return lines


def _notes(notes: list[Doc], plan_dir: str) -> list[str]:
    lines = ["", "## Release notes"]
    for entry in notes:
        lines += ["", f"### {_label(entry)} {entry['from_version']} → {entry['to_version']}", ""]
        if entry["status"] == "not-fetched":
            lines.append(f"_no notes kept: `tether deps notes --plan-dir {plan_dir}` fetches them_")
            continue
        shown = entry["entries"][:NOTES_SHOWN]
        lines += [f"- {_note_line(e)}" for e in shown]
        if len(entry["entries"]) > NOTES_SHOWN:
            lines.append(f"- … {len(entry['entries']) - NOTES_SHOWN} more in the file below")
        lines += [f"- {d['version']} is deprecated: {d['message']}" for d in entry["deprecated"]]
        if not shown:
            lines.append("_no release note found (see Unavailable)_")
        lines.append(f"\nFull text: `{entry['file']}`")
    return lines if notes else [*lines, "", "_nothing moves_"]


def _note_line(entry: Doc) -> str:
    when = f" ({str(entry['published'])[:10]})" if entry.get("published") else ""
    where = f" {entry['url']}" if entry.get("url") else ""
    return f"{entry['version']}{when}: {entry['title']}{where}"


def _drift(doc: Doc) -> list[str]:
    lines: list[str] = []
    missing = [f"{m['name']} — {m['project_dir']}" for m in doc["skipped_path_missing"]]
    for title, items in (
        ("Warnings", doc["warnings"]),
        ("Skipped (scan-failed)", [f"{m['name']}: {m['error']}" for m in doc["scan_failed"]]),
        ("Skipped (path missing)", missing),
    ):
        if items:
            lines += ["", f"## {title} ({len(items)})", "", *(f"- {i}" for i in items)]
    return lines


# --- what the commands print -----------------------------------------------------------------


def render_dossier(doc: Doc) -> str:
    """``deps dossier``'s digest: where the skeleton is and what is in it."""
    counts = {
        "bumps": len(doc["bumps"]),
        "groups": len(doc["groups"]),
        "notes": sum(1 for n in doc["notes"] if n["status"] != "not-fetched"),
    }
    lines = [
        f"tether deps dossier ({doc['level']}): {doc['dossier_md']}",
        f"- {counts['bumps']} package(s) in {counts['groups']} group(s); release notes for "
        f"{counts['notes']} of them",
    ]
    if doc.get("pr_plan") is not None:
        lines.append(f"- {len(doc['pr_plan']['buckets'])} pull request bucket(s) in the PR plan")
    if doc["unavailable"]:
        lines.append(f"- {len(doc['unavailable'])} note(s) unavailable (listed in the dossier)")
    missing = [n for n in doc["notes"] if n["status"] == "not-fetched"]
    if missing:
        lines.append(
            f"- no notes kept for {len(missing)} package(s): tether deps notes --plan-dir "
            f"{doc['plan_dir']}"
        )
    lines.append("- to fill: " + ", ".join(sections_to_fill(doc["level"])))
    lines += [f"- {w}" for w in doc["notices"]]
    return "\n".join(lines)


def render_notes(doc: Doc) -> str:
    """``deps notes``' digest: one line per package; titles, never bodies."""
    counts = doc["counts"]
    lines = [
        f"tether deps notes ({doc['level']}): {counts['packages']} package(s), notes for "
        f"{counts['with_notes']}, {counts['from_cache']} read from {doc['notes_dir']}",
    ]
    # The packages with something unavailable first: they are what a person acts on.
    ordered = sorted(doc["packages"], key=lambda e: not e["unavailable"])
    lines += [f"- {_notes_line(entry)}" for entry in ordered[:LINES_SHOWN]]
    if len(ordered) > LINES_SHOWN:
        lines.append(f"- … and {len(ordered) - LINES_SHOWN} more (--json lists every one)")
    lines += [f"- {w}" for w in doc["warnings"]]
    if counts["not_kept"]:
        lines.append(
            f"{counts['not_kept']} package(s) not kept (a source could not be asked): the next "
            "run asks again"
        )
    return "\n".join(lines)


def _notes_line(entry: Doc) -> str:
    head = f"{_label(entry)} {entry['from_version']} → {entry['to_version']}:"
    parts = []
    if entry["releases"]:
        parts.append(f"{len(entry['releases'])} GitHub release(s)")
    if entry["changelog"]:
        parts.append(f"{len(entry['changelog'])} section(s) of {entry['changelog_file']}")
    if entry["registry"]:
        parts.append(f"{len(entry['registry'])} version(s) on the registry")
    text = f"{head} {', '.join(parts) or 'no notes'}"
    if entry["source"] == "cache":
        text += " (kept)"
    for reason in entry["unavailable"]:
        text += f"; unavailable: {reason}"
    return text


def render_gate_digest(digest: dict[str, Any]) -> list[str]:
    """The dossier at the gate: where it is, which bytes, its improvements and how many
    entries its sections hold (never their bodies)."""
    lines = [f"Dossier: {digest['path']} (sha256 {digest['sha256'][:16]})"]
    counts = [f"{digest['bumps']} bump(s)"]
    counts += [f"{title}: {n}" for title, n in digest["sections"].items()]
    lines.append("  " + "; ".join(counts))
    items = digest["improvements"]
    lines.append(f"  {IMPROVEMENTS} ({len(items)}):")
    for item in items[:20]:
        affects = f" (affects: {', '.join(item['projects'])})" if item["projects"] else ""
        lines.append(f"  - {item['title']}{affects}")
    if len(items) > 20:
        lines.append(f"  - … and {len(items) - 20} more (in the dossier)")
    return lines


def together_reason(why: Together) -> str:
    """Why two bumps share a pull request's bucket."""
    if why.kind == "peer":
        return f"{why.package} {why.version} names {why.peer} as a peer"
    return f"override family {why.family}"
