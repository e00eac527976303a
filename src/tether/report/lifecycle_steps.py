"""The words for an update's lifecycle steps (docs/lifecycle.md): migration rows, blocking
action items, notices and post-update writes. Every text a release supplied (a label, a
command, a notice, a program's output) goes through ``report.printable`` on its way here."""

from __future__ import annotations

from tether.model.lifecycle import BLOCKING
from tether.report.printable import lines_of, one_line, printable

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from tether.flows.lifecycle_plan import PostUpdateOutcome, ProgramWhy, TrailerCount
    from tether.flows.lifecycle_steps import MigrationsReport
    from tether.flows.update_report import UpdateReport

# Why a dry run lists a due migration (status ``planned``) instead of running it.
DRY_RUN_RUNS_NOTHING = "a dry run runs no program a release ships"

SKIPPED_LOUDLY = (
    "MIGRATIONS SKIPPED ({why}): {n} due migration(s) did not run; the project "
    "may not match what this release expects. Run 'tether migrations --pending' to see them"
)


def program_reason(why: ProgramWhy) -> str:
    """Why a release's program was refused or could not start, or how it ended."""
    from tether.flows.lifecycle_plan import ProgramCode  # loaded already: ``why`` is its own

    match why.code:
        case ProgramCode.NOT_SHIPPED:
            return f"this release does not ship {why.operand}"
        case ProgramCode.MISSING_FROM_RELEASE:
            return f"{why.operand} is missing from the release"
        case ProgramCode.NOT_A_FILE:
            return f"{why.operand} is not a file in the project"
        case ProgramCode.INTERPRETER_UNSAFE:
            return why.detail
        case ProgramCode.OPERAND_UNSAFE:
            return f"operand {why.operand!r}: {why.detail}"
        case ProgramCode.OPERAND_NOT_RELEASED:
            return f"operand {why.operand!r} is not a path the release ships"
        case ProgramCode.OPERAND_OUTSIDE:
            return f"operand {why.operand!r} resolves through a link out of the project"
        case ProgramCode.NOT_STARTED:
            return f"could not start {why.program!r}: {why.detail}"
        case ProgramCode.LOG_FAILED:
            return f"could not start {why.program!r}: cannot write the log ({why.detail})"
    return f"ran and {how_it_ended(why)}"


def how_it_ended(why: ProgramWhy) -> str:
    """How a program that started ended: ``exited 3``, ``was killed by signal 9``, ``timed
    out after 5 s (… sets it); its process group was stopped``."""
    from tether.flows.lifecycle_plan import ProgramCode  # loaded already: ``why`` is its own

    match why.code:
        case ProgramCode.KILLED:
            return f"was killed by signal {-(why.exit_code or 0)}"
        case ProgramCode.TIMED_OUT:
            where = f" ({why.variable} sets it)" if why.variable else ""
            after = "" if why.seconds is None else f" after {why.seconds:g} s{where}"
            return f"timed out{after}; its process group was stopped"
    return f"exited {why.exit_code}"


def migration_reason(migration: Mapping[str, Any]) -> str:
    """A migration result's (or its action item's) ``reason``: the words of its fact, or
    the words it holds (the switch that skipped it; a journal written before the fact)."""
    if "why" not in migration:
        return str(migration["reason"])
    from tether.flows.lifecycle_plan import ProgramWhy

    why = ProgramWhy.from_json(migration["why"])
    return program_reason(why) if why is not None else str(migration["reason"])


def ping_reason(ping: Mapping[str, Any]) -> str:
    """The update ping's ``reason``: the switch that stopped it, or the words of its fact
    (how a ping that started ended, without "ran and")."""
    if "why" not in ping:
        return str(ping["reason"])
    from tether.flows.lifecycle_plan import ProgramCode, ProgramWhy

    why = ProgramWhy.from_json(ping["why"])
    if why is None:
        return str(ping["reason"])
    ran = why.code in (ProgramCode.EXITED, ProgramCode.KILLED, ProgramCode.TIMED_OUT)
    return how_it_ended(why) if ran else program_reason(why)


