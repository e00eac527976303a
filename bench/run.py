"""tether's performance benchmarks (issue 10): ``python -m bench`` or ``python bench/run.py``.

Generates seeded inputs in a temporary folder, times tether against reference points measured
in the same run, one after the other in every round, and prints a table plus PASS/FAIL per
target. Single timings of a busy machine swing a lot: read the ratios (computed per round, then
the median is kept), not the absolute seconds.

Scenarios (``--scenario``, comma-separated; default all):
  a    600 files, 10% changed upstream, 3% customised, 1% both: ``tether update``
  b    20,000 files / ~200 MB, same ratios: ``tether update``, peak memory
  c    2,000 files changed on both sides (text merges, a quarter conflicting)
  d    ``tether status`` on b's project right after install (nothing changed)
  cli  start-up: ``tether --help`` and ``tether status`` on a three-file project

Reference points: the hashing floor (sha256 of every file of B, A and L once, in Python; for
status, of A alone), the hand-run bash recipe (``bench/recipe.sh``) and, for c, ``git
merge-file`` run once per file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the ``bench`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import NEW, Built, build, small_project, specs

ALL = ("a", "b", "c", "d", "cli")
UPDATE_FLOOR_LIMIT = 3.0
RECIPE_SPEEDUP_MIN = 5.0
STATUS_FLOOR_LIMIT = 2.0
PEAK_RSS_LIMIT_MB = 200.0
CLI_START_LIMIT_MS = 150.0
CLI_RUNS = 15


@dataclass
class Line:
    scenario: str
    what: str
    seconds: list[float]
    vs_floor: float | None = None
    note: str = ""


@dataclass
class Target:
    what: str
    measured: str
    limit: str
    ok: bool


@dataclass
class Results:
    started: str
    machine: dict[str, str]
    command: str
    scenarios: dict[str, str] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    profiles: list[measure.Profile] = field(default_factory=list)


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    except OSError:
        return "?"
    return out.strip().splitlines()[0] if out.strip() else "?"


def _disk(path: Path) -> str:
    """Device and filesystem type of the folder the inputs live in."""
    try:
        out = subprocess.run(
            ["df", "--output=source,fstype", str(path)], capture_output=True, text=True, check=False
        ).stdout.split()
    except OSError:
        return "?"
    return " ".join(out[-2:]) if len(out) >= 4 else "?"


def machine(workdir: Path) -> dict[str, str]:
    memory = "?"
    try:
        for row in Path("/proc/meminfo").read_text().splitlines():
            if row.startswith("MemTotal:"):
                memory = f"{int(row.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    import tether

    where = str(Path(tether.__file__).resolve().parent)
    commit = _first_line(["git", "-C", where, "rev-parse", "--short", "HEAD"])
    dirty = _first_line(["git", "-C", where, "status", "--porcelain", "--", "."])
    return {
        "cpus": str(os.cpu_count()),
        "memory": memory,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "disk": _disk(workdir),
        "git": _first_line(["git", "--version"]),
        "bash": _first_line(["bash", "--version"]),
        "tether": f"{tether.__version__} at {commit}"
        + (" + uncommitted changes" if dirty != "?" else ""),
    }


def _ratio(numerators: list[float], denominators: list[float]) -> float:
    """Median of per-round ratios: rounds are measured back to back, so load hits both."""
    return measure.median([n / d for n, d in zip(numerators, denominators, strict=True) if d > 0])


def _bucket_check(built: Built, counts: dict[str, int]) -> str:
    wrong = [
        f"{name} {counts.get(name, 0)} (expected {want})"
        for name, want in built.expected.items()
        if counts.get(name, 0) != want
    ]
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "skip")
    return f"buckets: {shown}" + (f"; MISMATCH: {', '.join(wrong)}" if wrong else "")


def describe(built: Built) -> str:
    s = built.spec
    return (
        f"({s.name}) {s.title}: {len(built.b_paths):,} files in B, {built.bytes_b / 1e6:.1f} MB; "
        f"{s.upstream:.0%} changed upstream, {s.customised:.0%} customised, {s.both:.0%} both "
        f"({s.conflicts:.0%} of those conflicting), +{built.expected['add']} added, "
        f"-{built.expected['delete']} dropped upstream"
    )


def _tether_note(built: Built, counts: dict[str, int], cpu: list[float], rss_kib: int) -> str:
    return (
        f"{_bucket_check(built, counts)}; CPU {measure.median(cpu):.2f} s; "
        f"peak RSS {rss_kib / 1024:.0f} MB"
    )


def update_scenario(built: Built, rounds: int, results: Results, extra: bool) -> None:
    """Per round, back to back: the hashing floor, ``tether update`` on a fresh copy (no
    valid stat cache, like a fresh clone) and on a copy whose stat cache a ``tether status``
    filled (not timed), the bash recipe
    (for (c) with ``git merge-file`` as its merge step) and, for (c), a bare ``git
    merge-file`` loop. ``extra`` adds tether without fsync (a diagnostic) and, for (c), the
    ``diff -u`` recipe. Every run that writes gets a fresh copy of the project."""
    name = built.spec.name
    files = list(built.tree_files())
    merges = [rel for rel in built.b_paths if built.spec.both >= 1.0]
    recipes = ("git", "diff") if merges and extra else ("git",) if merges else ("diff",)
    # Every file of (c) changes on both sides, so a stat cache cannot matter there.
    variants = ("tether",) + (() if merges else ("warm",)) + (("nofsync",) if extra else ())
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    counts: dict[str, dict[str, int]] = {}
    summaries: dict[str, str] = {}
    rss: dict[str, int] = {}
    git_conflicts = 0

    def record(key: str, run: measure.ChildRun) -> None:
        times.setdefault(key, []).append(run.seconds)
        cpu.setdefault(key, []).append(run.cpu_seconds)
        rss[key] = max(rss.get(key, 0), run.max_rss_kib)

    for round_no in range(rounds):
        times.setdefault("floor", []).append(measure.hash_files(files))
        for key in variants:
            copy = measure.fresh_copy(built, f"{key}-{round_no}")
            if key == "warm":
                measure.prime_stat_cache(copy)
            run, counts[key] = measure.tether_update(built, copy, fsync=key != "nofsync")
            record(key, run)
            measure.discard(copy)
        for mode in recipes:
            copy = measure.fresh_copy(built, f"recipe-{mode}-{round_no}")
            run, summaries[mode] = measure.recipe(built, copy, merge=mode)
            record(f"recipe-{mode}", run)
            measure.discard(copy)
        if merges:
            loop_seconds, git_conflicts = measure.git_merge_loop(built, merges)
            times.setdefault("git", []).append(loop_seconds)
        print(f"  ({name}) round {round_no + 1}/{rounds} done", file=sys.stderr)

    floor, tether = times["floor"], times["tether"]
    t_ratio = _ratio(tether, floor)
    add = results.lines.append
    add(Line(name, "hashing floor: sha256 of B, A, L once", floor, 1.0))
    note = _tether_note(built, counts["tether"], cpu["tether"], rss["tether"])
    add(Line(name, "tether update (CLI), no stat cache (fresh clone)", tether, t_ratio, note))
    if "warm" in times:
        warm = times["warm"]
        same = "same buckets" if counts["warm"] == counts["tether"] else "DIFFERENT buckets"
        add(
            Line(
                name,
                "tether update (CLI), warm stat cache",
                warm,
                _ratio(warm, floor),
                f"after a status; CPU {measure.median(cpu['warm']):.2f} s; {same}",
            )
        )
    if extra:
        same = "same buckets" if counts["nofsync"] == counts["tether"] else "DIFFERENT buckets"
        nofsync = times["nofsync"]
        add(
            Line(
                name,
                "tether update, fsync disabled (diagnostic)",
                nofsync,
                _ratio(nofsync, floor),
                f"CPU {measure.median(cpu['nofsync']):.2f} s; {same}",
            )
        )
    labels = {"diff": "bash recipe (cmp/cp/diff -u)", "git": "bash recipe with git merge-file"}
    for mode in recipes:
        seconds = times[f"recipe-{mode}"]
        faster = _ratio(seconds, tether)
        add(
            Line(
                name,
                labels[mode],
                seconds,
                _ratio(seconds, floor),
                f"tether {faster:.1f}x faster; {summaries[mode]}",
            )
        )
    if merges:
        add(
            Line(
                name,
                "git merge-file alone, a process per file",
                times["git"],
                _ratio(times["git"], floor),
                f"{len(merges):,} merges, {git_conflicts} with conflicts; "
                f"tether takes {_ratio(tether, times['git']):.2f}x as long",
            )
        )
    speedup = _ratio(times[f"recipe-{recipes[0]}"], tether)
    if name == "b":
        results.targets.append(
            Target(
                "update (b) within 3x the hashing floor",
                f"{t_ratio:.1f}x",
                f"<= {UPDATE_FLOOR_LIMIT:.0f}x",
                t_ratio <= UPDATE_FLOOR_LIMIT,
            )
        )
        results.targets.append(
            Target(
                "update (b) at least 5x faster than the bash recipe",
                f"{speedup:.1f}x",
                f">= {RECIPE_SPEEDUP_MIN:.0f}x",
                speedup >= RECIPE_SPEEDUP_MIN,
            )
        )
        rss_mb = rss["tether"] / 1024
        results.targets.append(
            Target(
                "peak RSS of update (b)",
                f"{rss_mb:.0f} MB",
                f"< {PEAK_RSS_LIMIT_MB:.0f} MB",
                rss_mb < PEAK_RSS_LIMIT_MB,
            )
        )


def _stat_cache_file(project: Path) -> Path | None:
    """Where tether keeps the project's stat cache, if this version has one."""
    from tether.flows.project import open_project

    opened = open_project(project, None)
    stat_cache = getattr(opened, "stat_cache", None)
    return Path(stat_cache().path) if callable(stat_cache) else None


