"""The words of ``tether update``: the plan a person confirms, and what the run did and
leaves to do. Text tether did not write (a release's, a program's) goes through
``report.printable``: each listed entry and field as one line, and every whole rendering
once more."""

from __future__ import annotations

from tether.flows.update_report import IndexTroubleCode, RunEndCode, UpdateStatus
from tether.report import lifecycle_steps as lifecycle_report
from tether.report.abandon import with_abandon_notes
from tether.report.listing import LIST_LIMIT, listing
from tether.report.printable import lines_of, one_line, printable
from tether.report.reasons import NO_BASELINE, regen_document, row_reason, side_problems

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from typing import Any

    from tether.flows.update_report import IndexTrouble, RunEnd, UncommittedMarker, UpdateReport
    from tether.model.plan import FieldMergeRow, FileAction


# (JSON bucket, label): the label says what happened to the files; the JSON names stay.
_BUCKET_ROWS = (
    ("add", "Added (new upstream)"),
    ("removed", "Left deleted (you had removed them)"),
    ("overwrite", "Replaced (owned, unchanged here)"),
    ("update", "Updated (unchanged here)"),
    ("merged", "Merged (your edits kept)"),
    ("skip", "Left as they are (nothing to do)"),
    ("conflict", "Conflicts"),
    ("delete", "Delete? (removed upstream; still here)"),
    ("deleted", "Deleted (removed upstream, on request)"),
    ("failed", "Failed"),
)
# A dry run writes nothing, so its table says what the real run would do.
_PLANNED_ROWS = {
    "add": "Would add (new upstream)",
    "removed": "Would leave deleted (you had removed them)",
    "overwrite": "Would replace (owned, unchanged here)",
    "update": "Would update (unchanged here)",
    "merged": "Would merge (your edits kept)",
    "skip": "Would leave as they are (nothing to do)",
    "deleted": "Would delete (removed upstream, on request)",
}
# The buckets in the order every summary and table shows them.
BUCKET_ORDER = tuple(name for name, _ in _BUCKET_ROWS)
_ALWAYS_SHOWN = ("add", "merged", "skip", "conflict")
# An owned file that was here before the release ever shipped it: the adopter's bytes were
# replaced (and backed up), so it is not "unchanged here".
_REPLACED_YOURS = "Replaced (owned; your copy backed up)"
_REPLACING_YOURS = "Would replace (owned; your copy backed up first)"


def _with_reason(action: FileAction) -> str:
    reason = row_reason(action)
    return action.path + (f" ({reason})" if reason else "")


def _conflict_line(action: FileAction) -> str:
    reason = row_reason(action)
    why = f"; {reason}" if reason else ""
    if action.decision == "markers":
        return f"{action.path} (conflict markers in the file{why})"
    if action.artifact:
        return f"{action.path} → {action.artifact} ({action.decision}{why})"
    return f"{action.path} ({action.decision}{why})"


# Conflicts settled by a choice (--auto, or the prompt): nothing is left for a person, so
# they are counted and listed apart from the open ones, each as what it did to the file.
_SETTLED = (
    ("keep-mine", "Kept yours whole (release's copy beside it)", "Would keep yours whole"),
    ("take-theirs", "Took theirs whole (yours backed up)", "Would take theirs whole"),
    ("hunks", "Clashing lines settled (the rest merged)", "Would settle clashing lines"),
)


def _settled(report: UpdateReport, kind: str) -> list[FileAction]:
    from tether.model.plan import HUNK_CHOICES, Bucket

    wanted = HUNK_CHOICES if kind == "hunks" else (kind,)
    return [a for a in report.bucket(Bucket.CONFLICT) if a.decision in wanted]


def _settled_listings(report: UpdateReport, limit: int | None) -> list[str]:
    kept = _settled(report, "keep-mine")
    lines = listing(
        "Kept yours whole (the release's copy goes beside it: compare, then delete the copy)",
        [f"{a.path} (the release's copy: {a.artifact})" for a in kept],
        limit,
    )
    lines += listing(
        "Took theirs whole (yours goes to the backup)",
        [a.path for a in _settled(report, "take-theirs")],
        limit,
    )
    lines += listing(
        "Clashing lines settled (every other change of both sides merged)",
        [_conflict_line(a) for a in _settled(report, "hunks")],
        limit,
    )
    return lines


