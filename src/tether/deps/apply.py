"""Carry an approved plan out, project by project in registry order.

Per project: set the isolation up (a project whose requested isolation cannot be had is
skipped, never edited in place), edit the manifests in place (all files prepared and
proven first, then written), run the override commands it is affected by, then one install
with its package manager (not when ``--no-install``, nor when only override commands ran).
Every tool's output goes to the project's log in the run folder; the caller gets a one-line
digest per project. The first failure stops the run unless told to go on: the projects
after it stay ``pending``. Nothing is committed or pushed.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from tether import progress
from tether.deps import steps
from tether.deps.edit import EditError, prepare, sweep_temps, write
from tether.deps.owed import OwedLedger
from tether.deps.programs import install_commands, log_line, run_logged
from tether.deps.project_lock import lock_project
from tether.deps.steps import StepLog
from tether.deps.work import ApplyOptions, ApplyRun, ProjectResult, ProjectWork, Step
from tether.errors import Exit, TetherError
from tether.report.deps import (
    EDIT_SECTION,
    INTERRUPTED,
    apply_digest,
    bump_log_line,
    config_carried,
    config_not_carried,
    exit_log_line,
    failed_log_line,
    install_pending,
    install_with_log_line,
    lock_failure,
    program_failure_line,
    project_log_header,
    result_log_line,
    step_log_line,
)
from tether.report.runs import isolation_line
from tether.runs.isolation import Isolation, Target, isolate
from tether.runs.rundir import RunFolder

# After a project failed, whether to go on with the rest: (project, step, exit code, how
# many projects are left) → True to go on.
GoOn = Callable[[str, str, int | None, int], bool]


@dataclass(frozen=True)
class Records:
    """What a run keeps durably as it goes: the installs it owes and its steps."""

    owed: OwedLedger
    steps: StepLog


def apply_projects(
    works: Sequence[ProjectWork],
    options: ApplyOptions,
    folder: RunFolder,
    tell: Callable[[str], None] = lambda line: None,
    go_on: GoOn | None = None,
) -> ApplyRun:
    """Each project in turn, its digest line told once it is done (``tell``). After a
    failure the run stops, unless told to go on (``continue_on_failure``) or ``go_on`` (a
    person asked at that moment) says so."""
    run = ApplyRun(
        [ProjectResult(w, folder.log_path(i, len(works), w.name)) for i, w in enumerate(works)]
    )
    records = Records(OwedLedger(folder), StepLog(folder))
    for index, result in enumerate(run.results):
        try:
            with progress.phase(f"[{index + 1}/{len(works)}] {result.work.name}", None, "steps"):
                _apply_one(result, options, records)
        except KeyboardInterrupt:
            _interrupted(result)
            run.status = "interrupted"
            return run
        tell(apply_digest(index, len(works), result))
        if result.state == "failed" and not options.continue_on_failure:
            try:
                going_on = _ask_go_on(result, len(works) - index - 1, go_on)
            except KeyboardInterrupt:
                run.status = "interrupted"
                return run
            if not going_on:
                run.status = "stopped"
                break
    return run


def _interrupted(result: ProjectResult) -> None:
    """Ctrl-C stopped the project at its current step; an install it cut short stays owed
    (the ledger noted it before the manifests were written)."""
    step = result.running or "apply"
    result.state, result.failed_step, result.exit_code = "failed", step, Exit.INTERRUPTED
    owed = step == "install" and (result.files or result.work.owed)
    result.error = install_pending(INTERRUPTED) if owed else INTERRUPTED


def _ask_go_on(result: ProjectResult, left: int, go_on: GoOn | None) -> bool:
    if not left or go_on is None:
        return False
    return go_on(result.work.name, result.failed_step or "", result.exit_code, left)


def _apply_one(result: ProjectResult, options: ApplyOptions, records: Records) -> None:
    work = result.work
    with open(result.log, "a", encoding="utf-8", errors="replace") as log:
        log_line(log, project_log_header(work.name, work.root))
        try:
            release = lock_project(work.root)
        except TetherError as error:
            _fail(result, log, "lock", Exit.ERROR, lock_failure(work.root, error))
            return
        records.steps.append(steps.LOCKED, work.name)
        try:
            _apply_locked(result, options, log, records)
        finally:
            release()
        records.steps.append(steps.RELEASED, work.name, state=result.state)


def _apply_locked(
    result: ProjectResult, options: ApplyOptions, log: IO[str], records: Records
) -> None:
    work = result.work
    result.isolation = isolate(
        work.root,
        options.isolate,
        isolation_target(options),
        switch=True,
        skip=True,
        in_place_outside_git=not options.isolate_asked,
        workspace=Path(os.path.normpath(work.root / work.workspace))
        if work.workspace != "."
        else None,
    )
    installs = install_commands(work, options)
    if result.isolation.used == "worktree":
        result.isolation = _carry_config(result.isolation, work, bool(installs))
    log_line(log, isolation_line(result.isolation))
    records.steps.append(steps.ISOLATED, work.name, used=result.isolation.used)
    if result.isolation.used == "skipped":
        result.state = "skipped"
        log_line(log, result_log_line("skipped"))
        return
    root = result.isolation.root
    workspace = Path(os.path.normpath(root / work.workspace))
    if not _edit(result, workspace, log, records, installs):
        return
    for override in work.overrides:
        if not _run(result, f"override:{override.entry.id}", override.argv(), root, log, options):
            return
    if work.install_with is not None and installs:
        log_line(log, install_with_log_line(work.install_with))
        result.state = "applied"
        log_line(log, result_log_line("applied", install_owed=True))
        return
    for argv in installs:
        ran = _run(result, "install", argv, workspace, log, options)
        records.steps.append(
            steps.INSTALL_FINISHED, work.name, exit_code=result.steps[-1].exit_code
        )
        if not ran:
            if result.files or work.owed:
                result.error = install_pending(result.error)
            return
    if installs:
        for settled in (work, *work.covers):
            records.owed.settled(settled.name, settled.root)
            records.steps.append(steps.OWED_SETTLED, settled.name)
    result.state = "applied"
    log_line(log, result_log_line("applied"))


def _carry_config(isolation: Isolation, work: ProjectWork, installs: bool) -> Isolation:
    """The project's git-ignored package-manager configuration into its worktree, so the
    install there reads the registries the plan read (``tether.deps.carry``). A file the
    checkout has that is neither committed nor ignored cannot be carried safely: with an
    install to run, worktree isolation is then not possible."""
    from tether import git
    from tether.deps.carry import carry, folders_between

    top = git.work_tree_top(work.root)
    if top is None or isolation.worktree is None:
        return isolation
    workspace = Path(os.path.normpath(work.root / work.workspace))
    found = carry(top, isolation.worktree, folders_between(top, workspace, work.root))
    if found.refused and installs:
        note = config_not_carried(found.refused)
        return replace(isolation, used="skipped", root=work.root, remark=None, added=(note,))
    carried = config_carried(found.carried)
    return replace(isolation, added=(carried,)) if carried else isolation


def isolation_target(options: ApplyOptions) -> Target:
    """``deps/<level>-<YYYY-MM-DD>``; its worktree ``<repository>-tether-deps-<level>-<date>``."""
    day = options.day.isoformat()
    return Target(f"deps/{options.level}-{day}", f"deps-{options.level}-{day}")


def _edit(
    result: ProjectResult,
    root: Path,
    log: IO[str],
    records: Records,
    installs: Sequence[Sequence[str]],
) -> bool:
    """Prepare and prove every file, then write them; the install is noted as owed first,
    so no kill between the two can forget it."""
    work = result.work
    if not work.bumps:
        return True
    log_line(log, EDIT_SECTION)
    started = time.monotonic()
    changes = [b.change for b in work.bumps]

    def written(rel: str) -> None:
        records.steps.append(steps.FILE_WRITTEN, work.name, path=rel)

    try:
        with progress.phase(f"{work.name}: edit", len(changes), "bumps") as step:
            sweep_temps(root, changes)
            files = prepare(root, changes)
            step.advance(len(changes))
            if files and installs:
                records.owed.owe(work.name, work.root, installs)
                records.steps.append(steps.OWED_NOTED, work.name)
            write(root, files, written)
    except (EditError, OSError) as error:
        _fail(result, log, "edit", Exit.ERROR, str(error))
        return False
    for bump in work.bumps:
        log_line(log, bump_log_line(bump))
    result.files = sorted(files)
    result.steps.append(Step("edit", "", 0, time.monotonic() - started))
    return True


def _run(
    result: ProjectResult,
    step: str,
    argv: list[str],
    root: Path,
    log: IO[str],
    options: ApplyOptions,
) -> bool:
    command = shlex.join(argv)
    log_line(log, step_log_line(step, command))
    started = time.monotonic()
    result.running = step
    seconds, limit = options.time_limit(step)
    with progress.phase(f"{result.work.name}: {step}", None, "steps"):
        finished = run_logged(argv, root, log, options.env, seconds, limit.variable)
    result.running = None
    code = finished.code()
    result.steps.append(Step(step, command, code, time.monotonic() - started))
    log_line(log, exit_log_line(step, code))
    if not finished.ok:
        _fail(result, log, step, code, program_failure_line(command, finished))
        return False
    return True


def _fail(result: ProjectResult, log: IO[str], step: str, code: int, error: str) -> None:
    result.state, result.failed_step, result.exit_code, result.error = "failed", step, code, error
    log_line(log, failed_log_line(step, error))
