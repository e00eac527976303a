"""Before and after, run by run: one tether command with two (or more) source trees, alternated.

On a machine other people load, one source tree's runs and then the other's are measured at
different loads; alternating them run by run puts both under the same load, and the CPU time
(user + system of tether and the programs it waited for) swings much less than the wall time
(docs/performance.md, "Small projects").

    python bench/alternate.py PROJECT --runs 40 old=<old src> new=<new src> [-- update --yes --json]

Each run copies PROJECT (a folder, e.g. the ``tether-project`` ``bench/small.py --workdir DIR``
leaves under ``DIR/u300``) to a fresh folder, calls ``os.sync()`` so no earlier run's dirty
pages are left for this run's syncs, and runs ``python -m tether ARGS`` in the copy with
``PYTHONPATH`` set to the named source tree; the first run of each is a warm-up, not counted.
The order of the trees is reversed every other run. Printed per tree: the median wall and
CPU time, the CPU quartiles and the fastest run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import run_child


def one_run(project: Path, work: Path, source: str, args: list[str]) -> tuple[float, float]:
    copy = work / "run"
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    os.sync()
    env = dict(os.environ, PYTHONPATH=source, PYTHONDONTWRITEBYTECODE="1")
    run = run_child([sys.executable, "-m", "tether", *args], cwd=copy, env=env)
    if run.returncode not in (0, 4):  # 4: the update left conflicts, as the bench's does
        raise SystemExit(f"{source}: exit {run.returncode}: {run.stderr.decode()[-500:]}")
    shutil.rmtree(copy, ignore_errors=True)
    return run.seconds * 1000, run.cpu_seconds * 1000


DEFAULT_ARGS = ["update", "--yes", "--json"]


def read_arguments(argv: list[str]) -> tuple[Path, int, dict[str, str], list[str]]:
    """The project, the runs, the named source trees and tether's arguments.

    Everything after the first ``--`` is tether's, split off before argparse sees the line:
    argparse would give a ``nargs="+"`` list the words after ``--`` too (``status`` read as a
    source tree)."""
    own, tether_args = argv, []
    if "--" in argv:
        split = argv.index("--")
        own, tether_args = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path, help="the project folder each run copies")
    parser.add_argument("--runs", type=int, default=20, help="counted runs per source tree")
    parser.add_argument("trees", nargs="+", help="NAME=SRC: a name and a source tree")
    options = parser.parse_args(own)
    trees: dict[str, str] = {}
    for tree in options.trees:
        name, equals, source = tree.partition("=")
        if not equals or not name or not source:
            parser.error(f"{tree!r}: a source tree is NAME=SRC (tether's arguments go after --)")
        trees[name] = source
    return options.project, options.runs, trees, tether_args or DEFAULT_ARGS


def main(argv: list[str] | None = None) -> int:
    project, runs, trees, args = read_arguments(sys.argv[1:] if argv is None else argv)
    for source in trees.values():  # each tree's bytecode, compiled once before the runs
        subprocess.run([sys.executable, "-m", "compileall", "-q", source], check=False)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tether-alternate-") as scratch:
        work = Path(scratch)
        for source in trees.values():
            one_run(project, work, source, args)
        names = list(trees)
        for index in range(runs):
            for name in names if index % 2 == 0 else names[::-1]:
                results[name].append(one_run(project, work, trees[name], args))
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {runs} runs each")
    for name, timings in results.items():
        wall = [w for w, _ in timings]
        cpu = [c for _, c in timings]
        low, _, high = statistics.quantiles(cpu, n=4)
        print(
            f"{name:10} median {statistics.median(wall):5.0f} ms wall {statistics.median(cpu):5.0f}"
            f" ms CPU; CPU quartiles {low:.0f} / {high:.0f} ms; fastest {min(wall):.0f} ms wall"
            f" {min(cpu):.0f} ms CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
