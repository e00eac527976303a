"""``tether deps scan|plan|apply``: move dependencies across the registered projects."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from tether.cli.common import add_json, print_json
from tether.cli.projects_cmd import add_registry
from tether.deps.align import POLICIES
from tether.deps.model import LEVELS
from tether.deps.registries import DEFAULT_JOBS, DEFAULT_RETRIES, DEFAULT_TIMEOUT
from tether.errors import TetherError, UsageError

if TYPE_CHECKING:
    from tether.deps.apply import ApplyRun
    from tether.deps.flow import Decided, Registries
    from tether.deps.scan import ScanResult
    from tether.fleet.registry import Registry
    from tether.fleet.rundir import RunFolder
    from tether.fleet.selection import Selection


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
    _add_apply_options(apply)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--level", required=True, choices=LEVELS, help="how far to move")
    parser.add_argument(
        "--projects", action="append", metavar="A,B", help="only these registered names"
    )
    parser.add_argument(
        "--keyword", action="append", default=[], metavar="K", help="only projects with K"
    )
    add_registry(parser)
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
    parser.add_argument(
        "--jobs", "-j", type=int, default=DEFAULT_JOBS, metavar="N", help="requests at once"
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S", help="seconds per request"
    )
    parser.add_argument(
        "--retries", type=int, default=DEFAULT_RETRIES, metavar="N", help="per request"
    )
    parser.add_argument(
        "--plan-dir", metavar="DIR", help="also write scan-by-project.json (and the plan) here"
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
        help="override families (default: .tether/deps-overrides.yaml here, if present)",
    )


def _add_apply_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--override-action",
        action="append",
        metavar="ID=ACTION",
        help="run-override, skip-matched or force-generic for one override entry",
    )
    parser.add_argument(
        "--exclude", action="append", metavar="A,B", help="leave these packages out"
    )
    parser.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    parser.add_argument("--no-install", action="store_true", help="edit the manifests only")
    parser.add_argument(
        "--continue-on-failure", action="store_true", help="go on after a project fails"
    )
    parser.add_argument(
        "--isolate",
        choices=("none", "branch", "worktree"),
        default="none",
        help="in place (default), on a new branch deps/<level>-<date>, or in a new worktree",
    )


def run(args: argparse.Namespace) -> int:
    from tether.deps import flow
    from tether.fleet.registry import load_registry, registry_path

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.action == "apply" and not (args.yes or sys.stdin.isatty()):
        raise TetherError(
            "not running on a terminal: pass --yes to apply the plan (nothing was written)"
        )
    min_age = flow.parse_age(args.min_release_age)
    registry = load_registry(registry_path(args.registry))  # read only, never written
    selection = _selection(registry, args)
    if selection is None:
        return 0
    config = _registries(args)
    fetcher = flow.make_fetcher(config, os.environ, Path.cwd())
    result = flow.scan(selection, args.level, config, fetcher, flow.system_now(), min_age)
    if args.action == "scan":
        return _scan(result, args)
    decided = _decided(result, args)
    if args.action == "plan":
        return _plan(result, decided, args)
    return _apply(result, decided, args)


def _registries(args: argparse.Namespace) -> Registries:
    from tether.deps.flow import Registries

    return Registries(
        args.npm_registry, args.pypi_index, args.node_index, args.jobs, args.timeout, args.retries
    )


def _selection(registry: Registry, args: argparse.Namespace) -> Selection | None:
    """The chosen projects, or None after saying why there are none (exit 0)."""
    from tether.fleet.selection import EMPTY_REGISTRY, NO_MATCH, select, split_names

    if not registry.projects:
        _say_empty(args, str(registry.path), EMPTY_REGISTRY, [])
        return None
    selection = select(registry, split_names(args.projects), args.keyword)
    if selection.matched_nothing:
        _say_empty(args, str(registry.path), NO_MATCH, list(selection.not_found))
        return None
    if not args.json:
        for line in selection.not_found_lines():
            print(line)
    return selection


def _say_empty(args: argparse.Namespace, registry: str, message: str, missing: list[str]) -> None:
    if args.json:
        print_json({"registry": registry, "message": message, "filter_not_found": missing})
        return
    for name in missing:
        print(f"Filter name not found: {name}")
    print(message)


def _scan(result: ScanResult, args: argparse.Namespace) -> int:
    from tether.deps.flow import write_plan_dir
    from tether.deps.scan import scan_document
    from tether.deps.summary import render_scan

    if args.plan_dir:
        write_plan_dir(Path(args.plan_dir), result, None)
    doc = scan_document(result)
    print_json(doc) if args.json else print(render_scan(doc))
    return 0


def _overrides_file(args: argparse.Namespace) -> Path | None:
    from tether.deps.overrides import default_path

    return Path(args.overrides) if args.overrides else default_path(Path.cwd())


def _decided(result: ScanResult, args: argparse.Namespace) -> Decided:
    from tether.deps.align import DEFAULT_POLICY
    from tether.deps.flow import plan_with_overrides

    policy = args.conflict_policy or DEFAULT_POLICY
    decided = plan_with_overrides(result, policy, _overrides_file(args))
    if args.action == "apply" and decided.plan.conflicts and not args.conflict_policy:
        chosen = _policy_for_conflicts(decided, args)
        if chosen != policy:
            decided = plan_with_overrides(result, chosen, _overrides_file(args))
    return decided


def _policy_for_conflicts(decided: Decided, args: argparse.Namespace) -> str:
    from tether.deps.gate import ask_policy

    names = ", ".join(p.label for p in decided.plan.conflicts)
    if args.yes:
        raise UsageError(
            f"{len(decided.plan.conflicts)} package(s) have conflicting targets ({names}): "
            "choose --conflict-policy use-max-where-possible|per-project|skip-package "
            "(nothing was written)"
        )
    out = _out(args)
    for package in decided.plan.conflicts:
        targets = ", ".join(
            f"{p.resolved.occurrence.project} {p.resolved.target_declared.shown}"
            for p in package.occurrences
        )
        out.write(f"conflict: {package.label}: highest {package.proposed_version}; {targets}\n")
    chosen = ask_policy(len(decided.plan.conflicts), _ask(args))
    if chosen is None:
        raise TetherError("no conflict policy chosen (nothing was written)")
    return chosen


def _plan(result: ScanResult, decided: Decided, args: argparse.Namespace) -> int:
    from tether.deps.flow import plan_json, write_plan_dir

    if args.plan_dir:
        write_plan_dir(Path(args.plan_dir), result, decided)
    print_json(plan_json(decided)) if args.json else print(_render_plan(decided))
    return 0


def _render_plan(decided: Decided) -> str:
    from tether.deps.flow import plan_json
    from tether.deps.summary import render_plan

    return render_plan(plan_json(decided))


def _apply(result: ScanResult, decided: Decided, args: argparse.Namespace) -> int:
    from tether.deps import flow
    from tether.deps.gate import check_exclude, split_names

    exclude = check_exclude(split_names(args.exclude), decided.plan)
    decisions = _override_decisions(decided, args)
    flow.settle(decided, decisions, exclude)
    if not flow.has_work(decided):
        return _finish(decided, None, "nothing", args, None)
    if not args.yes and not _approved(decided, args):
        return _finish(decided, None, "cancelled", args, None)
    return _run_apply(result, decided, args)


def _override_decisions(decided: Decided, args: argparse.Namespace) -> dict[str, str]:
    from tether.deps.gate import ask_override
    from tether.deps.overrides import parse_decisions

    decisions = parse_decisions(args.override_action, decided.overrides)
    if args.yes:
        return decisions  # the rest keep the default: run the file's command
    for override in decided.overrides:
        if override.entry.id not in decisions:
            chosen = ask_override(override, _ask(args))
            if chosen is None:
                raise TetherError(f"no decision for override {override.entry.id} (nothing written)")
            decisions[override.entry.id] = chosen
    return decisions


def _approved(decided: Decided, args: argparse.Namespace) -> bool:
    from tether.deps.flow import settle
    from tether.deps.gate import ask_gate

    out = _out(args)
    out.write(_render_plan(decided) + "\n")
    count = sum(1 for p in decided.plan.packages if p.applies)
    answer = ask_gate(decided.plan, count, _ask(args), _say(out))
    if answer.approved and answer.excluded:
        settle(decided, {}, answer.excluded)
    return answer.approved


def _run_apply(result: ScanResult, decided: Decided, args: argparse.Namespace) -> int:
    from tether.deps import flow
    from tether.deps.apply import ApplyOptions
    from tether.fleet.rundir import RunFolder

    folder = RunFolder.create()
    flow.write_plan_dir(folder.root, result, decided)
    if args.plan_dir:
        flow.write_plan_dir(Path(args.plan_dir), result, decided)
    options = ApplyOptions(
        args.level,
        flow.system_now().date(),
        install=not args.no_install,
        continue_on_failure=args.continue_on_failure,
        isolate=args.isolate,
        env=_tool_env(args),
    )
    run = flow.execute(decided, options, folder, _say(_out(args)))
    return _finish(decided, run, run.status, args, folder)


def _tool_env(args: argparse.Namespace) -> dict[str, str] | None:
    """The install uses the registry the targets came from when one was named."""
    if not args.npm_registry or "://" not in args.npm_registry:
        return None
    return {**os.environ, "npm_config_registry": args.npm_registry}


def _finish(
    decided: Decided,
    run: ApplyRun | None,
    status: str,
    args: argparse.Namespace,
    folder: RunFolder | None,
) -> int:
    from tether.deps.summary import render_summary, summary_document

    meta = {
        "level": args.level,
        "runId": folder.run_id if folder else None,
        "runDir": str(folder.root) if folder else None,
        "conflictPolicy": decided.plan.policy,
        "isolate": args.isolate,
        "install": not args.no_install,
        "continueOnFailure": args.continue_on_failure,
    }
    doc = summary_document(decided.plan, decided.overrides, run, status, meta)
    text = render_summary(doc)
    if folder is not None:
        folder.write(folder.root / "summary.json", [json.dumps(doc, indent=2)])
        folder.write(folder.root / "summary.md", [text])
    print_json(doc) if args.json else print(text)
    if status == "interrupted":
        return 130
    return 1 if doc["failed"] else 0


def _out(args: argparse.Namespace) -> TextIO:
    # With --json stdout carries one document only; questions and digests go to stderr.
    return sys.stderr if args.json else sys.stdout


def _ask(args: argparse.Namespace) -> Callable[[str], str]:
    out = _out(args)

    def ask(question: str) -> str:
        out.write(question)
        out.flush()
        return sys.stdin.readline().strip()

    return ask


def _say(out: TextIO) -> Callable[[str], None]:
    def say(line: str) -> None:
        out.write(line + "\n")
        out.flush()  # a digest line should show while the next project installs

    return say
