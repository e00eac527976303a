"""Audit benchmarks: ``python -m bench.audit corpus`` and ``python -m bench.audit perf``.

corpus  runs the lenses over tests/fixtures/audit/corpus and prints, per file and in
        total, the planted problems, how many were detected, missed, and the false
        positives (errors or warnings on lines nothing was planted on).
perf    builds a repository whose branch changes 500 shell files (hooks, scripts and bats
        suites made from the corpus), then times ``tether audit shell --base-ref main`` with a
        cold result cache and again warm. Targets: cold < 20 s, warm < 2 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the corpus helpers live with the tests
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

COLD_LIMIT = 20.0
WARM_LIMIT = 2.0
FILES = 500


def corpus() -> int:
    from tests.audit.corpus import evaluate
    from tether.audit.tools import default_tools

    outcome = evaluate(default_tools())
    print(f"{'file':40} planted detected missed false+")
    for f in outcome.files:
        print(
            f"{f.path:40} {len(f.planted):7} {len(f.detected):8} {len(f.missed):6} "
            f"{len(f.false_positives):6}"
        )
    planted, detected = outcome.count("planted"), outcome.count("detected")
    print(
        f"{'total':40} {planted:7} {detected:8} {outcome.count('missed'):6} "
        f"{outcome.count('false_positives'):6}"
    )
    print(f"detection {detected}/{planted}; false positives {outcome.count('false_positives')}")
    return 0 if outcome.count("missed") == 0 and outcome.count("false_positives") == 0 else 1


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.org",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.org",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _build(repo: Path) -> None:
    from tests.audit.corpus import corpus_files

    sources = [p for p in corpus_files() if p.suffix in (".sh", ".bats")]
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "switch", "-q", "-c", "feature")
    for index in range(FILES):
        source = sources[index % len(sources)]
        folder = {"hooks": "hooks", "tests": "test"}.get(source.parent.name, "scripts")
        # A distinct comment per copy: every file has its own bytes, as in a real tree.
        text = source.read_text().replace("\n", f"\n# copy {index}\n", 1)
        target = repo / folder / f"{source.stem}-{index:03d}{source.suffix}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "500 shell files")


def _time_audit(repo: Path, cache: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the audit and every program it ran)."""
    command = [sys.executable, "-m", "tether", "audit", "shell", "-C", str(repo)]
    command += ["--base-ref", "main", "--hooks", "hooks/**", "--cache-dir", str(cache), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 3):
        raise SystemExit(f"audit failed ({result.returncode}): {result.stderr.decode()[:400]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def perf() -> int:
    with tempfile.TemporaryDirectory(prefix="tether-audit-bench-") as scratch:
        repo, cache = Path(scratch) / "repo", Path(scratch) / "cache"
        _build(repo)
        cold, cold_cpu = _time_audit(repo, cache)
        warm, warm_cpu = min(_time_audit(repo, cache) for _ in range(3))
    ok = cold < COLD_LIMIT and warm < WARM_LIMIT
    load = os.getloadavg()[0]
    print(f"{FILES} changed shell files on {os.cpu_count()} CPUs (load average {load:.1f})")
    for label, wall, cpu, limit in (
        ("cold", cold, cold_cpu, COLD_LIMIT),
        ("warm", warm, warm_cpu, WARM_LIMIT),
    ):
        verdict = "PASS" if wall < limit else "FAIL"
        print(f"{label} cache: {wall:.2f} s wall, {cpu:.2f} s CPU (limit {limit:.0f} s) {verdict}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.audit", description=__doc__)
    parser.add_argument("what", choices=("corpus", "perf"))
    args = parser.parse_args(argv)
    return corpus() if args.what == "corpus" else perf()


if __name__ == "__main__":
    raise SystemExit(main())
