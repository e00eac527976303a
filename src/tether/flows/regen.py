"""Run a region's regeneration program, confined to the region's declared paths.

The program comes from the release, so it is trusted to do its job but not to do more:
tether refuses commands that could reach outside the project, backs the declared paths
up, and after the program exits puts back every file it changed outside those paths.
A failure never raises; it comes back as an outcome carrying the command to run by hand.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Final, Literal

from tether import process
from tether.engine.regions import RegenSpec, RegionDecl
from tether.errors import TetherError
from tether.flows.backups import back_up
from tether.flows.lifecycle_plan import ProgramCode, ProgramWhy, program_end
from tether.flows.safety import PathGuard, UnsafePath, open_without_links
from tether.fsio import read_bytes
from tether.pathrules import program_name_problem, relpath_problem
from tether.sources.limits import REGEN_TIME, TimeLimit

Status = Literal["regenerated", "failed", "refused", "skipped"]

# Never watched: git's own data, and tether's state (backups, journal, lock live there).
DEFAULT_EXCLUDE: Final = frozenset({".git", ".tether"})
# Pre-run copies of files outside the declared paths are kept in memory up to this many
# bytes; beyond it a file is watched by metadata only and cannot be put back if changed.
SNAPSHOT_BUDGET: Final = 64 * 1024 * 1024
TAIL_LINES: Final = process.TAIL_LINES


class NotRun(StrEnum):
    """Why a region's program did not run, or could not start: a fact of its outcome
    (``NotRunWhy``), worded by ``report/reasons.regen_reason``."""

    PROGRAMS_OFF = "programs-off"  # ``detail``: the switch that stops every release program
    HELD_BACK = "held-back"  # ``held``: what stopped it, path by path
    NO_PROGRAM = "no-program"  # the region declares no program
    OPERAND_NOT_A_FILE = "operand-not-a-file"  # ``detail``: the operand
    NO_TIME_LIMIT = "no-time-limit"  # ``detail``: what is wrong with the limit's variable
    BACKUP_FAILED = "backup-failed"  # ``detail``: the error backing the declared paths up
    LOG_FAILED = "log-failed"  # ``detail``: the error writing the log


class HeldBy(StrEnum):
    """What holds a region's program back, for one path."""

    CONFLICT = "conflict"  # a declared path is left in conflict
    DELETED = "deleted"  # a declared path was deleted by the adopter
    YOURS = "yours"  # a declared path is the adopter's (tether own)
    INPUT_UNRECONCILED = "input-unreconciled"  # an input fell back to a whole-file conflict


@dataclass(frozen=True)
class NotRunWhy:
    code: NotRun
    detail: str = ""
    held: tuple[tuple[HeldBy, str], ...] = ()


@dataclass(frozen=True)
class RegenOutcome:
    """What happened to one region's regeneration.

    ``reverted_paths`` lists files tether put back: outside the declared paths always, and
    the declared paths too when the run failed (a failed run leaves the project as it was).
    ``new_outside_paths`` are files the program created outside the declared paths; they
    are kept (tether never deletes bytes it cannot restore) and reported.
    ``unrestored_paths`` changed but could not be put back; ``unrestored`` says why for
    each (no pre-run copy, the path guard refused: a folder on the way became a link
    leading out of the project, and tether never writes through it, or the write failed).
    """

    region_id: str
    status: Status
    command: str
    reason: str = ""
    exit_code: int | None = None
    could_not_start: bool = False
    rewritten_paths: tuple[str, ...] = ()
    reverted_paths: tuple[str, ...] = ()
    new_outside_paths: tuple[str, ...] = ()
    unrestored_paths: tuple[str, ...] = ()
    # Why each of them was not put back, as a fact, one per unrestored path: the document's
    # ``unrestored_reasons`` are their words (``report/reasons.regen_document``).
    unrestored: tuple[NotRestored, ...] = ()
    backed_up_paths: tuple[str, ...] = ()
    log_path: Path | None = None
    output_tail: str = ""
    # Why it did not run or start, as a fact (``reason`` is then empty): the document's
    # ``reason`` is its words (``report/reasons.regen_document``).
    why: NotRunWhy | None = None
    # Why its program was refused, and how it ended once it ran or tried to (``reason`` is
    # then empty): worded by ``report/reasons.regen_reason`` too.
    refused: ProgramWhy | None = None
    ended: ProgramWhy | None = None

    def document(self) -> dict[str, object]:
        """The outcome's document, with ``reason`` as given and ``unrestored_reasons``
        empty (report/ words a ``why`` and each ``unrestored``)."""
        return {
            "id": self.region_id,
            "status": self.status,
            "command": self.command,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "could_not_start": self.could_not_start,
            "rewritten_paths": list(self.rewritten_paths),
            "reverted_paths": list(self.reverted_paths),
            "new_outside_paths": list(self.new_outside_paths),
            "unrestored_paths": list(self.unrestored_paths),
            "unrestored_reasons": {},
            "backed_up_paths": list(self.backed_up_paths),
            "log_path": str(self.log_path) if self.log_path else None,
        }


