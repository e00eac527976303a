"""Builders for real release shelves and adopter projects in tmp dirs."""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import json
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tether.cli.main import main as tether_main

Files = dict[str, "bytes | str"]

SCHEMAS = Path(__file__).parents[1] / "schemas"


@functools.cache
def schema_validator(name: str) -> Any:
    """A validator of ``schemas/<name>.json``, built once per process: checking the schema
    itself against its meta-schema on every validation (``jsonschema.validate``) costs a
    tenth of a second, and each schema is checked once, by
    tests/architecture/test_json_schemas.py."""
    import jsonschema

    data = json.loads((SCHEMAS / f"{name}.json").read_text())
    return jsonschema.validators.validator_for(data)(data)


def write_files(root: Path, files: Files) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def make_release(
    shelf: Path,
    version: str,
    files: Files,
    classes: dict[str, str] | None = None,
    *,
    name: str = "acme-kit",
    sentinels: Files | None = None,
    extra: dict[str, object] | None = None,
    profile: str = "native",
) -> Path:
    """A release folder ``shelf/<version>`` with its manifest; classes default to shared."""
    root = shelf / version
    write_files(root, files)
    write_files(root, sentinels or {})
    classes = classes or {}
    file_classes = {p: classes.get(p, "shared") for p in files}
    if profile == "gaia":
        manifest: dict[str, object] = {"version": version, "files": file_classes}
        manifest.update(extra or {})
        write_files(root, {".gaia/manifest.json": json.dumps(manifest, indent=2) + "\n"})
    else:
        manifest = {"schema_version": 1, "name": name, "version": version, "files": file_classes}
        if sentinels:
            manifest["sentinels"] = sorted(sentinels)
        manifest.update(extra or {})
        write_files(root, {".tether/manifest.json": json.dumps(manifest, indent=2) + "\n"})
    return root


def tree_digest(root: Path) -> dict[str, bytes]:
    """Every file under root (including hidden ones) with its bytes."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = Path(dirpath) / name
            out[str(full.relative_to(root))] = full.read_bytes()
    return out


# tether as the interpreter running the tests runs it: no console script on PATH needed.
TETHER = (sys.executable, "-m", "tether")


def default_sigint() -> None:
    """For ``Popen(preexec_fn=...)`` in tests that send SIGINT: a shell starting the test run
    in the background gives its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler; a person's terminal never does that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_tether(
    *args: str, cwd: Path | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI's entry point called in this process, run from ``cwd`` with ``input`` on a
    stdin that is not a terminal, stdout and stderr captured: what a command decides and
    prints, without starting an interpreter. Tests about the process itself (signals,
    terminals, the console script, the environment it starts with) use ``run_process``."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    err = io.StringIO()
    saved_stdin, saved_cwd = sys.stdin, os.getcwd()
    sys.stdin = io.StringIO(input or "")
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = tether_main(list(args))
            except SystemExit as stop:  # --help and --version end through argparse
                code = stop.code if isinstance(stop.code, int) else 0
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
    out.flush()
    printed = out.buffer.getvalue().decode("utf-8", "surrogateescape")  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(["tether", *args], code, printed, err.getvalue())


def run_process(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str | None] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """The real console script in a real process: the one way tests start tether in a fresh
    interpreter. ``env`` changes the test's environment for it, as ``run_forked``'s does
    (None: the variable is removed)."""
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        [*TETHER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env={name: value for name, value in environment.items() if value is not None},
        timeout=timeout,
    )


def run_forked(
    *args: str,
    crash: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str | None] | None = None,
    timeout: float = 120,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    stderr_fd: int | None = None,
    from_test_process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """The CLI in a real child process forked from the test's own, or from its fork server
    (``ForkServer``) with the test's environment, folder and umask: a crash point
    (``crash``, see ``tether.state.crashpoint``) kills it for real with ``os._exit``, as it
    would kill ``run_process``'s interpreter, without paying for an interpreter start and
    tether's imports on every run. ``env`` is added to the child's environment (None: the
    variable is removed); stdin is empty and not a terminal unless ``stdin_fd`` is given;
    output is captured, except where a descriptor (a terminal, say) is given for it.
    ``from_test_process``: forked from the test's own process even where a fork server
    would serve, for commands that load a large library the test process holds and the
    server does not (copier: ~0.3 s of imports a child, against a few milliseconds more
    for copying the larger process)."""
    child = ForkedChild(
        lambda: tether_main(list(args)),
        crash=crash,
        cwd=cwd,
        env=env,
        stdin_fd=stdin_fd,
        stdout_fd=stdout_fd,
        stderr_fd=stderr_fd,
        argv=None if from_test_process else args,
    )
    done = child.wait(timeout)
    done.args = ["tether", *args]
    return done


