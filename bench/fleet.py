"""Benchmark: ``tether fleet status`` over many projects beside one ``tether status`` each.

Run ``python bench/fleet.py`` (``--projects N --files N`` to resize, ``--repeat N`` for more
rounds). It builds a release of ``--files`` files, installs it once with ``tether init``
and copies that project ``--projects`` times (each copy gets a few local edits, so drift is
really computed), registers them in a private registry, then times, alternately and
``--repeat`` times each, keeping the median:

* ``tether fleet status`` in one process (newest version checked, default ``--jobs``);
* ``tether fleet status --jobs 1`` (the same, one project at a time);
* one ``tether status --check-latest -C <project>`` process per project, in sequence:
  what a shell loop over the projects would cost.

It prints the wall times and the ratio fleet / sequential. Nothing outside a temporary
folder is read or written (XDG and registry variables point into it).
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
from pathlib import Path

# Until ``projects`` and ``fleet`` are in the command table, run them through a shim.
SHIM = (
    "import sys, tether.cli.main as m;"
    "m.COMMANDS.setdefault('projects', ('tether.cli.projects_cmd', ''));"
    "m.COMMANDS.setdefault('fleet', ('tether.cli.fleet_cmd', ''));"
    "sys.exit(m.main(sys.argv[1:]))"
)


def tether(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SHIM, *args], env=env, capture_output=True, text=True, check=True
    )


def make_release(shelf: Path, version: str, files: int) -> None:
    root = shelf / version
    names = {}
    for index in range(files):
        rel = f"pkg{index % 20:02d}/file{index:04d}.txt"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"line {n} of {rel} in {version if n == 3 else 'any'}\n" for n in range(40))
        path.write_text(body)
        names[rel] = "shared" if index % 3 else "owned"
    manifest = {"schema_version": 1, "name": "bench-kit", "version": version, "files": names}
    (root / ".tether").mkdir(parents=True)
    (root / ".tether/manifest.json").write_text(json.dumps(manifest))


def build(work: Path, projects: int, files: int, env: dict[str, str]) -> list[Path]:
    shelf = work / "releases"
    make_release(shelf, "1.0.0", files)
    make_release(shelf, "1.1.0", files)
    first = work / "projects" / "p000"
    tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(first), env=env)
    made = [first]
    for index in range(1, projects):
        copy = work / "projects" / f"p{index:03d}"
        shutil.copytree(first, copy, symlinks=True)
        made.append(copy)
    for index, project in enumerate(made):
        for edit in range(3):  # a little drift in every project
            number = (index * 7 + edit) % files
            target = project / f"pkg{number % 20:02d}" / f"file{number:04d}.txt"
            target.write_text(target.read_text() + "local line\n")
        tether("projects", "add", str(project), env=env)
    return made


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tether-bench-fleet-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "TETHER_REGISTRY": str(work / "projects.json"),
            "XDG_CONFIG_HOME": str(work / "config"),
            "XDG_STATE_HOME": str(work / "state"),
        }
        started = time.perf_counter()
        projects = build(work, args.projects, args.files, env)
        print(
            f"built {len(projects)} projects of {args.files} files "
            f"in {time.perf_counter() - started:.1f} s"
        )
        runs: dict[str, list[float]] = {"fleet": [], "fleet --jobs 1": [], "sequential": []}
        for _ in range(args.repeat):
            runs["fleet"].append(timed(lambda: tether("fleet", "status", "--json", env=env)))
            runs["fleet --jobs 1"].append(
                timed(lambda: tether("fleet", "status", "--json", "--jobs", "1", env=env))
            )
            runs["sequential"].append(
                timed(
                    lambda: [
                        tether("status", "--check-latest", "--json", "-C", str(p), env=env)
                        for p in projects
                    ]
                )
            )
        check = json.loads(tether("fleet", "status", "--json", env=env).stdout)
        assert len(check["projects"]) == len(projects)
        assert all(row["modified"] >= 1 for row in check["projects"])
    medians = {name: statistics.median(times) for name, times in runs.items()}
    print(f"cpus: {os.cpu_count()}, repeat: {args.repeat} (median shown)")
    for name, value in medians.items():
        print(f"  {name:<16} {value:7.2f} s")
    ratio = medians["fleet"] / medians["sequential"]
    print(f"ratio fleet / sequential: {ratio:.2f} ({1 / ratio:.1f}x faster)")
    print(f"ratio fleet / fleet --jobs 1: {medians['fleet'] / medians['fleet --jobs 1']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
