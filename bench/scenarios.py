"""Seeded inputs for the benchmarks: two releases on a shelf and an adopter project.

A scenario is a release ``1.0.0`` (B), a release ``1.1.0`` (L) and a project that installed
B with tether and then customised some files (A). Everything comes from one
``random.Random(seed)``, so the same spec and seed give byte-identical trees.

How the ratios are read (they are shares of B's files):

* ``upstream``: files L changes (text edits spread over the file; binaries get new bytes);
* ``customised``: files the adopter edits after the install;
* ``both``: files in both sets (text only), edited in separate halves so a line merge is
  clean, except a ``conflicts`` share of them where both sides also rewrite the same line;
* ``added`` / ``removed``: new paths in L, and untouched paths of B that L drops.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

OLD = "1.0.0"
NEW = "1.1.0"
UPSTREAM_NAME = "bench-kit"
TEXT_EXTENSIONS = (".py", ".md", ".txt", ".sh", ".js", ".css")
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "value",
    "count",
    "index",
    "result",
    "item",
    "node",
    "config",
    "render",
    "parse",
    "token",
    "buffer",
    "stream",
    "layout",
    "widget",
    "cache",
    "route",
]
CACHE_DIR = ".tether/cache"  # the native profile's pristine cache inside a project
MIN_LINES = 12
FILES_PER_DIR = 40


@dataclass(frozen=True)
class Spec:
    name: str
    title: str
    files: int
    mean_bytes: int
    upstream: float
    customised: float
    both: float
    conflicts: float = 0.2
    added: float = 0.005
    removed: float = 0.005
    binary: float = 0.02
    owned: float = 0.3
    seed: int = 20240601


def specs(quick: bool) -> dict[str, Spec]:
    """The issue's scenarios; ``quick`` shrinks them to a smoke size with the same ratios."""
    scale = 0.05 if quick else 1.0

    def n(count: int) -> int:
        return max(40, int(count * scale))

    return {
        "a": Spec("a", "framework", n(600), 5_000, 0.10, 0.03, 0.01),
        "b": Spec("b", "large", n(20_000), 10_000, 0.10, 0.03, 0.01, seed=20240602),
        "c": Spec(
            "c",
            "many merges",
            n(2_000),
            6_000,
            1.0,
            1.0,
            1.0,
            conflicts=0.25,
            added=0.0,
            removed=0.0,
            binary=0.0,
            seed=20240603,
        ),
    }


@dataclass
class Built:
    """A generated scenario on disk, plus what tether should decide for it."""

    spec: Spec
    root: Path
    shelf: Path
    project: Path  # installed B, then customised: the template every update run copies
    clean_project: Path  # installed B, files never touched since; only status runs here
    paths_file: Path  # "class<TAB>path" for every path of B or L (the recipe's input)
    b_paths: list[str]
    l_paths: list[str]
    expected: dict[str, int] = field(default_factory=dict)
    bytes_b: int = 0
    bytes_l: int = 0

    @property
    def base_dir(self) -> Path:
        return self.shelf / OLD

    @property
    def latest_dir(self) -> Path:
        return self.shelf / NEW

    def tree_files(self) -> Iterator[Path]:
        """Every file the hashing floor reads: B's, A's and L's managed files."""
        for rel in self.b_paths:
            yield self.base_dir / rel
        for rel in self.b_paths:
            path = self.project / rel
            if path.is_file():
                yield path
        for rel in self.l_paths:
            yield self.latest_dir / rel

    def adopter_files(self, project: Path) -> Iterator[Path]:
        for rel in self.b_paths:
            path = project / rel
            if path.is_file():
                yield path


