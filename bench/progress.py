"""What the progress display costs: ``python -m bench.progress`` (or ``python bench/progress.py``).

Builds a seeded 5,000-file scenario (``--files`` to resize; the ratios of scenario a), then
times, one right after the other in every round and in alternating order:

* ``tether update --yes`` on a fresh copy of the customised project, and
* ``tether status`` on one copy of it, with its stat cache warm (nothing changed since the
  last look) and with the stat cache deleted first (every file hashed), more rounds
  (``--status-rounds``) since each run is short,

each with stderr on a pseudo-terminal (the stdlib ``pty``; progress drawn as a live line),
on the same terminal with ``-q`` (nothing drawn), on a pipe (nothing drawn) and on the
terminal with ``NO_COLOR=1`` (plain lines). stdout goes to /dev/null in every mode. Wall
time and the process's own CPU time (``wait4``) are kept; the cost of the display is the
median of the per-round ratios live / ``-q``.

It also times the calls flows make per file, in-process: ``advance()`` with nobody
listening, with the live renderer listening (a redraw at most every 0.1 s), and the
``progress.tracked`` loop header against a bare ``for`` loop.
"""

from __future__ import annotations

import argparse
import io
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tty
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import NEW, Built, Spec, build
from tether.report.progress import LiveLine

MODES = ("live", "quiet", "pipe", "plain")
STAT_CACHE = ".tether/cache/stat.json"


def spec(files: int) -> Spec:
    return Spec("progress", "progress display", files, 5_000, 0.10, 0.03, 0.01, seed=20240610)


@dataclass
class Timing:
    wall: float
    cpu: float  # user + system time of the tether process itself


