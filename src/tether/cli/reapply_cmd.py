"""``tether reapply``: merge saved local patches back into a fresh install (GSD-style).

Exit 0 when every file merged (or was already in the release) and passed verification, 1 on a
verification failure, pristine drift or another per-file failure, 4 when conflicts are left
for a person. ``--save`` copies the customised files into a new timestamped folder (exit 0).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from tether.cli import interact
from tether.cli.common import (
    add_auto,
    add_json,
    add_project_dir,
    add_removed,
    print_json,
    verbose_line,
)
from tether.errors import Exit, UsageError
from tether.flows.reapply import (
    CONFLICT_STYLES,
    DROPPED_CHOICES,
    BaselineOptions,
    Pending,
    ReapplyRequest,
    reapply,
    save_patches,
)
from tether.report.reapply import (
    DIFFERS,
    DRIFT_QUESTION,
    DROPPED_QUESTION,
    reapply_document,
    render,
    render_pending,
    render_save,
)

Chooser = Callable[[list[Pending], list[tuple[str, str]]], dict[str, str]]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--patches",
        metavar="DIR",
        help="the saved patches (backup-meta.json here or in a saved subfolder); default: "
        "the gsd-local-patches folder found where GSD leaves it",
    )
    add_project_dir(
        parser,
        refuse_argument=False,
        help="the folder the new release was installed into (default: the install the "
        "patches belong to, the folder holding gsd-local-patches)",
    )
    add_removed(parser, "--target", "use -C DIR")
    parser.add_argument(
        "--save",
        action="store_true",
        help="save the customised files into a new timestamped folder under "
        "--patches instead of reapplying",
    )
    parser.add_argument(
        "--manifest",
        metavar="FILE",
        help="with --save: the install manifest {files: {path: sha256}}",
    )
    parser.add_argument(
        "--pristine",
        metavar="DIR",
        help="pristine copies of the release the patches were saved from "
        "(default: gsd-pristine beside the patches folder, when there is one)",
    )
    parser.add_argument(
        "--git",
        metavar="DIR",
        help="a repository with the target's history (default: the one holding the target, if any)",
    )
    parser.add_argument(
        "--no-git", action="store_true", help="do not look for baselines in git history"
    )
    parser.add_argument(
        "--baseline-source",
        metavar="SRC",
        help="a release source holding the baseline release (npm:<package>@<version> "
        "fetches it from the npm registry)",
    )
    parser.add_argument("--baseline-version", metavar="V", help="the baseline release's version")
    parser.add_argument(
        "--accept-pristine",
        action="append",
        default=[],
        metavar="PATH",
        help="merge PATH on its pristine copy although its hash drifted (repeatable)",
    )
    parser.add_argument(
        "--conflict",
        choices=CONFLICT_STYLES,
        default="markers",
        help="write conflict markers into the file (default) or a patch beside the backups",
    )
    add_auto(parser, "settle every conflict this way instead of asking (for scripts)")
    parser.add_argument(
        "--dropped",
        choices=DROPPED_CHOICES,
        help="for every saved file the new release no longer ships: keep it as your own "
        "file (your saved copy written back), or drop it (your copy stays in the patches)",
    )
    parser.add_argument(
        "--remove-backups",
        action="store_true",
        help="remove the saved patches after a run that verified every file "
        "(kept when any file failed or a conflict is left)",
    )
    parser.add_argument("--dry-run", action="store_true", help="report, write nothing")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    _check_usage(args)
    target = Path(args.project) if args.project else None
    if target is not None:
        verbose_line(args, f"project {target.absolute()}")
    if args.save:
        assert target is not None
        saved = save_patches(target, Path(args.manifest), Path(args.patches))
        if args.json:
            print_json(saved.to_json())
        else:
            print(render_save(saved))
        return Exit.OK
    request = ReapplyRequest(
        patches=Path(args.patches) if args.patches else None,
        target=target,
        baseline=BaselineOptions(
            pristine=Path(args.pristine) if args.pristine else None,
            git_repo=Path(args.git) if args.git else None,
            use_git=not args.no_git,
            source=args.baseline_source,
            version=args.baseline_version,
            accept_pristine=frozenset(args.accept_pristine),
        ),
        conflict_style=args.conflict,
        dry_run=args.dry_run,
        auto=args.auto,
        dropped=args.dropped,
        chooser=_chooser(args),
        remove_backups=args.remove_backups,
    )
    report = reapply(request)
    if args.json:
        print_json(reapply_document(report))
    else:
        print(render(report))
    return report.exit_code()


def _chooser(args: argparse.Namespace) -> Chooser | None:
    """Ask only when a person is at a terminal and nothing else decides (``--auto`` for
    conflicts, ``--dropped`` for files the new release dropped)."""
    if args.json or args.dry_run or not interact.stdin_is_terminal():
        return None
    if args.auto and args.dropped:
        return None
    return _ask_per_file


def _ask_per_file(pending: list[Pending], table: list[tuple[str, str]]) -> dict[str, str]:
    """Every file and its pending state first, then the question per conflict."""
    import sys

    from tether.engine.patches import unified_patch

    print(render_pending(table), file=sys.stderr)

    def diff(item: Pending) -> Callable[[], str]:
        installed = item.installed or b""
        return lambda: unified_patch(item.file, installed, item.saved).decode(errors="replace")

    def question(item: Pending) -> interact.ConflictQuestion:
        if item.dropped:
            return interact.ConflictQuestion(
                item.file, DROPPED_QUESTION, diff(item), answers=interact.DROPPED_ANSWERS
            )
        words = DRIFT_QUESTION if item.drift_only else DIFFERS
        return interact.ConflictQuestion(item.file, words, diff(item), item.hunk_level)

    return interact.choose_each([question(item) for item in pending])


def _check_usage(args: argparse.Namespace) -> None:
    if args.save:
        if not args.project:
            raise UsageError("--save needs -C DIR (the folder to save the customised files of)")
        if not args.patches:
            raise UsageError("--save needs --patches DIR (where to save the files)")
        if not args.manifest:
            raise UsageError("--save needs --manifest FILE (the install manifest)")
        return
    if args.manifest:
        raise UsageError("--manifest goes with --save")
    if args.baseline_version and not args.baseline_source:
        raise UsageError("--baseline-version goes with --baseline-source")
    if args.baseline_source and not args.baseline_version:
        from tether.sources.npm import pinned_version

        if pinned_version(args.baseline_source) is None:
            raise UsageError(
                "--baseline-source needs --baseline-version, unless it names the version "
                "itself (npm:<package>@<version>)"
            )
    if args.git and args.no_git:
        raise UsageError("give --git DIR or --no-git, not both")