def command_line(decl: RegionDecl) -> str:
    """The literal command, shell-quoted, to run by hand from the project root."""
    return decl.regenerate.command_line if decl.regenerate else ""


def skipped_outcome(decl: RegionDecl, why: NotRunWhy) -> RegenOutcome:
    """For a region the caller decided not to regenerate (left in conflict, deleted…)."""
    return RegenOutcome(decl.id, "skipped", command_line(decl), why=why)


def _not_started(decl: RegionDecl, command: str, code: NotRun, detail: str) -> RegenOutcome:
    why = NotRunWhy(code, detail)
    return RegenOutcome(decl.id, "failed", command, could_not_start=True, why=why)


# --- refusal -------------------------------------------------------------------------------


def operand_refusal(project_root: Path, operand: str, shipped_paths: set[str]) -> ProgramWhy | None:
    """Why a release program's operand must not run, as a fact, or None."""
    problem = relpath_problem(operand)
    if problem:
        return ProgramWhy(ProgramCode.OPERAND_UNSAFE, operand=operand, detail=problem)
    if operand not in shipped_paths:
        return ProgramWhy(ProgramCode.OPERAND_NOT_RELEASED, operand=operand)
    root = project_root.resolve()
    if not (root / operand).resolve().is_relative_to(root):
        return ProgramWhy(ProgramCode.OPERAND_OUTSIDE, operand=operand)
    return None


def program_refusal(
    project_root: Path, spec: RegenSpec, shipped_paths: set[str]
) -> ProgramWhy | None:
    """Why the command must not run at all, or None. A bare program name is looked up on
    PATH; a path or a shell snippet could run anything."""
    problem = program_name_problem(spec.interpreter)
    if problem:
        return ProgramWhy(ProgramCode.INTERPRETER_UNSAFE, program=spec.interpreter, detail=problem)
    return operand_refusal(project_root, spec.operand, shipped_paths)


# --- tree snapshot ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """A file or link as it was: metadata to notice a change, bytes to undo it."""

    is_link: bool
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    mode: int
    target: str | None = None
    content: bytes | None = field(default=None, repr=False)

    def same_metadata(self, other: _Entry) -> bool:
        # ctime moves on every write and cannot be set back by the program, so a tool
        # that restores mtime after writing is still noticed.
        keys = ("is_link", "size", "mtime_ns", "ctime_ns", "ino", "mode", "target")
        return all(getattr(self, key) == getattr(other, key) for key in keys)


_Snapshot = dict[str, _Entry]


def _walk(root: Path, exclude: frozenset[str]) -> Iterator[tuple[str, os.stat_result]]:
    """Regular files and links under ``root`` (relative POSIX path, lstat), links not followed."""
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        try:
            scanner = os.scandir(root / rel_dir if rel_dir else root)
        except OSError:
            continue  # unreadable folder: the program cannot be watched there either way
        with scanner:
            for item in scanner:
                rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
                if rel in exclude:
                    continue
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished while listing
                if stat.S_ISDIR(info.st_mode):
                    pending.append(rel)
                elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    yield rel, info


def _entry(path: Path, info: os.stat_result, keep_content: bool) -> _Entry:
    is_link = stat.S_ISLNK(info.st_mode)
    content = read_bytes(path) if keep_content and not is_link else None
    return _Entry(
        is_link=is_link,
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        ctime_ns=info.st_ctime_ns,
        ino=info.st_ino,
        mode=stat.S_IMODE(info.st_mode),
        target=os.readlink(path) if is_link else None,
        content=content,
    )


