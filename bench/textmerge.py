"""Benchmark: tether's three-way text merge beside ``git merge-file`` on the same inputs.

Run ``python bench/textmerge.py`` (add ``--small N`` / ``--large N`` for a quicker run). It
writes seeded, source-like inputs to a temporary directory, then for every case times, one
right after the other, ``git merge-file --diff3 -p`` (a process per file, as a tool calling
git would pay) and tether's in-process ``merge3`` (reading the three files included); each
50,000-line file is timed ``--repeat`` times and its median kept, as single timings of a
busy machine swing by half. It prints the mean time per file of each, their ratio, whether
the outputs were byte-identical, and PASS/FAIL against the target: tether within 2x of git's
per-file time.

``--pathological`` (on by default; ``--no-pathological`` to skip) adds the rows that set the
pure engine's bounds (``PURE_MERGE_MAX_LINES`` / ``PURE_MERGE_MAX_BYTES`` in
``tether.engine.textmerge``): repetitive files (lines drawn from a pool of 8) of growing
length, each timed with the pure engine forced, with git, and as tether merges it now
(``flows.merging.merge_sides``: the pure engine within the bounds, ``git merge-file`` past
them), and the peak memory of one merge of ``--memory-mb`` MB of such text in a fresh
process, against the 4x-the-inputs bound.
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

from tether.engine.textmerge import PURE_MERGE_MAX_LINES, merge3, merge_lines
from tether.flows.merging import merge_sides

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
        if not timing.count:
            continue
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


POOL = ["}", "", "    return 0;", "{", "    x += 1;", "end", "  </div>", "  <div>"]
PATHOLOGICAL_LINES = [1_000, 2_000, 3_000, 4_000, 6_000, 10_000, 20_000]


def repetitive(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(POOL) for _ in range(count)]


def repetitive_edit(rng: random.Random, lines: list[str]) -> list[str]:
    """One edit run (1-5 lines from the pool) per 100 lines."""
    result = list(lines)
    for _ in range(max(5, len(lines) // 100)):
        at = rng.randrange(len(result) + 1)
        new = repetitive(rng, rng.randint(1, 5))
        roll = rng.random()
        if roll < 0.4:
            result[at:at] = new
        elif roll < 0.6:
            del result[at : at + rng.randint(1, 5)]
        else:
            result[at : at + rng.randint(1, 3)] = new
    return result


def repetitive_case(root: Path, lines: int) -> Case:
    rng = random.Random(SEED + lines)
    base = repetitive(rng, lines)
    directory = root / f"p{lines}"
    directory.mkdir()
    for side, text in (
        ("base", base),
        ("ours", repetitive_edit(rng, base)),
        ("theirs", repetitive_edit(rng, base)),
    ):
        (directory / side).write_bytes("".join(line + "\n" for line in text).encode())
    return Case(directory, lines)


def sides(case: Case) -> tuple[bytes, bytes, bytes]:
    return tuple((case.directory / n).read_bytes() for n in ("base", "ours", "theirs"))  # type: ignore[return-value]


def pathological(git: str, root: Path, sizes: list[int], repeat: int) -> bool:
    """Per size: git, the pure engine forced, and tether's routed merge; medians of
    ``repeat``. Returns whether the routed merge stays within 2x of git at every size."""
    print(
        f"repetitive text (a pool of 8 lines), median of {repeat}; pure bound: "
        f"{PURE_MERGE_MAX_LINES} lines"
    )
    print(
        f"{'lines':>8} {'git ms':>9} {'pure ms':>9} {'pure/git':>8} {'tether ms':>10} "
        f"{'tether/git':>10}  engine  same"
    )
    passed = True
    for lines in sizes:
        case = repetitive_case(root, lines)
        base, ours, theirs = sides(case)
        git_times, pure_times, routed_times = [], [], []
        same = True
        for _ in range(repeat):
            git_time, git_out = time_git(git, case)
            start = time.perf_counter()
            pure = merge3(base, ours, theirs, line_merge=merge_lines)
            pure_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            routed, _note = merge_sides(base, ours, theirs)
            routed_times.append(time.perf_counter() - start)
            git_times.append(git_time)
            same = same and pure.merged == git_out == routed.merged
        g, p, r = (statistics.median(t) for t in (git_times, pure_times, routed_times))
        engine = "pure" if lines <= PURE_MERGE_MAX_LINES else "git"
        ok = r <= TARGET_RATIO * g
        passed = passed and ok
        print(
            f"{lines:>8} {g * 1000:>9.1f} {p * 1000:>9.1f} {p / g:>8.2f} {r * 1000:>10.1f} "
            f"{r / g:>10.2f}  {engine:<6}  {'yes' if same else 'NO'}  {'PASS' if ok else 'FAIL'}"
        )
    return passed


MEMORY_CHILD = """
import resource, sys
from pathlib import Path
folder = Path(sys.argv[1])
from tether.engine.textmerge import merge3, merge_lines
from tether.flows.merging import merge_sides
if sys.argv[2] != "none":
    base, ours, theirs = ((folder / n).read_bytes() for n in ("base", "ours", "theirs"))
