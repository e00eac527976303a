"""Stand-in programs for the tests of the process edge, and a look at which processes live.

A stand-in is a shell script (it starts in a millisecond, so a short deadline is not spent
starting an interpreter): it records its pid and the pid of a child it starts in its own
process group, optionally ignores SIGINT and SIGTERM, and then waits, so a test can stop it
and see whether anything is left.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path


def hung_program(
    path: Path,
    pids: Path,
    *,
    ignore: tuple[str, ...] = (),
    on_signal: Path | None = None,
    before: str = "",
) -> Path:
    """A shell script at ``path`` that starts ``sleep 600`` in its own process group, writes
    ``<its pid> <sleep's pid>`` to ``pids``, ignores the signals named in ``ignore``
    (``"INT"``, ``"TERM"``: the sleep then ignores them too) and waits. With ``on_signal``
    each signal it does not ignore appends its name there and ends the script (exit 3),
    leaving the sleep behind. ``before`` is shell run first (print something, say)."""
    traps = f"trap '' {' '.join(ignore)}\n" if ignore else ""
    if on_signal is not None:
        traps += "".join(
            f"trap 'echo {name} >> {on_signal}; exit 3' {name}\n"
            for name in ("INT", "TERM")
            if name not in ignore
        )
    path.write_text(
        "#!/bin/sh\n"
        f"{before}\n"
        f"{traps}"
        "sleep 600 &\n"
        f'echo "$$ $!" > {pids}.tmp && mv {pids}.tmp {pids}\n'
        "wait\n"
    )
    path.chmod(0o755)
    return path


def recorded_pids(pids: Path, seconds: float = 30) -> list[int]:
    """The pids a stand-in wrote, waiting for the file."""
    deadline = time.monotonic() + seconds
    while not pids.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{pids} was never written")
        time.sleep(0.01)
    return [int(word) for word in pids.read_text().split() if int(word)]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that still runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def all_gone(pids: list[int], seconds: float = 10) -> bool:
    """Whether every process in ``pids`` has ended and its group is empty, within
    ``seconds`` (a killed orphan is reaped by whoever adopts it, a moment later)."""
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) or any(group_members(pid) for pid in pids[:1]):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill_leftovers(pids: list[int]) -> None:
    """After a failed assertion: nothing a test started outlives it."""
    import signal

    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