def status_scenario(built: Built, rounds: int, results: Results) -> None:
    """Per round: the hashing floors, then ``tether status`` twice on the clean install:
    with its stat cache deleted (a fresh clone: every file is hashed) and right after (the
    steady state the target is about: nothing changed since tether last looked)."""
    project = built.clean_project
    adopter = list(built.adopter_files(project))
    all_three = list(built.tree_files())
    stat_file = _stat_cache_file(project)
    time.sleep(measure.RACY_WAIT)  # files written within 2 s of a recording are rehashed
    floor_a: list[float] = []
    floor_all: list[float] = []
    runs: dict[str, list[measure.ChildRun]] = {"cold": [], "steady": []}
    for _ in range(rounds):
        floor_a.append(measure.hash_files(adopter))
        floor_all.append(measure.hash_files(all_three))
        if stat_file is not None:
            stat_file.unlink(missing_ok=True)
        runs["cold"].append(measure.tether_status(project))
        runs["steady"].append(measure.tether_status(project))
    add = results.lines.append
    add(Line("d", "hashing floor: sha256 of A once", floor_a, 1.0))
    add(Line("d", "hashing floor: sha256 of B, A, L once", floor_all, _ratio(floor_all, floor_a)))
    labels = {
        "cold": "tether status (CLI), no stat cache (fresh clone)",
        "steady": "tether status (CLI), nothing changed since the last status",
    }
    ratio = 0.0
    for key, label in labels.items():
        seconds = [r.seconds for r in runs[key]]
        ratio = _ratio(seconds, floor_a)
        cpu = measure.median([r.cpu_seconds for r in runs[key]])
        rss = max(r.max_rss_kib for r in runs[key]) / 1024
        note = f"CPU {cpu:.2f} s; peak RSS {rss:.0f} MB"
        if stat_file is None:
            note += "; this tether keeps no stat cache"
        add(Line("d", label, seconds, ratio, note))
    results.targets.append(
        Target(
            "status (d), nothing changed, within 2x the floor (sha256 of A)",
            f"{ratio:.2f}x",
            f"<= {STATUS_FLOOR_LIMIT:.0f}x",
            ratio <= STATUS_FLOOR_LIMIT,
        )
    )


