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

import contextlib
import os
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import IO, Any

from tether import progress
from tether.deps import steps
from tether.deps.align import Plan
from tether.deps.edit import Change, EditError, prepare, sweep_temps, write
from tether.deps.overrides import BoundOverride, commands_for
from tether.deps.owed import PENDING, OwedLedger
from tether.deps.steps import StepLog
from tether.errors import Exit, TetherError
from tether.process import Finished, child_env
from tether.process import run as run_program
from tether.runs.isolation import DEFAULT_MODE, Isolation, Target, isolate
from tether.runs.rundir import RunFolder
from tether.sources.limits import INSTALL_TIME, OVERRIDE_TIME, TimeLimit
from tether.state.lock import ProjectLock

# The install after a bump is there to rewrite the lockfile. Under CI (``CI=true``) pnpm
# defaults to a frozen lockfile and yarn berry to an immutable one, and a project's own config
# can ask for either anywhere: both then refuse the very change the bump needs, so the
# command says so. yarn 1 never freezes on its own and ignores ``--no-immutable``.
INSTALL = {
    "npm": ["npm", "install"],
    "pnpm": ["pnpm", "install", "--no-frozen-lockfile"],
    "yarn": ["yarn", "install", "--no-immutable"],
    "bun": ["bun", "install"],
    # Deno 2 installs a package.json's dependencies and writes deno.lock.
    "deno": ["deno", "install"],
}
# Where each package manager reads its default registry from the environment: npm, yarn 1,
# pnpm up to 10 and bun read ``npm_config_registry``; pnpm 11+ only ``pnpm_config_registry``;
# yarn berry only ``YARN_NPM_REGISTRY_SERVER``.
REGISTRY_ENV = ("npm_config_registry", "pnpm_config_registry", "YARN_NPM_REGISTRY_SERVER")
PYTHON_LOCK = {"uv": ["uv", "lock"], "poetry": ["poetry", "lock"], "pdm": ["pdm", "lock"]}
# After a project failed, whether to go on with the rest: (project, step, exit code, how
# many projects are left) → True to go on.
GoOn = Callable[[str, str, int | None, int], bool]


@dataclass(frozen=True)
class Bump:
    package: str
    ecosystem: str
    current: str
    target: str
    change: Change

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.package,
            "ecosystem": self.ecosystem,
            "current_version": self.current,
            "target_version": self.target,
            "location": self.change.locus.location,
            "source_file": self.change.locus.source_file,
        }

    def line(self) -> str:
        where = f"{self.change.locus.source_file} {self.change.locus.location}"
        return f"{self.package} {self.current} → {self.target} ({where})"


@dataclass
class ProjectWork:
    name: str
    root: Path
    package_manager: str | None
    python_tool: str | None
    bumps: list[Bump] = field(default_factory=list)
    # From the project to its workspace root, where the bumps' paths start and the install
    # runs ("." for a project that is its own root).
    workspace: str = "."
    owed: list[list[str]] = field(default_factory=list)  # installs an earlier run owes
    overrides: list[BoundOverride] = field(default_factory=list)
    # Members of one workspace share one install, run by the last of them in registry order:
    # ``install_with`` names that member (None: the project runs its own), and the member
    # that runs it ``covers`` the others (its install is theirs too).
    install_with: str | None = None
    covers: list[ProjectWork] = field(default_factory=list)

    @property
    def install_root(self) -> Path:
        """The folder the install runs in: the workspace root (the project itself when it
        is its own root)."""
        return Path(os.path.normpath(self.root / self.workspace)).resolve()


@dataclass
class Step:
    name: str  # isolation | edit | override:<id> | install (a failed_step may also be lock)
    command: str
    exit_code: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.name,
            "command": self.command,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class ProjectResult:
    work: ProjectWork
    log: Path
    state: str = "pending"  # pending | applied | failed | skipped (isolation not possible)
    steps: list[Step] = field(default_factory=list)
    failed_step: str | None = None
    exit_code: int | None = None
    error: str = ""
    isolation: Isolation | None = None
    files: list[str] = field(default_factory=list)
    running: str | None = None  # the step under way (what a Ctrl-C interrupts)


