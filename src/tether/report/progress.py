"""How the progress of long work is shown on stderr: one live line, plain lines, or nothing.

``choose`` decides once per run (see docs/cli.md):

* stderr is not a terminal, ``--json`` or ``-q``: nothing at all;
* a terminal with ``NO_COLOR`` set (to anything but the empty string), ``TERM=dumb``
  or ``--no-color`` (``report.style``): plain lines, one when a phase starts and one
  when it ends, never redrawn;
* any other terminal: one line redrawn in place with ``\\r`` at most ten times a second
  and cleared when the phase ends, so the command's own output starts on a clean line.

Only the innermost running phase is shown; when it ends, the one around it is again.
Standard library only: this module is imported on every run that has a terminal.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from types import TracebackType

from tether.progress import Sink
from tether.report.style import is_terminal, plain_requested

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import TextIO

PREFIX = "tether: "
LIVE_INTERVAL = 0.1  # seconds between two redraws of the live line
Clock = Callable[[], float]


def choose(
    stream: TextIO,
    *,
    quiet: bool,
    as_json: bool,
    environ: Mapping[str, str],
    no_color: bool = False,
) -> Sink | None:
    """The renderer for this run, or None when nothing is to be drawn."""
    if quiet or as_json or not is_terminal(stream):
        return None
    if plain_requested(environ, no_color):
        return PlainLines(stream)
    return LiveLine(stream)


def amount(n: int, unit: str) -> str:
    if unit == "bytes":
        return f"{n / 1_000_000:,.1f} MB"
    return f"{n:,} {unit}"


def describe(name: str, done: int, total: int | None, unit: str) -> str:
    """``planning 1,234/5,000 files (24%)``; without a total, what is done so far."""
    if total is not None and total > 0:
        share = min(100, done * 100 // total)
        count = amount(total, unit)
        if unit == "bytes":
            return f"{name} {done / 1_000_000:,.1f}/{count} ({share}%)"
        return f"{name} {done:,}/{count} ({share}%)"
    return f"{name} {amount(done, unit)}" if done else f"{name}..."


class _Running:
    """One phase while it runs: what the renderers draw from."""

    __slots__ = ("done", "name", "started", "total", "unit")

    def __init__(self, name: str, total: int | None, unit: str, started: float) -> None:
        self.name, self.total, self.unit = name, total, unit
        self.done = 0
        self.started = started


class LiveLine:
    """One line on a terminal, redrawn in place while phases advance."""

    def __init__(
        self, stream: TextIO, clock: Clock = time.monotonic, width: int | None = None
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.width = max(20, width or _columns(stream))
        self.running: list[_Running] = []
        self.next_draw = 0.0
        self.shown = 0  # characters of the line now on screen

    def phase(self, name: str, total: int | None, unit: str) -> _LivePhase:
        return _LivePhase(self, _Running(name, total, unit, self.clock()))

    def draw(self, now: float) -> None:
        top = self.running[-1]
        text = (PREFIX + describe(top.name, top.done, top.total, top.unit))[: self.width - 1]
        self.stream.write("\r" + text.ljust(self.shown))
        self.stream.flush()
        self.shown = len(text)
        self.next_draw = now + LIVE_INTERVAL

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0


class _LivePhase:
    __slots__ = ("line", "state")

    def __init__(self, line: LiveLine, state: _Running) -> None:
        self.line, self.state = line, state

    def advance(self, n: int = 1) -> None:
        self.state.done += n
        line = self.line
        if line.running[-1] is self.state and (now := line.clock()) >= line.next_draw:
            line.draw(now)

    def __enter__(self) -> _LivePhase:
        self.line.running.append(self.state)
        self.line.draw(self.line.clock())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        line = self.line
        line.running.remove(self.state)
        line.clear()
        if line.running:
            line.draw(line.clock())


class PlainLines:
    """A line when a phase starts and one when it ends: for terminals that cannot redraw
    (``TERM=dumb``) and people who asked for plain output (``NO_COLOR``)."""

    def __init__(self, stream: TextIO, clock: Clock = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock

    def phase(self, name: str, total: int | None, unit: str) -> _PlainPhase:
        return _PlainPhase(self, _Running(name, total, unit, self.clock()))

    def say(self, text: str) -> None:
        self.stream.write(PREFIX + text + "\n")
        self.stream.flush()


class _PlainPhase:
    __slots__ = ("lines", "state")

    def __init__(self, lines: PlainLines, state: _Running) -> None:
        self.lines, self.state = lines, state

    def advance(self, n: int = 1) -> None:
        self.state.done += n

    def __enter__(self) -> _PlainPhase:
        state = self.state
        if state.total is None:
            self.lines.say(f"{state.name}...")
        else:
            self.lines.say(f"{state.name} {amount(state.total, state.unit)}...")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        state = self.state
        seconds = self.lines.clock() - state.started
        done = f", {amount(state.done, state.unit)}" if state.done else ""
        ended = "stopped" if kind is not None else "done"
        self.lines.say(f"{state.name} {ended}{done} in {seconds:.1f} s")


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80
