"""The words of ``tether changelog``: the release notes and the suggested follow-ups."""

from __future__ import annotations

from tether.flows.changelog import ChangelogReport
from tether.report.printable import one_line, printable


def render(report: ChangelogReport) -> str:
    """The human view: each section under its heading, then the suggested follow-ups."""
    if not report.found:
        return f"no changelog: {report.origin} does not exist"
    if not report.sections:
        return (
            f"no changelog entries after {report.from_version} up to {report.to_version} "
            f"in {report.origin}"
        )
    lines = [f"Changes after {report.from_version} up to {report.to_version} ({report.origin})"]
    for section in report.sections:
        heading = f"## {section.version}" + (f" - {section.date}" if section.date else "")
        lines += ["", heading, section.body] if section.body else ["", heading]
    if report.actions:
        lines += ["", "Suggested follow-ups (tether does not run them):"]
        for action in report.actions:
            what = one_line(action.command or action.text)
            lines.append(f"  {action.version}: {what}")
    return printable("\n".join(lines))
