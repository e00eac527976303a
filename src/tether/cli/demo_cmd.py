from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", metavar="DIR", help="build the demo here (default: a new temp dir)"
    )


def _section(title: str) -> None:
    print(f"\n=== {title}")


def run(args: argparse.Namespace) -> int:
    from tether import demo
    from tether.flows.install import install_release
    from tether.flows.plan import UpdateOptions
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update
    from tether.report.human import render_init, render_status, render_update

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tether-demo-"))
    shelf, project = base / "upstream", base / "project"
    print(f"tether demo in {base}")
    demo.build_upstream(shelf)
    print(f"upstream {demo.UPSTREAM}: releases {', '.join(demo.RELEASES)} in {shelf}")

    _section(f"tether init --source {shelf} --version 1.0.0 {project}")
    print(render_init(install_release(project, str(shelf), "1.0.0")))

    _section("the adopter customises the project")
    demo.customise(project)
    for path, what in demo.CUSTOMISATIONS:
        print(f"  {path}: {what}")

    _section(f"tether status --check-latest -C {project}")
    print(render_status(project_status(project, check_latest=True)))

    _section(f"tether update --yes -C {project}")
    report = run_update(UpdateRequest(project, options=UpdateOptions()))
    print(render_update(report))

    _section(f"tether status -C {project}")
    print(render_status(project_status(project)))
    print(f"\nLook around: cd {project} (backups in .tether/backup, conflicts marked in the files)")
    return 0
