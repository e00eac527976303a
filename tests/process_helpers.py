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


def recorded_pids(pids: Path, seconds: float = 120) -> list[Proc]:
    """The processes a stand-in recorded (itself first, then its child), as soon as the
    file is there; ``seconds`` only bounds a start that never comes (a loaded machine can
    take many seconds to fork and start a program)."""
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


def all_gone(procs: list[Proc], seconds: float = 60) -> bool:
    """Whether every recorded process has ended and the group the first one leads has no
    member left, as soon as that is so; ``seconds`` only bounds an end that never comes (a
    killed orphan is reaped by whoever adopts it, later on a loaded machine)."""
    latest = max(proc.start for proc in procs)
    deadline = time.monotonic() + seconds
    while any(alive(proc) for proc in procs) or group_members(procs[0], latest):
        if time.monotonic() > deadline:
            left = [proc for proc in procs if alive(proc)]
            print(f"still running: {left}; group: {group_members(procs[0], latest)}")
            return False
        time.sleep(0.02)
    return True


def none_left_in(folder: Path, seconds: float = 60) -> bool:
    """Whether no live process has its working folder in ``folder`` (a program run there
    and whatever it started), as soon as that is so; ``seconds`` only bounds an end that
    never comes."""
    deadline = time.monotonic() + seconds
    while True:
        left = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                where = Path(os.readlink(entry / "cwd"))
            except OSError:  # gone meanwhile, or not ours to look at
                continue
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] not in ("Z", "X") and where.is_relative_to(folder):
                left.append(int(entry.name))
        if not left:
            return True
        if time.monotonic() > deadline:
            print(f"still running in {folder}: {left}")
            return False
        time.sleep(0.02)


def signal_delivered(pid: int, signum: int, seconds: float = 120) -> bool:
    """Whether ``signum``, sent to the process ``pid``, has reached it: pending neither on
    the process nor on any of its threads (or the process is gone), waiting as long as
    ``seconds`` for that. Once it is delivered the program's handler has run or runs
    before the program's next step, so a test that lets the program go on afterwards
    knows the signal landed first, on a machine of any load."""
    bit = 1 << (signum - 1)
    deadline = time.monotonic() + seconds
    while True:
        pending = 0
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            try:
                lines = status.read_text().splitlines()
            except (FileNotFoundError, ProcessLookupError):
                continue  # the thread ended meanwhile
            for line in lines:
                if line.startswith(("SigPnd:", "ShdPnd:")):
                    pending |= int(line.split()[1], 16)
        if not pending & bit:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def kill_leftovers(procs: list[Proc]) -> None:
    """After a failed assertion: nothing a test started outlives it."""
    import signal

    for proc in procs:
        if alive(proc):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)
