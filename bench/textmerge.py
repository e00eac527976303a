"""Benchmark: tether's three-way text merge beside ``git merge-file`` on the same inputs.

Run ``python bench/textmerge.py`` (add ``--small N`` / ``--large N`` for a quicker run). It
writes seeded, source-like inputs to a temporary directory, then for every case times, one
right after the other, ``git merge-file --diff3 -p`` (a process per file, as a tool calling
git would pay) and tether's in-process ``merge3`` (reading the three files included); each
50,000-line file is timed ``--repeat`` times and its median kept, as single timings of a
busy machine swing by half. It prints the mean time per file of each, their ratio, whether
the outputs were byte-identical, and PASS/FAIL against the target: tether within 2x of git's
per-file time.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tether.engine.textmerge import merge3

TARGET_RATIO = 2.0
SEED = 20240601
WORDS = ["alpha", "beta", "gamma", "delta", "value", "count", "index", "result", "item", "node"]
# (adopter edit runs, upstream edit runs) for each large file: light to heavy upstream churn.
LARGE_EDITS = [(10, 50), (20, 100), (50, 200), (100, 500), (200, 200)]


@dataclass
class Case:
    directory: Path
    lines: int


@dataclass
class Timing:
    git: float = 0.0
    tether: float = 0.0
    identical: int = 0
    conflicted: int = 0
    count: int = 0


def source_lines(rng: random.Random, count: int) -> list[str]:
    """Code-like lines: mostly distinct, with the blank lines and repeats real files have."""
    lines: list[str] = []
    function = 0
    while len(lines) < count:
        function += 1
        name, first, second = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        lines.append(f"def {name}_{function}({first}, {second}):")
        for _ in range(rng.randint(3, 12)):
            roll = rng.random()
            if roll < 0.1:
                lines.append("")
            elif roll < 0.15:
                lines.append("    return result")
            else:
                word, call = rng.choice(WORDS), rng.choice(WORDS)
                lines.append(f"    {word}_{rng.randint(0, 999)} = {call}({rng.randint(0, 99)})")
        lines.append("")
    return lines[:count]


def edited(rng: random.Random, lines: list[str], runs: int) -> list[str]:
    """Apply ``runs`` random insert / delete / replace runs of 1-5 lines."""
    result = list(lines)
    for _ in range(runs):
        at = rng.randrange(len(result) + 1)
        roll = rng.random()
        new = source_lines(rng, rng.randint(1, 5))
        if roll < 0.4:
            result[at:at] = new
        elif roll < 0.6:
            del result[at : at + rng.randint(1, 5)]
        else:
            result[at : at + rng.randint(1, 3)] = new
    return result


def write_case(
    root: Path, name: str, rng: random.Random, lines: int, runs: tuple[int, int]
) -> Case:
    base = source_lines(rng, lines)
    directory = root / name
    directory.mkdir()
    for side, text in (
        ("base", base),
        ("ours", edited(rng, base, runs[0])),
        ("theirs", edited(rng, base, runs[1])),
    ):
        (directory / side).write_bytes("".join(line + "\n" for line in text).encode())
    return Case(directory, lines)


def generate(root: Path, small: int, large: int) -> tuple[list[Case], list[Case]]:
    rng = random.Random(SEED)
    smalls = []
    for i in range(small):
        runs = (rng.randint(1, 4), rng.randint(1, 6))
        smalls.append(write_case(root, f"s{i}", rng, rng.randint(180, 220), runs))
    larges = [
        write_case(root, f"l{i}", rng, 50_000, LARGE_EDITS[i % len(LARGE_EDITS)])
        for i in range(large)
    ]
    return smalls, larges


def time_git(git: str, case: Case) -> tuple[float, bytes]:
    command = [git, "merge-file", "--diff3", "-p", "-L", "ours", "-L", "base", "-L", "theirs"]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "ours", "base", "theirs"], cwd=case.directory, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode < 0 or done.returncode == 255:
        sys.exit(f"git merge-file failed on {case.directory}: {done.stderr.decode()}")
    return elapsed, done.stdout


def time_tether(case: Case) -> tuple[float, bytes, int]:
    start = time.perf_counter()
    base = (case.directory / "base").read_bytes()
    ours = (case.directory / "ours").read_bytes()
    theirs = (case.directory / "theirs").read_bytes()
    result = merge3(base, ours, theirs)
    elapsed = time.perf_counter() - start
    return elapsed, result.merged, result.conflicts


def run(git: str, cases: list[Case], *, repeat: int, verbose: bool) -> Timing:
    """Time every case ``repeat`` times, git and tether alternating; keep each one's median."""
    timing = Timing()
    for case in cases:
        git_times, tether_times = [], []
        for _ in range(repeat):
            git_time, git_out = time_git(git, case)
            tether_time, tether_out, conflicts = time_tether(case)
            git_times.append(git_time)
            tether_times.append(tether_time)
        git_time, tether_time = statistics.median(git_times), statistics.median(tether_times)
        timing.git += git_time
        timing.tether += tether_time
        timing.identical += tether_out == git_out
        timing.conflicted += conflicts > 0
        timing.count += 1
        if verbose:
            print(
                f"  {case.directory.name:>4} {case.lines} lines: git {git_time * 1000:7.1f} ms"
                f"  tether {tether_time * 1000:7.1f} ms  conflicts {conflicts}"
            )
    return timing


def report(rows: list[tuple[str, Timing]]) -> bool:
    header = (
        f"{'case':<26} {'merges':>6} {'git ms/file':>12} {'tether ms/file':>15} "
        f"{'ratio':>6} {'identical':>10} {'conflicted':>10}  verdict"
    )
    print(header)
    print("-" * len(header))
    passed = True
    for label, timing in rows:
        git_ms = timing.git / timing.count * 1000
        tether_ms = timing.tether / timing.count * 1000
        ratio = tether_ms / git_ms
        ok = ratio <= TARGET_RATIO
        passed = passed and ok
        print(
            f"{label:<26} {timing.count:>6} {git_ms:>12.2f} {tether_ms:>15.2f} {ratio:>6.2f} "
            f"{timing.identical:>5}/{timing.count:<4} {timing.conflicted:>10}  "
            f"{'PASS' if ok else 'FAIL'}"
        )
    print(
        f"target: tether per-file time <= {TARGET_RATIO:g} x git merge-file's "
        "(its process start included)"
    )
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2000, help="merges of ~200-line files")
    parser.add_argument("--large", type=int, default=5, help="merges of 50,000-line files")
    parser.add_argument(
        "--repeat", type=int, default=5, help="timings per large file (the median is kept)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="do not print every large case")
    args = parser.parse_args()
    git = shutil.which("git")
    if git is None:
        sys.exit("git is not on PATH")
    version = subprocess.run([git, "--version"], capture_output=True, text=True, check=True)
    print(f"{version.stdout.strip()}, Python {sys.version.split()[0]}, seed {SEED}")
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        smalls, larges = generate(Path(tmp), args.small, args.large)
        rows = [
            ("~200-line files", run(git, smalls, repeat=1, verbose=False)),
            ("50,000-line files", run(git, larges, repeat=args.repeat, verbose=not args.quiet)),
        ]
    return 0 if report(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