class _Text:
    """Code-like lines from a fixed pool (mostly distinct, as in real files) and fresh lines
    that are unique across the scenario, so edits never coincide by accident."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = [self._pool_line(i) for i in range(30_000)]
        self.mean_line = sum(len(line) + 1 for line in self.pool) / len(self.pool)
        self.fresh = 0

    def _pool_line(self, i: int) -> str:
        rng = self.rng
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        shape = rng.random()
        if shape < 0.15:
            return f"def {a}_{i}({b}, {c}):"
        if shape < 0.25:
            return ""
        indent = " " * rng.choice((4, 4, 8, 8, 12))
        if shape < 0.5:
            return f"{indent}{a}_{i} = {b}({c}, {rng.randint(0, 999)})"
        if shape < 0.7:
            return f"{indent}if {a} > {rng.randint(0, 99)}: return {b}_{i}"
        if shape < 0.85:
            return f"{indent}# {a} {b} {c} note {i}"
        return f"{indent}{a}.{b}_{i}.append({c!r})"

    def lines(self, count: int) -> list[str]:
        return self.rng.choices(self.pool, k=count)

    def new_line(self, tag: str) -> str:
        self.fresh += 1
        word = self.rng.choice(WORDS)
        return f"    {word}_{tag}_{self.fresh} = {tag}_change({self.fresh})"

    def edit(self, lines: list[str], lo: int, hi: int, runs: int, tag: str) -> list[str]:
        """Replace, insert or delete lines at ``runs`` distinct positions in ``[lo, hi)``."""
        out = list(lines)
        if hi <= lo:
            return out
        positions = sorted(self.rng.sample(range(lo, hi), min(runs, hi - lo)), reverse=True)
        for pos in positions:
            roll = self.rng.random()
            if roll < 0.6:
                out[pos] = self.new_line(tag)
            elif roll < 0.85:
                out[pos:pos] = [self.new_line(tag) for _ in range(self.rng.randint(1, 3))]
            else:
                del out[pos]
        return out


def _size(rng: random.Random, mean: int) -> int:
    sigma = 0.8
    mu = math.log(mean) - sigma * sigma / 2
    return int(min(max(rng.lognormvariate(mu, sigma), 600), mean * 20))


def _rel_path(index: int, binary: bool) -> str:
    top, sub = divmod(index // FILES_PER_DIR, 20)
    ext = ".bin" if binary else TEXT_EXTENSIONS[index % len(TEXT_EXTENSIONS)]
    return f"pkg{top:02d}/mod{sub:02d}/file{index:05d}{ext}"


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _encode(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _write_manifest(root: Path, version: str, classes: dict[str, str]) -> None:
    # Each file's sha256 is recorded, as `tether manifest build` does with `hashes = true`.
    files = {
        rel: {"class": cls, "sha256": hashlib.sha256((root / rel).read_bytes()).hexdigest()}
        for rel, cls in classes.items()
    }
    manifest = {"schema_version": 1, "name": UPSTREAM_NAME, "version": version, "files": files}
    _write(root / ".tether" / "manifest.json", (json.dumps(manifest, indent=2) + "\n").encode())


def _install(project: Path, shelf: Path) -> None:
    """``tether init`` in-process, without fsync: setup only, never timed, and 40,000
    durable writes would cost minutes on a slow disk."""
    from tether.flows.install import install_release

    with mock.patch("os.fsync", lambda fd: None):
        install_release(project, str(shelf), OLD)


def copy_tree(source: Path, target: Path, hardlink: bool = False, skip: str = "") -> None:
    """``cp -a`` (or ``cp -al``: hard links, for trees nobody writes in place), leaving out
    the ``skip`` folder (a relative path) when given."""
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = "-al" if hardlink else "-a"
    if not skip:
        subprocess.run(["cp", flags, str(source), str(target)], check=True)
        return
    head, _, rest = skip.partition("/")
    target.mkdir()
    shutil.copystat(source, target)
    for entry in sorted(source.iterdir()):
        if entry.name != head:
            subprocess.run(["cp", flags, str(entry), str(target / entry.name)], check=True)
        elif rest:
            copy_tree(entry, target / entry.name, hardlink, rest)


def fresh_project(built: Built, target: Path) -> None:
    """A project for one run that changes it: a real copy of the customised template, and
    the clean install's cache as hard links (tether only adds or replaces files there, by
    rename). Its stat cache names other inodes, so it starts as cold as a fresh clone."""
    copy_tree(built.project, target)
    copy_tree(built.clean_project / CACHE_DIR, target / CACHE_DIR, hardlink=True)


def build(spec: Spec, workdir: Path) -> Built:
    rng = random.Random(spec.seed)
    text = _Text(rng)
    root = workdir / spec.name
    if root.exists():
        shutil.rmtree(root)
    shelf = root / "shelf"
    base_dir, latest_dir = shelf / OLD, shelf / NEW

    count = spec.files
    kinds = [rng.random() < spec.binary for _ in range(count)]
    b_paths = [_rel_path(i, kinds[i]) for i in range(count)]
    classes = {rel: ("owned" if rng.random() < spec.owned else "shared") for rel in b_paths}

    order = list(range(count))
    rng.shuffle(order)
    text_order = [i for i in order if not kinds[i]]
    both = set(text_order[: round(count * spec.both)])
    rest = [i for i in order if i not in both]
    upstream_only = set(rest[: round(count * (spec.upstream - spec.both))])
    rest = rest[len(upstream_only) :]
    custom_only = set(rest[: round(count * (spec.customised - spec.both))])
    rest = rest[len(custom_only) :]
    removed = set(rest[: round(count * spec.removed)])
    both_list = sorted(both)
    conflicting = set(rng.sample(both_list, round(len(both_list) * spec.conflicts)))

    expected = {"add": 0, "update": 0, "overwrite": 0, "merged": 0, "conflict": 0, "delete": 0}
    adopter_edits: dict[str, bytes] = {}
    bytes_b = bytes_l = 0
    for i, rel in enumerate(b_paths):
        size = _size(rng, spec.mean_bytes)
        if kinds[i]:
            base = rng.randbytes(size)
            theirs = base[: size // 2] + rng.randbytes(size - size // 2)
            mine = rng.randbytes(size)
        else:
            lines = text.lines(max(MIN_LINES, int(size / text.mean_line)))
            lines[0] = f"# {rel}"
            n = len(lines)
            runs = max(1, min(8, n // 40))
            base = _encode(lines)
            if i in both:
                mid = n // 2
                up = text.edit(lines, 1, mid - 3, runs, "upstream")
                local = text.edit(lines, mid + 4, n, runs, "local")
                if i in conflicting:
                    up[len(up) - (n - mid)] = text.new_line("upstream")
                    local[mid] = text.new_line("local")
                theirs, mine = _encode(up), _encode(local)
            else:
                theirs = _encode(text.edit(lines, 1, n, runs, "upstream"))
                mine = _encode(text.edit(lines, 1, n, runs, "local"))
        _write(base_dir / rel, base)
        bytes_b += len(base)
        if i in removed:
            expected["delete"] += 1
            continue
        changed_upstream = i in both or i in upstream_only
        latest = theirs if changed_upstream else base
        _write(latest_dir / rel, latest)
        bytes_l += len(latest)
        if i in both or i in custom_only:
            adopter_edits[rel] = mine
        if i in both:
            expected["conflict" if i in conflicting else "merged"] += 1
        elif i in upstream_only:
            expected["overwrite" if classes[rel] == "owned" else "update"] += 1

    added = [f"pkg_new/add{j:05d}.md" for j in range(round(count * spec.added))]
    for rel in added:
        data = _encode(
            text.lines(max(MIN_LINES, int(_size(rng, spec.mean_bytes) / text.mean_line)))
        )
        _write(latest_dir / rel, data)
        bytes_l += len(data)
        classes[rel] = "shared"
    expected["add"] = len(added)

    l_paths = [rel for i, rel in enumerate(b_paths) if i not in removed] + added
    _write_manifest(base_dir, OLD, {rel: classes[rel] for rel in b_paths})
    _write_manifest(latest_dir, NEW, {rel: classes[rel] for rel in l_paths})

    paths_file = root / "paths.tsv"
    union = sorted(set(b_paths) | set(l_paths))
    paths_file.write_text("".join(f"{classes[rel]}\t{rel}\n" for rel in union))

    # The clean install is only ever used by status. The template is a real copy (a hard
    # link would change the clean files' ctime, which tether's stat cache keys on) without
    # the pristine cache, which each run's copy links in from the clean install.
    clean_project = root / "project-clean"
    _install(clean_project, shelf)
    project = root / "project"
    copy_tree(clean_project, project, skip=CACHE_DIR)
    for rel, data in adopter_edits.items():
        _write(project / rel, data)
    os.sync()
    return Built(
        spec,
        root,
        shelf,
        project,
        clean_project,
        paths_file,
        b_paths,
        l_paths,
        expected,
        bytes_b,
        bytes_l,
    )


def small_project(workdir: Path) -> Path:
    """A three-file project for CLI start-up measurements."""
    shelf = workdir / "small" / "shelf"
    files = {"README.md": b"# small\n", "bin/run.sh": b"#!/bin/sh\necho hi\n", "docs/a.md": b"a\n"}
    for rel, data in files.items():
        _write(shelf / OLD / rel, data)
    _write_manifest(shelf / OLD, OLD, dict.fromkeys(files, "shared"))
    project = workdir / "small" / "project"
    _install(project, shelf)
    return project
