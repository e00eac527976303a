"""The words of ``tether merge-fields``: the summary line, the items under their headings,
and whether the file was written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.engine.structured import summary_line
from tether.report.reasons import side_problems

if TYPE_CHECKING:
    from tether.flows.merge_fields import FieldsReport


def render_fields(report: FieldsReport) -> str:
    lines = [summary_line(report.current, report.result, unread_words=side_problems)]
    for heading, items in report.result.to_json().items():
        if not items:
            continue
        lines.append(f"{heading}:")
        for item in items:
            where = f"{item['section']} " if "section" in item else ""
            reason = f" ({item['reason']})" if "reason" in item else ""
            lines.append(f"  {where}{item['key']}{reason}")
    if report.written:
        lines.append(f"wrote {report.current}")
    elif report.result.applied and not report.write_asked:
        lines.append("nothing written (add --write to apply)")
    return "\n".join(lines)
