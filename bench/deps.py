"""Benchmark: ``tether deps scan`` of many projects against a loopback npm registry.

Run ``python bench/deps.py`` (``--projects N --deps N --packages N`` to resize, ``--latency-ms``
to add a delay to every registry answer, as a remote registry would, ``--repeat N``). It
writes ``--projects`` package.json files declaring ``--deps`` dependencies each, drawn from a
pool of ``--packages`` generated packages (so most are shared between projects), serves the
packuments from 127.0.0.1 and scans the projects twice per round, alternately:

* the real scan: every package fetched once per run, ``--jobs`` at a time;
* the same scan with one request per occurrence (same concurrency): what a per-project
  loop over the registry costs.

It prints the request counts (counted by the server) and the median wall times. Nothing
outside a temporary folder is written and nothing but 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.registries import Fetcher, HttpClient, NpmRegistry
from tether.deps.scan import scan_projects
from tether.runs.selection import Member

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def packument(name: str, rng: random.Random) -> dict[str, Any]:
    versions: dict[str, Any] = {}
    times: dict[str, str] = {}
    day = NOW - timedelta(days=900)
    for major in range(1, 4):
        for minor in range(rng.randint(2, 6)):
            for patch in range(rng.randint(1, 4)):
                version = f"{major}.{minor}.{patch}"
                versions[version] = {"name": name, "version": version}
                day += timedelta(days=rng.randint(1, 9))
                times[version] = day.isoformat().replace("+00:00", "Z")
    latest = max(versions, key=lambda v: tuple(int(p) for p in v.split(".")))
    return {"name": name, "dist-tags": {"latest": latest}, "versions": versions, "time": times}


def build(
    work: Path, projects: int, deps: int, packages: int
) -> tuple[list[Member], dict[str, Any]]:
    rng = random.Random(12)
    names = [f"bench-pkg-{index:03d}" for index in range(packages)]
    packuments = {name: packument(name, rng) for name in names}
    members = []
    for index in range(projects):
        root = work / f"p{index:03d}"
        root.mkdir(parents=True)
        chosen = rng.sample(names, deps)
        manifest = {
            "name": root.name,
            "dependencies": {n: f"^1.{rng.randint(0, 1)}.0" for n in chosen},
        }
        (root / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (root / "package-lock.json").write_text("{}\n")
        members.append(Member(root.name, root))
    return members, packuments


def scan_once(
    members: list[Member], registry: LoopbackRegistry, dedupe: bool, jobs: int
) -> tuple[float, int, int]:
    registry.counts.clear()
    fetcher = Fetcher({"npm": NpmRegistry(registry.url, HttpClient(timeout=30))}, jobs, dedupe)
    started = time.perf_counter()
    result = scan_projects(members, "minor", fetcher, NOW)
    seconds = time.perf_counter() - started
    bumps = sum(1 for rs in result.resolved.values() for r in rs if r.target)
    return seconds, registry.total, bumps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--deps", type=int, default=40)
    parser.add_argument("--packages", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tether-bench-deps-") as tmp:
        members, packuments = build(Path(tmp), args.projects, args.deps, args.packages)
        with LoopbackRegistry(Path(tmp) / "none", packuments, dist=False) as registry:
            registry.latency = args.latency_ms / 1000
            runs: dict[str, list[float]] = {"once per package": [], "once per occurrence": []}
            requests: dict[str, int] = {}
            for _ in range(args.repeat):
                for label, dedupe in (("once per package", True), ("once per occurrence", False)):
                    seconds, count, bumps = scan_once(members, registry, dedupe, args.jobs)
                    runs[label].append(seconds)
                    requests[label] = count
    occurrences = args.projects * args.deps
    print(
        f"{args.projects} projects x {args.deps} dependencies = {occurrences} occurrences of "
        f"{args.packages} packages; --jobs {args.jobs}; latency {args.latency_ms:g} ms; "
        f"{bumps} bumps found"
    )
    for label, seconds in runs.items():
        print(f"  {label:<20} {requests[label]:>5} requests  {statistics.median(seconds):7.3f} s")
    ratio = statistics.median(runs["once per occurrence"]) / statistics.median(
        runs["once per package"]
    )
    print(f"  speed-up: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