def in_forked_child(
    work: Callable[[], int],
    *,
    crash: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str | None] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``work()`` in a forked child whose exit code is what it returns: a hang fails at
    ``timeout``, a crash or ``os._exit`` ends only the child."""
    child = ForkedChild(work, crash=crash, cwd=cwd, env=env)
    return child.wait(timeout)


def start_forked(
    *args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None
) -> ForkedChild:
    """The CLI in a forked child that runs while the test goes on (``Popen``'s part: poll,
    signal, kill, wait), from the fork server as ``run_forked``'s."""
    child = ForkedChild(lambda: tether_main(list(args)), env=env, cwd=cwd, argv=args)
    child.args = ["tether", *args]
    return child


class ForkedChild:
    """``work()`` in a child forked from the test's process, its output in temporary files
    unless a descriptor (a terminal, say) is given for it, its stdin empty unless one is
    given, SIGINT taken as a terminal's Ctrl-C is (KeyboardInterrupt, not ignored).

    With ``argv`` (the CLI's arguments, ``work`` being the CLI's entry point called with
    them) the child comes from the test process's fork server (``ForkServer``) when there
    is one and the test has patched nothing in its own process; ``pid``, ``poll``,
    ``send_signal``, ``kill`` and ``wait`` work the same either way."""

    def __init__(
        self,
        work: Callable[[], int],
        *,
        crash: str | None = None,
        cwd: Path | None = None,
        env: dict[str, str | None] | None = None,
        stdin_fd: int | None = None,
        stdout_fd: int | None = None,
        stderr_fd: int | None = None,
        argv: tuple[str, ...] | None = None,
    ) -> None:
        self.args: list[str] | str = "forked child"
        self.returncode: int | None = None
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 (closed by wait)
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 (closed by wait)
        out_fd = self._out.fileno() if stdout_fd is None else stdout_fd
        err_fd = self._err.fileno() if stderr_fd is None else stderr_fd
        # Where the served child's exit status arrives (None: the child is this process's own).
        self._status: socket.socket | None = None
        if argv is not None and _FORK_SERVER is not None and not _patched_in_process():
            request = _ServedRun(list(argv), crash, cwd, env or {})
            self.pid, self._status = _FORK_SERVER.start(request, stdin_fd, out_fd, err_fd)
            return
        self.pid = os.fork()
        if self.pid == 0:  # the child never returns into the test run
            run_as_cli_child(work, stdin_fd, out_fd, err_fd, crash, cwd, env or {})

    def poll(self) -> int | None:
        if self.returncode is None:
            if self._status is not None:
                if select.select([self._status], [], [], 0)[0]:
                    self.returncode = _served_exit_code(self._status)
            else:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid != 0:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def _sleep_until_it_ends(self, seconds: float) -> None:
        """Wake when the child ends (a pidfd becomes readable then, or the fork server's
        report of its status arrives), or after ``seconds``."""
        if self._status is not None:
            select.select([self._status], [], [], seconds)
            return
        try:
            handle = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # before Linux 5.3, or elsewhere
            time.sleep(min(seconds, 0.005))
            return
        try:
            select.select([handle], [], [], seconds)
        finally:
            os.close(handle)

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(9)

    def wait(self, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Its exit code and output once it ended; killed, and TimeoutExpired, at ``timeout``."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                if self._status is not None:
                    _served_exit_code(self._status)  # the server has reaped it
                else:
                    os.waitpid(self.pid, 0)
                self._out.close()
                self._err.close()
                raise subprocess.TimeoutExpired(str(self.args), timeout)
            self._sleep_until_it_ends(min(remaining, 0.5))
        with self._out, self._err:
            self._out.seek(0)
            self._err.seek(0)
            return subprocess.CompletedProcess(
                self.args,
                self.returncode,
                self._out.read().decode("utf-8", "surrogateescape"),
                self._err.read().decode("utf-8", "surrogateescape"),
            )


def run_as_cli_child(
    work: Callable[[], int],
    stdin: int | None,
    out: int,
    err: int,
    crash: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str | None] | None = None,
) -> NoReturn:
    """In a forked child: become a CLI process (``_become_cli_child``), run ``work()`` and
    end with the exit code it returns; never returns into the test run."""
    # Frozen objects are never traversed by the child's collector: a full collection there
    # would otherwise touch, and so copy, every page of the test process. Freezing splices
    # the collector's lists whole, touching only their ends, so it is done here in the child
    # (before, the test process froze and unfroze itself around each fork, which would undo
    # the freeze conftest.py makes once the tests are collected).
    gc.freeze()
    code = 1
    try:
        _become_cli_child(stdin, out, err, crash, cwd, env or {})
        code = work()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _become_cli_child(
    stdin: int | None,
    out: int,
    err: int,
    crash: str | None,
    cwd: Path | None,
    env: dict[str, str | None],
) -> None:
    """In a forked child: its own stdin (empty when None)/stdout/stderr, environment, crash
    point and folder."""
    import signal

    from tether.state import crashpoint

    signal.signal(signal.SIGINT, signal.default_int_handler)

    os.dup2(os.open(os.devnull, os.O_RDONLY) if stdin is None else stdin, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (the child's own)
    sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    os.environ.pop(crashpoint.ENV_VAR, None)
    for name, value in env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if crash:
        os.environ[crashpoint.ENV_VAR] = crash
    crashpoint.reset()
    if cwd is not None:
        os.chdir(cwd)


# --- the fork server ------------------------------------------------------------------------
#
# A fork copies the page tables of the process forked, and the child faults in a copy of each
# page it writes: from a test process (pytest, every collected test, the libraries some tests
# import: 130-250 MB) that is ~5-9 ms of system time in the child and ~2-3 ms in the test
# process per run, as much as starting a new interpreter. So each test process forks, once,
# before it collects any test, a small copy of itself (tether imported and warmed up, no
# tests) that forks the CLI children of run_forked and start_forked on request
# (docs/performance.md, "The test suite, eighth pass"). The request carries what a child
# forked from the test process would have inherited: the environment, the folder, the
# umask, and the descriptors for stdin, stdout and stderr (passed as SCM_RIGHTS). A child is
# still a real process a crash point kills with ``os._exit``, a signal ends or a timeout
# kills; the server reaps it and sends its status to the test process.


@dataclass
class _ServedRun:
    """What a served child needs besides its descriptors."""

    argv: list[str]
    crash: str | None
    cwd: Path | None
    env: dict[str, str | None]
    environ: dict[str, str] | None = None
    folder: str = ""
    umask: int = 0o022


# Every MonkeyPatch of the run: a test that patched something in its own process (a module's
# attribute, a dictionary other than the environment) expects a forked child to see it, which
# only a child forked from the test process does.
_MONKEYPATCHES: weakref.WeakSet[pytest.MonkeyPatch] = weakref.WeakSet()
_monkeypatch_init = pytest.MonkeyPatch.__init__


def _registered_monkeypatch_init(self: pytest.MonkeyPatch) -> None:
    _monkeypatch_init(self)
    _MONKEYPATCHES.add(self)


pytest.MonkeyPatch.__init__ = _registered_monkeypatch_init  # type: ignore[method-assign]


def _patched_in_process() -> bool:
    """Whether a MonkeyPatch still holds a change of this process's objects (not counting
    the environment and the folder, which a served child is given)."""
    for patch in list(_MONKEYPATCHES):
        # pytest's own (its tmp_path factory is set on the Config through one) never matters.
        if any(not isinstance(target, pytest.Config) for target, _name, _value in patch._setattr):
            return True
        if any(mapping is not os.environ for mapping, _name, _value in patch._setitem):
            return True
    return False


def _served_exit_code(status: socket.socket) -> int:
    """The exit code the fork server reports for its child, once it has reaped it."""
    reported = _line_from(status)
    status.close()
    return os.waitstatus_to_exitcode(reported)


def _line_from(server: socket.socket) -> int:
    """The next number the fork server sent on ``server``, read a byte at a time: its status
    line may follow a child's pid line at once, and must stay unread until it is asked for."""
    received = b""
    while not received.endswith(b"\n"):
        byte = server.recv(1)
        if not byte:
            raise RuntimeError("the tests' fork server ended before answering")
        received += byte
    return int(received)


class ForkServer:
    """A small copy of the test process, forked once, that forks CLI children on request."""

    def __init__(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            mine.close()
            _serve(theirs)
        theirs.close()
        self._control = mine

    def start(
        self, run: _ServedRun, stdin: int | None, out: int, err: int
    ) -> tuple[int, socket.socket]:
        """The pid of a child forked for ``run``, and where its status will arrive."""
        run.environ = dict(os.environ)
        run.folder = os.getcwd()
        run.umask = os.umask(0)
        os.umask(run.umask)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        descriptors = [theirs.fileno(), out, err] + ([] if stdin is None else [stdin])
        socket.send_fds(self._control, [pickle.dumps(run)], descriptors)
        theirs.close()
        return _line_from(mine), mine

    def close(self) -> None:
        """End the server (it kills and reaps a child still running) and reap it, so what
        it and its children used counts in this process's children's time."""
        self._control.close()
        os.waitpid(self.pid, 0)


def _serve(control: socket.socket) -> NoReturn:
    """The fork server's loop: a child per request, its status sent when it ends; ends, and
    kills what still runs, when the test process closes ``control``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C of the run is the test process's
    gc.enable()
    gc.collect()
    gc.freeze()
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd: pid, where its status goes
    try:
        while True:
            ready = select.select([control, *running], [], [])[0]
            for handle in ready:
                if handle is control:
                    continue
                pid, reply = running.pop(handle)
                _pid, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):  # the test gave up waiting for it
                    reply.sendall(b"%d\n" % status)
                reply.close()
                os.close(handle)
            if control not in ready:
                continue
            message, descriptors, _flags, _address = socket.recv_fds(control, 1 << 20, 4)
            if not message:
                break
            run: _ServedRun = pickle.loads(message)
            reply = socket.socket(fileno=descriptors[0])
            pid = os.fork()
            if pid == 0:
                try:  # the child never returns into this loop, whatever happens
                    control.close()
                    for handle, (_pid, other) in running.items():
                        os.close(handle)
                        other.close()
                    reply.close()
                    _run_served(run, *descriptors[1:])
                finally:
                    os._exit(1)
            for descriptor in descriptors[1:]:
                os.close(descriptor)
            reply.sendall(b"%d\n" % pid)
            running[os.pidfd_open(pid)] = (pid, reply)
    finally:
        for handle, (pid, _reply) in running.items():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(handle)
        os._exit(0)


def _run_served(run: _ServedRun, out: int, err: int, stdin: int | None = None) -> NoReturn:
    """In a served child: the test process's environment, folder and umask, then the CLI."""
    os.environ.clear()
    os.environ.update(run.environ or {})
    os.chdir(run.folder)
    os.umask(run.umask)
    argv = run.argv
    run_as_cli_child(lambda: tether_main(argv), stdin, out, err, run.crash, run.cwd, run.env)


_FORK_SERVER: ForkServer | None = None


def start_fork_server() -> None:
    """This test process's fork server, unless TESTS_FORK_DIRECTLY is set (every child is
    then forked from the test process itself, as a comparison or to rule the server out)."""
    global _FORK_SERVER
    if _FORK_SERVER is None and not os.environ.get("TESTS_FORK_DIRECTLY") and _has_pidfds():
        _FORK_SERVER = ForkServer()


def _has_pidfds() -> bool:
    """Whether the server can wait for its children and requests at once (pidfds: Linux 5.3
    and later); elsewhere every child is forked from the test process."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def stop_fork_server() -> None:
    global _FORK_SERVER
    if _FORK_SERVER is not None:
        _FORK_SERVER.close()
        _FORK_SERVER = None


def environment_as(env: dict[str, str]) -> dict[str, str | None]:
    """A forked child's changes that make its environment exactly ``env``."""
    return {**dict.fromkeys(os.environ), **env}


def call(*args: str) -> int:
    """In-process CLI call (fast), for tests that only need the exit code and files."""
    return tether_main(list(args))


# Test repositories never depend on the developer's git configuration or identity. conftest.py
# puts these in the environment of the whole test run, so tether's own git calls see them too.
GIT_TEST_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    # Every commit and fetch would start ``git maintenance run --auto`` after it, and every
    # push received ``git gc --auto``: a second git process, to tidy repositories that live
    # for one test. Every init and clone would copy git's sample hooks into the new one.
    "GIT_CONFIG_COUNT": "3",
    "GIT_CONFIG_KEY_0": "maintenance.auto",
    "GIT_CONFIG_VALUE_0": "false",
    "GIT_CONFIG_KEY_1": "receive.autoGC",
    "GIT_CONFIG_VALUE_1": "false",
    "GIT_CONFIG_KEY_2": "init.templateDir",
    "GIT_CONFIG_VALUE_2": "",
}


def git(repo: Path, *args: str) -> str:
    """The one way tests run git: in ``repo``, failing loudly, returning stdout."""
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_TEST_ENV},
    ).stdout


def pty_session(
    argv: list[str], replies: list[tuple[str, str]], timeout: float = 60
) -> tuple[int, str]:
    """tether with ``argv`` in a child forked onto a pseudo-terminal of its own (its
    controlling terminal, stdin, stdout and stderr), answering each (expected prompt, reply)
    in turn."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        run_as_cli_child(lambda: tether_main(list(argv)), 0, 1, 2)
    seen = b""
    deadline = time.monotonic() + timeout
    pending = list(replies)
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if pending and pending[0][0].encode() in seen.split(b"\x00")[-1]:
            prompt, reply = pending.pop(0)
            seen = seen.replace(prompt.encode(), b"<" + prompt.encode() + b">", 1)
            os.write(fd, reply.encode() + b"\n")
    done, status = os.waitpid(pid, os.WNOHANG)
    while done == 0 and time.monotonic() < deadline + 10:
        time.sleep(0.1)
        done, status = os.waitpid(pid, os.WNOHANG)
    if done == 0:  # still waiting for an answer nobody will type: stop it, and say so
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        seen += b"\n[killed at the deadline]"
    return os.waitstatus_to_exitcode(status), seen.decode(errors="replace")
