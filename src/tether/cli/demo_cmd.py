from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tether.cli.common import add_json, add_project_dir, print_json, verbose_line
from tether.errors import Exit, TetherError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_dir(
        parser,
        deprecated=("--dir",),
        positional=False,
        help="build the demo here, a new or empty folder (default: a new temporary one)",
    )
    add_json(parser)


def _section(title: str) -> None:
    print(f"\n=== {title}")


def _demo_dir(wanted: str | None) -> Path:
    if not wanted:
        return Path(tempfile.mkdtemp(prefix="tether-demo-"))
    base = Path(wanted)
    if base.exists() and not (base.is_dir() and not any(base.iterdir())):
        raise TetherError(f"{base}: already exists and is not an empty folder; give a new one")
    return base


def run(args: argparse.Namespace) -> int:
    from tether import demo
    from tether.flows.install import install_release
    from tether.flows.plan import UpdateOptions
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update
    from tether.report.human import render_init, render_status, render_update

    base = _demo_dir(args.project)
    verbose_line(args, f"project {base.absolute()}")
    shelf, project = base / "upstream", base / "project"
    demo.build_upstream(shelf)
    installed = install_release(project, str(shelf), "1.0.0")
    demo.customise(project)
    before = project_status(project, check_latest=True)
    report = run_update(UpdateRequest(project, options=UpdateOptions()))
    after = project_status(project)
    if args.json:
        print_json(
            {
                "dir": str(base),
                "upstream": {"name": demo.UPSTREAM, "releases": list(demo.RELEASES)},
                "source": str(shelf),
                "project": str(project),
                "init": installed.to_json(),
                "customised": [{"path": p, "what": what} for p, what in demo.CUSTOMISATIONS],
                "status_before": before.to_json(),
                "update": report.to_json(),
                "status_after": after.to_json(),
            }
        )
        return Exit.OK
    print(f"tether demo in {base}")
    print(f"upstream {demo.UPSTREAM}: releases {', '.join(demo.RELEASES)} in {shelf}")
    _section(f"tether init --source {shelf} --to 1.0.0 -C {project}")
    print(render_init(installed))
    _section("the adopter customises the project")
    for path, what in demo.CUSTOMISATIONS:
        print(f"  {path}: {what}")
    _section(f"tether status --check-latest -C {project}")
    print(render_status(before))
    _section(f"tether update --yes -C {project}")
    print(render_update(report))
    _section(f"tether status -C {project}")
    print(render_status(after))
    print(f"\nLook around: cd {project} (backups in .tether/backup, conflicts marked in the files)")
    return Exit.OK