def ping_document(ping: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The update ping's entry in the update document: ``reason`` in words."""
    if ping is None:
        return None
    doc = {key: value for key, value in ping.items() if key != "why"}
    doc["reason"] = ping_reason(ping)
    return doc


def worded(migration: Mapping[str, Any]) -> dict[str, Any]:
    """A migration result or action item as a document gives it: ``reason`` in words, the
    fact it words left out."""
    doc = {key: value for key, value in migration.items() if key != "why"}
    doc["reason"] = migration_reason(migration)
    return doc


def _row_value(migration: dict[str, Any]) -> str:
    status = str(migration["status"])
    if status == "ok":
        summary = migration.get("summary")
        return one_line(summary) if summary is not None else "done"
    if status in BLOCKING:
        return f"{status}, see action item below"
    if status == "planned":
        when = "before" if migration.get("when") == "before" else "after"
        return f"would run {when} the merge: {one_line(migration['command'])}"
    if status == "skipped":
        return f"skipped ({one_line(migration_reason(migration))})"
    return status


def migration_document(migration: dict[str, Any]) -> dict[str, Any]:
    """A migration's entry in the update document: its result, with why a dry run only
    lists it."""
    if migration["status"] == "planned" and not migration["reason"]:
        return {**migration, "reason": DRY_RUN_RUNS_NOTHING}
    return worded(migration)


def migrations_document(report: MigrationsReport) -> dict[str, Any]:
    """``tether migrations``' document: a rerun's results with their reasons in words."""
    doc = report.to_json()
    if report.rerun is not None:
        doc["rerun"] = [worded(migration) for migration in report.rerun]
    return doc


def migration_rows(report: UpdateReport) -> list[str]:
    """One summary row per migration: its label when it declares one."""
    rows = []
    for migration in report.migrations:
        label = one_line(migration.get("label") or f"Migration {migration['id']}")
        value = _row_value(migration)
        if migration.get("dry_run") and migration["status"] in ("ok", "conflict", "error"):
            value += " (dry run)"
        rows.append(f"  {label + ':':<46} {value}")
    return rows


def skipped_line(report: UpdateReport) -> list[str]:
    if not report.migrations_skipped:
        return []
    skipped = [m for m in report.migrations if m["status"] == "skipped"]
    why = report.programs_off or (migration_reason(skipped[0]) if skipped else "--skip-migrations")
    return [SKIPPED_LOUDLY.format(why=one_line(why), n=len(skipped))]


def program_listing(report: UpdateReport) -> tuple[str, list[str]]:
    """(title, one line per program) for the plan a person confirms and the dry run: every
    program the release ships that the update runs (its migrations, then its region
    programs), with the command, or, when a switch stops them, the ones it does not run."""
    lines = []
    for migration in report.migrations:
        if migration["status"] not in ("pending", "planned", "skipped"):
            continue
        if migration["status"] == "skipped" and not report.programs_off:
            continue  # --skip-migrations, or not shipped: its row says so
        where = (
            "before the merge, the release's copy"
            if migration["when"] == "before"
            else "after the merge, from your tree"
        )
        command, ident = one_line(migration["command"]), one_line(migration["id"])
        lines.append(f"{command} (migration {ident}, {where})")
    for program in report.regions.get("programs", []):
        command, ident = one_line(program["command"]), one_line(program["id"])
        lines.append(f"{command} (region {ident}, after the merge, from your tree)")
    ping = report.ping
    if ping is not None and (ping["status"] == "planned" or report.programs_off):
        lines.append(
            f"{one_line(ping['command'])} (update ping, once the new version is recorded, "
            "from your tree; best effort, TETHER_NO_UPDATE_PING=1 leaves it out)"
        )
    if report.programs_off:
        return f"Programs the release ships, not run ({report.programs_off})", lines
    return "Programs the release ships that this update runs", lines


def action_item_lines(report: UpdateReport | MigrationsReport) -> list[str]:
    lines = []
    for item in report.action_items:
        what = "could not complete" if item["status"] != "refused" else "was refused"
        lines.append(
            f"Action required: migration {one_line(item['id'])} {what} ({item['status']}: "
            f"{one_line(migration_reason(item))}). Settle it by hand, then run 'tether migrations "
            f"--rerun': it runs {one_line(item['command'])} again and records the result "
            "('tether check' reports the item until then)"
        )
        stderr = str(item["stderr"]).rstrip("\n")
        lines += [f"    {line}" for line in lines_of(stderr)] if stderr else []
    return lines


REFRESHED = "refreshed:"  # the id prefix of a template refresh's notice


def notice_lines(report: UpdateReport) -> list[str]:
    """Notices; a template refresh's says first whether the file was (or, in a dry run,
    would be) refreshed: a dry run never claims a write."""
    lines = []
    for notice in report.notices:
        text = one_line(notice["text"])
        if notice["id"].startswith(REFRESHED):
            target = one_line(notice["id"].removeprefix(REFRESHED))
            done = "would be" if report.dry_run else "was"
            text = f"{target} {done} refreshed from this release's template. {text}"
        lines.append(f"Notice: {text}")
    return lines


def post_update_lines(report: UpdateReport) -> list[str]:
    """One row per post-update write; before it ran (the plan, a dry run), what it will do:
    every file a lifecycle step writes is named before a person consents."""
    if not report.post_update:
        return []
    from tether.flows.lifecycle_plan import PostUpdateCode

    rows = []
    for post in report.post_update:
        if post.code is PostUpdateCode.NO_SUCH_FILE:
            continue
        verb, status = "Updated", post_update_status(post)
        if post.code is PostUpdateCode.PLANNED:
            verb = "Would update" if report.dry_run else "Will update"
            status = "post-update write, backed up first (--abandon restores it)"
        rows.append(f"  {verb + ' ' + one_line(post.file) + ':':<46} {one_line(status)}")
    return rows


def post_update_status(post: PostUpdateOutcome) -> str:
    """The ``status`` of a post-update write in the update document."""
    from tether.flows.lifecycle_plan import PostUpdateCode

    match post.code:
        case PostUpdateCode.NO_SUCH_FILE:
            return "skipped: no such file"
        case PostUpdateCode.NOT_AN_OBJECT:
            return "skipped: not a JSON object"
        case PostUpdateCode.FAILED:
            return f"failed: {post.detail}"
    return post.code.value  # planned, written


def post_update_entry(post: PostUpdateOutcome) -> dict[str, str]:
    """A post-update write's entry in the update document."""
    return {"file": post.file, "status": post_update_status(post)}


def ping_rows(report: UpdateReport) -> list[str]:
    """The update ping's row once the update ran (a plan lists it with the programs)."""
    ping = report.ping
    if ping is None or ping["status"] == "planned":
        return []
    command = one_line(ping["command"])
    if ping["status"] == "sent":
        value = f"sent ({command})"
    elif ping["status"] == "failed":
        value = f"failed, the update is not affected ({command}: {one_line(ping_reason(ping))})"
    else:
        value = f"not sent ({one_line(ping_reason(ping))})"
    return [f"  {'Update ping:':<46} {value}"]


def trailer_rows(report: UpdateReport) -> list[str]:
    rows = []
    for check in report.trailer_invalidations:
        count = check.count
        why = (
            f"open pull requests stamped {report.from_version} are audited again on their next push"
            if count != "unknown"
            else one_line(trailer_reason(check))
        )
        rows.append(f"  {one_line(check.label) + ':':<46} {count} ({why})")
    return rows


def trailer_reason(check: TrailerCount) -> str:
    """Why the open pull requests carrying a trailer could not be counted ("" when they were)."""
    if check.why == "no-checkout":
        return "not a git checkout"
    return check.detail


def trailer_document(check: TrailerCount) -> dict[str, object]:
    """A declared trailer's part of the update document, its ``reason`` in words."""
    return {**check.to_json(), "reason": trailer_reason(check)}


def trailer_notes(report: UpdateReport) -> list[str]:
    """After the table, when open pull requests carry a stamp of the version left behind."""
    notes = []
    for check in report.trailer_invalidations:
        count = check.count
        if count == "unknown" or not count:
            continue
        notes.append(
            f"Note: {count} open pull request(s) carry a {check.trailer_key} trailer stamped "
            f"with {report.from_version}. On their next push CI runs the full audit again. To "
            "keep re-audits down, merge or close such pull requests before updating."
        )
    return notes


def lifecycle_lines(report: UpdateReport) -> list[str]:
    """Everything after the bucket table: loud skips, action items, notices."""
    return (
        skipped_line(report)
        + action_item_lines(report)
        + trailer_notes(report)
        + notice_lines(report)
    )


def render_migrations(report: MigrationsReport) -> str:
    if report.rerun is not None:
        return printable("\n".join(_rerun_lines(report)))
    scope = "pending migrations" if report.pending_only else "migrations"
    head = f"tether migrations: {scope} of {report.profile} project at {report.version}"
    if not report.migrations:
        return head + "\n  none"
    lines = [head]
    for m in report.migrations:
        version = m["version"] or "every update"
        when = f", {m['when']}" if m["when"] else ""
        at = f" at {one_line(m['at'])}" if m["at"] else ""
        gone = "" if m["declared"] else " (no longer declared)"
        lines.append(f"  {one_line(m['id'])} ({version}{when}): {m['status']}{at}{gone}")
    return printable("\n".join(lines))


def _rerun_lines(report: MigrationsReport) -> list[str]:
    assert report.rerun is not None
    head = f"tether migrations --rerun: {report.profile} project at {report.version}"
    if not report.rerun:
        return [head, "  nothing pending: every migration an update ran has succeeded"]
    lines = [head]
    for migration in report.rerun:
        label = one_line(migration.get("label") or f"Migration {migration['id']}")
        lines.append(f"  {label + ':':<46} {_row_value(migration)}")
    return lines + action_item_lines(report)


def open_item_lines(items: list[dict[str, Any]]) -> list[str]:
    """What ``status`` and ``check`` say about blocking items an earlier update left."""
    return [
        f"Action required: migration {one_line(item['id'])} ended in {one_line(item['status'])} "
        f"(update run {one_line(item['run_id'])}, {one_line(item['at'])}); settle it by hand, "
        f"then run 'tether migrations --rerun' (it runs {one_line(item['command'])} again)"
        for item in items
    ]