@dataclass(frozen=True)
class ApplyOptions:
    level: str
    day: date
    install: bool = True
    continue_on_failure: bool = False
    isolate: str = DEFAULT_MODE
    isolate_asked: bool = False  # --isolate was given (not the default)
    env: Mapping[str, str] | None = None  # the tools' environment (None: tether's own)
    # How long each install (or lock) and each override command may run before its process
    # group is stopped (``TETHER_LIMIT_INSTALL_SECONDS``, ``TETHER_LIMIT_OVERRIDE_SECONDS``).
    install_seconds: float = INSTALL_TIME.default
    override_seconds: float = OVERRIDE_TIME.default

    def time_limit(self, step: str) -> tuple[float, TimeLimit]:
        """The seconds a step's program may run, and the limit that sets them."""
        if step == "install":
            return self.install_seconds, INSTALL_TIME
        return self.override_seconds, OVERRIDE_TIME


@dataclass
class ApplyRun:
    results: list[ProjectResult]
    status: str = "done"  # done | stopped | interrupted


@dataclass(frozen=True)
class Records:
    """What a run keeps durably as it goes: the installs it owes and its steps."""

    owed: OwedLedger
    steps: StepLog


def works_from_plan(
    plan: Plan,
    bound: Sequence[BoundOverride],
    owed: Mapping[str, Sequence[Sequence[str]]] | None = None,
) -> list[ProjectWork]:
    """One unit per project that has a bump, an override to run or an install an earlier
    run owes (``owed``: project → its install commands), registry order."""
    works = {
        p.name: ProjectWork(
            p.name,
            p.root,
            p.package_manager,
            p.python_tool,
            workspace=os.path.relpath(p.edit_root.resolve(), p.root.resolve()),
        )
        for p in plan.scan.scanned
    }
    for package in plan.packages:
        if not package.applies:
            continue
        for planned in package.occurrences:
            if not planned.changes:
                continue
            occurrence = planned.resolved.occurrence
            declared, new = occurrence.declared, planned.effective_declared
            change = Change(occurrence.locus, declared.raw, new.raw)
            works[occurrence.project].bumps.append(
                Bump(occurrence.name, occurrence.ecosystem, declared.shown, new.shown, change)
            )
    for name, work in works.items():
        work.overrides = commands_for(list(bound), name)
        work.owed = [list(c) for c in (owed or {}).get(name, ())]
    kept = [w for w in works.values() if w.bumps or w.overrides or w.owed]
    _share_installs(kept)
    return kept


def _share_installs(works: Sequence[ProjectWork]) -> None:
    """Registered packages of one workspace install once, after the last of them is
    edited: the lockfile is the workspace root's, and an install per member would rewrite
    it again for each."""
    groups: dict[tuple[Path, str | None], list[ProjectWork]] = {}
    for work in works:
        groups.setdefault((work.install_root, work.package_manager), []).append(work)
    for members in groups.values():
        *earlier, last = members
        for work in earlier:
            work.install_with = last.name
            last.covers.append(work)


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
        tell(digest(index, len(works), result))
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
    result.error = f"{PENDING} (interrupted)" if owed else "interrupted"


def _ask_go_on(result: ProjectResult, left: int, go_on: GoOn | None) -> bool:
    if not left or go_on is None:
        return False
    return go_on(result.work.name, result.failed_step or "", result.exit_code, left)


def digest(index: int, count: int, result: ProjectResult) -> str:
    head = f"[{index + 1}/{count}] {result.work.name}:"
    if result.state == "skipped" and result.isolation is not None:
        return f"{head} skipped, {result.isolation.note}"
    if result.state == "failed":
        return (
            f"{head} FAILED at {result.failed_step} (exit {result.exit_code}): {result.error}; "
            f"log {result.log}"
        )
    parts = [f"{len(result.work.bumps)} bump(s) in {len(result.files)} file(s)"]
    parts += [f"{step.name} ok ({step.seconds:.1f}s)" for step in result.steps]
    return f"{head} " + ", ".join(parts)


