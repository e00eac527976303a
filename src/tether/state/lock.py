"""One writer per project: an exclusive lock held for the whole of a run.

On POSIX the lock is ``flock(LOCK_EX | LOCK_NB)`` on the lock file. The kernel drops it when the
holding process dies for any reason (kill -9 included), so a lock can never outlive its run and
a stale lock file never blocks anyone. The file also carries ``{"pid", "started", "command"}``
as JSON, only so the refusal message can say who holds it.

The lock file is deliberately left on disk after release (emptied, so it names nobody).
Unlinking it would open a race: a waiter that opened the old file could lock the unlinked inode
while a third process creates and locks a new file, and both would believe they are alone.

Without ``fcntl`` (Windows) the fallback is a pid file: created exclusively, removed on release,
and reclaimed when the pid it names is no longer running. Two known limits of that fallback:
a reused pid looks alive (the run is refused until that process ends), and two processes
reclaiming the same stale file at the same instant may both succeed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from tether.errors import TetherError
from tether.fsio import read_bytes
from tether.parselimits import json_loads
from tether.valueclass import valueclass

if sys.platform != "win32":
    import fcntl

HAS_FLOCK = sys.platform != "win32"

# A holder writes its owner record just after it gets the lock; a refused run that reads the
# file in between sees it empty, so it looks again a few times before saying "unknown".
_OWNER_READ_TRIES = 10
_OWNER_READ_PAUSE = 0.01


@valueclass(frozen=True)
class LockOwner:
    """Who holds (or last held) a lock, as recorded in the lock file."""

    pid: int | None
    started: str | None
    command: str | None

    def describe(self) -> str:
        pid = "unknown" if self.pid is None else str(self.pid)
        return f"pid {pid}, started {self.started or 'unknown'}"


class ProjectLock:
    """``with ProjectLock(path, command="update"):`` runs the block as the project's only writer.

    A second holder (another process, or another ``ProjectLock`` on the same file in this
    process) is refused at once with a :class:`TetherError`; nothing waits.
    """

    def __init__(self, path: Path, command: str = "", *, pid_file: bool | None = None) -> None:
        self.path = path
        self.command = command
        # None picks by platform; True forces the pid-file fallback (tests, odd filesystems).
        self._pid_file = (not HAS_FLOCK) if pid_file is None else pid_file
        self._fd: int | None = None
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def acquire(self) -> None:
        if self._held:
            raise RuntimeError(f"{self.path} is already held by this lock object")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = _owner_record(self.command)
        if self._pid_file:
            _acquire_pid_file(self.path, record)
        else:
            self._fd = _acquire_flock(self.path, record)
        self._held = True

    def release(self) -> None:
        if not self._held:
            return
        try:
            if self._fd is not None:
                _release_flock(self._fd)
            else:
                _release_pid_file(self.path)
        finally:
            self._fd = None
            self._held = False

    def __enter__(self) -> ProjectLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()


def read_owner(path: Path) -> LockOwner | None:
    """The owner recorded in a lock file, or None when it is missing, empty or unreadable."""
    try:
        text = read_bytes(path).decode("utf-8")
    except OSError:
        return None
    try:
        data = json_loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    started = data.get("started")
    command = data.get("command")
    return LockOwner(
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        started=started if isinstance(started, str) else None,
        command=command if isinstance(command, str) else None,
    )


def lock_holder(path: Path) -> LockOwner | None:
    """Who holds the lock at ``path`` right now, without taking it or creating the file;
    None when nobody does. For read-only commands that must not report a tree in flux as
    settled."""
    if not HAS_FLOCK:
        owner = read_owner(path)
        alive = owner is not None and owner.pid is not None and pid_alive(owner.pid)
        return owner if alive else None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None  # no lock file: no run has ever held it, or it cannot be read
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _wait_for_owner(path) or LockOwner(None, None, None)
    except OSError:
        return None
    finally:
        os.close(fd)  # also drops the shared lock when it was taken
    return None


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid is running (the pid-file fallback's staleness test)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it just belongs to someone else
    return True


def _owner_record(command: str) -> bytes:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # datetime costs 1 ms
    owner = {"pid": os.getpid(), "started": started, "command": command}
    return (json.dumps(owner) + "\n").encode("utf-8")


def _busy(owner: LockOwner | None) -> TetherError:
    who = (owner or LockOwner(None, None, None)).describe()
    return TetherError(f"another tether run is in progress ({who})")


def _wait_for_owner(path: Path) -> LockOwner | None:
    for _ in range(_OWNER_READ_TRIES):
        owner = read_owner(path)
        if owner is not None and owner.pid is not None:
            return owner
        time.sleep(_OWNER_READ_PAUSE)
    return read_owner(path)


def _acquire_flock(path: Path, record: bytes) -> int:
    # os.open descriptors are not inherited by child processes (PEP 446), so a long-lived
    # child (git, a regenerate script) can never keep the lock alive after tether dies.
    fd = _open_lock_file(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _busy(_wait_for_owner(path)) from None
    except OSError as error:  # e.g. a network filesystem without lock support
        os.close(fd)
        raise TetherError(f"cannot lock {path}: {error.strerror}") from None
    except BaseException:
        os.close(fd)
        raise
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_lock_file(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags, 0o644)
    except IsADirectoryError:
        raise TetherError(f"{path}: a folder stands where tether keeps its lock file") from None
    except OSError as error:
        raise TetherError(f"cannot lock {path}: {error.strerror}") from None


def _release_flock(fd: int) -> None:
    try:
        # Empty the file while still holding it, so what stays on disk names nobody.
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the last descriptor drops the flock


def _acquire_pid_file(path: Path, record: bytes) -> None:
    # Two tries: the second follows the removal of a file whose owner is dead.
    for _ in range(2):
        if _create_exclusive(path, record):
            return
        owner = read_owner(path)
        if owner is not None and owner.pid is not None and pid_alive(owner.pid):
            raise _busy(owner)
        # Files are published complete (see _create_exclusive), so an unreadable one is
        # damaged rather than half-written: treat it as stale like a dead owner's.
        path.unlink(missing_ok=True)
    raise _busy(read_owner(path))


def _create_exclusive(path: Path, record: bytes) -> bool:
    """Publish ``record`` at ``path`` only if nothing is there, never showing a partial file."""
    temp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    temp.write_bytes(record)
    try:
        os.link(temp, path)  # fails if path exists, on POSIX and on NTFS alike
    except FileExistsError:
        return False
    finally:
        temp.unlink()
    return True


def _release_pid_file(path: Path) -> None:
    owner = read_owner(path)
    # Remove only our own file: after a reclaim race it may belong to someone else.
    if owner is not None and owner.pid == os.getpid():
        path.unlink(missing_ok=True)


if sys.platform == "win32":

    def _windows_pid_alive(pid: int) -> bool:
        # os.kill(pid, 0) would terminate the process on Windows, so ask the kernel instead.
        import ctypes

        query_limited_information = 0x1000
        still_active = 259
        access_denied = 5
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(query_limited_information, False, pid)
        if not handle:
            return ctypes.get_last_error() == access_denied  # exists, not ours to query
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == still_active
        finally:
            kernel32.CloseHandle(handle)
