"""The words of ``tether status``: drift against the installed release, and a run in flight
or stopped half way (which ``check`` shows first too)."""

from __future__ import annotations

from tether.report import lifecycle_steps as lifecycle_report
from tether.report.listing import LIST_LIMIT, listing
from tether.report.printable import one_line, printable
from tether.report.status_document import status_notes, unfinished_message

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from tether.flows.status import StatusReport


def render_status(report: StatusReport, limit: int | None = LIST_LIMIT) -> str:
    lines = [
        f"{one_line(report.upstream)} {report.installed_version} ({report.profile} profile) "
        f"from {one_line(report.source)}"
    ]
    lines += run_state_lines(report)
    if report.latest_version is not None:
        note = "update available" if report.update_available else "up to date"
        lines.append(f"latest: {report.latest_version} ({note})")
    if report.compared:
        lines.append(
            f"  clean {len(report.clean)}, modified {len(report.modified)}, "
            f"deleted {len(report.deleted)}"
        )
    owned = set(report.modified_owned) | set(report.deleted_owned)
    lines += listing(
        "Modified", [p + (" (owned)" if p in owned else "") for p in report.modified], limit
    )
    lines += listing(
        "Deleted", [p + (" (owned)" if p in owned else "") for p in report.deleted], limit
    )
    lines += listing(
        "Unresolved conflicts",
        [f"{c['path']} (see {c['artifact']})" for c in report.conflicts],
        limit,
    )
    lines += listing("Handed over to you (updates leave them alone)", report.adopter_owned, limit)
    lines += listing(
        "Yours (taken over with tether own; updates leave them alone)", _yours(report), limit
    )
    unmodified = set(report.leftovers_unmodified)
    lines += listing(
        "Removed upstream, still here (delete them, or tether own PATH to keep one; "
        "tether update --delete-removed removes the unmodified ones)",
        [p + ("" if p in unmodified else " (modified here)") for p in report.leftovers],
        limit,
    )
    lines += lifecycle_report.open_item_lines(report.action_items)
    lines += [f"note: {one_line(n)}" for n in status_notes(report)]
    return printable("\n".join(lines))


def _yours(report: StatusReport) -> list[str]:
    deleted = set(report.yours_deleted)
    return [p + (" (deleted, and stays so)" if p in deleted else "") for p in report.yours]


def run_state_lines(report: StatusReport) -> list[str]:
    """An update in flight or stopped half way: the first thing a person must see."""
    if report.running is not None:
        who = report.running
        return [
            f"a tether run is changing this project right now ({who.get('command') or 'unknown'}"
            f", pid {who.get('pid') or 'unknown'}, started {who.get('started') or 'unknown'}); "
            "what follows may change under it"
        ]
    if report.unfinished is not None:
        return [unfinished_message(report.unfinished)]
    return []
