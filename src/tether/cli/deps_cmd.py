"""``tether deps scan|plan|apply``: move dependencies across the registered projects."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.cli.common import (
    MAX_RETRIES,
    add_jobs,
    add_json,
    add_list,
    add_selection,
    jobs,
    print_json,
    print_nothing_selected,
    request_retries,
    request_timeout,
    selection_filters,
)
from tether.cli.interact import (
    ask,
    ask_conflict_policy,
    ask_deps_gate,
    ask_override_action,
    one_of,
    require_consent,
    show,
    stdin_is_terminal,
)
from tether.deps.align import POLICIES
from tether.deps.model import LEVELS
from tether.deps.registries import DEFAULT_RETRIES, DEFAULT_TIMEOUT
from tether.errors import UsageError
from tether.runs.isolation import DEFAULT_MODE, MODES

if TYPE_CHECKING:
    from tether.deps.commands import DepsRequest, Prompts
    from tether.runs.selection import Member


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    scan = sub.add_parser(
        "scan",
        help="each project's dependencies and their targets",
        description="read every selected project's manifests and each package's newest "
        "version for the level (reads only)",
    )
    plan = sub.add_parser(
        "plan",
        help="group by package and align across projects",
        description="one target per package across the projects, conflicts and overrides "
        "(reads only)",
    )
    apply = sub.add_parser(
        "apply",
        help="edit the manifests and install, project by project",
        description="plan, ask once, then edit each project's manifests in place and run "
        "its install; never commits or pushes",
    )
    for each in (scan, plan, apply):
        _add_common(each)
    for each in (plan, apply):
        _add_plan_options(each)
    plan.add_argument(
        "--deep",
        action="store_true",
        help="also keep the plan in a new plan folder, for deps notes and deps dossier "
        "(plan folders unused for 10 days are removed then)",
    )
    _add_apply_options(apply)
    # What scan and plan never take reads as its default, so one request serves all three.
    scan.set_defaults(conflict_policy=None, overrides=None)
    for each in (scan, apply):
        each.set_defaults(deep=False)
    for each in (scan, plan):
        each.set_defaults(
            override_action=None,
            skip_package=[],
            renamed_exclude=None,
            select=None,
            yes=False,
            no_install=False,
            continue_on_failure=False,
            isolate=DEFAULT_MODE,
            resume=None,
        )
    _add_deep_commands(sub)


def _add_request_flags(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` and ``--retries``: how each registry request is asked (docs/deps.md)."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help="the longest wait for one step of a request: connecting, each read "
        f"(default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=DEFAULT_RETRIES,
        metavar="N",
        help=f"times a request that failed is asked again, 0 to {MAX_RETRIES} "
        f"(default: {DEFAULT_RETRIES})",
    )


def _add_deep_commands(sub: Any) -> None:
    notes = sub.add_parser(
        "notes",
        help="release notes between each package's current and target versions",
        description="for every package a plan folder's plan moves: its versions on the "
        "registry and its GitHub release notes or changelog entries in the range, kept in "
        "the plan folder (a second run reads them there)",
    )
    dossier = sub.add_parser(
        "dossier",
        help="write the dossier skeleton of a plan folder",
        description="dossier.md and dossier.json from a plan folder: the bump set, groups, "
        "PR plan (major), release notes, and the sections research fills; asks no server",
    )
    for each in (notes, dossier):
        each.add_argument(
            "--level", choices=LEVELS, help="without --plan-dir: the newest plan folder of it"
        )
        each.add_argument(
            "--plan-dir", metavar="DIR", help="the plan folder (deps plan --deep makes one)"
        )
        add_json(each)
    notes.add_argument(
        "--github-api",
        metavar="URL",
        help="GitHub's REST API (default: $GITHUB_API_URL, else https://api.github.com); "
        "$GITHUB_TOKEN or $GH_TOKEN is sent when set",
    )
    add_jobs(notes, "release pages asked")
    _add_request_flags(notes)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--level", required=True, choices=LEVELS, help="how far to move")
    parser.add_argument(
        "--converge-engines",
        action="store_true",
        help="at --level engines, also move a pin above the run's target down to it "
        "(by default such a pin is reported and left higher)",
    )
    parser.add_argument(
        "--target-level",
        choices=LEVELS,
        metavar="L",
        help="how far each version moves, when not as far as the level (npm-check-updates' "
        "--target; the level names the run)",
    )
    add_selection(parser)
    parser.add_argument(
        "--npm-registry",
        metavar="URL|DIR",
        help="npm registry (default: $npm_config_registry, .npmrc, registry.npmjs.org); "
        "a directory of packuments works offline",
    )
    parser.add_argument(
        "--pypi-index",
        metavar="URL|DIR",
        help="Python index (default: $PIP_INDEX_URL, else pypi.org's JSON API)",
    )
    parser.add_argument(
        "--node-index",
        metavar="URL|FILE",
        help="Node release index for --level engines (default: nodejs.org/dist/index.json)",
    )
    parser.add_argument(
        "--min-release-age",
        metavar="AGE",
        help="only versions at least this old (7d, 12h, 90m); pnpm's minimumReleaseAge "
        "also applies; a version without a publish time is never old enough",
    )
    add_jobs(parser, "registry requests")
    _add_request_flags(parser)
    parser.add_argument(
        "--plan-dir",
        metavar="DIR",
        help="also write scan-by-project.json (and the plan) here; apply reads the "
        "improvements of its dossier.md",
    )
    add_json(parser)


def _add_plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--conflict-policy",
        choices=POLICIES,
        help="for every package whose projects cannot share one target (plan default: "
        "use-max-where-possible; apply asks once)",
    )
    parser.add_argument(
        "--overrides",
        metavar="FILE",
        help="override families (default: $XDG_CONFIG_HOME/tether/deps-overrides.yaml, if "
        "present; never a file in the current folder)",
    )


def _add_apply_options(parser: argparse.ArgumentParser) -> None:
    add_list(
        parser,
        "--override-action",
        metavar="ID=ACTION",
        help="run-override, skip-matched or force-generic for one override entry",
    )
    add_list(
        parser,
        "--skip-package",
        metavar="NAME",
        help="leave these packages out (names of the plan)",
    )
    add_list(
        parser,
        "--select",
        metavar="ITEM",
        help="apply only these: package names (exactly) and improvements of --plan-dir's "
        "dossier.md (any part of the title, any case)",
    )
    # --exclude takes path globs everywhere else; here it used to take package names.
    # Refused with a pointer instead of reading names as globs (docs/deps.md).
    parser.add_argument(
        "--exclude", dest="renamed_exclude", action="append", help=argparse.SUPPRESS
    )
    parser.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    parser.add_argument("--no-install", action="store_true", help="edit the manifests only")
    parser.add_argument(
        "--continue-on-failure", action="store_true", help="go on after a project fails"
    )
    parser.add_argument(
        "--resume",
        metavar="RUN",
        help="finish the installs run RUN owes (manifests already bumped); without it, the "
        "same command finds them",
    )
    parser.add_argument(
        "--isolate",
        choices=MODES,
        default=None,
        help="in place, on a new branch deps/<level>-<date>, or in a new worktree "
        f"(default: {DEFAULT_MODE}; a project where the isolation asked for is not "
        "possible is skipped)",
    )


def run(args: argparse.Namespace) -> int:
    from tether.deps import commands
    from tether.report.deps import render_plan, render_scan, render_summary

    if args.action in ("notes", "dossier"):
        return _run_deep(args)
    if args.renamed_exclude:
        raise UsageError(
            "deps apply --exclude no longer takes package names (--exclude means path globs "
            "in every command): use --skip-package " + ",".join(args.renamed_exclude)
        )
    if args.action == "apply":
        require_consent("apply the plan", yes=args.yes)
    action = {"scan": commands.scan, "plan": commands.plan, "apply": commands.apply}
    result = action[args.action](_request(args), _prompts(args))
    if isinstance(result, commands.DepsResult):
        render = {"scan": render_scan, "plan": render_plan, "apply": render_summary}
        print_json(result.document) if args.json else print(render[args.action](result.document))
        return result.exit_code
    return print_nothing_selected(result, args.json)


def _run_deep(args: argparse.Namespace) -> int:
    from tether.deps import commands
    from tether.report.dossier import render_dossier, render_notes

    request = commands.DeepRequest(
        args.level,
        Path(args.plan_dir) if args.plan_dir else None,
        getattr(args, "github_api", None),
        jobs(args) if args.action == "notes" else 1,
        request_timeout(args, DEFAULT_TIMEOUT),
        request_retries(args, DEFAULT_RETRIES),
    )
    if args.action == "notes":
        result, render = commands.notes(request), render_notes
    else:
        result, render = commands.dossier(request), render_dossier
    print_json(result.document) if args.json else print(render(result.document))
    return result.exit_code


def _request(args: argparse.Namespace) -> DepsRequest:
    from tether.deps.commands import DepsRequest
    from tether.deps.flow import Registries

    registries = Registries(
        args.npm_registry,
        args.pypi_index,
        args.node_index,
        jobs(args),
        request_timeout(args, DEFAULT_TIMEOUT),
        request_retries(args, DEFAULT_RETRIES),
    )
    return DepsRequest(
        args.level,
        selection_filters(args),
        target=args.target_level,
        converge_engines=args.converge_engines,
        registries=registries,
        min_release_age=args.min_release_age,
        plan_dir=Path(args.plan_dir) if args.plan_dir else None,
        conflict_policy=args.conflict_policy,
        overrides=Path(args.overrides) if args.overrides else None,
        override_actions=args.override_action or [],
        skip_packages=args.skip_package,
        yes=args.yes,
        install=not args.no_install,
        continue_on_failure=args.continue_on_failure,
        isolate=args.isolate,
        resume=args.resume,
        deep=args.deep,
        select=args.select or [],
    )


def _prompts(args: argparse.Namespace) -> Prompts:
    """Questions, the plan and the lines that explain them go to stderr (cli/interact.py)."""
    from tether.deps.commands import Prompts
    from tether.report.deps import render_plan

    def show_plan(document: dict[str, Any]) -> None:
        show(render_plan(document))

    return Prompts(
        show,
        show_plan,
        ask_deps_gate,
        ask_conflict_policy,
        ask_override_action,
        _progress(args.json),
        _go_on,
        _pick if stdin_is_terminal() else None,
    )


def _pick(members: Sequence[Member]) -> list[str]:
    """The projects a person picks on a terminal, by name or number, or all; an answer
    naming something else is asked again; an empty one (or the end of input) picks none."""
    from tether.report.runs import PICK_QUESTION, not_registered, pick_lines
    from tether.runs.selection import picked_names

    names = [m.name for m in members]
    show("\n".join(pick_lines([(m.name, str(m.path)) for m in members])))
    while True:
        picked, unknown = picked_names(ask(PICK_QUESTION), names)
        if not unknown:
            return picked
        show(not_registered(unknown))


_GO_ON = {"s": "stop", "stop": "stop", "c": "continue", "continue": "continue"}


def _go_on(project: str, step: str, exit_code: int | None, left: int) -> bool:
    """After a failed project, on a terminal: stop here or go on with the rest. The end of
    input stops (the safe answer)."""
    question = (
        f"{project} failed at {step} (exit {exit_code}); {left} project(s) not yet applied. "
        "[s]top here or [c]ontinue with them? "
    )
    return one_of(ask, question, _GO_ON, at_end="stop") == "continue"


def _progress(as_json: bool) -> Callable[[str], None]:
    """The digest line per project: on stdout before the summary, on stderr under --json
    (stdout then carries the one document)."""
    out = sys.stderr if as_json else sys.stdout

    def line(text: str) -> None:
        out.write(text + "\n")
        out.flush()  # a digest line should show while the next project installs

    return line
