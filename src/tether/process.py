"""The process edge: every program tether starts, other than git (``tether.git``, built on
this module's environment), goes through this module.

One policy for all of them (installs, override commands, regeneration programs,
migrations, shellcheck, shfmt, gh, the bounded Python children):

- **No shell.** A program is an argv; its first word is looked up on ``PATH``.
- **Its own process group.** Each program starts in a new session, so it and everything
  it starts can be stopped together, and a terminal's Ctrl-C reaches tether alone:
  tether decides what stops.
- **A deadline, then interrupt, terminate, kill.** When a program outlives its timeout
  its group gets SIGINT, then (``INTERRUPT_GRACE`` later) SIGTERM, then (``TERMINATE_GRACE``
  later) SIGKILL for whatever is left. The leader is not reaped until the group has had
  its SIGKILL, so the group id cannot be taken by another process meanwhile.
- **Ctrl-C and SIGTERM stop it too.** When the wait is interrupted (KeyboardInterrupt,
  which is how tether's CLI turns SIGTERM as well), the group is stopped the same way
  before the interrupt goes on; a second interrupt kills it at once. Interrupts are held
  back while a program starts, until its handle is stored, so none is left unheld;
  work on worker threads runs through ``map_in_threads``, which hears a Ctrl-C whichever
  thread the system gave it to and then stops the programs the workers run, and the CLI
  stops whatever still runs (``stop_all``) on its way out. No wait for a program blocks
  longer than ``WAKE_SECONDS`` at a time: Python runs a signal's handler in the main thread
  only when that thread runs, and a signal that lands just before it blocks (or on another
  thread) does not wake it, so a wait without a bound would miss that Ctrl-C until the
  program ended by itself.
- **``at_once``** for programs with nothing to clean up (tether's own bounded children,
  gh): the deadline kills the group without the graces.
- **A sanitised environment** (``child_env``): no variable that would point git at another
  repository (set, for example, while a git hook runs tether), no credential prompts.
- **Output**: captured whole for a program whose answer tether parses, or appended to a
  log file, of which only a bounded tail (``TAIL_BYTES``, ``TAIL_LINES``) is read back.

A program that ends normally keeps whatever it left running in its group; one that puts a
process into a session of its own is out of reach (documented in docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:  # a pool's owner imports concurrent.futures; running programs needs none
    from concurrent.futures import Executor
    from typing import IO, Any, Final, TypeVar

    T = TypeVar("T")
    R = TypeVar("R")

# After the deadline: SIGINT to the group, this long to end, SIGTERM, this long, SIGKILL.
INTERRUPT_GRACE: Final = 1.0
TERMINATE_GRACE: Final = 2.0
# What is read back of a log for the caller: at most this many bytes, the last lines of it.
TAIL_BYTES: Final = 64 * 1024
TAIL_LINES: Final = 20
# The exit code a step that timed out is recorded with (``timeout(1)`` answers the same).
TIMED_OUT: Final = 124

POSIX: Final = os.name == "posix"
# How often a thread waiting for a program or for worker threads wakes, to run the handler
# of a signal that did not wake it (``Running.finish``, ``map_in_threads``).
WAKE_SECONDS: Final = 0.2


# Variables that make git ignore ``-C``/``cwd`` and act on another repository or index:
# dropped for every program, since installs, regeneration programs and migrations run git
# too, and tether itself may be running inside a git hook that set them.
REPO_SELECTING_VARS: Final = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
)


def child_env(
    base: Mapping[str, str] | None = None,
    *,
    keep_repo_env: bool = False,
    drop: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a program tether starts: ``base`` (tether's own when None)
    without the repository-selecting git variables (unless ``keep_repo_env``) and ``drop``,
    with prompts for credentials switched off (nothing can answer one: stdin is closed and
    the program has no terminal), then ``extra``."""
    env = dict(os.environ if base is None else base)
    for name in (*(() if keep_repo_env else REPO_SELECTING_VARS), *drop):
        env.pop(name, None)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GCM_INTERACTIVE"] = "never"
    if extra:
        env.update(extra)
    return env


