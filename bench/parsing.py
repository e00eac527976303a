"""Benchmark: what the parsing limits cost on ordinary files (docs/security.md, "Parsing
limits"; results in docs/performance.md).

Run ``python bench/parsing.py`` (``--repeat N`` for more rounds). For every input it times,
in the same round one right after the other, the whole bounded parse (``parse`` of the
structured engine, ``json_loads``/``toml_loads`` of the record loaders) and the limit check
alone on the already parsed data, and keeps the medians: the check's share is what the
bounds add. It also times the syntax check of a clean line merge in-process and in the
child process on the same file just above the in-process size, which is the fixed price a
large file pays for a wall-clock limit, and a billion-laughs file, which must stay fast.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make tether's sources importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tether.engine.structured.formats import ParseLimit, parse
from tether.engine.syntaxcheck import merge_breaks_syntax
from tether.parselimits import (
    MAX_NESTING,
    SYNTAX_CHECK_INLINE_BYTES,
    SYNTAX_CHECK_MEMORY_BYTES,
    SYNTAX_CHECK_SECONDS,
    depth_problem,
    json_loads,
    shape_problem,
)
from tether.syntax_child import check_in_child


def package_json(dependencies: int) -> str:
    deps = {f"pkg-{i:04}": f"^{i % 9}.{i % 7}.0" for i in range(dependencies)}
    scripts = {f"task{i}": f"node scripts/task{i}.js --flag" for i in range(20)}
    doc = {"name": "app", "version": "1.0.0", "scripts": scripts, "dependencies": deps}
    return json.dumps(doc, indent=2) + "\n"


def ci_yaml(jobs: int) -> str:
    head = "defaults: &defaults\n  image: node:20\n  retries: 2\n  tags: [linux, small]\n"
    body = "".join(
        f"job{i}:\n  <<: *defaults\n  script:\n    - npm ci\n    - npm test -- --shard {i}\n"
        for i in range(jobs)
    )
    return head + body


def pyproject(dependencies: int) -> str:
    deps = ",\n".join(f'  "package-{i}>={i % 5}.{i % 3}"' for i in range(dependencies))
    return (
        '[project]\nname = "app"\nversion = "1.0"\n'
        f"dependencies = [\n{deps}\n]\n\n[tool.ruff]\nline-length = 100\n"
    )


def state_json(files: int) -> str:
    records = {
        f"src/d{i % 50}/file{i}.txt": {"class": "shared", "sha256": "ab" * 32, "mode": "0o644"}
        for i in range(files)
    }
    return json.dumps({"schema_version": 1, "files": records})


def laughs(levels: int) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _loaded(fmt: str, text: str) -> Any:
    """The parser's own data before the limits look at it."""
    if fmt == "json":
        return json.loads(text)
    if fmt == "yaml":
        from ruamel.yaml import YAML

        return YAML(typ="rt").load(text)
    import tomlkit

    return tomlkit.parse(text).unwrap()


def _check(fmt: str) -> Callable[[Any], object]:
    return shape_problem if fmt == "yaml" else depth_problem


def bench_structured(repeat: int) -> list[tuple[str, float, float]]:
    inputs = [
        ("package.json, 80 dependencies", "json", package_json(80)),
        ("package.json, 2,000 dependencies", "json", package_json(2000)),
        ("CI YAML, 30 jobs sharing an anchor", "yaml", ci_yaml(30)),
        ("CI YAML, 600 jobs sharing an anchor", "yaml", ci_yaml(600)),
        ("pyproject.toml, 40 dependencies", "toml", pyproject(40)),
    ]
    rows = []
    for label, fmt, text in inputs:
        data = _loaded(fmt, text)
        whole = median_seconds(lambda fmt=fmt, text=text: parse(fmt, text), repeat)
        check = median_seconds(lambda fmt=fmt, data=data: _check(fmt)(data), repeat)
        rows.append((f"{label} ({len(text) // 1024 or 1} KB)", whole, check))
    return rows


