"""The fleet's documents: one JSON document per command, built from the run objects.

The words are rendered from these documents in ``tether.report.fleet``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tether.errors import Exit
from tether.fleet.runner import FleetEntry, FleetRun
from tether.fleet.units import StatusRow
from tether.report.fleet import fleet_next_steps
from tether.runs import sections
from tether.runs.sections import member_json
from tether.runs.selection import Member, Selection

Doc = dict[str, Any]


# --- status ----------------------------------------------------------------------------


def status_document(
    registry: str, selection: Selection, rows: Sequence[tuple[Member, StatusRow]]
) -> Doc:
    return {
        "registry": registry,
        "projects": [
            {**member_json(m), **_without_failure(row.to_json())}
            for m, row in rows
            if row.status != "not-tethered"
        ],
        "skipped_path_missing": sections.path_missing(selection.missing),
        "skipped_not_tethered": [
            {**member_json(m), "reason": row.error}
            for m, row in rows
            if row.status == "not-tethered"
        ],
    }


# --- update ----------------------------------------------------------------------------


def update_document(run: FleetRun, registry: str) -> Doc:
    request = run.request
    return {
        # No run folder when nothing was selected or nothing needed updating.
        **(run.folder.to_json() if run.folder else {"run_id": None, "run_dir": None}),
        "registry": registry,
        "status": run.status,
        "dry_run": request.dry_run,
        "to_version": request.to,
        "isolate": request.isolate,
        "continue_on_failure": request.continue_on_failure,
        "projects": [_entry_json(e, run.folder is not None) for e in run.entries],
        "summary": _summary(run),
    }


def _without_failure(result: Doc) -> Doc:
    """A unit result as the documents carry it: the failure in words (``error``) only."""
    return {key: value for key, value in result.items() if key != "failure"}


def _entry_json(entry: FleetEntry, run_has_folder: bool) -> Doc:
    plan = _without_failure(entry.plan.to_json())
    del plan["log"]
    outcome = _without_failure(entry.outcome.to_json()) if entry.outcome else None
    if outcome is not None:
        del outcome["log"]
        if outcome["report"] is not None:
            outcome["report"] = compact_report(outcome["report"])
            outcome["report_file"] = str(entry.report_path)
    return {
        **member_json(entry.member),
        "status": entry.status,
        "log": str(entry.log_path) if run_has_folder else None,
        "plan": plan,
        "update": outcome,
    }


def compact_report(report: Mapping[str, Any]) -> Doc:
    """A single-project update report without its per-path lists, except the paths that
    need a person: a hundred projects must not print a hundred full file lists."""
    keep = (
        "status",
        "from_version",
        "to_version",
        "branch",
        "backup_dir",
        "state_written",
        "notes",
        "dirty",
    )
    buckets = report["buckets"]
    return {
        **{key: report.get(key) for key in keep},
        "counts": {name: len(paths) for name, paths in buckets.items() if paths},
        "conflict": buckets["conflict"],
        "failed": buckets["failed"],
        "delete": buckets["delete"],
        "adopter_actions": report.get("adopter_actions") or [],
    }


def _summary(run: FleetRun) -> Doc:
    by = {
        r: [e for e in run.entries if e.status == r]
        for r in ("applied", "up-to-date", "failed", "pending", "not-tethered")
    }
    summary: Doc = {
        "applied": [_applied(e) for e in run.entries if e.status in ("applied", "up-to-date")],
        "failed": [_failed(e) for e in by["failed"]],
        "pending": [_pending(e) for e in by["pending"]],
        "skipped_path_missing": sections.path_missing(run.selection.missing),
        "skipped_not_tethered": [
            {**member_json(e.member), "reason": e.plan.error} for e in by["not-tethered"]
        ],
        "conflicts_to_resolve": [
            {**member_json(e.member), "paths": list(e.outcome.conflicts)}
            for e in by["applied"]
            if e.outcome and e.outcome.conflicts
        ],
        "leftovers": _per_project(by["applied"], _leftovers),
        "follow_ups": _per_project(by["applied"], _follow_ups),
        "isolation": _isolation(run),
    }
    summary["suggested_next_steps"] = fleet_next_steps(run, summary)
    return summary


def _per_project(
    entries: list[FleetEntry], pick: Callable[[Mapping[str, Any]], list[str]]
) -> list[Doc]:
    """``{name, project_dir, paths|items}`` per updated project that has any."""
    found = []
    for entry in entries:
        report = entry.outcome.report if entry.outcome else None
        items = pick(report) if report else []
        if items:
            found.append({**member_json(entry.member), "items": items})
    return found


def _leftovers(report: Mapping[str, Any]) -> list[str]:
    """Removed upstream, still here (the single-project summary's "Delete?")."""
    return [str(p) for p in report.get("buckets", {}).get("delete", [])]


def _follow_ups(report: Mapping[str, Any]) -> list[str]:
    """What the release notes ask the adopter to do (never run by tether)."""
    return [str(a.get("command") or a.get("text")) for a in report.get("adopter_actions", [])]


def _applied(entry: FleetEntry) -> Doc:
    outcome = entry.outcome
    conflicts = len(outcome.conflicts) if outcome else 0
    status = "updated" if entry.status == "applied" else "up-to-date"
    return {
        **member_json(entry.member),
        "status": status,
        "from_version": entry.plan.from_version,
        "to_version": entry.plan.to_version,
        "conflicts": conflicts,
    }


def _failed(entry: FleetEntry) -> Doc:
    # A failed plan has no outcome: `tether update --dry-run` would have exited 1 there.
    code = entry.outcome.exit_code if entry.outcome else Exit.ERROR
    return {
        **member_json(entry.member),
        **sections.failure(entry.step, code, entry.error, entry.log_path),
    }


def _pending(entry: FleetEntry) -> Doc:
    plan = entry.plan
    return {
        **member_json(entry.member),
        "from_version": plan.from_version,
        "to_version": plan.to_version,
    }


def _isolation(run: FleetRun) -> Doc:
    used = [
        (e.member.name, e.outcome.isolation)
        for e in run.entries
        if e.outcome is not None and e.outcome.isolation
    ]
    return sections.isolation(run.request.isolate, used)
