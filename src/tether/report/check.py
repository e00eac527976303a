"""The words of ``tether check``: why it fails or passes, each finding with its next step."""

from __future__ import annotations

from tether.report import lifecycle_steps as lifecycle_report
from tether.report.listing import LIST_LIMIT
from tether.report.printable import one_line, printable
from tether.report.status import run_state_lines
from tether.report.status_document import check_next_steps, status_notes

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from tether.flows.check import CheckReport


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
    lines += run_state_lines(status)
    for reason in ("run-in-progress", "unfinished-update", "update-available"):
        for finding in (f for f in report.findings if f.reason == reason):
            if reason == "update-available":
                lines.append(f"Update: {status.installed_version} → {status.latest_version}")
            lines.append(_next_line(check_next_steps(finding, status), finding.fails, "  "))
    for reason, title in _FINDING_TITLES.items():
        found = [f for f in report.findings if f.reason == reason]
        if not found:
            continue
        lines.append(f"{title} ({len(found)})" + ("" if found[0].fails else ", not failing") + ":")
        shown = found if limit is None else found[:limit]
        for finding in shown:
            lines.append(f"  {one_line(finding.path or '')}")
            lines.append(_next_line(check_next_steps(finding, status), True, "    "))
        if len(found) > len(shown):
            lines.append(f"  … and {len(found) - len(shown)} more (--all lists every one)")
    lines += lifecycle_report.open_item_lines(status.action_items)
    lines.append(f"fails on: {', '.join(report.fail_on) or 'nothing'} ({report.fail_on_from})")
    lines += [f"note: {n}" for n in status_notes(status)]
    return printable("\n".join(lines))


def _next_line(steps: tuple[str, ...], fails: bool, indent: str) -> str:
    text = "next: " + " | ".join(one_line(step) for step in steps)
    return indent + (text if fails else text + " (not failing)")
