"""``tether check``: the project's state as a pass or fail, for CI and pre-commit."""

from __future__ import annotations

from tether.cli.common import (
    add_list,
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_status_arguments(parser, "also fail when a newer release exists")
    add_template_arguments(parser, data=False)
    add_list(
        parser,
        "--fail-on",
        metavar="KIND",
        help="fail only on these kinds of finding, instead of the project's [check] fail_on "
        "or the default: run-in-progress, unfinished-update, owned-drift, "
        "unresolved-conflicts, action-required, not-regular-files, leftovers, "
        "update-available",
        none_when_absent=True,
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="also fail on every other kind that needs no network (leftovers included)",
    )


def run(args: argparse.Namespace) -> int:
    from tether.flows.check import check_project

    report = check_project(
        installed_project_dir(args),
        fail_on=args.fail_on,
        strict=args.strict,
        check_latest=args.check_latest,
        profile=args.profile,
        source=args.source,
        no_regions=args.no_regions,
        template=template_options(args),
    )
    if args.json:
        from tether.report.status_document import check_document

        print_json(check_document(report))
    else:
        from tether.report.check import render_check

        print(render_check(report, list_limit(args)))
    return Exit.FOUND if report.reasons else Exit.OK
