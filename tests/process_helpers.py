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
from typing import NamedTuple


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
        "child=$!\n"
        # Each pid with its start time (field 22 of /proc/PID/stat), so a pid the system
        # hands to another process later is not taken for this one.
        f'echo "$$ $(cut -d" " -f22 /proc/$$/stat) $child $(cut -d" " -f22 /proc/$child/stat)"'
        f" > {pids}.tmp && mv {pids}.tmp {pids}\n"
        "wait\n"
    )
    path.chmod(0o755)
    return path


class Proc(NamedTuple):
    """A process as a stand-in recorded it: its pid and its start time (clock ticks since
    boot), which tell it from a later process given the same pid."""

    pid: int
    start: int


def recorded_pids(pids: Path, seconds: float = 30) -> list[Proc]:
    """The processes a stand-in recorded (itself first, then its child), waiting up to
    ``seconds`` for the file."""
    deadline = time.monotonic() + seconds
    while not pids.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{pids} was never written")
        time.sleep(0.01)
    words = [int(word) for word in pids.read_text().split()]
    return [Proc(pid, start) for pid, start in zip(words[::2], words[1::2], strict=True)]


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), None when gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def alive(proc: Proc) -> bool:
    """Whether the process still runs: its pid names the process that started then, and it
    is no zombie (a zombie has ended)."""
    fields = _stat(proc.pid)
    return fields is not None and int(fields[19]) == proc.start and fields[0] not in ("Z", "X")


def group_members(leader: Proc, latest: int) -> list[int]:
    """The live processes of the process group ``leader`` leads that started no later than
    ``latest`` (a group with the same id made after it emptied is another group)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None or fields[0] in ("Z", "X"):
            continue
        if int(fields[2]) == leader.pid and int(fields[19]) <= latest:
            members.append(int(entry.name))
    return members


def all_gone(procs: list[Proc], seconds: float = 10) -> bool:
    """Whether every recorded process has ended and the group the first one leads has no
    member left, within ``seconds`` (a killed orphan is reaped by whoever adopts it, a
    moment later)."""
    latest = max(proc.start for proc in procs)
    deadline = time.monotonic() + seconds
    while any(alive(proc) for proc in procs) or group_members(procs[0], latest):
        if time.monotonic() > deadline:
            left = [proc for proc in procs if alive(proc)]
            print(f"still running: {left}; group: {group_members(procs[0], latest)}")
            return False
        time.sleep(0.02)
    return True


def kill_leftovers(procs: list[Proc]) -> None:
    """After a failed assertion: nothing a test started outlives it."""
    import signal

    for proc in procs:
        if alive(proc):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)
