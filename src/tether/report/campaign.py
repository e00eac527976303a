"""Every word of ``tether campaign``: the commit message on a campaign branch, the JSON
document of ``start``/``run``/``status`` and its text. Pure functions of plain documents;
the campaign's types are known here only as the dicts they turn into."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Doc = Mapping[str, Any]

# Mirrors campaign/model.py STATES (report/ may not import the multi-project layer).
PUBLISHED = ("pushed", "pr-open", "merged", "closed")  # campaign/publish.py
STATE_ORDER = ("pending", "cloned", "updated", "conflicts", "up-to-date", "failed", *PUBLISHED)
TRAILER = "Tether-Update"


def commit_message(upstream: str, record: Doc) -> str:
    """Subject, the buckets with their counts, the conflicts left in the files, the trailer."""
    old, new = record["from_version"], record["to_version"]
    lines = [f"Update {upstream} from {old} to {new}", ""]
    lines += [f"- {bucket}: {count}" for bucket, count in record["buckets"].items()]
    if record["conflicts"]:
        lines += ["", "Conflict markers left in:"]
        lines += [f"- {path}" for path in record["conflicts"]]
    lines += ["", f"{TRAILER}: {old} -> {new}"]
    return "\n".join(lines) + "\n"


def campaign_document(folder: str, settings: Doc, records: Sequence[Doc]) -> dict[str, Any]:
    """The one document ``campaign start``, ``run`` and ``status`` print with ``--json``."""
    counts = dict.fromkeys(STATE_ORDER, 0)
    for record in records:
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    return {
        "campaign": settings["name"],
        "campaign_dir": folder,
        "upstream": settings["upstream"],
        "to_version": settings["to_version"],
        "branch": settings["branch"],
        "on_conflict": settings["on_conflict"],
        "conflict": settings.get("conflict") or None,
        "auto": settings.get("auto") or None,
        "registry": settings["registry"],
        "created_at": settings["created_at"],
        "counts": counts,
        "repositories": [dict(record) for record in records],
    }


def render_campaign(document: Doc) -> str:
    head = (
        f"campaign {document['campaign']}: {document['upstream']} → {document['to_version']} "
        f"on branch {document['branch']} (on conflict: {document['on_conflict']})"
    )
    repos = document["repositories"]
    width = max((len(r["name"]) for r in repos), default=0)
    lines = [head, *(f"  {_row(r, width)}" for r in repos)]
    counts = document["counts"]
    lines.append(" · ".join(f"{state} {counts[state]}" for state in counts if counts[state]))
    if "run" in document:  # campaign run only
        from tether.report.campaign_run import render_run

        lines += render_run(document["run"], repos)
    lines.append(f"folder: {document['campaign_dir']}")
    return "\n".join(lines)


def _row(record: Doc, width: int) -> str:
    return f"{record['name']:<{width}}  {record['status']:<10}  {_detail(record)}".rstrip()


def _published(record: Doc) -> str:
    """Where a pushed update went: its pull request, else the pushed commit."""
    said = {"pr-open": "pull request", "merged": "merged", "closed": "closed"}
    if record.get("pr_url"):
        return f"{said.get(record['status'], 'pull request')} {record['pr_url']}"
    if record.get("pushed_commit"):
        return f"{record['status']}, pushed {record['pushed_commit'][:12]}"
    return str(record["status"])


def _detail(record: Doc) -> str:
    state = record["status"]
    if state == "failed":
        return str(record["reason"])
    if state in ("pending", "cloned"):
        return str(record["url"])
    versions = f"{record['from_version']} → {record['to_version']}"
    if state == "up-to-date":
        return f"already at {record['to_version']}"
    if state in PUBLISHED:
        return f"{versions}; {_published(record)}" if record["to_version"] else _published(record)
    commit = f"commit {record['commit'][:12]}" if record["commit"] else "not committed (held)"
    if state == "conflicts":
        shown = ", ".join(record["conflicts"][:3])
        more = f" (+{len(record['conflicts']) - 3})" if len(record["conflicts"]) > 3 else ""
        return f"{versions}, conflicts in {shown}{more}; {commit}"
    return f"{versions}; {commit}"
