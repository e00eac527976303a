"""The words of ``tether demo``: each step's command, then what it printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.demo import CUSTOMISATIONS, RELEASES, UPSTREAM
from tether.report.human import render_init, render_status, render_update

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
        f"\nLook around: cd {project} (backups in .tether/backup, conflicts marked in the files)",
    ]
    return "\n".join(lines)
