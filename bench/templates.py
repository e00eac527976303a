"""Benchmark: updating projects copier or cruft generated, tether against the tools.

Run ``python bench/templates.py`` (``--files N``, ``--projects N``, ``--rounds N``; ``--only
copier|cruft|fleet``). copier, cookiecutter and cruft are the ones installed from the package
index (the ``dev`` extra). Everything is built in a temporary folder: a template repository
of ``--files`` files (one in five rendered through Jinja) with three tagged versions, each
changing one file in ten; projects generated from it by the tool itself and committed. Then,
per round, on twin copies of the same committed project:

* copier: ``copier update --defaults --skip-answered --vcs-ref v2`` against
  ``tether update --yes --no-branch --to v2`` with an empty render cache (tether renders
  twice), then v2 → v3 for both (tether's baseline is the cached render: it renders once);
  one bare ``copier copy`` of the template is timed too (what one render costs);
* cruft: ``cruft update --skip-apply-ask`` against ``tether update --yes --no-branch`` with
  an empty render cache;
* fleet: ``--projects`` copier projects sharing the template and answers, one ``copier
  update`` each in sequence, against one ``tether fleet update --yes --isolate none``.

Each command is a real process, wall time, median over ``--rounds``. The trees are compared
after each pair (they must be identical, apart from the files tether lists as dropped).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENV_KEEP = ("PATH", "LANG", "LC_ALL", "TMPDIR")


def environment(work: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in ENV_KEEP if k in os.environ}
    env.update(
        HOME=str(work / "home"),
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_STATE_HOME=str(work / "state"),
        XDG_CACHE_HOME=str(work / "cache"),
        TETHER_REGISTRY=str(work / "registry.json"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    return env


# CPU seconds (user + system) of every process a command started and waited for, summed
# per scenario beside the wall times: on a shared machine the wall time of a run swings
# with other people's load, its CPU time far less.
CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None, label: str = "") -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    if label:
        CPU.setdefault(label, []).append(_children_cpu() - cpu)
    return elapsed


def git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


TETHER = [sys.executable, "-m", "tether"]


def body(index: int, version: int) -> str:
    lines = [f"line {n} of file {index}" for n in range(30)]
    if index % 10 == 0:
        lines[15] = f"changed in version {version}"
    return "\n".join(lines) + "\n"


def copier_template(root: Path, files: int, env: dict[str, str]) -> None:
    root.mkdir(parents=True)
    git(root, env, "init", "-q", "-b", "main")
    (root / "copier.yml").write_text("project_name:\n  type: str\n  default: bench\n")
    (root / "{{_copier_conf.answers_file}}.jinja").write_text(
        "# Changes here will be overwritten by Copier\n{{ _copier_answers|to_nice_yaml -}}\n"
    )
    for version in (1, 2, 3):
        for index in range(files):
            rel = f"pkg{index % 25:02d}/file{index:04d}.txt"
            text = body(index, version if index % 10 == 0 and version > 1 else 1)
            if index % 5 == 0:
                rel += ".jinja"
                text = "# {{ project_name }}\n" + text
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git(root, env, "add", "-A")
        git(root, env, "commit", "-qm", f"v{version}")
        git(root, env, "tag", f"v{version}")


def cookiecutter_template(root: Path, files: int, env: dict[str, str]) -> list[str]:
    root.mkdir(parents=True)
    git(root, env, "init", "-q", "-b", "main")
    (root / "cookiecutter.json").write_text(json.dumps({"project_slug": "bench"}))
    inner = root / "{{cookiecutter.project_slug}}"
    commits = []
    for version in (1, 2):
        for index in range(files):
            path = inner / f"pkg{index % 25:02d}/file{index:04d}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            text = body(index, version if index % 10 == 0 and version > 1 else 1)
            if index % 5 == 0:
                text = "# {{ cookiecutter.project_slug }}\n" + text
            path.write_text(text)
        git(root, env, "add", "-A")
        git(root, env, "commit", "-qm", f"v{version}")
        commits.append(
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=root, env=env, capture_output=True, text=True
            ).stdout.strip()
        )
    return commits


def commit(project: Path, env: dict[str, str], message: str) -> None:
    git(project, env, "add", "-A")
    git(project, env, "commit", "-qm", message)


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".tether")
    }


def twins(project: Path, where: Path) -> tuple[Path, Path]:
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    left, right = where / "by-tool", where / "by-tether"
    shutil.copytree(project, left, symlinks=True)
    shutil.copytree(project, right, symlinks=True)
    return left, right


def clear_cache(work: Path) -> None:
    shutil.rmtree(work / "cache", ignore_errors=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


def bench_copier(work: Path, files: int, rounds: int, env: dict[str, str]) -> dict[str, float]:
    template = work / "copier-template"
    copier_template(template, files, env)
    project = work / "copier-project"
    run([tool("copier"), "copy", "--defaults", "--vcs-ref", "v1", str(template), str(project)], env)
    git(project, env, "init", "-q", "-b", "main")
    commit(project, env, "generated")
    times: dict[str, list[float]] = {"render": [], "copier-1": [], "tether-1": []}
    times |= {"copier-2": [], "tether-2": []}
    for round_ in range(rounds):
        scratch = work / f"copier-render-{round_}"
        times["render"].append(
            run(
                [
                    tool("copier"),
                    "copy",
                    "--defaults",
                    "--vcs-ref",
                    "v2",
                    str(template),
                    str(scratch),
                ],
                env,
                label="copier render",
            )
        )
        by_copier, by_tether = twins(project, work / "copier-twins")
        clear_cache(work)
        update = [tool("copier"), "update", "--defaults", "--skip-answered"]
        times["copier-1"].append(run([*update, "--vcs-ref", "v2"], env, by_copier, "copier-1"))
        times["tether-1"].append(
            run(
                [*TETHER, "update", "--yes", "--no-branch", "--to", "v2", "-C", str(by_tether)],
                env,
                label="tether-1",
            )
        )
        assert tree(by_copier) == tree(by_tether), "copier and tether disagree (v1 → v2)"
        commit(by_copier, env, "v2")
        commit(by_tether, env, "v2")
        times["copier-2"].append(run([*update, "--vcs-ref", "v3"], env, by_copier, "copier-2"))
        times["tether-2"].append(
            run(
                [*TETHER, "update", "--yes", "--no-branch", "--to", "v3", "-C", str(by_tether)],
                env,
                label="tether-2",
            )
        )
        assert tree(by_copier) == tree(by_tether), "copier and tether disagree (v2 → v3)"
    return {name: median(values) for name, values in times.items()}


def bench_cruft(work: Path, files: int, rounds: int, env: dict[str, str]) -> dict[str, float]:
    template = work / "cruft-template"
    first, _second = cookiecutter_template(template, files, env)
    out = work / "cruft-out"
    out.mkdir()
    run(
        [
            tool("cruft"),
            "create",
            "--no-input",
            "--checkout",
            first,
            "--output-dir",
            str(out),
            str(template),
        ],
        env,
    )
    project = out / "bench"
    record = json.loads((project / ".cruft.json").read_text())
    record["checkout"] = None
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    git(project, env, "init", "-q", "-b", "main")
    commit(project, env, "created")
    times: dict[str, list[float]] = {"cruft": [], "tether": []}
    for _round in range(rounds):
        by_cruft, by_tether = twins(project, work / "cruft-twins")
        clear_cache(work)
        times["cruft"].append(
            run([tool("cruft"), "update", "--skip-apply-ask"], env, by_cruft, "cruft update")
        )
        times["tether"].append(
            run(
                [*TETHER, "update", "--yes", "--no-branch", "-C", str(by_tether)],
                env,
                label="tether (cruft)",
            )
        )
        assert tree(by_cruft) == tree(by_tether), "cruft and tether disagree"
    return {name: median(values) for name, values in times.items()}


def bench_fleet(
    work: Path, files: int, projects: int, rounds: int, env: dict[str, str]
) -> dict[str, float]:
    template = work / "copier-template"
    if not template.exists():
        copier_template(template, files, env)
    seed = work / "fleet-seed"
    run([tool("copier"), "copy", "--defaults", "--vcs-ref", "v1", str(template), str(seed)], env)
    git(seed, env, "init", "-q", "-b", "main")
    commit(seed, env, "generated")
    times: dict[str, list[float]] = {"copier": [], "tether": []}
    for _round in range(rounds):
        fleet = work / "fleet"
        shutil.rmtree(fleet, ignore_errors=True)
        (work / "registry.json").unlink(missing_ok=True)
        clear_cache(work)
        names = [f"p{i:02d}" for i in range(projects)]
        for name in names:
            for side in ("copier", "tether"):
                shutil.copytree(seed, fleet / side / name, symlinks=True)
            subprocess.run(
                [*TETHER, "projects", "add", str(fleet / "tether" / name)],
                env=env,
                check=True,
                capture_output=True,
            )
        update = [tool("copier"), "update", "--defaults", "--skip-answered"]

        def sequential() -> None:
            for name in names:
                run([*update, "--vcs-ref", "v2"], env, fleet / "copier" / name, "20 copier updates")

        times["copier"].append(timed(sequential))
        times["tether"].append(
            run(
                [*TETHER, "fleet", "update", "--yes", "--isolate", "none", "--to", "v2"],
                env,
                label="tether fleet update",
            )
        )
        for name in names:
            assert tree(fleet / "copier" / name) == tree(fleet / "tether" / name)
    return {name: median(values) for name, values in times.items()}


def timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--fleet-files", type=int, default=None, help="default: --files")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=("copier", "cruft", "fleet"), action="append")
    args = parser.parse_args(argv)
    only = set(args.only or ("copier", "cruft", "fleet"))
    work = Path(tempfile.mkdtemp(prefix="tether-bench-templates-"))
    env = environment(work)
    results: dict[str, dict[str, float]] = {}
    try:
        if "copier" in only:
            results["copier"] = bench_copier(work, args.files, args.rounds, env)
        if "cruft" in only:
            results["cruft"] = bench_cruft(work, args.files, args.rounds, env)
        if "fleet" in only:
            files = args.fleet_files or args.files
            results["fleet"] = bench_fleet(work, files, args.projects, args.rounds, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for scenario, figures in results.items():
        print(scenario, json.dumps({k: round(v, 2) for k, v in figures.items()}))
    print("cpu seconds", json.dumps({k: round(sum(v), 2) for k, v in CPU.items()}))
    if "copier" in results:
        c = results["copier"]
        print(
            f"copier first update: {c['copier-1'] / c['tether-1']:.1f}x, next: {c['copier-2'] / c['tether-2']:.1f}x"
        )
    if "cruft" in results:
        c = results["cruft"]
        print(f"cruft update: {c['cruft'] / c['tether']:.1f}x")
    if "fleet" in results:
        c = results["fleet"]
        print(f"fleet of {args.projects}: {c['copier'] / c['tether']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
