"""Unified diffs (tether.engine.patches) against real ``git diff --no-index``: same hunks,
same ranges, same headings, same "No newline" lines, same counts as ``--numstat``."""

import random
import subprocess

import pytest

from builders import git
from tether.engine.patches import line_diff, unified_patch

GIT_DIFF = [
    "git",
    "-c",
    "core.autocrlf=false",
    "diff",
    "--no-index",
    "--no-color",
    "--no-ext-diff",
    "--no-indent-heuristic",
    "--diff-algorithm=myers",
]


def git_diff(tmp_path, old: bytes, new: bytes) -> tuple[bytes, tuple[int, int]]:
    """git's ``---``/``+++`` lines and hunks for the two texts, and its numstat counts (one
    git run prints both: the numstat line, then the patch)."""
    (tmp_path / "a").write_bytes(old)
    (tmp_path / "b").write_bytes(new)
    run = [*GIT_DIFF, "--numstat", "--patch", "--src-prefix=x/", "--dst-prefix=y/", "a", "b"]
    numstat, _, out = subprocess.run(run, cwd=tmp_path, capture_output=True).stdout.partition(b"\n")
    fields = numstat.split()
    counts = (int(fields[0]), int(fields[1])) if fields else (0, 0)
    start = out.find(b"\n--- ") + 1 if out else 0
    return out[start:] if out else b"", counts


def random_pair(rng: random.Random) -> tuple[bytes, bytes]:
    alphabet = [b"x", b"y", b"def f():", b"", b"}", b"  body", b"_z", b"$v", b"\r", b"a\rb"]
    old = [rng.choice(alphabet) for _ in range(rng.randint(0, 40))]
    new = list(old)
    for _ in range(rng.randint(1, 8)):
        roll = rng.random()
        if roll < 0.4 and new:
            del new[rng.randrange(len(new))]
        elif roll < 0.8:
            new.insert(rng.randint(0, len(new)), rng.choice(alphabet))
        elif new:
            new[rng.randrange(len(new))] = rng.choice(alphabet)

    def text(lines: list[bytes]) -> bytes:
        return b"\n".join(lines) + (b"\n" if lines and rng.random() < 0.8 else b"")

    return text(old), text(new)


def test_random_edits_match_git(tmp_path):
    rng = random.Random(20240611)
    checked = 0
    for _ in range(150):
        old, new = random_pair(rng)
        if old == new:
            continue
        ours = line_diff(old, new, "x/a", "y/b")
        theirs, counts = git_diff(tmp_path, old, new)
        assert ours.text == theirs, (old, new)
        assert (ours.added, ours.removed) == counts, (old, new)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"", b"one\ntwo\n"),
        (b"one\ntwo\n", b""),
        (b"one", b"one\n"),
        (b"one\n", b"one"),
        (b"same\nlast", b"same\nLAST"),
        (
            b"".join(b"line %d\n" % n for n in range(40)),
            b"".join(b"line %d\n" % n for n in range(1, 41)),
        ),
        (b"section A\n" + b"x\n" * 20 + b"old\n", b"section A\n" + b"x\n" * 20 + b"new\n"),
        (b"h" * 200 + b"\n" + b"x\n" * 4 + b"old\n", b"h" * 200 + b"\n" + b"x\n" * 4 + b"new\n"),
    ],
)
def test_edge_cases_match_git(tmp_path, old, new):
    ours = line_diff(old, new, "x/a", "y/b")
    theirs, counts = git_diff(tmp_path, old, new)
    assert ours.text == theirs
    assert (ours.added, ours.removed) == counts


def test_equal_texts_give_an_empty_diff():
    assert line_diff(b"a\nb\n", b"a\nb\n", "x", "y") == line_diff(b"", b"", "x", "y")
    assert line_diff(b"a\n", b"a\n", "x", "y").text == b""


def test_unified_patch_applies_with_git(tmp_path):
    ours = b"keep\nmine\nkeep\n"
    theirs = b"keep\ntheirs\nkeep\nmore\n"
    (tmp_path / "f.txt").write_bytes(ours)
    (tmp_path / "p.patch").write_bytes(unified_patch("f.txt", ours, theirs))
    git(tmp_path, "apply", "p.patch")
    assert (tmp_path / "f.txt").read_bytes() == theirs
