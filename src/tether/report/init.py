"""The words of ``tether init``: what it installed, and the question before it restores the
files a project lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.listing import listing
from tether.report.notes import worded_notes
from tether.report.printable import one_line, printable

if TYPE_CHECKING:
    from tether.flows.install import InitReport


def render_init(report: InitReport) -> str:
    lines = [
        f"tether init: installed {report.upstream} {report.version} ({report.profile} profile)",
        f"  Added       {len(report.added)}",
        f"  Identical   {len(report.identical)}",
        f"  Customised  {len(report.customised)}",
    ]
    lines += listing("Already customised (baseline kept as the release's bytes)", report.customised)
    lines += listing(
        f"Left deleted (this project lacks them; recorded as yours in {report.config}; to have "
        "one back: tether own --undo PATH, then tether init --force --restore-missing)",
        report.left_deleted,
    )
    lines += [f"note: {one_line(n)}" for n in worded_notes(report.notes)]
    return "\n".join(lines)


def init_document(report: InitReport) -> dict[str, object]:
    """An init's JSON document, its notes in words."""
    return {**report.to_json(), "notes": worded_notes(report.notes)}


def render_missing_question(paths: list[str]) -> str:
    """What a person reads before init asks whether to restore the files a project lacks."""
    lines = listing(
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