def _apply_one(result: ProjectResult, options: ApplyOptions, records: Records) -> None:
    work = result.work
    with open(result.log, "a", encoding="utf-8", errors="replace") as log:
        _say(log, f"project {work.name} ({work.root})")
        try:
            release = _lock_project(work.root)
        except TetherError as error:
            _fail(result, log, "lock", Exit.ERROR, f"{work.root}: {error}")
            return
        records.steps.append(steps.LOCKED, work.name)
        try:
            _apply_locked(result, options, log, records)
        finally:
            release()
        records.steps.append(steps.RELEASED, work.name, state=result.state)


LOCK_COMMAND = "deps apply"  # who holds a lock, as its file records it


def _lock_project(root: Path) -> Callable[[], None]:
    """Take the lock ``update`` and ``init`` take on ``root`` (docs/init.md), for while the
    project is isolated, edited and installed; returns its release. A folder without a
    tether install is locked where ``init`` would lock it, and on release the lock file and
    the folders holding it (when nothing else is in them) go again, so a project that is
    not tether's keeps no trace of it. Raises TetherError, naming the holder, while another
    run holds it."""
    from tether.flows.project import profile_for_new_install

    if not root.is_dir():
        return lambda: None  # nothing to lock: the isolation reports the missing folder
    profile = profile_for_new_install(root, None)
    path = root / profile.lock_file
    # Removed again on release: a lock in a folder tether does not manage that this run
    # makes, or that an earlier deps apply left (killed while it held it, or emptied).
    ours = not (root / profile.state_file).is_file() and _left_by_deps(path)
    lock = ProjectLock(path, command=LOCK_COMMAND)
    lock.acquire()

    def release() -> None:
        try:
            if ours:
                _leave_no_lock(root, path)
        finally:
            lock.release()

    return release


def _left_by_deps(path: Path) -> bool:
    """No lock file yet, or one that names nobody or an earlier ``deps apply``."""
    from tether.state.lock import read_owner

    if not os.path.lexists(path):
        return True
    if path.is_symlink() or not path.is_file():
        return False
    owner = read_owner(path)
    return owner is None or owner.command == LOCK_COMMAND


def _leave_no_lock(root: Path, path: Path) -> None:
    """The lock file (while still held), then each folder between it and ``root`` that is
    left empty, innermost first: a folder with anything else in it stays."""
    with contextlib.suppress(OSError):
        path.unlink()
    folder = path.parent
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def sweep_stale_lock(root: Path) -> None:
    """A lock an earlier ``deps apply`` left in a folder tether does not manage (killed
    while it held it): nobody holds it now, so it is taken and removed with its empty
    folders. A lock another command wrote, or one held right now, is left alone."""
    from tether.flows.project import profile_for_new_install

    if not root.is_dir():
        return
    profile = profile_for_new_install(root, None)
    path = root / profile.lock_file
    if (root / profile.state_file).is_file() or not path.is_file() or not _left_by_deps(path):
        return
    try:
        release = _lock_project(root)
    except TetherError:
        return  # held: a run is working there now
    release()


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
    _say(log, result.isolation.describe())
    records.steps.append(steps.ISOLATED, work.name, used=result.isolation.used)
    if result.isolation.used == "skipped":
        result.state = "skipped"
        _say(log, "== result: skipped, nothing written")
        return
    root = result.isolation.root
    workspace = Path(os.path.normpath(root / work.workspace))
    if not _edit(result, workspace, log, records, installs):
        return
    for override in work.overrides:
        if not _run(result, f"override:{override.entry.id}", override.argv(), root, log, options):
            return
    if work.install_with is not None and installs:
        _say(log, f"== install: with {work.install_with} (one install for the workspace)")
        result.state = "applied"
        _say(log, "== result: applied, install owed until it runs")
        return
    for argv in installs:
        ran = _run(result, "install", argv, workspace, log, options)
        records.steps.append(
            steps.INSTALL_FINISHED, work.name, exit_code=result.steps[-1].exit_code
        )
        if not ran:
            if result.files or work.owed:
                result.error = f"{PENDING} ({result.error})"
            return
    if installs:
        for settled in (work, *work.covers):
            records.owed.settled(settled.name, settled.root)
            records.steps.append(steps.OWED_SETTLED, settled.name)
    result.state = "applied"
    _say(log, "== result: applied")


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
        reason = (
            f"{', '.join(found.refused)} is in the checkout but neither committed nor "
            "git-ignored, so the install in the worktree could not read it without it "
            "becoming a file to commit there"
        )
        note = f"worktree isolation not possible: {reason}"
        return replace(isolation, used="skipped", root=work.root, note=note)
    notes = [n for n in (isolation.note, found.note()) if n]
    return replace(isolation, note="; ".join(notes))