@valueclass(frozen=True)
class Finished:
    """How one program run ended. ``exit_code`` is None when it could not start or timed
    out, negative when a signal ended it. ``stdout``/``stderr`` hold what it printed when it
    was captured (what it printed before the deadline, when it timed out); ``tail`` is the
    last lines it wrote to the log it was given."""

    argv: tuple[str, ...]
    started: bool
    exit_code: int | None = None
    timed_out: bool = False
    timeout: float | None = None
    limit: str | None = None  # the variable that sets ``timeout``, named in the failure
    error: str = ""  # why it could not start
    not_found: bool = False  # it could not start because the program does not exist
    seconds: float = 0.0
    stdout: bytes = b""
    stderr: bytes = b""
    tail: str = ""

    @property
    def ok(self) -> bool:
        return self.started and not self.timed_out and self.exit_code == 0

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""

    def end_words(self) -> str:
        """What happened, without the program's name: ``exited 3``, ``timed out after 5 s;
        its process group was stopped``, ``was killed by signal 9``, ``could not start …``.
        ``report/programs.py`` words a run for every report and log above the flows; this
        is the same words for the modules below ``report/``, which cannot import it: the
        errors the edges and the store raise, a region's or a migration's log line, audit's
        reason a tool gave no answer (docs/architecture.md, "Differences")."""
        if not self.started:
            return f"could not start {self.program!r}: {self.error}"
        if self.timed_out:
            where = f" ({self.limit} sets it)" if self.limit else ""
            return (
                f"timed out after {self.timeout:g} s{where}; its process group was stopped"
                if self.timeout is not None
                else "timed out; its process group was stopped"
            )
        if self.exit_code is not None and self.exit_code < 0:
            return f"was killed by signal {-self.exit_code}"
        return f"exited {self.exit_code}"

    def code(self) -> int:
        """The exit code to record for the step: the program's, ``TIMED_OUT`` for a
        timeout, 127 when it could not start (what a shell answers), 128+N for signal N."""
        if not self.started:
            return 127
        if self.timed_out or self.exit_code is None:
            return TIMED_OUT
        return 128 - self.exit_code if self.exit_code < 0 else self.exit_code


# --- running -------------------------------------------------------------------------------


def run(
    argv: Sequence[str],
    *,
    timeout: float | None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    output: IO[Any] | None = None,
    errors: IO[Any] | None = None,
    limit: str | None = None,
    max_file_bytes: int | None = None,
    at_once: bool = False,
) -> Finished:
    """Run ``argv`` from ``cwd`` until it ends or ``timeout`` seconds pass (None: no
    deadline, only an interrupt stops it), in its own process group.

    ``env`` is used as given (build it with ``child_env``; None: ``child_env()``).
    ``input`` is written to its stdin (None: stdin is empty). Without ``output`` its stdout
    and stderr are captured; with it, both are appended to that file (stderr to ``errors``
    when given) and the result's ``tail`` holds the last lines written there.
    ``max_file_bytes`` sets the largest file it may write (``RLIMIT_FSIZE``).
    ``limit`` names the variable that set ``timeout`` for the failure line. ``at_once``:
    the program has nothing to clean up (tether's own bounded children), so its group is
    killed at the deadline without the interrupt and terminate graces.
    Never raises for the program's failures; KeyboardInterrupt goes on after the group
    was stopped."""
    handed: list[Running] = []
    try:
        return _start(
            argv,
            handed,
            timeout=timeout,
            cwd=cwd,
            env=env,
            input=input,
            output=output,
            errors=errors,
            limit=limit,
            max_file_bytes=max_file_bytes,
            capture=output is None,
            at_once=at_once,
        ).finish()
    except BaseException:
        for running in handed:  # interrupted between its start and the wait
            running.stop()
        raise


def start(
    argv: Sequence[str],
    *,
    timeout: float | None,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    output: IO[Any] | None = None,
    errors: IO[Any] | None = None,
    limit: str | None = None,
    max_file_bytes: int | None = None,
    capture: bool = False,
    at_once: bool = False,
) -> Running:
    """Start ``argv`` as ``run`` does and return at once: the caller works meanwhile and
    then ``finish``es it (the deadline counts from now) or ``stop``s it. Without
    ``capture`` and ``output`` its output is discarded."""
    handed: list[Running] = []
    try:
        return _start(
            argv,
            handed,
            timeout=timeout,
            cwd=cwd,
            env=env,
            input=input,
            output=output,
            errors=errors,
            limit=limit,
            max_file_bytes=max_file_bytes,
            capture=capture,
            at_once=at_once,
        )
    except BaseException:
        for running in handed:
            running.stop()
        raise


