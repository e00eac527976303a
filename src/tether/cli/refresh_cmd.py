"""``tether refresh``: bring host-copied integration files (gbrain) up to date with their
recipe folder, merging local edits against the recorded baseline."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tether.cli import interact
from tether.cli.common import (
    add_auto,
    add_json,
    add_project_dir,
    add_to,
    add_yes,
    installed_project_dir,
    print_json,
)
from tether.model.plan import CONFLICT_STYLES

if TYPE_CHECKING:
    from tether.flows.update import PreparedUpdate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="classify every file, write nothing")
    add_to(parser, "the recipe version to refresh to (default: the source's newest)")
    add_yes(parser)
    add_auto(
        parser,
        "settle every locally-modified file this way, without asking",
        ("merge",),
        ", or merge (the line merge, a clash left as --conflict says)",
    )
    parser.add_argument(
        "--deleted",
        choices=("restore", "drop"),
        help="for every file deleted here: copy it back, or drop it for good (recorded)",
    )
    parser.add_argument(
        "--conflict",
        choices=CONFLICT_STYLES,
        default="patch",
        help="how to leave a conflict (default: patch, your file untouched)",
    )
    parser.add_argument(
        "--delete-removed",
        action="store_true",
        help="remove files the recipe dropped that you never changed (backed up)",
    )
    parser.add_argument(
        "--abandon",
        action="store_true",
        help="undo an interrupted refresh, restoring its files from the backup",
    )
    parser.add_argument(
        "--profile",
        default="gbrain",
        metavar="P",
        help="the profile (default: gbrain; refresh is update under it)",
    )
    add_json(parser)
    add_project_dir(parser)


def run(args: argparse.Namespace) -> int:
    from tether.flows.abandon import abandon_update
    from tether.flows.plan import UpdateOptions
    from tether.flows.preflight import GitOptions
    from tether.flows.refresh import refresh_command
    from tether.flows.update import UpdateRequest, run_update
    from tether.flows.update_report import UpdateStatus
    from tether.report.refresh import refresh_classes, render_refresh, render_refresh_plan
    from tether.report.update import update_document

    if args.abandon:
        abandoned = abandon_update(installed_project_dir(args), args.profile)
        if args.json:
            print_json(update_document(abandoned))
        else:
            print(render_refresh(abandoned))
        return abandoned.exit_code()

    # --auto settles locally-modified files only (local_edits): a host's own file the recipe
    # newly ships stands where a conflict is left, never overwritten by any --auto.
    options = UpdateOptions(
        args.conflict,
        None,
        args.delete_removed,
        classify_local_edits=True,
        local_edits=args.auto,
        host_deleted=args.deleted,
    )
    request = UpdateRequest(
        installed_project_dir(args),
        to=args.to,
        profile=args.profile,
        dry_run=args.dry_run,
        options=options,
        command=refresh_command(args.auto, args.deleted),
        git=GitOptions(allow_dirty=True, no_branch=True),
    )
    # Consent is one rule (--yes, a terminal, or stop before writing, exit 1), with or without
    # --json; asked before the run takes the recipe's lock, so a refusal leaves no file behind.
    interact.require_consent("refresh", yes=args.yes, dry_run=args.dry_run)

    def confirm(prepared: PreparedUpdate) -> bool:
        if args.yes:
            return True
        plan = render_refresh_plan(prepared.report(UpdateStatus.PLAN))
        if not interact.ask_yes_no("Refresh these files?", before=plan):
            return False
        if not args.auto:
            interact.choose_local_edits(prepared)
        if not args.deleted:
            interact.choose_host_deletions(prepared)
        interact.choose_source_deletions(prepared)  # take-theirs has cleaned them up
        return True

    report = run_update(request, confirm)
    if args.json:
        print_json({**update_document(report), "files": refresh_classes(report)})
    else:
        print(render_refresh(report))
    return report.exit_code()