def isolation_target(options: ApplyOptions) -> Target:
    """``deps/<level>-<YYYY-MM-DD>``; its worktree ``<repository>-tether-deps-<level>-<date>``."""
    day = options.day.isoformat()
    return Target(f"deps/{options.level}-{day}", f"deps-{options.level}-{day}")


def install_commands(work: ProjectWork, options: ApplyOptions) -> list[list[str]]:
    """One install per ecosystem the bumps touched, and any install an earlier run owes;
    none for override-only projects. A member whose install another runs owes these until
    that one succeeds; the member that runs it runs its own and those of every member it
    covers."""
    if not options.install or options.level == "engines":
        return []
    commands = list(work.owed)
    if any(b.ecosystem == "npm" for b in work.bumps) and work.package_manager in INSTALL:
        commands.append(INSTALL[work.package_manager])
    if any(b.ecosystem == "pypi" for b in work.bumps) and work.python_tool in PYTHON_LOCK:
        commands.append(PYTHON_LOCK[work.python_tool])
    for member in work.covers:
        commands += install_commands(member, options)
    return [list(c) for c in dict.fromkeys(tuple(c) for c in commands)]


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
    _say(log, "== edit")
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
        _say(log, f"  {bump.line()}")
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
    _say(log, f"== {step}: {command}")
    started = time.monotonic()
    result.running = step
    seconds, limit = options.time_limit(step)
    with progress.phase(f"{result.work.name}: {step}", None, "steps"):
        finished = run_logged(argv, root, log, options.env, seconds, limit.variable)
    result.running = None
    code = finished.code()
    result.steps.append(Step(step, command, code, time.monotonic() - started))
    _say(log, f"== {step} exit code {code}")
    if not finished.ok:
        _fail(result, log, step, code, _failure(command, finished))
        return False
    return True


def _failure(command: str, finished: Finished) -> str:
    """``npm install exited with 1``; ``npm install timed out after 5 s (… sets it); its
    process group was stopped``."""
    if finished.timed_out:
        return finished.failure(command)
    return f"{command} exited with {finished.code()}"


def registry_env(env: Mapping[str, str], registry: str) -> dict[str, str]:
    """``env`` with ``registry`` as every package manager's default registry."""
    return {**env, **dict.fromkeys(REGISTRY_ENV, registry)}


def run_logged(
    argv: list[str],
    cwd: Path,
    log: IO[str],
    env: Mapping[str, str] | None,
    seconds: float | None,
    limit: str | None = None,
) -> Finished:
    """Run a tool with stdin closed and every line of its output in the log, through the
    process edge: stopped with its process group after ``seconds`` or on Ctrl-C."""
    finished = run_program(
        argv, cwd=cwd, env=child_env(env), output=log, timeout=seconds, limit=limit
    )
    if finished.not_found:
        _say(log, f"{argv[0]}: not found on PATH")
    elif not finished.started:
        _say(log, f"{argv[0]}: {finished.error}")
    elif finished.timed_out:
        _say(log, f"{argv[0]}: {finished.describe()}")
    return finished


def _fail(result: ProjectResult, log: IO[str], step: str, code: int, error: str) -> None:
    result.state, result.failed_step, result.exit_code, result.error = "failed", step, code, error
    _say(log, f"== failed at {step}: {error}")


def _say(log: IO[str], line: str) -> None:
    log.write(line + "\n")
    log.flush()
