"""Benchmark: ``tether deps plan`` over 200 projects and 2,000 distinct packages.

Run ``python bench/deps_scale.py`` (``--projects N --packages N --deps N`` to resize,
``--jobs N``, ``--latency-ms N`` to delay every registry answer as a remote registry would,
``--repeat N``). It writes the projects (each package is declared by at least one project,
the rest of each project's dependencies drawn from the pool, so most are shared), a projects
registry, and serves generated packuments from 127.0.0.1. Each round runs, alternately:

* ``tether deps plan --json`` in a child process (what a person runs, interpreter start and
  imports included), its peak RSS read from the child's rusage;
* the floor: every packument fetched once and decoded, ``--jobs`` at a time, in this process
  with tether's own HTTP client.

It prints the medians, the ratio (target ≤ 2×) and the peak RSS (target < 300 MB), PASS or
FAIL each; the exit code is 1 when a target fails. Nothing outside a temporary folder is
written and nothing but 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.deps import packument  # the same generated packuments as bench/deps.py
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.registries import HttpClient, npm_package_url

TIME_TARGET = 2.0  # deps plan ≤ 2× the floor
RSS_TARGET_MB = 300.0


def build(work: Path, projects: int, packages: int, deps: int) -> tuple[Path, dict[str, Any]]:
    rng = random.Random(13)
    names = [f"bench-pkg-{index:04d}" for index in range(packages)]
    packuments = {name: packument(name, rng) for name in names}
    records: dict[str, Any] = {}
    for index in range(projects):
        root = work / f"p{index:03d}"
        root.mkdir(parents=True)
        own = names[index::projects]  # every package is declared somewhere
        rest = [n for n in rng.sample(names, deps) if n not in own][: max(0, deps - len(own))]
        manifest = {
            "name": root.name,
            "dependencies": {n: f"^1.{rng.randint(0, 1)}.0" for n in [*own, *rest]},
        }
        (root / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (root / "package-lock.json").write_text("{}\n")
        records[root.name] = {
            "name": root.name,
            "path": str(root),
            "keywords": [],
            "description": "",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "repoType": "single-repo",
        }
    registry = work / "projects.json"
    registry.write_text(json.dumps({"version": 2, "projects": records}, indent=2) + "\n")
    return registry, packuments


def run_plan(
    registry: Path, url: str, jobs: int, work: Path
) -> tuple[float, float, dict[str, Any]]:
    """One ``deps plan`` in a child; its wall time, its peak RSS (MB) and its document."""
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(work / "state"),
        "XDG_CONFIG_HOME": str(work / "config"),
        "npm_config_userconfig": str(work / "no-npmrc"),
        "NO_PROXY": "127.0.0.1,localhost",
    }
    command = [sys.executable, "-m", "tether", "deps", "plan", "--level", "minor"]
    command += ["--registry", str(registry), "--npm-registry", url, "--jobs", str(jobs), "--json"]
    script = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "s = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "sys.stderr.write(p.stderr.decode())\n"
        "sys.stdout.write(f'{s} {rss} {p.returncode}\\n' + p.stdout.decode())\n"
    )
    # A fresh parent per run, so RUSAGE_CHILDREN holds this one plan only.
    done = subprocess.run(
        [sys.executable, "-c", script, *command], capture_output=True, text=True, env=env
    )
    head, _, body = done.stdout.partition("\n")
    seconds, rss_kb, code = head.split()
    if code != "0":
        raise SystemExit(f"deps plan exited {code}: {done.stderr[-2000:]}")
    return float(seconds), int(rss_kb) / 1024, json.loads(body)


def fetch_floor(names: list[str], url: str, jobs: int) -> float:
    client = HttpClient(timeout=30)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        docs = list(pool.map(lambda n: client.get_json(npm_package_url(url, n)), names))
    seconds = time.perf_counter() - started
    assert all(doc is not None for doc in docs)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--packages", type=int, default=2000)
    parser.add_argument("--deps", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tether-bench-deps-scale-") as tmp:
        work = Path(tmp)
        registry, packuments = build(work, args.projects, args.packages, args.deps)
        names = sorted(packuments)
        with LoopbackRegistry(work / "none", packuments, dist=False) as server:
            server.latency = args.latency_ms / 1000
            plans, floors, peaks, requests = [], [], [], 0
            for _ in range(args.repeat):
                server.counts.clear()
                seconds, rss, doc = run_plan(registry, server.url, args.jobs, work)
                requests = server.total
                plans.append(seconds)
                peaks.append(rss)
                floors.append(fetch_floor(names, server.url, args.jobs))
    occurrences = sum(len(p["occurrences"]) for p in doc["packages"])
    plan, floor, peak = statistics.median(plans), statistics.median(floors), max(peaks)
    ratio = plan / floor
    print(
        f"{args.projects} projects, {args.packages} packages, {args.deps} dependencies each; "
        f"--jobs {args.jobs}; latency {args.latency_ms:g} ms; {args.repeat} round(s)"
    )
    print(f"  deps plan          {requests:>5} requests  {plan:7.3f} s  ({occurrences} moves)")
    print(f"  floor (fetch once) {len(names):>5} requests  {floor:7.3f} s")
    time_ok, rss_ok = ratio <= TIME_TARGET, peak < RSS_TARGET_MB
    print(f"  ratio {ratio:.2f}x (target ≤ {TIME_TARGET:g}x): {'PASS' if time_ok else 'FAIL'}")
    print(
        f"  peak RSS {peak:.0f} MB (target < {RSS_TARGET_MB:g} MB): {'PASS' if rss_ok else 'FAIL'}"
    )
    return 0 if time_ok and rss_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
