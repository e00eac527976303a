"""The project lock: one writer at a time, and never a lock that outlives its process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.errors import TetherError
from tether.state.lock import HAS_FLOCK, ProjectLock, pid_alive, read_owner

needs_flock = pytest.mark.skipif(not HAS_FLOCK, reason="flock is POSIX-only")

HOLDER = """
import sys, time
from pathlib import Path
from tether.state.lock import ProjectLock
with ProjectLock(Path(sys.argv[1]), command="update"):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A real second process that holds the lock until it is killed."""
    lock_path = tmp_path / ".tether" / "lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=10)
    return proc.pid


@needs_flock
def test_second_process_is_refused_with_owner(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(TetherError) as caught, ProjectLock(tmp_path / ".tether" / "lock"):
        pass
    message = str(caught.value)
    assert message.startswith("another tether run is in progress (pid ")
    assert f"(pid {holder.pid}, started 20" in message
    assert "\n" not in message


@needs_flock
def test_lock_is_free_after_kill_9(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    lock_path = tmp_path / ".tether" / "lock"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    # The killed holder's record is still on disk; it must not matter.
    assert (owner := read_owner(lock_path)) is not None and owner.pid == holder.pid
    with ProjectLock(lock_path, command="update") as lock:
        assert lock.held
        assert (owner := read_owner(lock_path)) is not None and owner.pid == os.getpid()


def test_records_owner_and_empties_file_on_release(tmp_path: Path) -> None:
    lock_path = tmp_path / "state" / "lock"
    with ProjectLock(lock_path, command="reapply"):
        data = json.loads(lock_path.read_text())
        assert data["pid"] == os.getpid()
        assert data["command"] == "reapply"
        assert data["started"].endswith("Z")
    assert lock_path.exists() and lock_path.read_text() == ""  # left on disk, naming nobody


def test_second_lock_in_same_process_is_refused(tmp_path: Path) -> None:
    lock_path = tmp_path / "lock"
    with ProjectLock(lock_path), pytest.raises(TetherError, match=f"pid {os.getpid()}"):
        ProjectLock(lock_path).acquire()


def test_released_on_exception_and_reacquirable(tmp_path: Path) -> None:
    lock_path = tmp_path / "lock"
    lock = ProjectLock(lock_path)
    with pytest.raises(KeyError), lock:
        raise KeyError("boom")
    assert not lock.held
    with ProjectLock(lock_path):
        pass


def test_stale_file_from_dead_process_does_not_block(tmp_path: Path) -> None:
    lock_path = tmp_path / "lock"
    stale = {"pid": dead_pid(), "started": "2000-01-01T00:00:00Z", "command": "update"}
    lock_path.write_text(json.dumps(stale))
    with ProjectLock(lock_path) as lock:
        assert lock.held
        assert json.loads(lock_path.read_text())["pid"] == os.getpid()


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert not pid_alive(0)
    assert not pid_alive(-5)


def test_pid_file_fallback_refuses_live_owner_and_reclaims_dead_one(tmp_path: Path) -> None:
    lock_path = tmp_path / "lock"
    refused = pytest.raises(TetherError, match=f"pid {os.getpid()}")
    with ProjectLock(lock_path, pid_file=True), refused:
        ProjectLock(lock_path, pid_file=True).acquire()
    assert not lock_path.exists()  # the pid file is removed on release

    lock_path.write_text(json.dumps({"pid": dead_pid(), "started": "x", "command": "update"}))
    with ProjectLock(lock_path, pid_file=True):
        assert (owner := read_owner(lock_path)) is not None and owner.pid == os.getpid()
    assert not lock_path.exists()