def _start(
    argv: Sequence[str],
    handed: list[Running],
    *,
    timeout: float | None,
    cwd: Path | str | None,
    env: Mapping[str, str] | None,
    input: bytes | None,
    output: IO[Any] | None,
    errors: IO[Any] | None,
    limit: str | None,
    max_file_bytes: int | None,
    capture: bool,
    at_once: bool,
) -> Running:
    """``start``; the handle goes into ``handed`` as soon as the program runs, with
    interrupts held until then, so an interrupt never leaves a program nobody can stop."""
    argv = tuple(argv)
    if output is not None:
        output.flush()
    if errors is not None:
        errors.flush()
    if capture:
        stdout: Any = subprocess.PIPE
        stderr: Any = subprocess.PIPE if errors is None else errors
    elif output is not None:
        stdout, stderr = output, subprocess.STDOUT if errors is None else errors
    else:
        stdout, stderr = subprocess.DEVNULL, subprocess.DEVNULL
    began = time.monotonic()
    offset = _end_of(output)
    # Input given to a process that is left running goes through a file: a pipe would
    # block this process until the child read it.
    stdin: Any = subprocess.DEVNULL
    pending: bytes | None = None
    with contextlib.ExitStack() as stack:
        if input is not None and not capture:
            import tempfile  # only here: the programs git and an update start take no spool

            spool = stack.enter_context(tempfile.TemporaryFile())
            spool.write(input)
            spool.seek(0)
            stdin = spool
        elif input is not None:
            stdin, pending = subprocess.PIPE, input
        with _interrupts_held():
            try:
                process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=dict(env) if env is not None else child_env(),
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    start_new_session=POSIX,
                    preexec_fn=_file_size_limit(max_file_bytes) if max_file_bytes else None,
                )
            except OSError as error:
                return Running.not_started(argv, error, timeout, limit)
            deadline = None if timeout is None else began + timeout
            running = Running(
                process,
                argv,
                timeout,
                limit,
                deadline,
                began,
                pending,
                output,
                offset,
                at_once=at_once,
            )
            handed.append(running)
            with _LIVE_LOCK:
                _LIVE.add(running)
                stopping = _STOPPING[0] > 0
            if stopping:
                # Started by a worker thread while an interrupt stops every program (a
                # ``stop_all`` that ran before this one was held): stopped like the rest,
                # or the pool would wait for it forever.
                running.stop()
    return running


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back (in the main thread, the one Python runs handlers in)
    while a program starts and its handle is stored, then delivered to the handlers that
    were there: an interrupt arriving between the two would otherwise leave a program
    running that nobody holds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: object) -> None:
        held.append(signum)

    previous: dict[int, Any] = {}
    try:
        for kind in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(kind) is not None:  # None: a handler Python did not set
                previous[kind] = signal.signal(kind, hold)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in held:
            signal.raise_signal(number)


