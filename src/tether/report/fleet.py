"""The fleet's words: the text of ``fleet status`` and ``fleet update``, the plan table, and
the suggested next steps the ``fleet update`` document carries.

The text is built from the JSON document (``tether.fleet.summary``), so both always say the
same thing; only the plan table, shown before anything runs, reads the run's plans. Text is
bounded (a conversation reads it): conflict paths are capped per project and only the first
failing projects get their log's last lines; the run folder holds everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tether.report.runs import failed_section, isolation_lines

if TYPE_CHECKING:
    from tether.fleet.commands import UpdateResult
    from tether.fleet.runner import FleetEntry, FleetRun

from tether.report.update import BUCKET_ORDER

Doc = dict[str, Any]
# Bucket columns of the plan table, in the order the single-project summary uses.
TABLE_BUCKETS = BUCKET_ORDER


PATHS_PER_PROJECT = 10


def render_status(doc: Doc) -> str:
    lines = [
        "| project | upstream | installed | newest | modified | conflicts |",
        "|---|---|---|---|--:|--:|",
    ]
    notes = []
    for row in doc["projects"]:
        newest = row["latest_version"] or "?"
        if row["update_available"]:
            newest += " (update available)"
        lines.append(
            f"| {row['name']} | {row['upstream'] or '?'} | {row['installed_version'] or '?'} | "
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
        lines += [f"- {m['name']}: {m['project_dir']}" for m in missing]
    if not_tethered:
        lines += ["", f"## Skipped (not tethered) ({len(not_tethered)})"]
        lines += [f"- {m['name']}: {m['project_dir']}" for m in not_tethered]
    return lines


def confirm_question(run: FleetRun) -> str:
    """The one question before a fleet update, asked under the plan table."""
    return f"Apply the update to {len(run.to_apply)} project(s), in the order above?"


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
            if plan.status == "planned"
            else plan.from_version
        )
        counts = " | ".join(
            str(plan.counts.get(b, 0)) if plan.status == "planned" else "" for b in columns
        )
        lines.append(f"| {entry.member.name} | {span} | {counts} | {_plan_note(entry)} |")
    return "\n".join(lines)


def _plan_note(entry: FleetEntry) -> str:
    plan = entry.plan
    if plan.status == "up-to-date":
        return "up to date"
    if plan.status == "not-tethered":
        return "not tethered"
    if plan.status == "failed":
        return f"plan failed: {plan.error}"
    if plan.conflicts:
        return "conflicts: " + _capped(list(plan.conflicts))
    return ""


def _capped(paths: list[str]) -> str:
    shown = ", ".join(paths[:PATHS_PER_PROJECT])
    return shown + (
        f" … and {len(paths) - PATHS_PER_PROJECT} more" if len(paths) > PATHS_PER_PROJECT else ""
    )


def render_update_result(result: UpdateResult) -> str:
    """The update's text, under the plan table unless the table was shown with the question."""
    text = render_update(result.document)
    return text if result.asked else f"{render_plan_table(result.run)}\n\n{text}"


def render_update(doc: Doc) -> str:
    """The sections the issue names, in its order; empty ones left out except the last two."""
    summary = doc["summary"]
    lines = [_headline(doc)]
    lines += _applied_section(summary["applied"])
    lines += failed_section(summary["failed"])
    lines += _pending_section(summary["pending"])
    lines += _skipped_sections(summary["skipped_path_missing"], summary["skipped_not_tethered"])
    lines += _conflict_section(summary["conflicts_to_resolve"])
    lines += _per_project_section(
        "Delete? (removed upstream, still here)", summary.get("leftovers", [])
    )
    lines += _per_project_section(
        "Follow-ups the release notes ask for (not run)", summary.get("follow_ups", [])
    )
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
    where = f"logs in {doc['run_dir']}" if doc["run_dir"] else "nothing to update: no run folder"
    return f"tether fleet update: {_HEADLINES[doc['status']]} ({where})"


def _applied_section(applied: list[Doc]) -> list[str]:
    if not applied:
        return []
    lines = ["", f"## Applied projects ({len(applied)})"]
    for item in applied:
        if item["status"] == "up-to-date":
            lines.append(f"- {item['name']}: already up to date at {item['from_version']}")
            continue
        extra = f" ({item['conflicts']} conflict(s) to resolve)" if item["conflicts"] else ""
        lines.append(f"- {item['name']}: {item['from_version']} → {item['to_version']}{extra}")
    return lines


def _pending_section(pending: list[Doc]) -> list[str]:
    if not pending:
        return []
    lines = ["", f"## Pending projects ({len(pending)})"]
    for item in pending:
        span = f" ({item['from_version']} → {item['to_version']})" if item["from_version"] else ""
        lines.append(f"- {item['name']}{span}")
    return lines


def _conflict_section(conflicts: list[Doc]) -> list[str]:
    total = sum(len(c["paths"]) for c in conflicts)
    if not total:
        return []
    lines = ["", f"## Conflicts to resolve ({total})"]
    lines += [f"- {c['name']}: {_capped(c['paths'])}" for c in conflicts]
    return lines


def _per_project_section(title: str, found: list[Doc]) -> list[str]:
    total = sum(len(f["items"]) for f in found)
    if not total:
        return []
    lines = ["", f"## {title} ({total})"]
    lines += [f"- {f['name']}: {_capped(f['items'])}" for f in found]
    return lines


def _isolation_section(isolation: Doc, dry_run: bool) -> list[str]:
    head = f"## Isolation: {isolation['requested']}"
    if dry_run:
        head += " (dry run: nothing created)"
    elif not isolation["projects"]:
        head += " (no project was updated)"
    return ["", head, *isolation_lines(isolation["projects"])]


def fleet_next_steps(run: FleetRun, summary: Mapping[str, Any]) -> list[str]:
    """What to do after a fleet run, in order: the JSON document's ``suggested_next_steps``."""
    steps = _run_steps(run, summary)
    steps += _problem_steps(summary)
    if summary["conflicts_to_resolve"]:
        steps.append(
            "resolve the conflicts listed above in each project (markers in the files or "
            "patches in its merge folder), then run 'tether check' there"
        )
    if summary["leftovers"]:
        steps.append(
            "in each project under 'Delete?': 'tether update --delete-removed' removes the "
            "unmodified ones (backed up), 'tether own PATH' keeps one as yours"
        )
    if summary["follow_ups"]:
        steps.append(
            "run the follow-ups the release notes ask for in each project listed (tether "
            "never runs them)"
        )
    steps += _review_steps(run, summary)
    if run.status == "nothing-selected":
        nothing = "no project selected: register one ('tether projects add') or widen the filter"
        return steps or [nothing]
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
            "('tether init --source SRC --to V -C DIR'), or remove them from the registry"
        )
    return steps


def _review_steps(run: FleetRun, summary: Mapping[str, Any]) -> list[str]:
    if not any(a["status"] == "updated" for a in summary["applied"]):
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
    if worktrees:
        steps.append("when a worktree is done with: 'git worktree remove <path>'")
    return steps