def _snapshot(
    root: Path, exclude: frozenset[str], always_keep: set[str], budget: int | None
) -> _Snapshot:
    """The tree's files; bytes kept for ``always_keep`` and for others while ``budget`` lasts
    (``budget`` None: keep no bytes, used for the after-run look)."""
    snapshot: _Snapshot = {}
    remaining = budget or 0
    for rel, info in _walk(root, exclude):
        keep = budget is not None and (rel in always_keep or info.st_size <= remaining)
        if keep and rel not in always_keep:
            remaining -= info.st_size
        try:
            snapshot[rel] = _entry(root / rel, info, keep)
        except OSError:
            continue  # vanished or unreadable between listing and reading
    return snapshot


def _differs(root: Path, rel: str, before: _Entry, after: _Entry) -> bool:
    if before.same_metadata(after):
        return False
    if before.is_link or after.is_link or before.content is None:
        return True
    # Rewritten with the same bytes (only ctime moved) is no change.
    try:
        return before.mode != after.mode or read_bytes(root / rel) != before.content
    except OSError:
        return True


@dataclass(frozen=True)
class _Changes:
    changed: tuple[str, ...]  # modified or deleted
    created: tuple[str, ...]


def _changes(root: Path, before: _Snapshot, after: _Snapshot) -> _Changes:
    changed = [
        rel
        for rel, entry in before.items()
        if rel not in after or _differs(root, rel, entry, after[rel])
    ]
    created = [rel for rel in after if rel not in before]
    return _Changes(tuple(sorted(changed)), tuple(sorted(created)))


class Restore(StrEnum):
    """Why a file a region's program changed was not put back: the code of a
    ``NotRestored``, worded by ``report/reasons.not_restored``."""

    NO_COPY = "no-copy"  # beyond the snapshot budget
    UNSAFE = "unsafe"  # the path guard refused (``detail``: its problem)
    FAILED = "failed"  # the write failed (``detail``: the system's reason)


@dataclass(frozen=True)
class NotRestored:
    path: str
    code: Restore
    detail: str = ""


def _restore(guard: PathGuard, rel: str, entry: _Entry) -> NotRestored | None:
    """Put one file back as it was, through the path guard; why it was not, else None."""
    try:
        if entry.is_link and entry.target is not None:
            path, existing = guard.ready(rel, replace_link=True)
            if existing is not None:
                os.unlink(path)  # a file the program put where the link was
            os.symlink(entry.target, path)
            return None
        if entry.content is None:
            return NotRestored(rel, Restore.NO_COPY)
        written = guard.write(rel, entry.content, mode=entry.mode, replace_link=True)
        # Build tools judge freshness by mtime: give the file back its old one too.
        os.utime(written, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)
        return None
    except UnsafePath as error:
        return NotRestored(rel, Restore.UNSAFE, error.problem)
    except OSError as error:
        return NotRestored(rel, Restore.FAILED, error.strerror or str(error))


def _remove(guard: PathGuard, rel: str) -> bool:
    try:
        return guard.remove(rel)
    except OSError:
        return False


# --- running -------------------------------------------------------------------------------


def _execute(
    root: Path,
    argv: tuple[str, ...],
    timeout: float,
    output: IO[bytes],
    errors: IO[bytes] | None = None,
    env: dict[str, str] | None = None,
    limit: str | None = None,
) -> process.Finished:
    """The program through the process edge: its own process group, stopped with it at
    the timeout (or on Ctrl-C), output into ``output`` (stderr into ``errors`` if given)."""
    return process.run(
        argv,
        cwd=root,
        env=process.child_env(env),
        timeout=timeout,
        limit=limit,
        output=output,
        errors=errors,
    )


def _describe(run: process.Finished) -> str:
    return _program_result(run)


