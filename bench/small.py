"""Benchmark: small projects, where tether's fixed costs decide (docs/performance.md).

Run ``python bench/small.py`` (``--files 300,1000,5000``, ``--rounds N``, ``--runs N``,
``--no-tools``, ``--workdir DIR``). Per size it builds, from one seed (``bench/scenarios.py``):
releases 1.0.0 (B) and 1.1.0 (L) of ``--files`` files, 20% of them changed upstream, 3%
edited by the adopter, 1% on both sides in the same lines (three conflicts at 300 files),
2% binary; a few added and dropped upstream. The same adopter project is made three ways,
each committed in a git repository:

* tether: ``tether init`` of B, the edits, ``tether update --yes --json`` (to L; it switches
  to its update branch and records the conflicts in git's index, as a user's run does);
* cruft: a cookiecutter template repository holding B then L (binaries copied without
  rendering), ``cruft create`` at B, the edits, ``cruft update --skip-apply-ask``;
* copier: a copier template repository tagged v1 (B) and v2 (L), ``copier copy`` at v1, the
  edits, ``copier update --defaults --skip-answered --vcs-ref v2``.

Each round runs the three updates one after the other, the order rotated per round, each on
a fresh copy of its project (copied before the clock starts): real processes, wall time and
CPU seconds (user + system, the programs they started and waited for included). Ratios are
computed per round and their median kept. cruft and copier are skipped when not installed
(``pip install -e .[dev]`` installs them) or with ``--no-tools``.

Then, on the clean install of B (nothing changed since): ``tether status`` and ``tether
check`` ``--runs`` times after one warm-up run whose stat cache is old enough to be trusted
(the racy window has passed), median wall and CPU; ``tether status`` with its stat cache
deleted before each run (a fresh clone) against the hashing floor (sha256 of every managed
file, in Python, best of two passes); ``tether --help``; and ``python -c pass`` for scale.
Wall times on a shared machine swing with other people's work; CPU seconds much less.

Compile the sources first (``python -m compileall -q src``; an installed tether has its
bytecode): with ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__``, every run compiles
every module it imports and the start-up figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import CACHE_DIR, Built, Spec, build, copy_tree
from bench.templates import commit, environment, git

STATUS_WALL_MS = 50.0
STATUS_CPU_MS = 40.0
HELP_WALL_MS = 50.0
UPDATE_WALL_MS = 150.0
STATUS_FLOOR_LIMIT = 2.0
SPEEDUP = {300: (10.0, None), 1000: (15.0, 30.0), 5000: (15.0, 30.0)}
RACY_WAIT = 2.5  # seconds: tether's stat cache trusts only files older than 2 s at its save


def small_spec(files: int) -> Spec:
    return Spec(
        f"small{files}", "small", files, 5_000, 0.20, 0.03, 0.01, conflicts=1.0, seed=20240604
    )


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, run: measure.ChildRun) -> None:
        self.wall.append(run.seconds)
        self.cpu.append(run.cpu_seconds)

    def text(self) -> str:
        if not self.wall:
            return "-"
        wall, cpu = statistics.median(self.wall), statistics.median(self.cpu)
        fastest = min(self.wall) * 1000
        return f"{wall * 1000:8.0f} ms wall (min {fastest:.0f}), {cpu * 1000:6.0f} ms CPU"


def tool(name: str) -> str | None:
    found = Path(sys.executable).with_name(name)
    return str(found) if found.is_file() else shutil.which(name)


def checked(run: measure.ChildRun, what: str, ok: tuple[int, ...] = (0,)) -> measure.ChildRun:
    if run.returncode not in ok:
        tail = (run.stderr or run.stdout).decode(errors="replace")[-2000:]
        raise SystemExit(f"{what} failed ({run.returncode}):\n{tail}")
    return run


def release_files(built: Built, version_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(version_dir)): p.read_bytes()
        for p in version_dir.rglob("*")
        if p.is_file() and p.relative_to(version_dir).parts[0] != ".tether"
    }


def adopter_edits(built: Built) -> dict[str, bytes]:
    """The files the adopter changed after the install (A differs from B)."""
    edits = {}
    for rel in built.b_paths:
        mine = built.project / rel
        if mine.is_file() and mine.read_bytes() != (built.base_dir / rel).read_bytes():
            edits[rel] = mine.read_bytes()
    return edits


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def replace_tree(root: Path, files: dict[str, bytes]) -> None:
    for old in [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]:
        old.unlink()
    write_tree(root, files)


def tether_project(built: Built, work: Path, env: dict[str, str]) -> Path:
    project = work / "tether-project"
    copy_tree(built.project, project)
    copy_tree(built.clean_project / CACHE_DIR, project / CACHE_DIR)
    git(project, env, "init", "-q", "-b", "main")
    commit(project, env, "installed and edited")
    return project


def cruft_project(built: Built, work: Path, env: dict[str, str], edits: dict[str, bytes]) -> Path:
    template = work / "cruft-template"
    template.mkdir(parents=True)
    git(template, env, "init", "-q", "-b", "main")
    settings = {"project_slug": "bench", "_copy_without_render": ["*.bin"]}
    (template / "cookiecutter.json").write_text(json.dumps(settings))
    inner = template / "{{cookiecutter.project_slug}}"
    commits = []
    for side in (built.base_dir, built.latest_dir):
        inner.mkdir(exist_ok=True)
        replace_tree(inner, release_files(built, side))
        commit(template, env, side.name)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=template, env=env, capture_output=True, text=True
        )
        commits.append(head.stdout.strip())
    out = work / "cruft-out"
    out.mkdir()
    create = [str(tool("cruft")), "create", "--no-input", "--checkout", commits[0]]
    checked(measure.run_child([*create, "--output-dir", str(out), str(template)], env=env), "cruft")
    project = out / "bench"
    record = json.loads((project / ".cruft.json").read_text())
    record["checkout"] = None  # update to the template's newest commit, as a user's would
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    write_tree(project, edits)
    git(project, env, "init", "-q", "-b", "main")
    commit(project, env, "created and edited")
    return project


def copier_project(built: Built, work: Path, env: dict[str, str], edits: dict[str, bytes]) -> Path:
    template = work / "copier-template"
    template.mkdir(parents=True)
    git(template, env, "init", "-q", "-b", "main")
    for tag, side in (("v1", built.base_dir), ("v2", built.latest_dir)):
        files = release_files(built, side)
        files["copier.yml"] = b"project_name:\n  type: str\n  default: bench\n"
        files["{{_copier_conf.answers_file}}.jinja"] = (
            b"# Changes here will be overwritten by Copier\n{{ _copier_answers|to_nice_yaml -}}\n"
        )
        replace_tree(template, files)
        commit(template, env, tag)
        git(template, env, "tag", tag)
    project = work / "copier-project"
    copy = [str(tool("copier")), "copy", "--defaults", "--vcs-ref", "v1"]
    checked(measure.run_child([*copy, str(template), str(project)], env=env), "copier copy")
    write_tree(project, edits)
    git(project, env, "init", "-q", "-b", "main")
    commit(project, env, "created and edited")
    return project


def fresh(project: Path, where: Path) -> Path:
    if where.exists():
        shutil.rmtree(where)
    subprocess.run(["cp", "-a", str(project), str(where)], check=True)
    return where


def bench_updates(
    built: Built, work: Path, rounds: int, tools: bool, env: dict[str, str]
) -> dict[str, Timing]:
    edits = adopter_edits(built)
    projects: dict[str, tuple[Path, list[str], tuple[int, ...]]] = {}
    tether = [*measure.tether_command(), "update", "--yes", "--json"]
    projects["tether"] = (tether_project(built, work, env), tether, (0, 4))
    if tools and tool("cruft"):
        cruft = [str(tool("cruft")), "update", "--skip-apply-ask"]
        projects["cruft"] = (cruft_project(built, work, env, edits), cruft, (0, 1))
    if tools and tool("copier"):
        copier = [str(tool("copier")), "update", "--defaults", "--skip-answered"]
        copier += ["--vcs-ref", "v2"]
        projects["copier"] = (copier_project(built, work, env, edits), copier, (0, 1))
    timings = {name: Timing() for name in projects}
    names = list(projects)
    for round_ in range(rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            project, argv, ok = projects[name]
            copy = fresh(project, work / f"run-{name}")
            os.sync()
            run = measure.run_child(argv, cwd=copy, env=env)
            timings[name].add(checked(run, f"{name} update", ok))
            if name == "tether" and round_ == 0:
                report = json.loads(run.stdout)
                counts = {k: len(v) for k, v in report.get("buckets", {}).items() if v}
                print(f"    tether's buckets: {counts}")
    return timings


def bench_status(built: Built, runs: int, env: dict[str, str]) -> dict[str, Timing]:
    project = built.clean_project
    command = measure.tether_command()
    timings = {name: Timing() for name in ("status", "check", "status, no stat cache")}
    checked(measure.run_child([*command, "status"], cwd=project, env=env), "status")
    time.sleep(RACY_WAIT)  # the files are now older than the racy window: trusted when recorded
    checked(measure.run_child([*command, "status"], cwd=project, env=env), "status")
    for _ in range(runs):
        for name, argv in (("status", ["status"]), ("check", ["check"])):
            run = measure.run_child([*command, *argv], cwd=project, env=env)
            timings[name].add(checked(run, name))
    stat_cache = project / CACHE_DIR / "stat.json"
    for _ in range(max(3, runs // 3)):
        stat_cache.unlink(missing_ok=True)
        run = measure.run_child([*command, "status"], cwd=project, env=env)
        timings["status, no stat cache"].add(checked(run, "status"))
    return timings


def start_up(runs: int, env: dict[str, str]) -> dict[str, Timing]:
    timings = {"tether --help": Timing(), "python -c pass": Timing()}
    for _ in range(runs):
        timings["tether --help"].add(
            measure.run_child([*measure.tether_command(), "--help"], env=env)
        )
        timings["python -c pass"].add(measure.run_child([sys.executable, "-c", "pass"], env=env))
    return timings


def median_ratio(slow: list[float], fast: list[float]) -> float:
    return statistics.median(s / f for s, f in zip(slow, fast, strict=True))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="300,1000,5000", help="sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="update rounds per size")
    parser.add_argument("--runs", type=int, default=10, help="status/check/--help runs")
    parser.add_argument("--no-tools", action="store_true", help="leave cruft and copier out")
    parser.add_argument("--workdir", type=Path, help="build here and keep the trees")
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="tether-small-"))
    work.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the bytecode is compiled once, before the runs
    env.pop("TETHER_REGISTRY", None)
    if os.environ.get("PYTHONPATH"):  # another tether's sources, to measure before and after
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(measure.__file__).parents[1] / "src")],
        check=False,
        capture_output=True,
    )
    failures = 0
    load = os.getloadavg()[0]
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores; workdir {work}")

    def target(what: str, ok: bool) -> None:
        nonlocal failures
        failures += not ok
        print(f"  {verdict(ok)}  {what}")

    for timing_name, timing in start_up(args.runs, env).items():
        print(f"  {timing_name:28} {timing.text()}")
        if timing_name == "tether --help":
            help_ms = statistics.median(timing.wall) * 1000
            target(f"tether --help {help_ms:.0f} ms wall (< {HELP_WALL_MS:.0f} ms)", help_ms < 50)
    for files in (int(n) for n in args.files.split(",")):
        spec = small_spec(files)
        print(f"\n== {files} files ==")
        built = build(spec, work)
        print(f"  expected buckets: {built.expected}")
        statuses = bench_status(built, args.runs, env)
        for name, timing in statuses.items():
            print(f"  tether {name:22} {timing.text()}")
        floor = measure.hash_files(list(built.adopter_files(built.clean_project)))
        print(f"  hashing floor (A)            {floor * 1000:8.0f} ms")
        for name in ("status", "check"):
            wall = statistics.median(statuses[name].wall) * 1000
            cpu = statistics.median(statuses[name].cpu) * 1000
            if files == 300:
                target(f"{name}: {wall:.0f} ms wall (<= {STATUS_WALL_MS:.0f})", wall <= 50)
                target(f"{name}: {cpu:.0f} ms CPU (<= {STATUS_CPU_MS:.0f})", cpu <= 40)
        if files >= 5000:
            cold = statistics.median(statuses["status, no stat cache"].wall)
            target(
                f"status without a stat cache {cold / floor:.2f}x the hashing floor "
                f"(<= {STATUS_FLOOR_LIMIT:.0f}x)",
                cold / floor <= STATUS_FLOOR_LIMIT,
            )
        updates = bench_updates(built, work / f"u{files}", args.rounds, not args.no_tools, env)
        for name, timing in updates.items():
            print(f"  {name} update{'':15} {timing.text()}")
        tether = updates["tether"]
        if files == 300:
            wall = statistics.median(tether.wall) * 1000
            target(f"tether update {wall:.0f} ms wall (<= {UPDATE_WALL_MS:.0f})", wall <= 150)
        cruft_min, copier_min = SPEEDUP.get(files, (15.0, 30.0))
        for name, limit in (("cruft", cruft_min), ("copier", copier_min)):
            if name in updates:
                ratio = median_ratio(updates[name].wall, tether.wall)
                cpu_ratio = median_ratio(updates[name].cpu, tether.cpu)
                text = f"tether {ratio:.1f}x faster than {name} ({cpu_ratio:.1f}x by CPU)"
                if limit is None:
                    print(f"        {text}")
                else:
                    target(f"{text} (>= {limit:.0f}x)", ratio >= limit)
        if not args.workdir:
            shutil.rmtree(work / f"u{files}", ignore_errors=True)
            shutil.rmtree(work / spec.name, ignore_errors=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
