from __future__ import annotations

from tether.cli.common import (
    add_status_arguments,
    add_template_arguments,
    installed_project_dir,
    list_limit,
    print_json,
    template_options,
)
from tether.errors import Exit

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    import argparse

    from tether.flows.status import StatusReport


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_status_arguments(parser, "ask the source for its newest version")
    add_template_arguments(parser, data=False)


def run(args: argparse.Namespace) -> int:
    report = status_of(args)
    if args.json:
        from tether.report.status_document import status_document

        print_json(status_document(report))
    else:
        from tether.report.status import render_status

        print(render_status(report, list_limit(args)))
    return Exit.OK


def status_of(args: argparse.Namespace) -> StatusReport:
    """The status the arguments ask for (``status`` and ``check`` take the same ones)."""
    from tether.flows.status import project_status

    return project_status(
        installed_project_dir(args),
        args.profile,
        args.source,
        args.check_latest,
        no_regions=args.no_regions,
        template=template_options(args),
    )
