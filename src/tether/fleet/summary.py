"""The fleet's words: one JSON document per command, and the text rendered from it.

The text is built from the JSON document, never from the run objects, so both always say
the same thing. Text is bounded (a conversation reads it): conflict paths are capped per
project and only the first failing projects get their log's last lines; the run folder
holds everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tether.errors import Exit
from tether.fleet.runner import FleetEntry, FleetRun
from tether.fleet.units import StatusRow
from tether.runs import sections
from tether.runs.sections import member_json
from tether.runs.selection import Member, Selection

PATHS_PER_PROJECT = 10
TAILS_SHOWN = 3
# Bucket columns of the plan table, in the order the single-project summary uses.
TABLE_BUCKETS = (
    "add",
    "removed",
    "overwrite",
    "update",
    "merged",
    "skip",
    "conflict",
    "delete",
    "deleted",
    "failed",
)

Doc = dict[str, Any]


# --- status ----------------------------------------------------------------------------


def status_document(
    registry: str, selection: Selection, rows: Sequence[tuple[Member, StatusRow]]
) -> Doc:
    return {
        "registry": registry,
        "filter_not_found": list(selection.not_found),
        "projects": [
            {**member_json(m), **row.to_json()} for m, row in rows if row.state != "not-tethered"
        ],
        "skipped_path_missing": sections.path_missing(selection.missing),
        "skipped_not_tethered": [
            {**member_json(m), "reason": row.error}
            for m, row in rows
            if row.state == "not-tethered"
        ],
    }


def render_status(doc: Doc) -> str:
    lines = [
        "| project | upstream | installed | newest | modified | conflicts |",
        "|---|---|---|---|--:|--:|",
    ]
    notes = []
    for row in doc["projects"]:
        newest = row["latest"] or "?"
        if row["update_available"]:
            newest += " (update available)"
        lines.append(
            f"| {row['name']} | {row['upstream'] or '?'} | {row['installed'] or '?'} | "
            f"{newest} | {row['modified']} | {row['conflicts']} |"
        )
        if row["error"]:
            notes.append(f"- {row['name']}: {row['error']}")
    if notes:
        lines += ["", "## Problems", *notes]
    lines += _skipped_sections(doc["skipped_path_missing"], doc["skipped_not_tethered"])
    return "\n".join(lines)


def _skipped_sections(missing: list[Doc], not_tethered: list[Doc]) -> list[str]:
    lines: list[str] = []
    if missing:
        lines += ["", f"## Skipped (path missing) ({len(missing)})"]
        lines += [f"- {m['name']}: {m['path']}" for m in missing]
    if not_tethered:
        lines += ["", f"## Skipped (not tethered) ({len(not_tethered)})"]
        lines += [f"- {m['name']}: {m['path']}" for m in not_tethered]
    return lines


# --- update ----------------------------------------------------------------------------


def update_document(run: FleetRun, registry: str) -> Doc:
    request = run.request
    return {
        **run.folder.to_json(),
        "registry": registry,
        "status": run.status,
        "dry_run": request.dry_run,
        "to": request.to,
        "isolate": request.isolate,
        "continue_on_failure": request.continue_on_failure,
        "filter_not_found": list(run.selection.not_found),
        "projects": [_entry_json(e) for e in run.entries],
        "summary": _summary(run),
    }


def _entry_json(entry: FleetEntry) -> Doc:
    plan = entry.plan.to_json()
    del plan["log"]
    outcome = entry.outcome.to_json() if entry.outcome else None
    if outcome is not None:
        del outcome["log"]
        if outcome["report"] is not None:
            outcome["report"] = compact_report(outcome["report"])
            outcome["report_file"] = str(entry.report_path)
    return {
        **member_json(entry.member),
        "result": entry.result,
        "log": str(entry.log_path),
        "plan": plan,
        "outcome": outcome,
    }


def compact_report(report: Mapping[str, Any]) -> Doc:
    """A single-project update report without its per-path lists, except the paths that
    need a person: a hundred projects must not print a hundred full file lists."""
    keep = (
        "status",
        "from",
        "to",
        "branch",
        "backup_dir",
        "state_written",
        "notes",
        "dirty",
        "pull_request",
    )
    buckets = report["buckets"]
    return {
        **{key: report.get(key) for key in keep},
        "counts": {name: len(paths) for name, paths in buckets.items() if paths},
        "conflict": buckets["conflict"],
        "failed": buckets["failed"],
        "delete": buckets["delete"],
    }


def _summary(run: FleetRun) -> Doc:
    by = {
        r: [e for e in run.entries if e.result == r]
        for r in ("applied", "up-to-date", "failed", "pending", "not-tethered")
    }
    summary: Doc = {
        "applied": [_applied(e) for e in run.entries if e.result in ("applied", "up-to-date")],
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
        "isolation": _isolation(run),
    }
    summary["suggested_next_steps"] = next_steps(run, summary)
    return summary


def _applied(entry: FleetEntry) -> Doc:
    outcome = entry.outcome
    conflicts = len(outcome.conflicts) if outcome else 0
    state = "updated" if entry.result == "applied" else "up-to-date"
    return {
        **member_json(entry.member),
        "state": state,
        "from": entry.plan.from_version,
        "to": entry.plan.to_version,
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
    return {**member_json(entry.member), "from": plan.from_version, "to": plan.to_version}


def _isolation(run: FleetRun) -> Doc:
    used = [
        (e.member.name, e.outcome.isolation)
        for e in run.entries
        if e.outcome is not None and e.outcome.isolation
    ]
    return sections.isolation(run.request.isolate, used)


def next_steps(run: FleetRun, summary: Mapping[str, Any]) -> list[str]:
    steps = _run_steps(run, summary)
    steps += _problem_steps(summary)
    if summary["conflicts_to_resolve"]:
        steps.append(
            "resolve the conflicts listed above in each project (markers in the files or "
            "patches in its merge folder), then run 'tether check' there"
        )
    steps += _review_steps(run, summary)
    return steps or ["nothing to do: every selected project is up to date"]


def _run_steps(run: FleetRun, summary: Mapping[str, Any]) -> list[str]:
    if run.status == "dry-run":
        return (
            ["run the same command without --dry-run to apply these plans"]
            if summary["pending"]
            else []
        )
    if run.status == "cancelled":
        return ["nothing was written; run the same command again and answer y to apply"]
    steps = []
    for failed in summary["failed"]:
        steps.append(
            f"fix {failed['name']} (failed at step {failed['step']}; log {failed['log']}), "
            "then run the same command again: projects already updated are up to date "
            "and are left alone"
        )
    if summary["pending"] and not run.request.continue_on_failure:
        steps.append("or pass --continue-on-failure to update the pending projects past a failure")
    return steps


def _problem_steps(summary: Mapping[str, Any]) -> list[str]:
    steps = []
    if summary["skipped_path_missing"]:
        names = " ".join(m["name"] for m in summary["skipped_path_missing"])
        steps.append(
            f"registered paths are gone: move them back, or 'tether projects remove' them ({names})"
        )
    if summary["skipped_not_tethered"]:
        steps.append(
            "install a release in the projects skipped as not tethered "
            "('tether init --source SRC --version V'), or remove them from the registry"
        )
    return steps


def _review_steps(run: FleetRun, summary: Mapping[str, Any]) -> list[str]:
    if not any(a["state"] == "updated" for a in summary["applied"]):
        return []
    worktrees = any(p["used"] == "worktree" for p in summary["isolation"]["projects"])
    if worktrees:
        steps = [
            "in each worktree listed under Isolation: run the tests, review the changes "
            "(git diff) and commit (tether never commits)"
        ]
    else:
        steps = [
            "in each updated project: run its tests, review the changes (git diff) and commit "
            "(tether never commits)"
        ]
    if run.request.pr:
        where = "worktree" if worktrees else "project"
        steps.append(
            f"then, in each {where}, run 'tether pr' to push its branch and open its pull "
            "request (--pr pushes nothing any more: an uncommitted branch has nothing to review)"
        )
    if worktrees:
        steps.append("when a worktree is done with: 'git worktree remove <path>'")
    return steps


def render_plan_table(run: FleetRun) -> str:
    """One row per project: from → to, counts per bucket, and what needs a person."""
    columns = [
        b for b in TABLE_BUCKETS if b == "conflict" or any(b in e.plan.counts for e in run.entries)
    ]
    head = "| project | from → to | " + " | ".join(columns) + " | note |"
    rule = "|---|---|" + "--:|" * len(columns) + "---|"
    lines = [head, rule]
    for entry in run.entries:
        plan = entry.plan
        span = (
            f"{plan.from_version} → {plan.to_version}"
            if plan.state == "planned"
            else plan.from_version
        )
        counts = " | ".join(
            str(plan.counts.get(b, 0)) if plan.state == "planned" else "" for b in columns
        )
        lines.append(f"| {entry.member.name} | {span} | {counts} | {_plan_note(entry)} |")
    return "\n".join(lines)


def _plan_note(entry: FleetEntry) -> str:
    plan = entry.plan
    if plan.state == "up-to-date":
        return "up to date"
    if plan.state == "not-tethered":
        return "not tethered"
    if plan.state == "failed":
        return f"plan failed: {plan.error}"
    if plan.conflicts:
        return "conflicts: " + _capped(list(plan.conflicts))
    return ""


def _capped(paths: list[str]) -> str:
    shown = ", ".join(paths[:PATHS_PER_PROJECT])
    return shown + (
        f" … and {len(paths) - PATHS_PER_PROJECT} more" if len(paths) > PATHS_PER_PROJECT else ""
    )


def render_update(doc: Doc) -> str:
    """The sections the issue names, in its order; empty ones left out except the last two."""
    summary = doc["summary"]
    lines = [_headline(doc)]
    lines += _applied_section(summary["applied"])
    lines += _failed_section(summary["failed"])
    lines += _pending_section(summary["pending"])
    lines += _skipped_sections(summary["skipped_path_missing"], summary["skipped_not_tethered"])
    lines += _conflict_section(summary["conflicts_to_resolve"])
    lines += _isolation_section(summary["isolation"], doc["dry_run"])
    lines += ["", "## Suggested next steps"]
    lines += [f"{i}. {step}" for i, step in enumerate(summary["suggested_next_steps"], 1)]
    return "\n".join(lines)


_HEADLINES = {
    "dry-run": "dry run: nothing written",
    "cancelled": "cancelled: nothing written",
    "done": "finished",
    "stopped": "stopped at the first failure",
    "interrupted": "interrupted",
    "planned": "planned",
}


def _headline(doc: Doc) -> str:
    return f"tether fleet update: {_HEADLINES[doc['status']]} (logs in {doc['run_dir']})"


def _applied_section(applied: list[Doc]) -> list[str]:
    if not applied:
        return []
    lines = ["", f"## Applied projects ({len(applied)})"]
    for item in applied:
        if item["state"] == "up-to-date":
            lines.append(f"- {item['name']}: already up to date at {item['from']}")
            continue
        extra = f" ({item['conflicts']} conflict(s) to resolve)" if item["conflicts"] else ""
        lines.append(f"- {item['name']}: {item['from']} → {item['to']}{extra}")
    return lines


def _failed_section(failed: list[Doc]) -> list[str]:
    if not failed:
        return []
    title = "## Failed project" if len(failed) == 1 else f"## Failed projects ({len(failed)})"
    lines = ["", title]
    for index, item in enumerate(failed):
        lines.append(f"- {item['name']}: failed at step {item['step']}: {item['error']}")
        lines.append(f"  log: {item['log']}")
        if index < TAILS_SHOWN and item["log_tail"]:
            lines.append(f"  last {len(item['log_tail'])} lines of its log:")
            lines += [f"    {line}" for line in item["log_tail"]]
    return lines


def _pending_section(pending: list[Doc]) -> list[str]:
    if not pending:
        return []
    lines = ["", f"## Pending projects ({len(pending)})"]
    for item in pending:
        span = f" ({item['from']} → {item['to']})" if item["from"] else ""
        lines.append(f"- {item['name']}{span}")
    return lines


def _conflict_section(conflicts: list[Doc]) -> list[str]:
    total = sum(len(c["paths"]) for c in conflicts)
    if not total:
        return []
    lines = ["", f"## Conflicts to resolve ({total})"]
    lines += [f"- {c['name']}: {_capped(c['paths'])}" for c in conflicts]
    return lines


def _isolation_section(isolation: Doc, dry_run: bool) -> list[str]:
    head = f"## Isolation: {isolation['requested']}"
    if dry_run:
        head += " (dry run: nothing created)"
    elif not isolation["projects"]:
        head += " (no project was updated)"
    return ["", head, *isolation_lines(isolation["projects"])]


def isolation_lines(projects: list[Doc]) -> list[str]:
    """One line per project: where its changes are (shared with the deps summary)."""
    lines = []
    for item in projects:
        where = {
            "none": "in place",
            "branch": f"branch {item['branch']}",
            "worktree": f"worktree {item['worktree']} (branch {item['branch']})",
        }[item["used"]]
        note = f" — {item['note']}" if item["note"] else ""
        lines.append(f"- {item['name']}: {where}{note}")
    return lines