def cli_scenario(workdir: Path, results: Results) -> None:
    project = small_project(workdir)
    tether = measure.tether_command()
    commands = {
        "python -c pass (interpreter alone)": [sys.executable, "-c", "pass"],
        "tether --help": [*tether, "--help"],
        "tether status, three-file project": [*tether, "status", "-C", str(project)],
    }
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(CLI_RUNS):
        for label, argv in commands.items():
            run = measure.run_child(argv)
            if run.returncode != 0:
                raise RuntimeError(f"{label} failed: {run.stderr.decode(errors='replace')}")
            times[label].append(run.seconds)
    bare = times["python -c pass (interpreter alone)"]
    for label, seconds in times.items():
        extra = measure.median([t - b for t, b in zip(seconds, bare, strict=True)])
        results.lines.append(
            Line("cli", label, seconds, None, f"+{extra * 1000:.0f} ms over the interpreter")
        )
        if label.startswith("tether"):
            ms = measure.median(seconds) * 1000
            results.targets.append(
                Target(
                    f"CLI start: {label}",
                    f"{ms:.0f} ms",
                    f"< {CLI_START_LIMIT_MS:.0f} ms",
                    ms < CLI_START_LIMIT_MS,
                )
            )


def profiles(
    built: dict[str, Built], chosen: list[str], results: Results, out: Path | None
) -> None:
    """cProfile the in-process flows behind the measured commands."""
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update

    for name in ("a", "b", "c"):
        if name not in built or name not in chosen:
            continue
        copy = measure.fresh_copy(built[name], "profile")
        dump = out / f"update-{name}.prof" if out else None
        request = UpdateRequest(copy, to=NEW)
        results.profiles.append(
            measure.profile(f"update ({name})", partial(run_update, request), dump=dump)
        )
        measure.discard(copy)
    if "b" in built and "d" in chosen:
        clean = built["b"].clean_project
        measure.warm(built["b"].adopter_files(clean))
        dump = out / "status-d.prof" if out else None
        results.profiles.append(
            measure.profile("status (d)", partial(project_status, clean), dump=dump)
        )


