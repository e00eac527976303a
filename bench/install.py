"""Benchmark: ``tether init`` of a large release beside ``tether update`` of the same tree.

Run ``python bench/install.py`` (``--files N`` for another size, ``--rounds N`` for more
rounds). It builds scenario (b)'s shelf and project (``bench/scenarios.py``) at ``--files``
files, then per round, one right after the other: the hashing floor (sha256 of B, A and L
once, as ``python -m bench`` defines it), the write floor (L copied into an empty folder the
least way a crash-safe install can, without tether; a reference, not a target), ``tether
update --yes`` on a fresh copy of the customised project (the scenario's update), and
``tether init --to 1.1.0`` of the same release into an empty folder. The trees a round made
are deleted only at its end, and each round starts ``--settle`` seconds (35) after the
bench's last deletion: ext4 passes over recently freed inodes when it allocates new ones,
which made files created right after a mass deletion several times dearer. update and init
are real processes with durable writes (fsync on). The medians of the per-round ratios are
kept, and PASS/FAIL printed against the targets: init within 1.5x the update of the same
tree, and within 3x the hashing floor (meaningful at 20,000 files, the size the targets
name). The CPU seconds (user + system) of each process are printed beside its wall time: on
a machine other work keeps busy, they show what the run itself cost while the wall time
also counts the waits for the shared disk and cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure
from bench.scenarios import NEW, Spec, build, specs

TARGET_VS_UPDATE = 1.5
TARGET_VS_FLOOR = 3.0


def tether_init(shelf: Path, target: Path) -> measure.ChildRun:
    command = [*measure.tether_command(), "init", "--source", str(shelf), "--to", NEW]
    run = measure.run_child([*command, "--json", str(target)])
    if run.returncode != 0:
        raise RuntimeError(f"tether init failed: {run.stderr.decode(errors='replace')[-2000:]}")
    return run


def write_floor(latest: Path, rels: list[str], target: Path) -> float:
    """Seconds to copy L's files into an empty folder the least way a crash-safe install
    can (read, sha256, temp file, rename; folders made once; one sync at the end), in
    Python, without tether: what the disk and the interpreter alone cost an install."""
    start = time.perf_counter()
    made: set[str] = set()
    for rel in rels:
        data = (latest / rel).read_bytes()
        hashlib.sha256(data).digest()
        path = os.path.join(target, rel)
        folder = os.path.dirname(path)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        temp = f"{path}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)
    os.sync()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000, help="files in the release")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="keep the generated trees here")
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE,
        help=f"seconds between the bench's own deletions and a round (default {SETTLE:g})",
    )
    args = parser.parse_args(argv)

    spec = dataclasses.replace(specs(quick=False)["b"], files=args.files)
    if args.workdir is not None:
        return measure_install(spec, args.workdir, args.rounds, args.settle)
    with tempfile.TemporaryDirectory(prefix="tether-bench-install-") as workdir:
        return measure_install(spec, Path(workdir), args.rounds, args.settle)


# ext4 passes over the inodes freed in the last dirty_expire interval (30 s by default) when
# it allocates new ones, one buffer lookup each: files created right after thousands were
# deleted cost several times more. The bench's own deletions (the build replacing an older
# one, a round's trees) are kept this far away from the timed runs.
SETTLE = 35.0


def measure_install(spec: Spec, workdir: Path, rounds: int, settle: float = SETTLE) -> int:
    print(f"building {spec.files} files in {workdir} ...", file=sys.stderr)
    built = build(spec, workdir)
    files = list(built.tree_files())
    floors, updates, inits, rss = [], [], [], 0
    update_cpu, init_cpu, writes = [], [], []
    for round_no in range(rounds):
        time.sleep(settle)  # after the build's or the last round's deletions
        floors.append(measure.hash_files(files))
        written = built.root / "runs" / f"write-{round_no}"
        os.sync()
        writes.append(write_floor(built.latest_dir, built.l_paths, written))
        copy = measure.fresh_copy(built, f"update-{round_no}")
        update, _counts = measure.tether_update(built, copy)
        updates.append(update.seconds)
        update_cpu.append(update.cpu_seconds)
        target = built.root / "runs" / f"init-{round_no}"
        os.sync()
        run = tether_init(built.shelf, target)
        inits.append(run.seconds)
        init_cpu.append(run.cpu_seconds)
        rss = max(rss, run.max_rss_kib)
        # Deleted only now, with a settle before the next round (see SETTLE): deleting the
        # update's copy right before init made init's creates pay for the bench's cleanup.
        for tree in (written, copy, target):
            measure.discard(tree)
        print(f"  round {round_no + 1}/{rounds} done", file=sys.stderr)

    vs_update = statistics.median(i / u for i, u in zip(inits, updates, strict=True))
    vs_floor = statistics.median(i / f for i, f in zip(inits, floors, strict=True))
    floor, update_s, init_s = (statistics.median(x) for x in (floors, updates, inits))
    cpu_u, cpu_i = statistics.median(update_cpu), statistics.median(init_cpu)
    write_s = statistics.median(writes)
    print(f"files: {spec.files}, L: {built.bytes_l / 1e6:.0f} MB, rounds: {rounds}")
    print(f"hashing floor (sha256 of B, A, L)   {floor:8.3f} s")
    print(f"write floor (L into an empty dir)   {write_s:8.3f} s  {write_s / floor:5.2f}x floor")
    print(
        f"tether update (CLI), same tree      {update_s:8.3f} s  {update_s / floor:5.2f}x floor"
        f"  (CPU {cpu_u:.3f} s)"
    )
    print(
        f"tether init (CLI), into an empty dir {init_s:7.3f} s  {init_s / floor:5.2f}x floor"
        f"  (CPU {cpu_i:.3f} s)"
    )
    print(f"peak RSS of init                     {rss / 1024:7.0f} MB")
    results = [
        ("init within 1.5x the update of the same tree", vs_update, TARGET_VS_UPDATE),
        ("init within 3x the hashing floor", vs_floor, TARGET_VS_FLOOR),
    ]
    failed = False
    for label, ratio, limit in results:
        verdict = "PASS" if ratio <= limit else "FAIL"
        failed |= verdict == "FAIL"
        print(f"{verdict}  {label}: {ratio:.2f}x (limit {limit}x)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
