"""Fault injection for the crash-safety tests.

``TETHER_CRASH_AFTER=<step>:<n>`` makes the process die with ``os._exit(99)`` right after the
n-th (1-based) journal record of ``<step>`` written by this process has been fsync'd. Only the
journal's append path (and a campaign's durable record write, step ``campaign-record``) calls
:func:`after_append`, so every crash lands on a boundary the journal knows about, and a test can
enumerate those boundaries from a real run's journal with :func:`points` instead of keeping a
hand-written list.

``TETHER_CRASH_TRIGGER=<step>@<path>`` crashes across processes, once: the first process to
append ``<step>`` while the file ``<path>`` exists removes it and dies. Removing a file
succeeds for one process only, so of many workers (a campaign's pool or Dask workers, which
all inherit the variable) exactly one dies, at a moment the test chooses by creating the file.

``TETHER_PAUSE_AT=<step>:<n>@<path>`` holds a process still, alive, right after its n-th
append of ``<step>`` for as long as the file ``<path>`` exists (two minutes at most): a test
that stops a run from outside (Ctrl-C, kill -9) then does it mid-update at a point it knows,
with small trees, instead of racing a long update.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping

from tether.errors import TetherError

ENV_VAR = "TETHER_CRASH_AFTER"
TRIGGER_VAR = "TETHER_CRASH_TRIGGER"
PAUSE_VAR = "TETHER_PAUSE_AT"
PAUSE_LIMIT = 120.0  # seconds: a gate a test forgot to remove never holds a run forever
EXIT_CODE = 99

# Compiled on first use (re keeps it): only a run under test sets a crash point.
_SPEC = r"(?P<step>[a-z][a-z0-9-]*):(?P<count>[1-9][0-9]*)"

# Appends seen by this process, per step. Counted whether or not a crash is asked for, so the
# numbering is the process's own and does not depend on when the variable was read.
_counts: Counter[str] = Counter()


def parse_spec(spec: str, variable: str = ENV_VAR) -> tuple[str, int]:
    """``"file-written:2"`` → ``("file-written", 2)``; anything else is a harness mistake."""
    match = re.fullmatch(_SPEC, spec.strip())
    if match is None:
        raise TetherError(f"{variable} must look like <step-name>:<n> with n >= 1, got {spec!r}")
    return match["step"], int(match["count"])


def after_append(step: str) -> None:
    """Count one durable append of ``step`` and die here if the crash point says so."""
    _counts[step] += 1
    _pull_trigger(step)
    _hold_at_gate(step)
    spec = os.environ.get(ENV_VAR)
    if not spec:
        return
    target, count = parse_spec(spec)
    if step == target and _counts[step] == count:
        # os._exit skips atexit handlers, finally blocks and buffer flushes: the nearest thing
        # to a power cut that a test can trigger from inside the process.
        os._exit(EXIT_CODE)


def reached(step: str) -> None:
    """A boundary outside the journal (``step`` names the moment, not a record): counted and
    honoured as an append is, so ``TETHER_CRASH_AFTER=<step>:<n>`` dies there too."""
    after_append(step)


def _file_armed_at(variable: str, step: str, *, counted: bool) -> str | None:
    """The file ``variable`` (``<step>@<file>``, or ``<step>:<n>@<file>`` when ``counted``)
    names, when it is set for this step (and, counted, this append of it); else None."""
    value = os.environ.get(variable)
    if not value:
        return None
    spec, _, path = value.partition("@")
    if counted:
        target, count = parse_spec(spec, variable)
        armed = step == target and _counts[step] == count
    else:
        armed = step == spec
    return path if armed and path else None


def _pull_trigger(step: str) -> None:
    path = _file_armed_at(TRIGGER_VAR, step, counted=False)
    if path is None:
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    os._exit(EXIT_CODE)


def _hold_at_gate(step: str) -> None:
    gate = _file_armed_at(PAUSE_VAR, step, counted=True)
    if gate is None:
        return
    deadline = time.monotonic() + PAUSE_LIMIT
    # Signals still arrive while held: their handlers run between the sleeps.
    while os.path.lexists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)


def reset() -> None:
    """Forget this process's counts (for tests that append in-process)."""
    _counts.clear()


def points(records: Iterable[Mapping[str, object]]) -> list[str]:
    """Every crash point the given records pass through, in order, as ``"step:n"`` specs.

    Feed it the records one uninterrupted process wrote (for example one run's records) and
    each returned spec, set as ``TETHER_CRASH_AFTER``, stops a rerun right after that record.
    """
    seen: Counter[str] = Counter()
    specs: list[str] = []
    for record in records:
        step = str(record["step"])
        seen[step] += 1
        specs.append(f"{step}:{seen[step]}")
    return specs
