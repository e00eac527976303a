"""The words of ``tether refresh`` (an update under the gbrain profile): the update's words
with the refresh's commands, and every file with its state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.update import render_update

if TYPE_CHECKING:
    from tether.flows.update_report import UpdateReport


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
    text = text.replace("resuming interrupted update", "resuming interrupted refresh", 1)
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