def _conflicts_label(report: UpdateReport) -> str:
    """Where the conflicts are: markers in the files, or patches in the merge folder."""
    conflicts = report.open_conflicts
    markers = sum(1 for a in conflicts if a.decision in ("markers", "held"))
    patches = sum(
        1 for a in conflicts if a.artifact and a.artifact != a.path and a.decision != "held"
    )
    places = []
    would = "would go " if report.dry_run else ""
    if markers:
        places.append(f"markers {would}in the files")
    if patches:
        places.append(f"patches {would}in {report.merge_dir}/")
    return "Conflicts" + (f" ({', '.join(places)})" if places else "")


def _bucket_rows(report: UpdateReport) -> list[str]:
    from tether.engine.decide import Row
    from tether.model.plan import Bucket

    rows: list[tuple[str, int]] = []
    for key, label in _BUCKET_ROWS:
        actions = report.bucket(Bucket(key))
        if report.dry_run:
            label = _PLANNED_ROWS.get(key, label)
        if key == "overwrite":
            yours = sum(1 for a in actions if a.reason == Row.OWNED_UNTRACKED.value)
            if yours:
                rows.append((_REPLACING_YOURS if report.dry_run else _REPLACED_YOURS, yours))
            count = len(actions) - yours
        else:
            count = len(actions)
        if key == "conflict":
            label = _conflicts_label(report)
            count = len(report.open_conflicts)
        if count or key in _ALWAYS_SHOWN:
            rows.append((label, count))
        if key == "conflict":
            for kind, done, planned in _SETTLED:
                settled = len(_settled(report, kind))
                if settled:
                    rows.append((planned if report.dry_run else done, settled))
    return [f"  {label:<46} {count}" for label, count in rows]


def render_plan_summary(report: UpdateReport, limit: int | None = LIST_LIMIT) -> str:
    from tether.model.plan import Bucket

    head = f"tether update: {report.from_version} → {report.to_version}"
    if report.dry_run:
        head += " (dry run: nothing written)"
    elif report.status == UpdateStatus.INTERRUPTED:
        done = sum(1 for a in report.actions if a.op.value != "none")
        total = done + len(report.not_done)
        head = (
            f"tether update: interrupted {report.from_version} → {report.to_version} "
            f"after {done} of {total} changes"
        )
    lines = [head]
    if report.resumed and report.run_id:
        lines.insert(
            0,
            f"resuming interrupted update {report.from_version} → {report.to_version} "
            f"(run {report.run_id})",
        )
    if report.status == UpdateStatus.INTERRUPTED:
        lines.append("Done before the stop:")
    lines += _bucket_rows(report)
    if report.not_done:
        lines.append(f"  {'Not done yet (the run stopped first)':<46} {len(report.not_done)}")
    if report.backed_up:
        lines.append(f"  {'Backed up':<46} {len(report.backed_up)} ({report.backup_dir})")
    lines += [f"  {one_line(field_merge_row(row, report.dry_run))}" for row in report.structured]
    lines += lifecycle_report.migration_rows(report)
    lines += lifecycle_report.post_update_lines(report)
    lines += lifecycle_report.trailer_rows(report)
    if report.status in (UpdateStatus.UPDATED, UpdateStatus.FAILED, UpdateStatus.INTERRUPTED):
        lines += lifecycle_report.ping_rows(report)
    lines += lifecycle_report.lifecycle_lines(report)
    if report.dry_run and report.branch:
        lines.append(f"Branch: would switch to a new branch {report.branch}")
    elif report.status == UpdateStatus.PLAN and report.branch:
        lines.append(f"Branch: will switch to a new branch {report.branch} once you confirm")
    conflicts = report.open_conflicts
    lines += listing(_conflicts_label(report), [_conflict_line(a) for a in conflicts], limit)
    lines += _settled_listings(report, limit)
    merged = "Would merge with your edits" if report.dry_run else "Merged with your edits"
    lines += listing(
        f"{merged} (review them: both sides changed these files)",
        [a.path for a in report.bucket(Bucket.MERGED)],
        limit,
    )
    lines += listing(
        "Handed over to you (left alone: no write, no backup, no patch)",
        [f"{a.path} ({row_reason(a)})" for a in _handed_over(report)],
        limit,
    )
    lines += listing(
        "Renamed upstream (your edits carried to the new path)",
        [f"{a.rename_from} → {a.path} ({a.bucket.value})" for a in report.actions if a.rename_from],
        limit,
    )
    lines += _delete_listing(report, limit)
    lines += listing(
        "Failed", [f"{a.path}: {row_reason(a)}" for a in report.bucket(Bucket.FAILED)], limit
    )
    lines += listing(
        "Not done yet", [f"{a.path} ({a.bucket.value})" for a in report.not_done], limit
    )
    if report.status in (UpdateStatus.PLAN, UpdateStatus.DRY_RUN):
        lines += listing(
            f"Heads up: {report.merge_dir}/ still holds artifacts from an earlier run (never "
            "deleted; resolve or delete them by hand)",
            report.earlier_artifacts,
            limit,
        )
        lines += listing(*lifecycle_report.program_listing(report), limit)
        lines += _release_note_lines(report)
    lines += listing(
        "Follow-ups the release notes ask for (not run; they still apply here)",
        [str(a["command"] or a["text"]) for a in report.adopter_actions],
        limit,
    )
    return printable("\n".join(lines))


