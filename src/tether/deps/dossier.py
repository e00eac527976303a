"""The dossier skeleton (``tether deps dossier``) and the improvements read back from it.

The skeleton is made from the plan folder alone (the plan, the registry metadata kept with
it and the release notes ``deps notes`` kept): the deduplicated bump set, its groups, the PR
plan of a major update, the release notes and what was unavailable, plus the sections a
person or an agent fills (breaking changes, improvements, workarounds). ``dossier.md`` is
for them; ``dossier.json`` holds the same data for a program. A ``dossier.md`` that was
edited since tether wrote it is never overwritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.deps.bumps import (
    BumpItem,
    bucket_counts,
    bump_list,
    group_of,
    groups,
    pr_buckets,
)
from tether.deps.notes import BumpNotes, target_peers
from tether.errors import TetherError
from tether.fsio import atomic_write, cannot_read, read_bytes, sha256_bytes
from tether.report.dossier import (
    BREAKING,
    IMPROVEMENTS,
    WORKAROUNDS,
    render_dossier_md,
    sections_to_fill,
    together_reason,
)

Doc = dict[str, Any]
DOSSIER_MD = "dossier.md"
DOSSIER_JSON = "dossier.json"
_FILL_KEYS = {
    "Breaking changes and migration": "breaking_changes",
    IMPROVEMENTS: "improvements",
    "Workarounds resolved": "workarounds",
}


def dossier_document(
    folder: Path,
    plan: Doc,
    metadata: Mapping[tuple[str, str], Doc],
    kept: Mapping[str, BumpNotes | None],
) -> Doc:
    items = bump_list(plan)
    pr_plan = None
    if plan["level"] == "major":
        buckets = pr_buckets(items, target_peers(metadata, items))
        documents = [b.to_json(together_reason) for b in buckets]
        pr_plan = {"buckets": documents, "counts": bucket_counts(buckets)}
    notes = [_notes_entry(item, kept.get(item.label)) for item in items]
    return {
        "level": plan["level"],
        "plan_dir": str(folder),
        "dossier_md": str(folder / DOSSIER_MD),
        "dossier_json": str(folder / DOSSIER_JSON),
        "projects": list(
            dict.fromkeys(o["project_name"] for p in plan["packages"] for o in p["occurrences"])
        ),
        "bumps": [{**item.to_json(), "group": group_of(item)[0]} for item in items],
        "groups": [g.to_json() for g in groups(items)],
        "pr_plan": pr_plan,
        "notes": notes,
        "unavailable": [
            {"package": entry_label(n), "reason": reason}
            for n in notes
            for reason in n["unavailable"]
        ],
        "to_fill": {_FILL_KEYS[t]: [] for t in sections_to_fill(plan["level"])},
        "scan_failed": list(plan.get("scan_failed") or []),
        "skipped_path_missing": list(plan.get("skipped_path_missing") or []),
        "warnings": list(plan.get("warnings") or []),
        "notices": [],
        "skeleton_sha256": "",
    }


def entry_label(entry: Doc) -> str:
    catalog = entry.get("catalog")
    return f"{entry['name']} (catalog {catalog})" if catalog else str(entry["name"])


def _notes_entry(item: BumpItem, notes: BumpNotes | None) -> Doc:
    entry: Doc = {"name": item.name}
    if item.catalog:
        entry["catalog"] = item.catalog
    entry.update(from_version=item.from_version, to_version=item.to_version)
    if notes is None:
        empty: Doc = {"file": None, "entries": [], "deprecated": [], "unavailable": []}
        return {**entry, "status": "not-fetched", **empty}
    releases = [
        {**_brief(r), "title": r.get("title", r["version"]), "url": r.get("url")}
        for r in notes.releases
    ]
    changelog = [
        {
            **_brief(c),
            "title": f"{notes.changelog_file}: {c.get('heading', c['version'])}",
            "url": None,
        }
        for c in notes.changelog
    ]
    deprecated = [
        {"version": r["version"], "message": r["deprecated"]}
        for r in notes.registry
        if r.get("deprecated") is not None
    ]
    return {
        **entry,
        "status": "fetched",
        "file": notes.file,
        "entries": releases or changelog,
        "deprecated": deprecated,
        "unavailable": list(notes.unavailable),
    }


def _brief(entry: Doc) -> Doc:
    return {"version": str(entry["version"]), "published": entry.get("published")}


def write(folder: Path, doc: Doc) -> Doc:
    """Write ``dossier.md`` and ``dossier.json``; refuse to replace a filled dossier."""
    from tether.report.documents import versioned

    md_path, json_path = folder / DOSSIER_MD, folder / DOSSIER_JSON
    _refuse_if_edited(md_path, json_path)
    text = render_dossier_md(doc).encode("utf-8")
    doc["skeleton_sha256"] = sha256_bytes(text)
    body = json.dumps(versioned(doc), indent=2, ensure_ascii=False) + "\n"
    atomic_write(json_path, body.encode("utf-8"))
    atomic_write(md_path, text)
    return doc


def _refuse_if_edited(md_path: Path, json_path: Path) -> None:
    from tether.deps.plans import read_json

    try:
        current = read_bytes(md_path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise TetherError(cannot_read(md_path, error)) from None
    try:
        written = read_json(json_path)
    except TetherError:
        written = None
    recorded = written.get("skeleton_sha256") if isinstance(written, dict) else None
    if recorded != sha256_bytes(current):
        raise TetherError(
            f"{md_path} was edited since tether wrote it (it may hold research): move it "
            "away to write a new skeleton (nothing was written)"
        )


# --- reading the filled dossier back --------------------------------------------------------


@dataclass(frozen=True)
class Improvement:
    title: str  # what --select and pick-subset match
    group: str | None
    projects: tuple[str, ...]  # the projects it affects (empty: not said)

    def to_json(self) -> Doc:
        return {"title": self.title, "group": self.group, "projects": list(self.projects)}


_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BULLET = re.compile(r"^[-*]\s+(.+?)\s*$")
_TAGS = re.compile(r"\s*\(((?:group|affects)\s*:[^()]*)\)\s*$", re.I)


def improvements(text: str) -> list[Improvement]:
    """Every top-level bullet under the Improvements heading."""
    found = []
    for line in _section(_COMMENT.sub("", text), IMPROVEMENTS):
        bullet = _BULLET.match(line)
        if bullet is None:
            continue
        title: str = bullet[1]
        group: str | None = None
        projects: tuple[str, ...] = ()
        tags = _TAGS.search(title)
        if tags is not None:
            title = title[: tags.start()].rstrip()
            group, projects = _tags(tags[1])
        if title:
            found.append(Improvement(title, group, projects))
    return found


def _section(text: str, title: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == title
        elif line.startswith("# "):
            inside = False
        elif inside:
            lines.append(line)
    return lines


def _tags(text: str) -> tuple[str | None, tuple[str, ...]]:
    group: str | None = None
    projects: tuple[str, ...] = ()
    for part in text.split(";"):
        key, _, value = part.partition(":")
        key, value = key.strip().lower(), value.strip().strip("`")
        if key == "group" and value:
            group = value
        elif key == "affects":
            projects = tuple(p.strip() for p in value.split(",") if p.strip())
    return group, projects


def read_improvements(folder: Path | None) -> list[Improvement] | None:
    """The improvements of ``<folder>/dossier.md``; None when there is no dossier."""
    if folder is None:
        return None
    path = folder / DOSSIER_MD
    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(path, error)) from None
    return improvements(text)


def gate_digest(folder: Path | None) -> Doc | None:
    """What the gate shows of a filled dossier (never its bodies): where it is, its digest,
    the improvement titles with the projects they affect, and how many entries each
    section holds; None without a dossier."""
    if folder is None:
        return None
    path = folder / DOSSIER_MD
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(path, error)) from None
    text = _COMMENT.sub("", data.decode("utf-8", errors="replace"))
    sections = {title: _bullets(text, title) for title in (BREAKING, WORKAROUNDS, "Unavailable")}
    return {
        "path": str(path),
        "sha256": sha256_bytes(data),
        "bumps": sum(1 for line in _section(text, "Bump set") if line.startswith("| ")) - 1,
        "improvements": [i.to_json() for i in improvements(text)],
        "sections": sections,
    }


def _bullets(text: str, title: str) -> int:
    return sum(1 for line in _section(text, title) if _BULLET.match(line))


def in_scope(chosen: Sequence[Improvement], projects: Sequence[str]) -> list[Doc]:
    """The chosen improvements with the projects they concern among ``projects`` (every one
    of them when a bullet names none)."""
    out = []
    for item in chosen:
        concerned = [p for p in projects if not item.projects or p in item.projects]
        out.append({**item.to_json(), "projects": concerned})
    return out