def _cell(seconds: list[float]) -> tuple[str, str]:
    if not seconds:
        return "-", "-"
    unit = 1000 if max(seconds) < 1 else 1
    suffix = " ms" if unit == 1000 else " s"
    fmt = ".0f" if unit == 1000 and min(seconds) >= 0.01 else ".3f" if unit == 1 else ".1f"
    return (
        f"{measure.median(seconds) * unit:{fmt}}{suffix}",
        f"{min(seconds) * unit:{fmt}}{suffix}",
    )


def render(results: Results, quick: bool = False) -> str:
    out = [f"tether benchmarks, {results.started}", ""]
    out.append("machine: " + ", ".join(f"{k} {v}" for k, v in results.machine.items()))
    out.append(f"command: {results.command}")
    out.append("")
    for _key, text in sorted(results.scenarios.items()):
        out.append(f"- {text}")
    out += [
        "",
        "| scen. | measurement | median | min | vs floor | notes |",
        "|---|---|---|---|---|---|",
    ]
    for line in results.lines:
        med, low = _cell(line.seconds)
        ratio = f"{line.vs_floor:.2f}x" if line.vs_floor is not None else ""
        out.append(f"| {line.scenario} | {line.what} | {med} | {low} | {ratio} | {line.note} |")
    if results.targets:
        out += ["", "| target | measured | limit | result |", "|---|---|---|---|"]
        for target in results.targets:
            verdict = ("PASS" if target.ok else "FAIL") + (" (smoke size)" if quick else "")
            out.append(f"| {target.what} | {target.measured} | {target.limit} | {verdict} |")
    for note in results.notes:
        out.append(f"note: {note}")
    for prof in results.profiles:
        out += ["", f"profile: {prof.label}, {prof.seconds:.2f} s in-process under cProfile"]
        out.append("  most own time:")
        for h in prof.by_own:
            out.append(
                f"    {h.own:8.3f} s own {h.total:8.3f} s total {h.calls:>9,} calls  {h.function}"
            )
        out.append("  most total time (tether functions):")
        for h in prof.by_total:
            out.append(
                f"    {h.total:8.3f} s total {h.own:8.3f} s own {h.calls:>9,} calls  {h.function}"
            )
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="tether's performance benchmarks (never part of pytest)"
    )
    parser.add_argument(
        "--scenario",
        default=",".join(ALL),
        help=f"comma-separated subset of {','.join(ALL)} (default: all)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke size: 5%% of the files, one round"
    )
    parser.add_argument("--rounds", type=int, help="rounds per measurement (default 3; --quick 1)")
    parser.add_argument(
        "--rounds-b", type=int, help="rounds for (b), the slow one (default 2; --quick 1)"
    )
    parser.add_argument(
        "--extra",
        action="store_true",
        help="also run diagnostics: tether with fsync disabled, and the diff -u recipe on (c)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile the in-process update and status flows and list hot spots",
    )
    parser.add_argument("--profile-dir", type=Path, help="write the .prof files here")
    parser.add_argument(
        "--workdir", type=Path, help="generate inputs here (default: a new temp folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.scenario.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in ALL]
    if unknown or not chosen:
        parser.error(f"unknown scenario {', '.join(unknown)}; choose from {','.join(ALL)}")
    args.chosen = chosen
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.rounds_b = args.rounds_b or (1 if args.quick else 2)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tether-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = Results(started, machine(workdir), command.strip())
    if args.profile_dir:
        args.profile_dir.mkdir(parents=True, exist_ok=True)
    scenario_specs = specs(args.quick)
    built: dict[str, Built] = {}
    t0 = time.perf_counter()
    try:
        for name in ("a", "b", "c"):
            wanted = name in args.chosen or (name == "b" and "d" in args.chosen)
            if not wanted:
                continue
            print(f"generating ({name}) in {workdir} ...", file=sys.stderr)
            start = time.perf_counter()
            built[name] = build(scenario_specs[name], workdir)
            results.scenarios[name] = describe(built[name])
            print(f"  ({name}) generated in {time.perf_counter() - start:.1f} s", file=sys.stderr)
            if name in args.chosen:
                rounds = args.rounds_b if name == "b" else args.rounds
                update_scenario(built[name], rounds, results, args.extra)
            if name == "b" and "d" in args.chosen:
                results.scenarios["d"] = (
                    "(d) tether status on (b)'s project right after install: nothing changed"
                )
                status_scenario(built[name], max(args.rounds, 3), results)
        if "cli" in args.chosen:
            cli_scenario(workdir, results)
        if args.profile:
            print("profiling in-process flows ...", file=sys.stderr)
            profiles(built, args.chosen, results, args.profile_dir)
        if "b" not in args.chosen and not args.quick:
            results.notes.append("update targets are judged on (b) only")
        if args.quick:
            results.notes.append("--quick: smoke sizes; targets are only meaningful at full size")
        results.notes.append(
            f"whole run {time.perf_counter() - t0:.0f} s; inputs in {workdir}"
            + ("" if args.keep else " (removed)")
        )
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(render(results, args.quick))
    if args.json:
        args.json.write_text(json.dumps(asdict(results), indent=2) + "\n")
    return 0 if args.quick or all(t.ok for t in results.targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