def _delete_listing(report: UpdateReport, limit: int | None) -> list[str]:
    from tether.model.plan import Bucket

    return listing(
        "Delete? (removed upstream, still here: --delete-removed removes the unmodified ones, "
        "tether own PATH keeps one as yours)",
        [_with_reason(a) for a in report.bucket(Bucket.DELETE)],
        limit,
    )


def _handed_over(report: UpdateReport) -> list[FileAction]:
    """Paths an ownership hand-off gave to the adopter (docs/lifecycle.md)."""
    from tether.model.plan import Bucket, RowCode

    skipped = report.bucket(Bucket.SKIP)
    return [a for a in skipped if a.why is not None and a.why.code is RowCode.HANDED_OVER]


def _release_note_lines(report: UpdateReport) -> list[str]:
    lines = []
    for section in report.release_notes:
        date = f" - {one_line(section['date'])}" if section["date"] else ""
        lines.append(f"## {one_line(section['version'])}{date}")
        lines += [f"  {line}" if line else "" for line in lines_of(section["body"].rstrip("\n"))]
    return ["Release notes:", *lines] if lines else []


def _next_steps(report: UpdateReport) -> list[str]:
    from tether.model.plan import Bucket

    if report.status == UpdateStatus.INTERRUPTED:
        run = f" (run {report.run_id})" if report.run_id else ""
        return [
            f"run the same command again to finish the update{run}",
            "or roll it back with 'tether update --abandon'",
        ]
    steps = []
    if report.open_conflicts:
        steps.append(
            f"resolve the conflicts (artifacts in {report.merge_dir} or markers in the files); "
            "delete each artifact once you have resolved it"
        )
    if report.action_items:
        steps.append("settle the action items above (each names the command to run again)")
    notes = sorted(
        {a.artifact for a in report.actions if a.artifact and a.artifact.endswith(".notes")}
    )
    if notes:
        steps.append(
            f"read {', '.join(notes)}: reconcile the keys changed on both sides (yours were "
            "kept) and decide on the suggestions, then delete the notes"
        )
    if any(
        a.path.endswith(("package.json", "pyproject.toml", "pnpm-workspace.yaml"))
        for a in report.actions
        if a.op.value != "none"
    ):
        steps.append("run your package manager's install: a dependency manifest changed")
    if any(o.status != "regenerated" for o in report.regenerated):
        check = f", then {report.region_check} to confirm" if report.region_check else ""
        steps.append(
            "for each region not regenerated: settle what stopped it (most often the conflict "
            f"on its path), run its command listed above{check}"
        )
    if report.bucket(Bucket.FAILED):
        steps.append("fix the failed files, then run the same command again")
    if report.branch:
        steps.append(f"you are now on branch {report.branch}")
    if report.quality_gate:
        steps.append(f"run the quality gate as {report.quality_gate} describes")
    else:
        steps.append("run your tests")
    commit = "review the changes (git diff) and commit"
    if report.commit_message:
        commit += f": git commit -m '{report.commit_message}'"
    steps.append(commit)
    return steps


