"""Plain-text renderings for people. Flows return reports; only this module words them.
Text tether did not write (a release's, a program's) goes through ``report.printable``:
each listed entry and field as one line, and every whole rendering once more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.report import lifecycle_steps as lifecycle_report
from tether.report.printable import lines_of, one_line, printable

if TYPE_CHECKING:
    from tether.flows.check import CheckReport
    from tether.flows.install import InitReport
    from tether.flows.pullrequest import PullRequestReport
    from tether.flows.status import StatusReport
    from tether.flows.update import UpdateReport
    from tether.model.plan import FileAction


LIST_LIMIT = 20  # lines per listing unless --all


def _listing(title: str, paths: list[str], limit: int | None = LIST_LIMIT) -> list[str]:
    if not paths:
        return []
    lines = [f"{one_line(title)} ({len(paths)}):"]
    shown = paths if limit is None else paths[:limit]
    lines += [f"  {one_line(p)}" for p in shown]
    if len(paths) > len(shown):
        lines.append(f"  … and {len(paths) - len(shown)} more (--all lists every one)")
    return lines


def render_init(report: InitReport) -> str:
    lines = [
        f"tether init: installed {report.upstream} {report.version} ({report.profile} profile)",
        f"  Added       {len(report.added)}",
        f"  Identical   {len(report.identical)}",
        f"  Customised  {len(report.customised)}",
    ]
    lines += _listing(
        "Already customised (baseline kept as the release's bytes)", report.customised
    )
    lines += _listing(
        f"Left deleted (this project lacks them; recorded as yours in {report.config}; to have "
        "one back: tether own --undo PATH, then tether init --force --restore-missing)",
        report.left_deleted,
    )
    lines += [f"note: {one_line(n)}" for n in report.notes]
    return "\n".join(lines)


def render_missing_question(paths: list[str]) -> str:
    """What a person reads before init asks whether to restore the files a project lacks."""
    lines = _listing(
        "Files of the release this project does not have (it has others of its files, so it "
        "deleted these, as far as tether can tell)",
        paths,
        None,
    )
    lines.append(
        "Not restored, they stay deleted and are recorded as yours (taken over): no update "
        "re-creates them."
    )
    return printable("\n".join(lines))


def render_status(report: StatusReport, limit: int | None = LIST_LIMIT) -> str:
    lines = [
        f"{one_line(report.upstream)} {report.installed_version} ({report.profile} profile) "
        f"from {one_line(report.source)}"
    ]
    lines += _run_state_lines(report)
    if report.latest_version is not None:
        note = "update available" if report.update_available else "up to date"
        lines.append(f"latest: {report.latest_version} ({note})")
    if report.compared:
        lines.append(
            f"  clean {len(report.clean)}, modified {len(report.modified)}, "
            f"deleted {len(report.deleted)}"
        )
    owned = set(report.modified_owned) | set(report.deleted_owned)
    lines += _listing(
        "Modified", [p + (" (owned)" if p in owned else "") for p in report.modified], limit
    )
    lines += _listing(
        "Deleted", [p + (" (owned)" if p in owned else "") for p in report.deleted], limit
    )
    lines += _listing(
        "Unresolved conflicts",
        [f"{c['path']} (see {c['artifact']})" for c in report.conflicts],
        limit,
    )
    lines += _listing("Handed over to you (updates leave them alone)", report.adopter_owned, limit)
    lines += _listing(
        "Yours (taken over with tether own; updates leave them alone)", _yours(report), limit
    )
    unmodified = set(report.leftovers_unmodified)
    lines += _listing(
        "Removed upstream, still here (delete them, or tether own PATH to keep one; "
        "tether update --delete-removed removes the unmodified ones)",
        [p + ("" if p in unmodified else " (modified here)") for p in report.leftovers],
        limit,
    )
    lines += lifecycle_report.open_item_lines(report.action_items)
    lines += [f"note: {one_line(n)}" for n in report.notes]
    return printable("\n".join(lines))


def _yours(report: StatusReport) -> list[str]:
    deleted = set(report.yours_deleted)
    return [p + (" (deleted, and stays so)" if p in deleted else "") for p in report.yours]


def _run_state_lines(report: StatusReport) -> list[str]:
    """An update in flight or stopped half way: the first thing a person must see."""
    if report.running is not None:
        who = report.running
        return [
            f"a tether run is changing this project right now ({who.get('command') or 'unknown'}"
            f", pid {who.get('pid') or 'unknown'}, started {who.get('started') or 'unknown'}); "
            "what follows may change under it"
        ]
    if report.unfinished is not None:
        return [str(report.unfinished["message"])]
    return []


_REASON_TEXT = {
    "run-in-progress": "another tether run is changing the project right now",
    "unfinished-update": "an update was interrupted and is not finished",
    "owned-drift": "owned files differ from the installed release",
    "unresolved-conflicts": "conflicts from an update are not resolved",
    "action-required": "an update left action items that are not settled",
    "not-regular-files": "managed paths are not regular files (FIFOs, sockets, devices, links)",
    "leftovers": "files removed upstream are still here",
    "update-available": "a newer release is available",
}
# The heading of each kind of finding that names files.
_FINDING_TITLES = {
    "owned-drift": "Owned drift",
    "unresolved-conflicts": "Unresolved conflicts",
    "not-regular-files": "Not regular files",
    "leftovers": "Removed upstream, still here",
}


def render_check(report: CheckReport, limit: int | None = LIST_LIMIT) -> str:
    status = report.status
    name = f"{one_line(status.upstream)} {status.installed_version}"
    reasons = report.reasons
    if reasons:
        lines = [f"tether check: failed ({name}): " + "; ".join(_REASON_TEXT[r] for r in reasons)]
    elif report.findings:
        lines = [f"tether check: passed ({name}); found, but not failing the check:"]
    else:
        return f"tether check: clean ({name})"
    lines += _run_state_lines(status)
    for reason in ("run-in-progress", "unfinished-update", "update-available"):
        for finding in (f for f in report.findings if f.reason == reason):
            if reason == "update-available":
                lines.append(f"Update: {status.installed_version} → {status.latest_version}")
            lines.append(_next_line(finding.next_steps, finding.fails, "  "))
    for reason, title in _FINDING_TITLES.items():
        found = [f for f in report.findings if f.reason == reason]
        if not found:
            continue
        lines.append(f"{title} ({len(found)})" + ("" if found[0].fails else ", not failing") + ":")
        shown = found if limit is None else found[:limit]
        for finding in shown:
            lines.append(f"  {one_line(finding.path or '')}")
            lines.append(_next_line(finding.next_steps, True, "    "))
        if len(found) > len(shown):
            lines.append(f"  … and {len(found) - len(shown)} more (--all lists every one)")
    lines += lifecycle_report.open_item_lines(status.action_items)
    lines.append(f"fails on: {', '.join(report.fail_on) or 'nothing'} ({report.fail_on_from})")
    lines += [f"note: {n}" for n in status.notes]
    return printable("\n".join(lines))


def _next_line(steps: tuple[str, ...], fails: bool, indent: str) -> str:
    text = "next: " + " | ".join(one_line(step) for step in steps)
    return indent + (text if fails else text + " (not failing)")


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


def _conflict_line(action: FileAction) -> str:
    why = f"; {action.reason}" if action.reason else ""
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
    lines = _listing(
        "Kept yours whole (the release's copy goes beside it: compare, then delete the copy)",
        [f"{a.path} (the release's copy: {a.artifact})" for a in kept],
        limit,
    )
    lines += _listing(
        "Took theirs whole (yours goes to the backup)",
        [a.path for a in _settled(report, "take-theirs")],
        limit,
    )
    lines += _listing(
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
    elif report.status == "interrupted":
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
    if report.status == "interrupted":
        lines.append("Done before the stop:")
    lines += _bucket_rows(report)
    if report.not_done:
        lines.append(f"  {'Not done yet (the run stopped first)':<46} {len(report.not_done)}")
    if report.backed_up:
        lines.append(f"  {'Backed up':<46} {len(report.backed_up)} ({report.backup_dir})")
    lines += [f"  {one_line(row)}" for row in report.structured]
    lines += lifecycle_report.migration_rows(report)
    lines += lifecycle_report.post_update_lines(report)
    lines += lifecycle_report.trailer_rows(report)
    if report.status in ("updated", "failed", "interrupted"):
        lines += lifecycle_report.ping_rows(report)
    lines += lifecycle_report.lifecycle_lines(report)
    if report.dry_run and report.branch:
        lines.append(f"Branch: would switch to a new branch {report.branch}")
    elif report.status == "plan" and report.branch:
        lines.append(f"Branch: will switch to a new branch {report.branch} once you confirm")
    conflicts = report.open_conflicts
    lines += _listing(_conflicts_label(report), [_conflict_line(a) for a in conflicts], limit)
    lines += _settled_listings(report, limit)
    merged = "Would merge with your edits" if report.dry_run else "Merged with your edits"
    lines += _listing(
        f"{merged} (review them: both sides changed these files)",
        [a.path for a in report.bucket(Bucket.MERGED)],
        limit,
    )
    lines += _listing(
        "Handed over to you (left alone: no write, no backup, no patch)",
        [f"{a.path} ({a.reason})" for a in _handed_over(report)],
        limit,
    )
    lines += _listing(
        "Renamed upstream (your edits carried to the new path)",
        [f"{a.rename_from} → {a.path} ({a.bucket.value})" for a in report.actions if a.rename_from],
        limit,
    )
    lines += _delete_listing(report, limit)
    lines += _listing(
        "Failed", [f"{a.path}: {a.reason}" for a in report.bucket(Bucket.FAILED)], limit
    )
    lines += _listing(
        "Not done yet", [f"{a.path} ({a.bucket.value})" for a in report.not_done], limit
    )
    if report.status in ("plan", "dry-run"):
        lines += _listing(
            f"Heads up: {report.merge_dir}/ still holds artifacts from an earlier run (never "
            "deleted; resolve or delete them by hand)",
            report.earlier_artifacts,
            limit,
        )
        lines += _listing(*lifecycle_report.program_listing(report), limit)
        lines += _release_note_lines(report)
    lines += _listing(
        "Follow-ups the release notes ask for (not run; they still apply here)",
        [str(a["command"] or a["text"]) for a in report.adopter_actions],
        limit,
    )
    return printable("\n".join(lines))


def _delete_listing(report: UpdateReport, limit: int | None) -> list[str]:
    from tether.model.plan import Bucket

    return _listing(
        "Delete? (removed upstream, still here: --delete-removed removes the unmodified ones, "
        "tether own PATH keeps one as yours)",
        [a.path + (f" ({a.reason})" if a.reason else "") for a in report.bucket(Bucket.DELETE)],
        limit,
    )


def _handed_over(report: UpdateReport) -> list[FileAction]:
    """Paths an ownership hand-off gave to the adopter (docs/lifecycle.md)."""
    from tether.flows.lifecycle_steps import ADOPTER_OWNED_REASON
    from tether.model.plan import Bucket

    return [
        a for a in report.bucket(Bucket.SKIP) if a.reason.startswith(f"{ADOPTER_OWNED_REASON}:")
    ]


def _release_note_lines(report: UpdateReport) -> list[str]:
    lines = []
    for section in report.release_notes:
        date = f" - {one_line(section['date'])}" if section["date"] else ""
        lines.append(f"## {one_line(section['version'])}{date}")
        lines += [f"  {line}" if line else "" for line in lines_of(section["body"].rstrip("\n"))]
    return ["Release notes:", *lines] if lines else []


def _next_steps(report: UpdateReport) -> list[str]:
    from tether.model.plan import Bucket

    if report.status == "interrupted":
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
    if any(o["status"] != "regenerated" for o in report.regenerated):
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


def render_update(report: UpdateReport, limit: int | None = LIST_LIMIT) -> str:
    """The summary of an update (or its dry run), release-supplied text escaped."""
    return printable(_update_text(report, limit))


def _update_text(report: UpdateReport, limit: int | None) -> str:
    notes = [f"note: {one_line(n)}" for n in report.notes]
    if report.status == "up-to-date":
        upstream = one_line(report.upstream)
        lines = [f"tether update: already up to date ({upstream} {report.from_version})"]
        return "\n".join(lines + _delete_listing(report, limit) + notes)
    if report.status == "ahead":
        upstream = one_line(report.upstream)
        lines = [
            f"tether update: warning: the installed version ({upstream} {report.from_version}) "
            f"is ahead of the newest release ({report.to_version}); nothing to do, and tether "
            "never downgrades"
        ]
        return "\n".join(lines + notes)
    if report.status == "not-committed":
        return "\n".join(["tether update: nothing new to apply", *notes])
    if report.status == "action-required":
        lines = [
            "tether update: no newer release, but an earlier update left action items that "
            "are not settled"
        ]
        items = lifecycle_report.open_item_lines(report.earlier_action_items)
        return "\n".join(lines + items + notes)
    if report.status in ("conflicts-open", "completed"):
        lines = [
            f"tether update: no newer release, but {len(report.earlier_conflicts)} conflict(s) "
            "from an earlier update are not resolved"
        ]
        if report.status == "completed":
            lines = [f"tether update: finished the interrupted update to {report.to_version}"]
            if not report.earlier_conflicts:
                return "\n".join(lines + notes)
        lines += _listing(
            "Unresolved conflicts",
            [f"{c['path']} (see {c['artifact']})" for c in report.earlier_conflicts],
            limit,
        )
        lines.append("resolve them, then run 'tether update' again (or 'tether check')")
        return "\n".join(lines + notes)
    if report.status == "abandoned":
        return "\n".join(
            [f"tether update: abandoned the interrupted update to {report.to_version}", *notes]
        )
    if report.status == "cancelled":
        return "tether update: cancelled; nothing was written"
    lines = [render_plan_summary(report, limit)]
    if report.earlier_artifacts and not report.dry_run:
        lines += _listing(
            f"Unresolved artifacts from earlier runs (in {report.merge_dir})",
            report.earlier_artifacts,
            limit,
        )
    lines += _region_lines(report)
    lines += notes
    if report.status in ("updated", "failed", "interrupted"):
        lines.append("Next steps:")
        lines += [f"  {i}. {s}" for i, s in enumerate(_next_steps(report), 1)]
    return "\n".join(lines)


def _region_lines(report: UpdateReport) -> list[str]:
    regions = report.regions
    if regions.get("disabled"):
        why = one_line(regions.get("disabled_by") or "--no-regions")
        return [
            f"Regions: disabled for this run ({why}): awareness off, every declared path "
            "was compared whole"
        ]
    counts = {k: 0 for k in ("regenerated", "failed", "skipped", "refused")}
    for outcome in report.regenerated:
        counts[outcome["status"]] += 1
    lines = []
    if any(counts.values()):
        lines.append("Regions: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    elif report.status == "updated" and not regions.get("declarations"):
        lines.append("Regions: none declared by this release")
    elif report.status == "updated" and not regions.get("fallbacks"):
        lines.append("Regions: all declared regions current (no regeneration needed)")
    if regions.get("fallbacks"):
        lines.append(f"Region fallbacks: {len(regions['fallbacks'])}")
    if regions.get("pre_region_paths"):
        lines.append(f"Pre-region paths: {len(regions['pre_region_paths'])}")
    rewritten = [p for o in report.regenerated for p in o["rewritten_paths"]]
    lines += _listing(
        "Rewritten by regeneration (they now differ from the release copy)", rewritten
    )
    lines += _listing(
        "Not put back after regeneration (changed outside its declared paths)",
        [
            f"{path}: {why}"
            for o in report.regenerated
            for path, why in o.get("unrestored_reasons", {}).items()
        ],
    )
    lines += _listing(
        "Put back after regeneration (written outside its declared paths, or by a failed run)",
        [f"{path} (region {o['id']})" for o in report.regenerated for path in o["reverted_paths"]],
    )
    lines += _listing(
        "Created outside a region's declared paths (kept; review them)",
        [
            f"{path} (region {o['id']})"
            for o in report.regenerated
            for path in o["new_outside_paths"]
        ],
    )
    unregenerated = list(regions.get("unregenerated_paths", []))
    lines += _listing(
        "Declared paths not regenerated (their region was skipped, refused or failed)",
        unregenerated,
    )
    if unregenerated:
        lines.append(
            "  Their generated block does not match what your own configuration would produce; "
            "run the region's command below once what stopped it is settled."
        )
    lines += _listing(
        "Regions not regenerated",
        [_unregenerated_line(o) for o in report.regenerated if o["status"] != "regenerated"],
    )
    fallbacks = list(regions.get("fallbacks", []))
    lines += _listing("Region fallbacks (malformed markers, compared whole)", fallbacks)
    if fallbacks:
        lines.append(
            "  These paths went back to the whole-file comparison for this run: a difference "
            "inside their generated region reads as an ordinary edit and can make a conflict "
            "you did not cause."
        )
    pre_region = list(regions.get("pre_region_paths", []))
    lines += _listing("Pre-region paths (no region markers yet)", pre_region)
    if pre_region:
        lines.append(
            "  These files do not carry their region yet, as expected before its first "
            "regeneration: nothing is wrong."
        )
    dropped = list(regions.get("dropped_declarations", []))
    lines += _listing("Dropped region declarations", dropped)
    if dropped:
        lines.append(
            "  Their paths are compared whole from now on, so a conflict the region had been "
            "absorbing can come back on a later update."
        )
    malformed = list(regions.get("malformed_declarations", []))
    lines += _listing("Malformed region declarations (skipped)", malformed)
    if malformed:
        switch = regions.get("off_switch") or "--no-regions"
        lines.append(
            "  They ship with the release, so the remedy is upstream; if one causes trouble, "
            f"{switch} switches region awareness off for a run."
        )
    lines += _listing("Stale conflict patches superseded by this run", report.superseded_artifacts)
    return lines


def _unregenerated_line(outcome: dict[str, Any]) -> str:
    """A region not regenerated: why, and the literal command to run by hand, except for a
    refusal (the release's declaration is at fault: running it by hand is no remedy) and
    a region that names no program."""
    head = f"{outcome['id']} ({outcome['status']}: {outcome['reason']})"
    if outcome["status"] == "refused" or not outcome["command"]:
        return f"{head}: nothing to run by hand; the remedy is in the release"
    return f"{head}: run by hand: {outcome['command']}"


def refresh_classes(report: UpdateReport) -> dict[str, str]:
    from tether.flows.refresh import refresh_states

    return refresh_states(report.actions)


def render_refresh_plan(report: UpdateReport) -> str:
    """Every file with its state, before a person is asked anything."""
    states = refresh_classes(report)
    width = max((len(s) for s in states.values()), default=0)
    head = f"tether refresh: {report.from_version} → {report.to_version}, {len(states)} file(s)"
    rows = [f"  {state:<{width}}  {path}" for path, state in sorted(states.items())]
    return "\n".join([head, *rows])


def render_refresh(report: UpdateReport) -> str:
    # The same words as an update's, with every command to run named as the refresh's.
    text = render_update(report).replace("tether update:", "tether refresh:", 1)
    text = text.replace("'tether update", "'tether refresh")
    if report.open_conflicts:
        text = text.replace(
            "or markers in the files)",
            "or markers in the files), merging each by hand, then run 'tether refresh' again "
            "to confirm",
            1,
        )
    counts: dict[str, int] = {}
    for cls in refresh_classes(report).values():
        counts[cls] = counts.get(cls, 0) + 1
    if not counts:
        return text
    rows = ", ".join(f"{n} {cls}" for cls, n in sorted(counts.items()))
    text += "\nFiles: " + rows
    if report.dry_run:  # what each file would go through, as the plan before a question
        text += "\n" + render_refresh_plan(report).split("\n", 1)[1]
    return text


_PR_HEADLINES = {
    "nothing-ahead": "nothing to open yet",
    "opened": "opened pull request {url}",
    "existing": "pull request {ref} is already open; the push updated it",
    "push-failed": "the branch was not pushed; no pull request opened",
    "gh-missing": "pushed; the pull request was not opened (gh is not installed)",
    "gh-failed": "pushed; the pull request was not opened (gh failed)",
}


def render_pull_request(report: PullRequestReport) -> str:
    ref = f"#{report.number}" + (f" ({report.url})" if report.url else "")
    head = _PR_HEADLINES[report.status].format(url=report.url or "", ref=ref)
    commits = "commit" if report.ahead == 1 else "commits"
    lines = [
        f"tether pr: {head}",
        f"  {report.branch} → {report.base}: {report.ahead} {commits} ahead"
        + (f", pushed to {report.remote}" if report.pushed else ""),
        f"  title: {report.title}",
    ]
    if report.error:
        lines.append(f"  error: {report.error}")
    if report.status in ("gh-missing", "gh-failed") and report.pushed:
        # Opened by hand: everything to paste, the title above and the body here.
        lines.append("  body (paste it as the pull request's description):")
        lines += [f"    {line}" if line else "" for line in lines_of(report.body.rstrip("\n"))]
    lines += [f"note: {n}" for n in report.notes]
    if report.next_step:
        lines.append(f"Next: {report.next_step}")
    return printable("\n".join(lines))


# --- tether diff ------------------------------------------------------------------------------

if TYPE_CHECKING:
    from tether.flows.localdiff import DiffReport, FileDiff

_STAT_WIDTH = 80  # git's width when stdout is not a terminal
_COLOURS = {"meta": "\033[1m", "frag": "\033[36m", "old": "\033[31m", "new": "\033[32m"}
_RESET = "\033[m"


def render_diff(report: DiffReport, color: bool = False) -> str:
    """The patch (or with --stat the per-file counts), notes as ``#`` lines that ``git
    apply`` and ``patch`` skip. Empty when nothing differs, as ``git diff`` prints nothing."""
    notes = [f"# note: {n}" for n in report.notes]
    if report.stat_only:
        lines = notes + _stat_lines(report, color)
    else:
        lines = list(notes)
        for item in report.files:
            lines += _file_notes(item)
            lines += _patch_lines(item.patch.decode("utf-8", "surrogateescape"), color)
    lines += [
        f"# {r.path}: differs only inside its generated region {r.region!r}; not shown"
        for r in report.region_only
    ]
    return "".join(line + "\n" for line in lines)


def _file_notes(item: FileDiff) -> list[str]:
    notes = []
    if item.note:
        notes.append(f"# {item.path}: {item.note}")
    if item.region is not None:
        notes.append(f"# {item.path}: generated region {item.region!r} masked on both sides")
    if item.region_fallback:
        notes.append(f"# {item.path}: region markers are malformed; compared whole")
    if item.managed_error:
        notes.append(f"# {item.path}: managed keys not compared: {item.managed_error}")
    elif item.managed_changes:
        keys = ", ".join(_managed_key(change) for change in item.managed_changes)
        notes.append(f"# {item.path}: managed keys changed: {keys}")
    return notes


def _managed_key(change: dict[str, object]) -> str:
    section, key = change.get("section"), change["key"]
    name = f"{section}.{key}" if section else str(key)
    return name if change["change"] == "changed" else f"{name} ({change['change']})"


def _patch_lines(patch: str, color: bool) -> list[str]:
    lines = patch.split("\n")[:-1]  # only "\n" ends a line: a CRLF line keeps its "\r"
    if not color:
        return lines
    return [_coloured(line) for line in lines]


def _coloured(line: str) -> str:
    if line.startswith(("diff --git ", "deleted file mode ", "--- ", "+++ ")):
        kind = "meta"
    elif line.startswith("@@"):
        end = line.find("@@", 2) + 2
        return _COLOURS["frag"] + line[:end] + _RESET + line[end:]
    elif line.startswith("-"):
        kind = "old"
    elif line.startswith("+"):
        kind = "new"
    else:
        return line
    return _COLOURS[kind] + line + _RESET


def _stat_lines(report: DiffReport, color: bool) -> list[str]:
    """git's --stat layout: name, count and a +/- graph scaled to fit 80 columns."""
    if not report.files:
        return []
    rows = [(item.path, _stat_count(item)) for item in report.files]
    max_change = max((f.added or 0) + (f.removed or 0) for f in report.files)
    number_width = max(len(str(max_change)), 3 if any(f.binary for f in report.files) else 0)
    name_width, graph_width = _stat_widths(report, max_change, number_width)
    lines = []
    for item, (path, count) in zip(report.files, rows, strict=True):
        name = _fit_name(path, name_width)
        if item.binary:
            lines.append(f" {name} | {'Bin':>{number_width}} {count}".rstrip())
            continue
        added, removed = item.added or 0, item.removed or 0
        if max_change > graph_width:
            added = _scale(added, graph_width, max_change)
            removed = _scale(removed, graph_width, max_change)
        plus, minus = "+" * added, "-" * removed
        if color:
            plus = _COLOURS["new"] + plus + _RESET if plus else ""
            minus = _COLOURS["old"] + minus + _RESET if minus else ""
        lines.append(f" {name} | {count:>{number_width}} {plus}{minus}".rstrip())
    lines.append(_stat_summary(report))
    return lines


def _stat_count(item: FileDiff) -> str:
    if item.binary:
        return "" if item.sizes is None else f"{item.sizes[0]} -> {item.sizes[1]} bytes"
    return str((item.added or 0) + (item.removed or 0))


def _stat_widths(report: DiffReport, max_change: int, number_width: int) -> tuple[int, int]:
    # git's rule: the name takes what it needs unless the line would pass the width; then
    # the graph gets at most 3/8 of it (never fewer than 6 columns) and the name the rest.
    width = max(_STAT_WIDTH, 16 + 6 + number_width)
    name_width = max(len(f.path) for f in report.files)
    graph_width = max_change
    if name_width + number_width + 6 + graph_width > width:
        if graph_width > width * 3 // 8 - number_width - 6:
            graph_width = max(width * 3 // 8 - number_width - 6, 6)
        if name_width > width - number_width - 6 - graph_width:
            name_width = width - number_width - 6 - graph_width
        else:
            graph_width = width - number_width - 6 - name_width
    return name_width, graph_width


def _fit_name(path: str, width: int) -> str:
    if len(path) <= width:
        return path.ljust(width)
    tail = path[len(path) - max(width - 3, 0) :]
    slash = tail.find("/")
    return ("..." + (tail[slash:] if slash >= 0 else tail)).ljust(width)


def _scale(count: int, width: int, max_change: int) -> int:
    # At least one mark for any change: scale as if one column shorter, then add one.
    return 0 if not count else 1 + count * (width - 1) // max_change


def _stat_summary(report: DiffReport) -> str:
    files = len(report.files)
    added, removed = report.added, report.removed
    parts = [f" {files} file{'s' if files != 1 else ''} changed"]
    if added or not removed:
        parts.append(f"{added} insertion{'s' if added != 1 else ''}(+)")
    if removed or not added:
        parts.append(f"{removed} deletion{'s' if removed != 1 else ''}(-)")
    return ", ".join(parts)