class Running:
    """A program started by ``start``: ``finish`` waits for it (to its deadline), ``stop``
    ends it and its group now."""

    def __init__(
        self,
        process: subprocess.Popen[bytes] | None,
        argv: tuple[str, ...],
        timeout: float | None,
        limit: str | None,
        deadline: float | None,
        began: float,
        pending: bytes | None = None,
        output: IO[Any] | None = None,
        offset: int | None = None,
        failed: Finished | None = None,
        *,
        at_once: bool = False,
    ) -> None:
        self._process = process
        self._argv = argv
        self._timeout = timeout
        self._limit = limit
        self._deadline = deadline
        self._began = began
        self._pending = pending
        self._output = output
        self._offset = offset
        self._failed = failed
        self.at_once = at_once  # killed without the graces (see ``run``)

    @classmethod
    def not_started(
        cls, argv: tuple[str, ...], error: OSError, timeout: float | None, limit: str | None
    ) -> Running:
        missing = isinstance(error, FileNotFoundError | NotADirectoryError)
        reason = error.strerror or str(error)
        failed = Finished(
            argv, False, timeout=timeout, limit=limit, error=reason, not_found=missing
        )
        return cls(None, argv, timeout, limit, None, time.monotonic(), failed=failed)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def finish(self) -> Finished:
        """Wait for the program (stopping it at its deadline); how it ended."""
        if self._failed is not None or self._process is None:
            assert self._failed is not None
            return self._failed
        process = self._process
        timed_out = False
        stdout: bytes | None
        stderr: bytes | None
        try:
            try:
                stdout, stderr = self._communicate(process)
            except subprocess.TimeoutExpired:
                timed_out = True
                stop_group(process, at_once=self.at_once)
                stdout, stderr = _drain(process)
        except BaseException:
            _stop_now(process, at_once=self.at_once)
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(self)
        return Finished(
            self._argv,
            True,
            exit_code=None if timed_out else process.returncode,
            timed_out=timed_out,
            timeout=self._timeout,
            limit=self._limit,
            seconds=time.monotonic() - self._began,
            stdout=stdout or b"",
            stderr=stderr or b"",
            tail=tail_of(self._output, self._offset),
        )

    def _communicate(self, process: subprocess.Popen[bytes]) -> tuple[bytes | None, bytes | None]:
        """``process.communicate`` until the program ends (TimeoutExpired at its deadline),
        a ``WAKE_SECONDS`` slice at a time: between two slices this thread runs, and with it
        the handler of a Ctrl-C the system handled without waking it (one that landed just
        before the wait blocked, or on another thread). Output read in one slice is kept
        for the next.

        A program given input through a pipe is waited for in one piece, to its deadline
        (tether's bounded children and the analysers, whose deadlines are short): a second
        ``communicate`` could not go on writing what the first one left unwritten."""
        if self._pending:
            return process.communicate(self._pending, timeout=self._left())
        while True:
            left = self._left()
            try:
                return process.communicate(
                    timeout=WAKE_SECONDS if left is None else min(left, WAKE_SECONDS)
                )
            except subprocess.TimeoutExpired:
                if left is not None and left <= WAKE_SECONDS:
                    raise

    def stop(self) -> None:
        """End the program and its group now (interrupt, terminate, kill), if it runs."""
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._process is not None and self._process.returncode is None:
            _stop_now(self._process, at_once=self.at_once)

    def _left(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())


# The programs started and not yet finished, from every thread: what ``stop_all`` stops.
_LIVE: weakref.WeakSet[Running] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()
# How many interrupted pools are draining (``stop_all_on_interrupt``): while any is, a
# program that starts is stopped at once. Held with ``_LIVE_LOCK``: a program is either
# listed before ``stop_all`` looks, or sees the count.
_STOPPING = [0]


def stop_all() -> None:
    """Stop the group of every program started and not yet finished, from any thread, all
    at once: SIGINT, SIGTERM, SIGKILL as at a deadline. Each is reaped by the thread
    waiting for it. For the main thread interrupted while worker threads run programs: a
    terminal's Ctrl-C reaches tether alone, so only tether can stop theirs."""
    with _LIVE_LOCK:
        processes = [r._process for r in _LIVE if r._process is not None]
    for signum, grace in ((signal.SIGINT, INTERRUPT_GRACE), (signal.SIGTERM, TERMINATE_GRACE)):
        running = [p for p in processes if not _ends_within(p, 0)]
        for process in running:
            _signal_group(process, signum)
        deadline = time.monotonic() + grace
        for process in running:
            _ends_within(process, max(0.0, deadline - time.monotonic()))
    for process in processes:
        _signal_group(process, signal.SIGKILL)


def map_in_threads(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R]:
    """``[fn(x) for x in items]`` with at most ``jobs`` worker threads, results in order;
    the first failure (in the items' order, among those that failed) is raised.

    The waiting thread wakes every ``WAKE_SECONDS``: the system hands a Ctrl-C to any
    thread of the process, and Python raises it in this one only when this one runs, which
    a wait without a time limit would not do until some worker ended (never, for a program
    that ignores the interrupt). Interrupted or failed, the work not begun is cancelled and
    every program the workers run is stopped (``stop_all_on_interrupt``)."""
    if jobs <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    with (
        ThreadPoolExecutor(max_workers=min(jobs, len(items))) as pool,
        stop_all_on_interrupt(pool),
    ):
        futures = [pool.submit(fn, item) for item in items]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=WAKE_SECONDS, return_when=FIRST_EXCEPTION)
            if any(future.exception() is not None for future in done):
                errors = [e for f in futures if f.done() and (e := f.exception()) is not None]
                raise errors[0]
        return [future.result() for future in futures]


