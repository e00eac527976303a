"""Where an update's or a status's wall time goes, phase by phase, without cProfile's
overhead (which inflates pure-Python code such as difflib several times over).

``python -m bench.phases [--scenario a|b|c] [--quick]`` builds the scenario like
``python -m bench`` does, then runs ``run_update`` and ``project_status`` in-process with
thin timing wrappers around the functions listed in ``PROBES`` (wrapped wherever a tether
module holds a reference to them). Times are inclusive (a phase includes the phases it
calls) and summed over calls; a probe whose function no longer exists is skipped.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import NEW, build, specs

# "module:function" or "module:Class.method"
PROBES = (
    "tether.flows.update:prepare_update",
    "tether.flows.baseline:load_baseline",
    "tether.flows.project:fetch_release",
    "tether.flows.plan:build_plan",
    "tether.flows.renames:find_renames",
    "tether.flows.plan:_plan_latest_path",
    "tether.flows.plan:read_adopter",
    "tether.flows.safety:unsafe_target",
    "tether.flows.plan:merge_action",
    "tether.engine.textmerge:merge3",
    "tether.flows.update:_execute",
    "tether.flows.apply:execute_plan",
    "tether.flows.apply:_backup",
    "tether.flows.apply:_write",
    "tether.flows.apply:_write_action",
    "tether.flows.apply:_verify_written",
    "tether.flows.apply:_Batch.commit",
    "tether.flows.finalize:finalize",
    "tether.flows.project:Release.mode_of",
    "tether.state.pristine:PristineCache.put",
    "tether.state.pristine:PristineCache.get",
    "tether.state.pristine:PristineCache.has",
    "tether.state.statcache:StatCache.lookup",
    "tether.state.statcache:StatCache.save",
    "tether.fsio:sha256_bytes",
    "tether.state.journal:Journal.append",
    "tether.state.store:save_state",
    "tether.fsio:atomic_write",
    "tether.fsio:sha256_file",
    "tether.flows.status:classify_drift",
    "os:fsync",
)


@dataclass
class Tally:
    calls: int = 0
    seconds: float = 0.0


def _resolve(probe: str) -> tuple[Any, str, Callable[..., Any]] | None:
    module_name, _, name = probe.partition(":")
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    *outer, attr = name.split(".")
    for part in outer:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    function = getattr(owner, attr, None)
    return (owner, attr, function) if callable(function) else None


@contextmanager
def probes(names: tuple[str, ...] = PROBES) -> Iterator[dict[str, Tally]]:
    """Wrap every probed function wherever a loaded tether module refers to it."""
    tallies: dict[str, Tally] = {}
    patched: list[tuple[Any, str, Any]] = []
    for probe in names:
        found = _resolve(probe)
        if found is None:
            continue
        owner, attr, function = found
        tally = tallies.setdefault(probe, Tally())

        def wrapper(*args: Any, _f: Any = function, _t: Tally = tally, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                _t.calls += 1
                _t.seconds += time.perf_counter() - start

        functools.update_wrapper(wrapper, function)
        holders = [(owner, attr)]
        if isinstance(owner, type(os)):
            holders += [
                (module, key)
                for module_name, module in list(sys.modules.items())
                if module_name.startswith("tether") and module is not owner
                for key, value in list(vars(module).items())
                if value is function
            ]
        for holder, key in holders:
            patched.append((holder, key, getattr(holder, key)))
            setattr(holder, key, wrapper)
    try:
        yield tallies
    finally:
        for holder, key, original in reversed(patched):
            setattr(holder, key, original)


def _import_tether() -> None:
    """Load every module the flows use, so references to probed functions exist to patch."""
    for name in ("tether.flows.update", "tether.flows.status", "tether.flows.plan"):
        importlib.import_module(name)
    for name in ("tether.flows.renames", "tether.engine.textmerge", "tether.engine.verify"):
        with suppress(ImportError):
            importlib.import_module(name)


def render(title: str, total: float, tallies: dict[str, Tally]) -> str:
    lines = [f"{title}: {total:.2f} s wall in-process", "  inclusive s   share      calls  probe"]
    for probe, tally in sorted(tallies.items(), key=lambda item: -item[1].seconds):
        if tally.calls:
            share = tally.seconds / total if total else 0.0
            lines.append(f"  {tally.seconds:10.3f} {share:7.1%} {tally.calls:10,}  {probe}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.phases", description=__doc__)
    parser.add_argument("--scenario", choices=("a", "b", "c"), default="b")
    parser.add_argument("--quick", action="store_true", help="smoke size")
    parser.add_argument("--workdir", type=Path, help="generate inputs here (default: temp)")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="fill the copy's stat cache with a tether status before the update",
    )
    args = parser.parse_args(argv)
    from tether.flows.status import project_status
    from tether.flows.update import UpdateRequest, run_update

    _import_tether()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tether-phases-"))
    try:
        built = build(specs(args.quick)[args.scenario], workdir)
        floor = measure.hash_files(built.tree_files())
        print(f"hashing floor (B, A, L): {floor:.3f} s")
        copy = measure.fresh_copy(built, "phases")
        if args.warm:
            measure.prime_stat_cache(copy)
        with probes() as tallies:
            start = time.perf_counter()
            run_update(UpdateRequest(copy, to=NEW))
            total = time.perf_counter() - start
        label = "warm stat cache" if args.warm else "no stat cache"
        print(render(f"update ({args.scenario}), {label}", total, tallies))
        floor_a = measure.hash_files(built.adopter_files(built.clean_project))
        print(f"\nhashing floor (A): {floor_a:.3f} s")
        with probes() as tallies:
            start = time.perf_counter()
            project_status(built.clean_project)
            total = time.perf_counter() - start
        print(render(f"status on the clean install of ({args.scenario})", total, tallies))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
