"""The words of ``tether own``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.printable import one_line

if TYPE_CHECKING:
    from tether.flows.own import OwnReport


def _files(count: int) -> str:
    return f"{count} file is" if count == 1 else f"{count} files are"


def render_own(report: OwnReport) -> str:
    deleted = set(report.deleted)
    if report.undo:
        head = (
            f"tether own --undo: {_files(len(report.changed))} the release's again: the next "
            "update merges them and status reports their drift"
        )
        rest = "not taken over (nothing to give back)"
    else:
        head = (
            f"tether own: {_files(len(report.changed))} yours now: updates leave them alone, "
            "status lists them as yours, never as drift"
        )
        rest = "already yours"
    lines = [head]
    lines += [
        f"  {one_line(p)}" + (" (deleted: it stays deleted)" if p in deleted else "")
        for p in report.changed
    ]
    if report.unchanged:
        lines.append(f"{rest} ({len(report.unchanged)}):")
        lines += [f"  {one_line(p)}" for p in report.unchanged]
    if report.changed:
        lines.append(f"recorded in {report.config}: commit it, so every clone keeps the choice")
    return "\n".join(lines)
