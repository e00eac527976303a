"""What the progress display costs: ``python -m bench.progress`` (or ``python bench/progress.py``).

Builds a seeded 5,000-file scenario (``--files`` to resize; the ratios of scenario a), then
times, one right after the other in every round and in alternating order:

* ``tether update --yes`` on a fresh copy of the customised project, and
* ``tether status`` on one copy of it, with its stat cache warm (nothing changed since the
  last look) and with the stat cache deleted first (every file hashed),

each with stderr on a pseudo-terminal (the stdlib ``pty``; progress drawn as a live line),
on the same terminal with ``-q`` (nothing drawn), on a pipe (nothing drawn) and on the
terminal with ``NO_COLOR=1`` (plain lines). stdout goes to /dev/null in every mode. The
cost of the display is the median of the per-round ratios live / ``-q``.

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
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import NEW, Built, Spec, build

MODES = ("live", "quiet", "pipe", "plain")
STAT_CACHE = ".tether/cache/stat.json"


def spec(files: int) -> Spec:
    return Spec("progress", "progress display", files, 5_000, 0.10, 0.03, 0.01, seed=20240610)


def run_in_mode(argv: list[str], mode: str) -> tuple[float, bytes]:
    """Wall time of one tether run whose stderr is set up for ``mode``; what stderr got."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    if mode == "plain":
        env["NO_COLOR"] = "1"
    command = [*measure.tether_command(), *argv, *(["-q"] if mode == "quiet" else [])]
    if mode == "pipe":
        with tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            code = subprocess.call(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env
            )
            seconds = time.perf_counter() - start
            err.seek(0)
            received = err.read()
    else:
        seconds, code, received = _on_terminal(command, env)
    if code not in (0, 4):
        raise RuntimeError(f"{' '.join(command)} failed ({code}): {received[-2000:]!r}")
    return seconds, received


def _on_terminal(command: list[str], env: dict[str, str]) -> tuple[float, int, bytes]:
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
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env
    )
    os.close(slave)
    code = proc.wait()
    seconds = time.perf_counter() - start
    reader.join()
    os.close(master)
    return seconds, code, b"".join(chunks)


def _check_drawn(mode: str, received: bytes, what: str) -> None:
    """The run really drew (or really did not): a measurement of the wrong thing is worse
    than none."""
    drawn = b"tether: " + what.encode() in received
    if drawn != (mode in ("live", "plain")) or ((b"\r" in received) != (mode == "live")):
        raise RuntimeError(f"{mode}: unexpected stderr {received[:300]!r}")


def measure_updates(built: Built, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_no in range(rounds):
        order = MODES if round_no % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            copy = measure.fresh_copy(built, f"{mode}-{round_no}")
            argv = ["update", "--yes", "--to", NEW, "-C", str(copy)]
            seconds, received = run_in_mode(argv, mode)
            _check_drawn(mode, received, "planning")
            times[mode].append(seconds)
            measure.discard(copy)
        print(f"  update round {round_no + 1}/{rounds} done", file=sys.stderr)
    return times


def measure_status(built: Built, rounds: int, cold: bool) -> dict[str, list[float]]:
    copy = measure.fresh_copy(built, "status")
    measure.prime_stat_cache(copy)
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_no in range(rounds):
        order = MODES if round_no % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            if cold:
                (copy / STAT_CACHE).unlink(missing_ok=True)
            seconds, received = run_in_mode(["status", "-C", str(copy)], mode)
            _check_drawn(mode, received, "checking")
            times[mode].append(seconds)
    measure.discard(copy)
    return times


def per_call_costs(calls: int = 200_000) -> dict[str, float]:
    """Nanoseconds per file of what flows call, in this process."""
    from tether import progress
    from tether.report.progress import LiveLine

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


def _row(label: str, times: dict[str, list[float]]) -> str:
    quiet = times["quiet"]
    cells = [f"{measure.median(times[m]) * 1000:,.0f} ms" for m in MODES]
    ratios = [
        measure.median([a / b for a, b in zip(times[m], quiet, strict=True)])
        for m in ("live", "pipe", "plain")
    ]
    shown = " / ".join(f"{r:.3f}" for r in ratios)
    return f"| {label} | {' | '.join(cells)} | {shown} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=7)
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
        update = measure_updates(built, args.rounds)
        warm = measure_status(built, args.rounds, cold=False)
        cold = measure_status(built, args.rounds, cold=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{args.files:,} files, {args.rounds} rounds, medians; cpus {os.cpu_count()}")
    print("| run | live line (pty) | -q (pty) | pipe | NO_COLOR (pty) | vs -q: live / pipe / plain |")
    print("|---|---|---|---|---|---|")
    print(_row("tether update --yes", update))
    print(_row("tether status, stat cache warm", warm))
    print(_row("tether status, no stat cache", cold))
    print()
    print("| per file, in-process | ns |")
    print("|---|---|")
    for label, nanoseconds in per_call_costs().items():
        print(f"| {label} | {nanoseconds:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