def update_document(report: UpdateReport) -> dict[str, Any]:
    """An update's JSON document, with the notes its words add (an abandon's, an
    uncommitted update's, how the run ended), why a region's program did not run and why a
    dry run only lists a migration."""
    return {
        **report.to_json(row_reason, field_merge_row),
        "notes": update_notes(report),
        "regenerated": [regen_document(outcome) for outcome in report.regenerated],
        "migrations": [lifecycle_report.migration_document(m) for m in report.migrations],
        "action_items": [lifecycle_report.worded(item) for item in report.action_items],
        "ping": lifecycle_report.ping_document(report.ping),
        "post_update": [lifecycle_report.post_update_entry(p) for p in report.post_update],
        "trailer_invalidations": [
            lifecycle_report.trailer_document(check) for check in report.trailer_invalidations
        ],
    }


def field_merge_row(row: FieldMergeRow, planned: bool = False) -> str:
    """The summary row of a field-aware merge in an update (``flows/structured_step.py``
    finds its facts); ``planned`` (a dry run) says what the real run would do and claims no
    write."""
    path = row.path
    if row.state == "clean-skip":
        return f"{path}: no managed-key changes (clean skip)"
    if row.state == "line-merge":
        would = "would be " if planned else ""
        return f"{path}: {would}merged line by line: the {side_problems(row.unread)}"
    patch = f" ({'a patch would go to' if planned else 'see'} {row.artifact})"
    if row.state == "whole-file-conflict":
        return f"{path}: whole-file conflict, {NO_BASELINE}{patch if row.artifact else ''}"
    if row.state == "not-merged":
        return f"{path}: not merged, {side_problems(row.unread)}"
    if not (row.applied or row.conflicts or row.suggestions or row.settled):
        return f"{path}: no managed-key changes (clean skip)"
    applied = f"{row.applied} to apply" if planned else f"{row.applied} applied"
    parts = [applied, _plural(row.conflicts, "conflict")]
    if row.settled:
        toward = "to settle" if planned else "settled"
        parts.append(f"{_plural(row.settled, 'conflict')} {toward} toward the release")
    parts.append(_plural(row.suggestions, "suggestion"))
    line = f"{path}: {', '.join(parts)}"
    if row.artifact is not None:
        line += f" ({'notes would go to' if planned else 'see'} {row.artifact})"
    return line


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def update_notes(report: UpdateReport) -> list[str]:
    """Every note of an update: an abandon's first, the run's own, then the conflicts git's
    index could not be told of, an applied update left uncommitted and what the way the
    run ended asks of a person."""
    notes = with_abandon_notes(report)
    notes += [_index_trouble(trouble) for trouble in report.index_trouble]
    notes += [backup_edited(path, report.backup_dir) for path in report.backups_edited]
    if report.uncommitted is not None:
        notes.append(_uncommitted(report.uncommitted))
    if report.run_end is not None:
        notes.append(_run_end(report.run_end))
    return notes


def _index_trouble(trouble: IndexTrouble) -> str:
    if trouble.code is IndexTroubleCode.NOT_READ:
        return f"could not read git's index ({trouble.error})"
    why = trouble.error
    if trouble.code is IndexTroubleCode.BACKUP_MISSING:
        why = "the run's backup of the file is missing"
    return f"{trouble.path}: could not record the conflict in git's index ({why})"


def backup_edited(path: str, backups: str | None) -> str:
    """A file edited in place while an interrupted run's backup still shared its bytes
    (``flows.backups.Saved.first_edited``), in an update's or a reapply's notes."""
    where = f" in {backups}" if backups else ""
    return (
        f"{path}: changed in place after the interrupted run had backed it up and before it "
        "wrote, while the backup still shared the file's bytes: the backup changed with it, "
        f"so the bytes the run backed up are lost; its backups{where} hold your edited bytes"
    )