def run_in_mode(argv: list[str], mode: str) -> tuple[Timing, bytes]:
    """Times of one tether run whose stderr is set up for ``mode``; what stderr got."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    if mode == "plain":
        env["NO_COLOR"] = "1"
    command = [*measure.tether_command(), *argv, *(["-q"] if mode == "quiet" else [])]
    if mode == "pipe":
        with tempfile.TemporaryFile() as err:
            timing, code = _timed(command, env, err.fileno())
            err.seek(0)
            received = err.read()
    else:
        timing, code, received = _on_terminal(command, env)
    if code not in (0, 4):
        raise RuntimeError(f"{' '.join(command)} failed ({code}): {received[-2000:]!r}")
    return timing, received


def _timed(command: list[str], env: dict[str, str], stderr: int) -> tuple[Timing, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Timing(wall, usage.ru_utime + usage.ru_stime), proc.returncode


def _on_terminal(command: list[str], env: dict[str, str]) -> tuple[Timing, int, bytes]:
    master, slave = pty.openpty()
    tty.setraw(slave)
    chunks: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=pump)
    reader.start()
    try:
        timing, code = _timed(command, env, slave)
    finally:
        os.close(slave)
        reader.join()
        os.close(master)
    return timing, code, b"".join(chunks)


def _check_drawn(mode: str, received: bytes, what: str) -> None:
    """The run really drew (or really did not): a measurement of the wrong thing is worse
    than none."""
    drawn = b"tether: " + what.encode() in received
    if drawn != (mode in ("live", "plain")) or ((b"\r" in received) != (mode == "live")):
        raise RuntimeError(f"{mode}: unexpected stderr {received[:300]!r}")


def measure_updates(built: Built, rounds: int) -> dict[str, list[Timing]]:
    times: dict[str, list[Timing]] = {mode: [] for mode in MODES}
    for round_no in range(rounds):
        order = MODES if round_no % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            copy = measure.fresh_copy(built, f"{mode}-{round_no}")
            argv = ["update", "--yes", "--to", NEW, "-C", str(copy)]
            timing, received = run_in_mode(argv, mode)
            _check_drawn(mode, received, "planning")
            times[mode].append(timing)
            measure.discard(copy)
        print(f"  update round {round_no + 1}/{rounds} done", file=sys.stderr)
    return times


def measure_status(built: Built, rounds: int, cold: bool) -> dict[str, list[Timing]]:
    copy = measure.fresh_copy(built, "status")
    measure.prime_stat_cache(copy)
    times: dict[str, list[Timing]] = {mode: [] for mode in MODES}
    for round_no in range(rounds):
        order = MODES if round_no % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            if cold:
                (copy / STAT_CACHE).unlink(missing_ok=True)
            timing, received = run_in_mode(["status", "-C", str(copy)], mode)
            _check_drawn(mode, received, "checking")
            times[mode].append(timing)
    measure.discard(copy)
    return times


def per_call_costs(calls: int = 200_000) -> dict[str, float]:
    """Nanoseconds per file of what flows call, in this process."""
    from tether import progress

    items = list(range(calls))

    def per_call(run: object) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            run()  # type: ignore[operator]
            best = min(best, time.perf_counter() - start)
        return best / calls * 1e9

    def bare() -> None:
        for _ in items:
            pass

    def tracked() -> None:
        for _ in progress.tracked("x", items):
            pass

    def advance() -> None:
        with progress.phase("x", calls) as step:
            for _ in items:
                step.advance()

    base = per_call(bare)
    costs = {
        "for loop alone": base,
        "advance(), nobody listening": per_call(advance) - base,
        "tracked() loop header, nobody listening": per_call(tracked) - base,
    }
    with progress.use(LiveLine(io.StringIO(), width=80)):
        costs["advance(), live line listening"] = per_call(advance) - base
        costs["tracked() loop header, live line listening"] = per_call(tracked) - base
    return costs


def display_accounting(built: Built) -> dict[str, float]:
    """One ``tether update`` and one ``status`` in this process with the live line drawn on a
    pseudo-terminal, the renderer timing its own drawing: its whole share, without the
    run-to-run noise of separate processes."""
    from tether import progress
    from tether.flows.plan import UpdateOptions
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update

    per_advance = per_call_costs(50_000)
    extra_ns = (
        per_advance["advance(), live line listening"] - per_advance["advance(), nobody listening"]
    )
    copy = measure.fresh_copy(built, "accounting")
    master, slave = pty.openpty()
    drain = threading.Thread(target=_drain, args=(master,))
    drain.start()
    result: dict[str, float] = {}
    try:
        with os.fdopen(slave, "w", closefd=False) as terminal:
            for label, run in (
                ("update", lambda: run_update(UpdateRequest(copy, NEW, options=UpdateOptions()))),
                ("status", lambda: project_status(copy)),
            ):
                line = _Accounting(terminal)
                start = time.perf_counter()
                with progress.use(line):
                    run()
                wall = time.perf_counter() - start
                own = line.draw_seconds + line.advanced * extra_ns / 1e9
                result[f"{label}: wall ms"] = wall * 1000
                result[f"{label}: display ms"] = own * 1000
                result[f"{label}: draws"] = line.draws
                result[f"{label}: units advanced"] = line.advanced
    finally:
        os.close(slave)
        drain.join()
        os.close(master)
        measure.discard(copy)
    return result


def _drain(master: int) -> None:
    while True:
        try:
            if not os.read(master, 65536):
                return
        except OSError:
            return


class _Accounting(LiveLine):
    """The live line, keeping count of its draws and the time they took."""

    def __init__(self, stream: io.TextIOBase) -> None:
        super().__init__(stream, width=120)  # type: ignore[arg-type]
        self.draws = 0
        self.draw_seconds = 0.0
        self.states: list[object] = []

    def phase(self, name: str, total: int | None, unit: str):  # type: ignore[no-untyped-def]
        live = super().phase(name, total, unit)
        self.states.append(live.state)
        return live

    def draw(self, now: float) -> None:
        start = time.perf_counter()
        super().draw(now)
        self.draw_seconds += time.perf_counter() - start
        self.draws += 1

    def clear(self) -> None:
        start = time.perf_counter()
        super().clear()
        self.draw_seconds += time.perf_counter() - start

    @property
    def advanced(self) -> int:
        return sum(state.done for state in self.states)  # type: ignore[attr-defined]


def _row(label: str, times: dict[str, list[Timing]]) -> str:
    """Median wall and CPU time per mode, and the median of per-round ratios to ``-q``."""
    cells = []
    for mode in MODES:
        wall = measure.median([t.wall for t in times[mode]])
        cpu = measure.median([t.cpu for t in times[mode]])
        cells.append(f"{wall * 1000:,.0f} / {cpu * 1000:,.0f} ms")
    ratios = []
    for mode in ("live", "pipe", "plain"):
        pairs = list(zip(times[mode], times["quiet"], strict=True))
        wall = measure.median([a.wall / b.wall for a, b in pairs])
        cpu = measure.median([a.cpu / b.cpu for a, b in pairs if b.cpu > 0])
        ratios.append(f"{wall:.3f} / {cpu:.3f}")
    return f"| {label} | {' | '.join(cells)} | {' | '.join(ratios)} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=7, help="update runs per mode")
    parser.add_argument("--status-rounds", type=int, default=30, help="status runs per mode")
    parser.add_argument("--workdir", type=Path, help="build here (default: a temp folder)")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="tether-bench-progress-"))
    try:
        started = time.perf_counter()
        built = build(spec(args.files), work)
        print(
            f"built {len(built.b_paths):,} files ({built.bytes_b / 1e6:.1f} MB) "
            f"in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
        accounting = display_accounting(built)
        update = measure_updates(built, args.rounds)
        warm = measure_status(built, args.status_rounds, cold=False)
        cold = measure_status(built, args.status_rounds, cold=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.files:,} files; {args.rounds} update and {args.status_rounds} status runs per "
        f"mode; cpus {os.cpu_count()}. Cells: median wall / CPU; ratios: median of per-round "
        "wall / CPU ratios to -q on the same terminal."
    )
    print(
        "| run | live line (pty) | -q (pty) | pipe | NO_COLOR (pty) "
        "| live : -q | pipe : -q | NO_COLOR : -q |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(_row("tether update --yes", update))
    print(_row("tether status, stat cache warm", warm))
    print(_row("tether status, no stat cache", cold))
    print()
    print("| in-process, live line on a pty | value |")
    print("|---|---|")
    for label, value in accounting.items():
        print(f"| {label} | {value:,.1f} |")
    print()
    print("| per file, in-process | ns |")
    print("|---|---|")
    for label, nanoseconds in per_call_costs().items():
        print(f"| {label} | {nanoseconds:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