@contextlib.contextmanager
def stop_all_on_interrupt(pool: Executor) -> Iterator[None]:
    """Around work a thread ``pool`` does that starts programs: when the waiting thread is
    interrupted (Ctrl-C) or fails, the work not begun is cancelled and every program
    running is stopped with its group (``stop_all``), instead of the pool waiting for them
    to end by themselves; a program a worker starts until the pool has drained is stopped
    as it starts. The waiting thread must wake every so often, as ``map_in_threads``'s
    does: one that waits for the pool without a bound (``pool.map``, ``Future.result``)
    may not hear the Ctrl-C at all while the programs run."""
    try:
        yield
    except BaseException:
        with _LIVE_LOCK:
            _STOPPING[0] += 1
        try:
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            # A worker between starting its program and listing it escaped ``stop_all``;
            # it stops that program itself (see ``start``) while the count is up, so the
            # pool is drained here, not after.
            pool.shutdown(wait=True)
        finally:
            with _LIVE_LOCK:
                _STOPPING[0] -= 1
        raise


def stop_group(process: subprocess.Popen[bytes], *, at_once: bool = False) -> None:
    """SIGINT to the process's group, then SIGTERM, then SIGKILL to whatever is left, each
    after a grace for the leader to end (``at_once``: SIGKILL only); then the leader is
    reaped."""
    graces = (
        () if at_once else ((signal.SIGINT, INTERRUPT_GRACE), (signal.SIGTERM, TERMINATE_GRACE))
    )
    for signum, grace in graces:
        _signal_group(process, signum)
        if _ends_within(process, grace):
            break
    _signal_group(process, signal.SIGKILL)  # the rest of the group, leader ended or not
    process.wait()


def kill_group(pid: int) -> None:
    """SIGKILL to the process group ``pid`` leads (one that is gone is no error)."""
    if POSIX:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _stop_now(process: subprocess.Popen[bytes], *, at_once: bool = False) -> None:
    """``stop_group`` for an interrupt: a second interrupt during the graces kills at once."""
    try:
        stop_group(process, at_once=at_once)
    except BaseException:
        _signal_group(process, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            process.wait(timeout=TERMINATE_GRACE)
        raise


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.returncode is not None:
        return  # reaped: its pid may name another process by now
    if not POSIX:
        with contextlib.suppress(OSError):
            process.kill()
        return
    # The leader is not reaped yet (``_ends_within`` only looks), so its pid still names
    # its group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def _ends_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether the process ends within ``seconds``, without reaping it."""
    if process.returncode is not None:
        return True
    if not POSIX:
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        handle = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # no pidfd here: look every few milliseconds
        deadline = time.monotonic() + seconds
        while not _has_ended(process.pid):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True
    try:
        # Readable once it ended; a slice at a time, so a second Ctrl-C that did not wake
        # this thread still cuts the grace short (see ``Running._communicate``).
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if select.select([handle], [], [], max(0.0, min(left, WAKE_SECONDS)))[0]:
                return True
            if left <= WAKE_SECONDS:
                return False
    finally:
        os.close(handle)


def _has_ended(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _drain(process: subprocess.Popen[bytes]) -> tuple[bytes | None, bytes | None]:
    """The rest of a stopped program's captured output. A process of its own session that
    still holds the pipes is not waited for."""
    try:
        return process.communicate(timeout=TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        return b"", b""


def _file_size_limit(max_bytes: int) -> Callable[[], None]:
    def limit() -> None:  # in the child, before the program starts
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
        # A write past the limit then fails (EFBIG) instead of killing the program silently.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limit


# --- logs ----------------------------------------------------------------------------------


def _end_of(output: IO[Any] | None) -> int | None:
    if output is None:
        return None
    try:
        return os.lseek(output.fileno(), 0, os.SEEK_END)
    except (OSError, ValueError, AttributeError):
        return None


def tail_of(output: IO[Any] | None, start: int | None = 0, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines written to ``output`` after byte ``start``, read from at most
    its last ``TAIL_BYTES``; "" when it cannot be read back (a file opened for writing only)."""
    if output is None or start is None:
        return ""
    try:
        output.flush()
        fd = output.fileno()
        end = os.lseek(fd, 0, os.SEEK_END)
        begin = max(start, end - TAIL_BYTES)
        data = os.pread(fd, end - begin, begin) if end > begin else b""
    except (OSError, ValueError, AttributeError):
        return ""
    if begin > start:  # cut inside a line: the first one read is not whole
        data = data.partition(b"\n")[2]
    text = data.decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-lines:])