if sys.argv[2] == "pure":
    merge3(base, ours, theirs, line_merge=merge_lines)
elif sys.argv[2] == "tether":
    merge_sides(base, ours, theirs)
# VmHWM, not ru_maxrss: after fork and exec ru_maxrss still holds the parent's high-water
# mark, VmHWM starts again with the new program.
status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
own = int(status.split()[0])
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(own, children)
"""


def memory(root: Path, megabytes: int, engines: list[str], kind: str) -> bool:
    """Peak RSS of one merge of ``megabytes`` MB (three sides together) in a fresh process,
    beyond a process that only imported tether: the inputs held count in it. ``kind``:
    ``repetitive`` (short lines from the pool) or ``wide`` (source-like lines of ~60 bytes)."""
    if kind == "repetitive":
        lines = megabytes * 1_000_000 // 3 // 8  # the pool's lines average 8 bytes
        case = repetitive_case(root, lines)
    else:  # source-like lines widened to ~60 bytes (a trailing comment)
        lines = megabytes * 1_000_000 // 3 // 60
        case = write_case(
            root, f"m{lines}", random.Random(SEED), lines, (lines // 200, lines // 100)
        )
        for name in ("base", "ours", "theirs"):
            path = case.directory / name
            wide = [line + b"  # " + b"-" * 30 for line in path.read_bytes().split(b"\n")[:-1]]
            path.write_bytes(b"\n".join(wide) + b"\n")
    size = sum(len(s) for s in sides(case))
    print(f"peak memory of one merge: {size / 1e6:.0f} MB of {kind} text, {lines} lines")

    def run(engine: str) -> tuple[int, int]:
        child = [
            sys.executable,
            "-c",
            MEMORY_CHILD,
            str(case.directory),
            engine,
        ]
        out = subprocess.run(child, capture_output=True, text=True, check=True).stdout.split()
        return int(out[0]) * 1024, int(out[1]) * 1024

    floor, _ = run("none")
    passed = True
    for engine in engines:
        start = time.perf_counter()
        own, git_rss = run(engine)
        seconds = time.perf_counter() - start
        ratio = (own - floor) / size
        ok = ratio <= 4.0 and git_rss <= 4 * size
        passed = passed and (ok or engine == "pure")
        verdict = "PASS" if ok else "FAIL" if engine != "pure" else "(no bound: forced past it)"
        print(
            f"  {engine:<6} {seconds:7.1f} s  tether process +{(own - floor) / 1e6:6.0f} MB "
            f"({ratio:.2f}x the inputs), git process {git_rss / 1e6:6.0f} MB  {verdict}"
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
    parser.add_argument(
        "--no-pathological",
        dest="pathological",
        action="store_false",
        help="skip the repetitive-text rows and the memory row",
    )
    parser.add_argument(
        "--pathological-lines",
        type=int,
        nargs="*",
        default=PATHOLOGICAL_LINES,
        help="sizes of the repetitive files (lines)",
    )
    parser.add_argument("--memory-mb", type=int, default=20, help="size of the memory row")
    parser.add_argument(
        "--memory-pure",
        action="store_true",
        help="also measure the pure engine forced on the memory row (slow past its bounds)",
    )
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
        passed = report(rows)
        if args.pathological:
            print()
            passed = pathological(git, Path(tmp), args.pathological_lines, args.repeat) and passed
            engines = ["tether"] + (["pure"] if args.memory_pure else [])
            for kind in ("repetitive", "wide"):
                passed = memory(Path(tmp), args.memory_mb, engines, kind) and passed
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
