"""Timers for the benchmarks: child processes (wall time and their own peak RSS), the
hashing floor, the bash recipe, a ``git merge-file`` loop and cProfile of in-process flows."""

from __future__ import annotations

import cProfile
import hashlib
import io
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench.scenarios import NEW, Built, fresh_project

RECIPE = Path(__file__).with_name("recipe.sh")


@dataclass
class ChildRun:
    seconds: float
    cpu_seconds: float  # user + system time of the process itself
    max_rss_kib: int
    returncode: int
    stdout: bytes
    stderr: bytes


def tether_command() -> list[str]:
    """The console script of the interpreter running the bench (not a version-manager shim,
    whose own start-up would be measured too)."""
    script = Path(sys.executable).with_name("tether")
    if script.is_file():
        return [str(script)]
    found = shutil.which("tether")
    return [found] if found else [sys.executable, "-m", "tether"]


def run_child(
    argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> ChildRun:
    """Run one process; its wall time and the peak RSS of that process alone (``wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL
        )
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return ChildRun(seconds, cpu, usage.ru_maxrss, proc.returncode, out.read(), err.read())


def hash_files(paths: Iterable[Path], passes: int = 2) -> float:
    """Seconds to read and sha256 every file once, in Python, one after the other: the best
    of ``passes`` back-to-back passes, so the first also warms the page cache."""
    files = list(paths)
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for path in files:
            hashlib.sha256(path.read_bytes()).digest()
        best = min(best, time.perf_counter() - start)
    return best


def warm(paths: Iterable[Path]) -> None:
    for path in paths:
        path.read_bytes()


def fresh_copy(built: Built, name: str) -> Path:
    """A copy of the scenario's project for one run that changes it; flushed to disk first so
    the previous run's writeback does not land inside the next timing."""
    target = built.root / "runs" / name
    fresh_project(built, target)
    os.sync()
    return target


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    os.sync()


# The same CLI in a child whose os.fsync does nothing: a diagnostic that shows how much of
# an update's wall time is spent waiting for durable writes. Not a mode tether offers.
NO_FSYNC = (
    "import os, sys; os.fsync = lambda fd: None; "
    "from tether.cli.main import main; raise SystemExit(main(sys.argv[1:]))"
)


def tether_update(
    built: Built, project: Path, fsync: bool = True
) -> tuple[ChildRun, dict[str, int]]:
    """``tether update --yes --to NEW --json -C project``; the count per bucket it reports."""
    command = tether_command() if fsync else [sys.executable, "-c", NO_FSYNC]
    run = run_child([*command, "update", "--yes", "--to", NEW, "--json", "-C", str(project)])
    if run.returncode not in (0, 4):
        detail = run.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"tether update failed ({run.returncode}): {detail}")
    report = json.loads(run.stdout)
    counts = {name: len(paths) for name, paths in report["buckets"].items() if paths}
    return run, counts


RACY_WAIT = 2.5  # tether trusts a stat-cache entry only for files older than 2 s at recording


def prime_stat_cache(project: Path) -> None:
    """Let the copy's files age past the racy margin, then have ``tether status`` record
    them: the state of a working copy where tether ran before."""
    time.sleep(RACY_WAIT)
    tether_status(project)


def tether_status(project: Path) -> ChildRun:
    run = run_child([*tether_command(), "status", "-C", str(project)])
    if run.returncode != 0:
        raise RuntimeError(f"tether status failed: {run.stderr.decode(errors='replace')[-2000:]}")
    return run


def recipe(built: Built, project: Path, merge: str = "diff") -> tuple[ChildRun, str]:
    """The bash recipe over a project copy; its summary line."""
    env = {**os.environ, "RECIPE_MERGE": merge}
    argv = [
        "bash",
        str(RECIPE),
        str(built.base_dir),
        str(built.latest_dir),
        str(project),
        str(built.paths_file),
    ]
    run = run_child(argv, env=env)
    if run.returncode != 0:
        raise RuntimeError(f"recipe failed: {run.stderr.decode(errors='replace')[-2000:]}")
    lines = run.stdout.decode().strip().splitlines()
    return run, lines[-1] if lines else ""


def git_merge_loop(built: Built, rels: list[str]) -> tuple[float, int]:
    """``git merge-file -p --diff3`` once per path (A, B, L), output discarded: the engine
    cost a tool pays when it calls git per file. Seconds and how many had conflicts."""
    conflicted = 0
    start = time.perf_counter()
    for rel in rels:
        result = subprocess.run(
            [
                "git",
                "merge-file",
                "-p",
                "--diff3",
                "-L",
                "mine",
                "-L",
                "base",
                "-L",
                "theirs",
                str(built.project / rel),
                str(built.base_dir / rel),
                str(built.latest_dir / rel),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if result.returncode != 0:
            conflicted += 1
    return time.perf_counter() - start, conflicted


@dataclass
class Hotspot:
    function: str
    calls: int
    own: float
    total: float


@dataclass
class Profile:
    label: str
    seconds: float
    by_own: list[Hotspot] = field(default_factory=list)
    by_total: list[Hotspot] = field(default_factory=list)


def _where(key: tuple[str, int, str]) -> str:
    filename, line, name = key
    if filename == "~":
        return name  # a C function, e.g. <built-in method posix.fsync>
    marker = f"{os.sep}tether{os.sep}"
    if marker in filename:
        filename = "tether/" + filename.split(marker, 1)[1]
    else:
        filename = Path(filename).name
    return f"{filename}:{line}({name})"


def profile(
    label: str, call: Callable[[], object], top: int = 15, dump: Path | None = None
) -> Profile:
    """cProfile one in-process call; the functions with the most own time and total time."""
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(call)
    seconds = time.perf_counter() - start
    stats = pstats.Stats(profiler, stream=io.StringIO())
    if dump is not None:
        stats.dump_stats(str(dump))
    rows = [
        Hotspot(_where(key), int(value[1]), float(value[2]), float(value[3]))
        for key, value in stats.stats.items()  # type: ignore[attr-defined]
    ]
    result = Profile(label, seconds)
    result.by_own = sorted(rows, key=lambda h: h.own, reverse=True)[:top]
    result.by_total = [
        h for h in sorted(rows, key=lambda h: h.total, reverse=True) if "tether/" in h.function
    ][:top]
    return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