def bench_records(repeat: int) -> list[tuple[str, float, float, float]]:
    """json.loads, json_loads, json_loads with the depth bound: each round times all three
    one after the other on the same text."""
    rows = []
    for files in (2_000, 20_000):
        text = state_json(files)
        actions: list[Callable[[], object]] = [
            lambda text=text: json.loads(text),
            lambda text=text: json_loads(text),
            lambda text=text: json_loads(text, max_depth=MAX_NESTING),
        ]
        times: list[list[float]] = [[], [], []]
        for _ in range(repeat):
            for action, kept in zip(actions, times, strict=True):
                start = time.perf_counter()
                action()
                kept.append(time.perf_counter() - start)
        medians = [statistics.median(kept) for kept in times]
        rows.append((f"{files:,} records ({len(text) // 1024} KB)", *medians))
    return rows


def bench_syntax_check(repeat: int) -> list[tuple[str, float]]:
    small = ci_yaml(30).encode()
    big = ci_yaml(1).encode()
    while len(big) <= SYNTAX_CHECK_INLINE_BYTES:
        big += b"\n" + ci_yaml(40).replace("defaults", f"d{len(big)}").encode()
    bomb = (laughs(9) + "last: 1\n").encode()
    tiny = b"a: 1\n"
    rows = [
        (
            "in-process, a one-line YAML file",
            median_seconds(lambda: merge_breaks_syntax("c.yaml", tiny, tiny, tiny, tiny), repeat),
        ),
        (
            "child process, the same one-line file (the fixed price)",
            median_seconds(
                lambda: check_in_child(
                    "c.yaml", [tiny] * 4, SYNTAX_CHECK_SECONDS, SYNTAX_CHECK_MEMORY_BYTES
                ),
                repeat,
            ),
        ),
        (
            f"in-process, {len(small) // 1024} KB YAML",
            median_seconds(
                lambda: merge_breaks_syntax("c.yaml", small, small, small, small), repeat
            ),
        ),
        (
            f"in-process, {len(big) // 1024} KB YAML",
            median_seconds(lambda: merge_breaks_syntax("c.yaml", big, big, big, big), repeat),
        ),
        (
            f"child process, the same {len(big) // 1024} KB YAML",
            median_seconds(
                lambda: check_in_child(
                    "c.yaml", [big] * 4, SYNTAX_CHECK_SECONDS, SYNTAX_CHECK_MEMORY_BYTES
                ),
                repeat,
            ),
        ),
    ]

    def refuse_bomb() -> None:
        try:
            parse("yaml", bomb.decode())
        except ParseLimit:
            return
        raise AssertionError("the billion laughs parsed")

    rows.append(
        (
            f"billion laughs, 9 levels ({len(bomb)} bytes): refused",
            median_seconds(refuse_bomb, repeat),
        )
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, median of {args.repeat}")
    print("\nstructured parse (what a key-by-key merge and the syntax check call)")
    print(f"  {'input':<52} {'parse':>9} {'limits':>9} {'share':>6}")
    for label, whole, check in bench_structured(args.repeat):
        print(f"  {label:<52} {whole * 1e3:>7.2f}ms {check * 1e3:>7.2f}ms {check / whole:>6.1%}")
    print("\nrecord loaders (state.json-shaped JSON)")
    print(f"  {'input':<30} {'json.loads':>11} {'json_loads':>11} {'+ depth bound':>14}")
    for label, plain, bounded, deep in bench_records(args.repeat):
        print(f"  {label:<30} {plain * 1e3:>9.1f}ms {bounded * 1e3:>9.1f}ms {deep * 1e3:>12.1f}ms")
    print("\nsyntax check of a clean line merge (four parses)")
    for label, seconds in bench_syntax_check(max(3, args.repeat // 3)):
        print(f"  {label:<58} {seconds * 1e3:>8.1f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
