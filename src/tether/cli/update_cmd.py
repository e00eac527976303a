from __future__ import annotations

from tether.cli.common import (
    add_all,
    add_auto,
    add_json,
    add_project_dir,
    add_removed,
    add_source,
    add_template_arguments,
    add_to,
    add_yes,
    installed_project_dir,
    list_limit,
    print_json,
    template_options,
)

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    import argparse

    from tether.flows.update import PreparedUpdate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tether.model.plan import CONFLICT_STYLES

    add_to(parser, "the release to move to (default: the newest)")
    add_source(parser, "take releases from here instead of the recorded source (recorded)")
    parser.add_argument(
        "--switch-upstream",
        action="store_true",
        help="let --source name another upstream than the installed one (the project moves to it)",
    )
    parser.add_argument("--profile", metavar="P", help="native or gaia (default: detected)")
    parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    add_yes(parser)
    parser.add_argument(
        "--conflict",
        choices=CONFLICT_STYLES,
        help="how to leave a conflict (default: the profile's)",
    )
    add_auto(parser, "settle every conflict this way, without asking")
    parser.add_argument(
        "--delete-removed",
        action="store_true",
        help="remove files dropped upstream that you never changed (backed up)",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="proceed although files the update changes have uncommitted edits",
    )
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument(
        "--branch", metavar="NAME", help="switch to this new branch before applying"
    )
    branch.add_argument(
        "--no-branch",
        action="store_true",
        help="apply on the current branch even when it is main or master",
    )
    add_removed(parser, "--pr", "commit the update, then run 'tether pr'")
    parser.add_argument(
        "--no-regions",
        action="store_true",
        help="ignore generated-region declarations for this run (and run no program the "
        "release ships)",
    )
    parser.add_argument(
        "--no-programs",
        action="store_true",
        help="run no program the release ships (migrations, region regeneration); "
        "--no-regions implies it",
    )
    parser.add_argument(
        "--skip-migrations",
        action="store_true",
        help="do not run the release's migrations (reported; they stay pending)",
    )
    parser.add_argument(
        "--abandon",
        action="store_true",
        help="undo an interrupted update, restoring its files from the backup",
    )
    add_template_arguments(parser)
    add_all(parser)
    add_json(parser)
    add_project_dir(parser)


def _confirm(prepared: PreparedUpdate, settle_conflicts: bool) -> bool:
    """Show the plan and ask; then, unless ``--auto`` settles them, ask per conflict."""
    from tether.cli import interact
    from tether.flows.update_report import UpdateStatus
    from tether.report.update import render_plan_summary

    before = render_plan_summary(prepared.report(UpdateStatus.PLAN))
    if not interact.ask_yes_no("Apply this update?", before=before):
        return False
    if settle_conflicts:
        interact.choose_conflicts(prepared)
    return True


def run(args: argparse.Namespace) -> int:
    from tether.flows.plan import UpdateOptions
    from tether.flows.preflight import GitOptions
    from tether.flows.project import open_project
    from tether.flows.update import UpdateRequest, run_update
    from tether.report.update import render_update, update_document
    from tether.versions import release_version

    root = installed_project_dir(args)
    template = template_options(args)
    if args.abandon:
        # Imported here: an update that is not abandoned never loads the abandon flow.
        from tether.flows.abandon import abandon_update

        report = abandon_update(root, args.profile, template)
    else:
        profile = open_project(root, args.profile, template).profile
        options = UpdateOptions(
            conflict_style=args.conflict or profile.default_conflict_style,
            auto=args.auto,
            delete_removed=args.delete_removed,
            no_regions=args.no_regions,
        )
        command = "update" + (f" --to {release_version(args.to)}" if args.to else "")
        git_options = GitOptions(args.allow_dirty, args.branch, args.no_branch)
        request = UpdateRequest(
            root,
            args.to,
            args.source,
            args.profile,
            args.dry_run,
            options,
            command,
            git_options,
            skip_migrations=args.skip_migrations,
            no_programs=args.no_programs,
            template=template,
            switch_upstream=args.switch_upstream,
        )

        def confirm(prepared: PreparedUpdate) -> bool:
            # Asked only once there is something to apply: with nothing to do (already up to
            # date) the update says so without a terminal or --yes, as an agent needs. With
            # --yes nothing is asked (and the prompts are not loaded).
            if args.yes:
                return True
            from tether.cli import interact

            interact.require_consent("apply the update", yes=False, dry_run=args.dry_run)
            return _confirm(prepared, settle_conflicts=not args.auto)

        report = run_update(request, confirm)
    if args.json:
        print_json(update_document(report))
    else:
        print(render_update(report, list_limit(args)))
    return report.exit_code()
