"""Benchmark: ``tether campaign run`` over many repositories, local pool against Dask.

Run ``python bench/campaign.py`` (``--repos N --files N`` to resize, default 200 × 300;
``--jobs N`` workers for both executors; ``--sample N`` repositories for the bare update;
``--skip-serial`` to leave out the ``-j 1`` run; ``--json FILE`` to keep the figures). It
builds a release of ``--files`` files (1.0.0, and 1.1.0 changing a tenth of them and adding
two), one repository that installed 1.0.0 and committed it, and ``--repos`` bare clones of
it served as ``file://`` remotes in a registry. Then, each on a fresh campaign, as real
processes:

* **bare update**: ``tether update --to 1.1.0 --yes`` in a clone (not timed: the clone),
  for ``--sample`` repositories one after the other: what a person runs per repository;
* **campaign -j 1**: ``tether campaign run -j 1`` (units in the coordinator's process);
* **campaign local -j N**: a process pool of N workers;
* **campaign dask**: ``--executor dask --scheduler`` a ``LocalCluster`` of N worker
  processes (one thread each) started by this script before the clock starts.

For each campaign it prints the wall time, repositories per hour, worker-seconds per
repository (wall × workers / repositories), and that minus the bare update as a process and
minus the same update run in process with its imports done (what a unit does besides
fetching, making the worktree, committing, two durable records and scheduling): the
campaign's cost per repository on top of the update itself. Then a paper estimate for
10,000 repositories from the worker-seconds per repository. Nothing outside a temporary
folder is written; nothing but 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ESTIMATE_REPOS = 10_000
ESTIMATE_WORKERS = (2, 8, 32, 128)


def make_release(shelf: Path, version: str, files: int) -> None:
    root = shelf / version
    names = {}
    changed = version != "1.0.0"
    for index in range(files + (2 if changed else 0)):
        rel = f"pkg{index % 20:02d}/file{index:04d}.txt"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        moved = changed and index % 10 == 0
        body = "".join(f"line {n} of {rel}{' v2' if moved and n == 5 else ''}\n" for n in range(40))
        path.write_text(body)
        names[rel] = "shared"
    manifest = {"schema_version": 1, "name": "bench-kit", "version": version, "files": names}
    (root / ".tether").mkdir(parents=True)
    (root / ".tether/manifest.json").write_text(json.dumps(manifest))


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def tether(*args: str, env: dict[str, str], cwd: Path | None = None) -> str:
    return run([sys.executable, "-m", "tether", *args], env, cwd)


def build(work: Path, repos: int, files: int, env: dict[str, str]) -> Path:
    shelf = work / "releases"
    make_release(shelf, "1.0.0", files)
    make_release(shelf, "1.1.0", files)
    seed = work / "seed"
    seed.mkdir()
    run(["git", "init", "-q", "-b", "main"], env, seed)
    tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(seed), env=env)
    run(["git", "add", "-A"], env, seed)
    run(["git", "commit", "-qm", "install 1.0.0"], env, seed)
    projects = {}
    for index in range(repos):
        bare = work / "remotes" / f"r{index:04d}.git"
        run(["git", "clone", "-q", "--bare", str(seed), str(bare)], env)
        projects[f"r{index:04d}"] = {"name": f"r{index:04d}", "url": bare.as_uri()}
    registry = work / "registry.json"
    registry.write_text(json.dumps({"version": 2, "projects": projects}))
    return registry


def bare_updates(
    work: Path, registry: Path, sample: int, env: dict[str, str], in_process: bool
) -> list[float]:
    """``tether update`` in fresh clones of the first ``sample`` repositories: as a process,
    or (``in_process``) through tether's entry point in this process, imports already
    done, as a campaign unit runs it."""
    projects = json.loads(registry.read_text())["projects"]
    times = []
    for name in list(projects)[: sample + in_process]:
        checkout = work / ("checkouts-here" if in_process else "checkouts") / name
        run(["git", "clone", "-q", projects[name]["url"], str(checkout)], env)
        argv = ["update", "--to", "1.1.0", "--yes", "--json", "-C", str(checkout)]
        started = time.perf_counter()
        if in_process:
            update_here(argv)
        else:
            tether(*argv, env=env)
        times.append(time.perf_counter() - started)
    return times[1:] if in_process else times  # the first one in process pays the imports


def update_here(argv: list[str]) -> None:
    import contextlib
    import io

    from tether.cli.main import main as tether_main

    with contextlib.redirect_stdout(io.StringIO()):
        if tether_main(argv) not in (0, 4):
            raise SystemExit(f"tether {' '.join(argv)} failed")


def campaign(
    work: Path, registry: Path, name: str, flags: list[str], env: dict[str, str], repos: int
) -> float:
    where = ["--dir", str(work / "campaigns")]
    start = ["start", name, "--upstream", "bench-kit", "--to", "1.1.0", "--registry"]
    tether("campaign", *start, str(registry), *where, env=env)
    started = time.perf_counter()
    document = json.loads(tether("campaign", "run", name, *where, *flags, "--json", env=env))
    wall = time.perf_counter() - started
    if document["counts"]["updated"] != repos:
        raise SystemExit(f"campaign {name}: {document['counts']}")
    return wall


def figures(wall: float, workers: int, repos: int, results: dict[str, Any]) -> dict[str, float]:
    per_repo = wall * workers / repos
    return {
        "wall_s": wall,
        "workers": workers,
        "repos_per_hour": repos / wall * 3600,
        "worker_s_per_repo": per_repo,
        "over_update_process_s": per_repo - results["bare_update_s"],
        "over_update_in_process_s": per_repo - results["update_in_process_s"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=200)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=5)
    parser.add_argument("--skip-serial", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    import distributed

    results: dict[str, Any] = {"repos": args.repos, "files": args.files, "jobs": args.jobs}
    with tempfile.TemporaryDirectory(prefix="tether-bench-campaign-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(work / "config"),
            "XDG_STATE_HOME": str(work / "state"),
            "XDG_CACHE_HOME": str(work / "cache"),
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        }
        started = time.perf_counter()
        registry = build(work, args.repos, args.files, env)
        print(f"built {args.repos} repositories of {args.files} files", end="")
        print(f" in {time.perf_counter() - started:.1f} s; cpus: {os.cpu_count()}")

        bare = statistics.median(bare_updates(work, registry, args.sample, env, False))
        results["bare_update_s"] = bare
        print(f"bare tether update (a process, median of {args.sample}): {bare:.2f} s")
        os.environ.update({k: v for k, v in env.items() if k.startswith(("XDG_", "GIT_"))})
        here = statistics.median(bare_updates(work, registry, args.sample, env, True))
        results["update_in_process_s"] = here
        print(f"the same update in process, imports done (a unit's share): {here:.2f} s")

        runs: dict[str, dict[str, float]] = {}
        if not args.skip_serial:
            wall = campaign(work, registry, "serial", ["-j", "1"], env, args.repos)
            runs["campaign -j 1"] = figures(wall, 1, args.repos, results)
        jobs = ["-j", str(args.jobs)]
        wall = campaign(work, registry, "local", jobs, env, args.repos)
        runs[f"campaign local -j {args.jobs}"] = figures(wall, args.jobs, args.repos, results)

        cluster_started = time.perf_counter()
        with distributed.LocalCluster(
            n_workers=args.jobs,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            results["dask_cluster_start_s"] = time.perf_counter() - cluster_started
            flags = ["--executor", "dask", "--scheduler", cluster.scheduler_address]
            wall = campaign(work, registry, "dask", flags, env, args.repos)
        runs[f"campaign dask, {args.jobs} workers"] = figures(wall, args.jobs, args.repos, results)
    results["runs"] = runs
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def report(results: dict[str, Any]) -> None:
    head = f"{'':<28}{'wall':>9}{'repos/h':>10}{'worker-s/repo':>15}"
    print(f"{head}{'- update':>11}{'- in process':>14}")
    for name, row in results["runs"].items():
        print(
            f"{name:<28}{row['wall_s']:8.1f}s{row['repos_per_hour']:10.0f}"
            f"{row['worker_s_per_repo']:14.2f}s{row['over_update_process_s']:+10.2f}s"
            f"{row['over_update_in_process_s']:+13.2f}s"
        )
    print(f"(dask LocalCluster start, not in the wall: {results['dask_cluster_start_s']:.1f} s)")
    per_repo = max(row["worker_s_per_repo"] for row in results["runs"].values())
    print(f"paper estimate for {ESTIMATE_REPOS:,} repositories at {per_repo:.2f} worker-s each:")
    for workers in ESTIMATE_WORKERS:
        hours = ESTIMATE_REPOS * per_repo / workers / 3600
        print(f"  {workers:>4} workers: {hours:6.2f} h")


if __name__ == "__main__":
    sys.exit(main())