@contextlib.contextmanager
def _output_file(root: Path, log_path: Path | None, command: str) -> Iterator[IO[bytes]]:
    """The log (appended to, one header per run) or a scratch file when there is none. A log
    inside the project is opened without following any link on the way (its folder is
    tether's own, and a program that ran before may have replaced it with one)."""
    if log_path is None:
        with tempfile.TemporaryFile() as scratch:
            yield scratch
        return
    try:
        rel = log_path.relative_to(root).as_posix()
    except ValueError:
        rel = None  # a log the caller keeps elsewhere
    if rel is None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(log_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    else:
        fd = open_without_links(root, rel, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    with open(fd, "a+b") as log:
        log.write(f"$ {command}\n".encode())
        log.flush()
        yield log


def _run_logged(
    root: Path, spec: RegenSpec, seconds: Seconds, log_path: Path | None, command: str
) -> tuple[process.Finished, str]:
    with _output_file(root, log_path, command) as output:
        run = _execute(root, spec.argv, seconds.value, output, limit=seconds.variable)
        if log_path is not None:
            output.seek(0, os.SEEK_END)
            output.write(f"[{_describe(run)}]\n".encode())
    return run, run.tail


# --- backup --------------------------------------------------------------------------------


def _back_up(root: Path, paths: tuple[str, ...], backup_dir: Path | None) -> tuple[str, ...]:
    """Back the declared paths up into ``backup_dir`` (mirroring the project layout), by the
    one backup rule: a copy already there is never written over, since a run's backup
    folder restores the project as it was before the whole run and an earlier step may have
    saved the adopter's original; different bytes go beside it as ``<path>.<n>``. Always a
    copy, never a link: the program may change a file in place.
    """
    if backup_dir is None:
        return ()
    project, backups = PathGuard(root), PathGuard(backup_dir)
    saved: list[str] = []
    for rel in paths:
        problem, info = project.inspect(rel)
        if problem or info is None:
            continue
        back_up(backups, rel, root / rel)
        saved.append(rel)
    return tuple(saved)


# --- the runner ----------------------------------------------------------------------------


def _log_rel(root: Path, log_path: Path | None) -> set[str]:
    """The log's own path when it sits inside the project: it grows during the run."""
    if log_path is None:
        return set()
    try:
        return {log_path.resolve().relative_to(root.resolve()).as_posix()}
    except ValueError:
        return set()


@dataclass(frozen=True)
class _Settled:
    rewritten: tuple[str, ...]
    reverted: tuple[str, ...]
    unrestored: tuple[NotRestored, ...]
    new_outside: tuple[str, ...]


def _settle(
    root: Path, decl: RegionDecl, before: _Snapshot, changes: _Changes, succeeded: bool
) -> _Settled:
    """Undo what the run may not keep: outside changes always, everything when it failed.
    A new guard: the program may have turned folders into links since the run began."""
    guard = PathGuard(root)
    declared = set(decl.paths)
    reverted: list[str] = []
    unrestored: list[NotRestored] = []
    for rel in changes.changed:
        if rel in declared and succeeded:
            continue
        why = _restore(guard, rel, before[rel])
        if why is None:
            reverted.append(rel)
        else:
            unrestored.append(why)
    if not succeeded:
        # A declared file the failed run created did not exist before the run.
        reverted += [rel for rel in changes.created if rel in declared and _remove(guard, rel)]
    rewritten = [rel for rel in (*changes.changed, *changes.created) if rel in declared]
    return _Settled(
        rewritten=tuple(sorted(rewritten)) if succeeded else (),
        reverted=tuple(sorted(reverted)),
        unrestored=tuple(unrestored),
        new_outside=tuple(rel for rel in changes.created if rel not in declared),
    )


def _preflight(
    root: Path, decl: RegionDecl, shipped_paths: set[str], command: str
) -> RegenOutcome | RegenSpec:
    """The outcome when the program must not or cannot be run, else the spec to run."""
    spec = decl.regenerate
    if spec is None:
        return skipped_outcome(decl, NotRunWhy(NotRun.NO_PROGRAM))
    refusal = program_refusal(root, spec, shipped_paths)
    if refusal is not None:
        return RegenOutcome(decl.id, "refused", command, refused=refusal)
    if not (root / spec.operand).is_file():
        return _not_started(decl, command, NotRun.OPERAND_NOT_A_FILE, spec.operand)
    return spec


@dataclass(frozen=True)
class Seconds:
    """A program's time limit, and the variable that set it (None: the caller did)."""

    value: float
    variable: str | None = None

    @classmethod
    def of(cls, timeout: float | TimeLimit) -> Seconds:
        """TetherError naming the variable when it holds no number of seconds."""
        if isinstance(timeout, TimeLimit):
            return cls(timeout.seconds(), timeout.variable)
        return cls(timeout)


def run_regeneration(
    project_root: Path,
    decl: RegionDecl,
    shipped_paths: set[str],
    timeout: float | TimeLimit = REGEN_TIME,
    log_path: Path | None = None,
    backup_dir: Path | None = None,
    *,
    exclude: frozenset[str] = DEFAULT_EXCLUDE,
    snapshot_budget: int = SNAPSHOT_BUDGET,
) -> RegenOutcome:
    """Run ``interpreter operand args…`` from ``project_root`` for one region declaration.

    ``shipped_paths`` are the paths the release's manifest ships (the operand must be one).
    ``exclude`` lists top-level-relative paths never watched (add a backup folder that
    lives inside the project). ``timeout``: seconds, or the limit whose variable sets them.
    Never raises for the program's or the tree's failures.
    """
    command = command_line(decl)
    spec = _preflight(project_root, decl, shipped_paths, command)
    if isinstance(spec, RegenOutcome):
        return spec
    try:
        seconds = Seconds.of(timeout)
    except TetherError as error:
        return _not_started(decl, command, NotRun.NO_TIME_LIMIT, str(error))
    watched = exclude | _log_rel(project_root, log_path)
    try:
        backed_up = _back_up(project_root, decl.paths, backup_dir)
        before = _snapshot(project_root, watched, set(decl.paths), snapshot_budget)
    except OSError as error:
        return _not_started(decl, command, NotRun.BACKUP_FAILED, str(error))
    try:
        run, tail = _run_logged(project_root, spec, seconds, log_path, command)
    except OSError as error:
        return _not_started(decl, command, NotRun.LOG_FAILED, str(error))
    succeeded = run.started and not run.timed_out and run.exit_code == 0
    after = _snapshot(project_root, watched, set(), None)
    settled = _settle(project_root, decl, before, _changes(project_root, before, after), succeeded)
    return RegenOutcome(
        region_id=decl.id,
        status="regenerated" if succeeded else "failed",
        command=command,
        ended=program_end(run),
        exit_code=run.exit_code,
        could_not_start=not run.started,
        backed_up_paths=backed_up,
        log_path=log_path,
        output_tail="" if succeeded else tail,
        rewritten_paths=settled.rewritten,
        reverted_paths=settled.reverted,
        new_outside_paths=settled.new_outside,
        unrestored_paths=tuple(why.path for why in settled.unrestored),
        unrestored=settled.unrestored,
    )


# --- one declared program (a release's migration) -------------------------------------------


@dataclass(frozen=True)
class ProgramRun:
    """How one program run ended (``end``, a fact worded by
    ``report/lifecycle_steps.program_reason``), with what it printed (``stdout``,
    ``stderr``: the last ``TAIL_LINES`` lines of each)."""

    started: bool
    exit_code: int | None
    timed_out: bool
    end: ProgramWhy
    stdout: str = ""
    stderr: str = ""


def run_program(
    root: Path,
    argv: tuple[str, ...],
    env: dict[str, str],
    *,
    timeout: float | TimeLimit,
    log_path: Path | None = None,
) -> ProgramRun:
    """Run ``argv`` (no shell) from ``root`` with ``env`` (sanitised by the process edge),
    in its own process group, stopped after ``timeout`` (seconds, or the limit whose
    variable sets them). Never raises for the program's failures; the caller has already
    refused an unsafe ``argv``."""
    command = shlex.join(argv)
    try:
        seconds = Seconds.of(timeout)
    except TetherError as error:
        why = ProgramWhy(ProgramCode.NOT_STARTED, program=argv[0], detail=str(error))
        return ProgramRun(started=False, exit_code=None, timed_out=False, end=why)
    with contextlib.ExitStack() as stack:
        try:
            output = stack.enter_context(_output_file(root, log_path, command))
        except OSError as error:
            why = ProgramWhy(ProgramCode.LOG_FAILED, program=argv[0], detail=str(error))
            return ProgramRun(started=False, exit_code=None, timed_out=False, end=why)
        errors = stack.enter_context(tempfile.TemporaryFile())
        run = _execute(root, argv, seconds.value, output, errors, env, seconds.variable)
        stdout, stderr = run.tail, process.tail_of(errors, 0)
        if log_path is not None:
            output.seek(0, os.SEEK_END)
            errors.seek(0)
            output.write(errors.read())
            output.write(f"[{_program_result(run)}]\n".encode())
    return ProgramRun(
        started=run.started,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        end=program_end(run),
        stdout=stdout,
        stderr=stderr,
    )


def _program_result(run: process.Finished) -> str:
    """``ran and exited 4``, ``ran and timed out after 120 s (… sets it); its process group
    was stopped``, ``ran and was killed by signal 9``, ``could not start 'bash': …``."""
    return run.end_words() if not run.started else f"ran and {run.end_words()}"