def _uncommitted(found: UncommittedMarker) -> str:
    """What to do about it, quoting the marker itself."""
    return (
        f"the update to {found.value} is applied but not committed ({found.marker} says "
        f"{found.value}, the last commit has {found.committed}): review it (git status, git "
        f"diff) and commit it, or run 'git checkout -- {found.marker}' and rerun 'tether "
        "update' to start over"
    )


def _run_end(end: RunEnd) -> str:
    if end.code is RunEndCode.STOPPED:
        return (
            f"stopped by a signal; run the same command again to finish run {end.run_id}, or "
            "'tether update --abandon' to roll it back"
        )
    if end.code is RunEndCode.FILES_FAILED:
        return "some files failed; fix them and run the same command again to finish"
    return (
        f"the update to {end.to_version} wrote its state but was interrupted before it "
        "completed; review the changes (git diff) and commit them"
    )


def render_update(report: UpdateReport, limit: int | None = LIST_LIMIT) -> str:
    """The summary of an update (or its dry run), release-supplied text escaped."""
    return printable(_update_text(report, limit))


def _update_text(report: UpdateReport, limit: int | None) -> str:
    notes = [f"note: {one_line(n)}" for n in update_notes(report)]
    if report.status == UpdateStatus.UP_TO_DATE:
        upstream = one_line(report.upstream)
        lines = [f"tether update: already up to date ({upstream} {report.from_version})"]
        return "\n".join(lines + _delete_listing(report, limit) + notes)
    if report.status == UpdateStatus.AHEAD:
        upstream = one_line(report.upstream)
        lines = [
            f"tether update: warning: the installed version ({upstream} {report.from_version}) "
            f"is ahead of the newest release ({report.to_version}); nothing to do, and tether "
            "never downgrades"
        ]
        return "\n".join(lines + notes)
    if report.status == UpdateStatus.NOT_COMMITTED:
        return "\n".join(["tether update: nothing new to apply", *notes])
    if report.status == UpdateStatus.ACTION_REQUIRED:
        lines = [
            "tether update: no newer release, but an earlier update left action items that "
            "are not settled"
        ]
        items = lifecycle_report.open_item_lines(report.earlier_action_items)
        return "\n".join(lines + items + notes)
    if report.status in (UpdateStatus.CONFLICTS_OPEN, UpdateStatus.COMPLETED):
        lines = [
            f"tether update: no newer release, but {len(report.earlier_conflicts)} conflict(s) "
            "from an earlier update are not resolved"
        ]
        if report.status == UpdateStatus.COMPLETED:
            lines = [f"tether update: finished the interrupted update to {report.to_version}"]
            if not report.earlier_conflicts:
                return "\n".join(lines + notes)
        lines += listing(
            "Unresolved conflicts",
            [f"{c['path']} (see {c['artifact']})" for c in report.earlier_conflicts],
            limit,
        )
        lines.append("resolve them, then run 'tether update' again (or 'tether check')")
        return "\n".join(lines + notes)
    if report.status == UpdateStatus.ABANDONED:
        return "\n".join(
            [f"tether update: abandoned the interrupted update to {report.to_version}", *notes]
        )
    if report.status == UpdateStatus.CANCELLED:
        return "tether update: cancelled; nothing was written"
    lines = [render_plan_summary(report, limit)]
    if report.earlier_artifacts and not report.dry_run:
        lines += listing(
            f"Unresolved artifacts from earlier runs (in {report.merge_dir})",
            report.earlier_artifacts,
            limit,
        )
    lines += _region_lines(report)
    lines += notes
    if report.status in (UpdateStatus.UPDATED, UpdateStatus.FAILED, UpdateStatus.INTERRUPTED):
        lines.append("Next steps:")
        lines += [f"  {i}. {s}" for i, s in enumerate(_next_steps(report), 1)]
    return "\n".join(lines)


