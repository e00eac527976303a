"""The words of ``tether demo``: each step's command, then what it printed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.demo import CUSTOMISATIONS, HUNK_LEVEL_COMMAND, RELEASES, SETTINGS, UPSTREAM
from tether.report.init import init_document, render_init
from tether.report.status import render_status
from tether.report.status_document import status_document
from tether.report.update import render_update, update_document

if TYPE_CHECKING:
    from tether.demo import DemoReport


def render_demo(report: DemoReport) -> str:
    shelf, project = report.shelf, report.project
    lines = [
        f"tether demo in {report.base}",
        f"upstream {UPSTREAM}: releases {', '.join(RELEASES)} in {shelf}",
        f"\n=== tether init --source {shelf} --to 1.0.0 -C {project}",
        render_init(report.installed),
        "\n=== the adopter customises the project",
        *(f"  {path}: {what}" for path, what in CUSTOMISATIONS),
        f"\n=== tether status --check-latest -C {project}",
        render_status(report.before),
        f"\n=== tether update --yes -C {project}",
        render_update(report.update),
        f"\n=== tether status -C {project}",
        render_status(report.after),
        "\n=== the same update on a copy of the customised project, the conflict settled hunk "
        "by hunk",
        f"=== tether {HUNK_LEVEL_COMMAND} -C {report.by_hunk}",
        render_update(report.by_hunk_update),
        f"\n{SETTINGS} now (my side of the clashing line, upstream's other change kept; "
        "--auto keep-mine would have kept my whole file, level: info included):",
        *(f"  {line}" for line in report.by_hunk_text.splitlines()),
        f"\nLook around: cd {project} (backups in .tether/backup, conflicts marked in the files)",
    ]
    return "\n".join(lines)


def demo_document(report: DemoReport) -> dict[str, Any]:
    """The demo's JSON document: each step's document as its own command prints it, notes
    in words."""
    document = report.to_json()
    document["init"] = init_document(report.installed)
    document["status_before"] = status_document(report.before)
    document["update"] = update_document(report.update)
    document["status_after"] = status_document(report.after)
    document["hunk_level"]["update"] = update_document(report.by_hunk_update)
    return document