# The region listings of a run (JSON key, title, what the listed paths mean for the run).
_REGION_LISTINGS = (
    (
        "fallbacks",
        "Region fallbacks (malformed markers, compared whole)",
        "These paths went back to the whole-file comparison for this run: a difference "
        "inside their generated region reads as an ordinary edit and can make a conflict "
        "you did not cause.",
    ),
    (
        "pre_region_paths",
        "Pre-region paths (no region markers yet)",
        "These files do not carry their region yet, as expected before its first "
        "regeneration: nothing is wrong.",
    ),
    (
        "dropped_declarations",
        "Dropped region declarations",
        "Their paths are compared whole from now on, so a conflict the region had been "
        "absorbing can come back on a later update.",
    ),
)


def _region_lines(report: UpdateReport) -> list[str]:
    regions = report.regions
    if regions.get("disabled"):
        why = one_line(regions.get("disabled_by") or "--no-regions")
        return [
            f"Regions: disabled for this run ({why}): awareness off, every declared path "
            "was compared whole"
        ]
    counts = {k: 0 for k in ("regenerated", "failed", "skipped", "refused")}
    outcomes = [regen_document(outcome) for outcome in report.regenerated]
    for outcome in outcomes:
        counts[outcome["status"]] += 1
    lines = []
    if any(counts.values()):
        lines.append("Regions: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    elif report.status == UpdateStatus.UPDATED and not regions.get("declarations"):
        lines.append("Regions: none declared by this release")
    elif report.status == UpdateStatus.UPDATED and not regions.get("fallbacks"):
        lines.append("Regions: all declared regions current (no regeneration needed)")
    if regions.get("fallbacks"):
        lines.append(f"Region fallbacks: {len(regions['fallbacks'])}")
    if regions.get("pre_region_paths"):
        lines.append(f"Pre-region paths: {len(regions['pre_region_paths'])}")
    rewritten = [p for o in outcomes for p in o["rewritten_paths"]]
    lines += listing("Rewritten by regeneration (they now differ from the release copy)", rewritten)
    lines += listing(
        "Not put back after regeneration (changed outside its declared paths)",
        [
            f"{path}: {why}"
            for o in outcomes
            for path, why in o.get("unrestored_reasons", {}).items()
        ],
    )
    lines += listing(
        "Put back after regeneration (written outside its declared paths, or by a failed run)",
        [f"{path} (region {o['id']})" for o in outcomes for path in o["reverted_paths"]],
    )
    lines += listing(
        "Created outside a region's declared paths (kept; review them)",
        [f"{path} (region {o['id']})" for o in outcomes for path in o["new_outside_paths"]],
    )
    unregenerated = list(regions.get("unregenerated_paths", []))
    lines += listing(
        "Declared paths not regenerated (their region was skipped, refused or failed)",
        unregenerated,
    )
    if unregenerated:
        lines.append(
            "  Their generated block does not match what your own configuration would produce; "
            "run the region's command below once what stopped it is settled."
        )
    lines += listing(
        "Regions not regenerated",
        [_unregenerated_line(o) for o in outcomes if o["status"] != "regenerated"],
    )
    for key, title, why in _REGION_LISTINGS:
        paths = list(regions.get(key, []))
        lines += listing(title, paths)
        if paths:
            lines.append(f"  {why}")
    malformed = list(regions.get("malformed_declarations", []))
    lines += listing("Malformed region declarations (skipped)", malformed)
    if malformed:
        switch = regions.get("off_switch") or "--no-regions"
        lines.append(
            "  They ship with the release, so the remedy is upstream; if one causes trouble, "
            f"{switch} switches region awareness off for a run."
        )
    lines += listing("Stale conflict patches superseded by this run", report.superseded_artifacts)
    return lines


def _unregenerated_line(outcome: dict[str, Any]) -> str:
    """A region not regenerated: why, and the literal command to run by hand, except for a
    refusal (the release's declaration is at fault: running it by hand is no remedy) and
    a region that names no program."""
    head = f"{outcome['id']} ({outcome['status']}: {outcome['reason']})"
    if outcome["status"] == "refused" or not outcome["command"]:
        return f"{head}: nothing to run by hand; the remedy is in the release"
    return f"{head}: run by hand: {outcome['command']}"
