"""A whole-merge bound: a file whose versions are larger than tether merges as text
(``TEXT_MERGE_MAX_BYTES``) is never line-merged, marked or verified, the steps that hold
several times the file in memory. ``update`` keeps the adopter's bytes and sets the new
release's copy beside them (a conflict naming the bound); the merge driver and ``verify``
refuse such a file in one line before reading it. A one-sided change of such a file is
still taken: it needs no merge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from builders import make_release, run_forked, run_tether
from tether.engine.textmerge import TEXT_MERGE_MAX_BYTES, MergeResult
from tether.flows.merging import merge_sides
from tether.model.plan import MergeNoteCode
from tether.report.reasons import merge_note

TIMEOUT = 60


# Each text made once for the module's tests (32 MiB apiece: making one costs more than
# most of the tests using it), dropped when they are done.
_made: dict[tuple[str, int], bytes] = {}


@pytest.fixture(scope="module", autouse=True)
def _drop_the_texts_afterwards() -> Iterator[None]:
    yield
    _made.clear()


def _big(tag: str, extra: int = 1) -> bytes:
    """Text just past the bound, each line naming ``tag`` on the lines it changes."""
    if (tag, extra) not in _made:
        line = b"a line of an ordinary generated text file, nothing special in it\n"
        body = line * (TEXT_MERGE_MAX_BYTES // len(line) + extra)
        _made[(tag, extra)] = tag.encode() + b"\n" + body
    return _made[(tag, extra)]


def test_versions_past_the_bound_are_not_merged() -> None:
    base, ours, theirs = _big("base"), _big("ours"), _big("theirs")
    result, note = merge_sides(base, ours, theirs)
    assert result == MergeResult(ours, 1, binary=True)
    assert note is not None and note.code is MergeNoteCode.PAST_TEXT_SIZE
    words = merge_note(note)
    assert words == note.detail  # the engine's words about the bound, quoted as they are
    assert words.startswith(f"too large to merge as text (a version is {len(theirs):,} bytes; ")
    assert words.endswith(f"at most {TEXT_MERGE_MAX_BYTES:,} bytes, 32 MiB, a version)")


def test_a_one_sided_change_past_the_bound_is_still_taken() -> None:
    base, theirs = _big("base"), _big("theirs")
    assert merge_sides(base, base, theirs) == (MergeResult(theirs, 0), None)
    assert merge_sides(base, theirs, base) == (MergeResult(theirs, 0), None)


def test_update_keeps_your_file_and_sets_the_release_copy_beside_it(tmp_path: Path) -> None:
    shelf, project = tmp_path / "shelf", tmp_path / "app"
    base, ours, theirs = _big("base"), _big("ours"), _big("theirs")
    make_release(shelf, "1.0.0", {"data/big.txt": base, "docs/a.md": "a 1\n"})
    make_release(shelf, "2.0.0", {"data/big.txt": theirs, "docs/a.md": "a 2\n"})
    project.mkdir()
    assert (
        run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)).returncode
        == 0
    )
    (project / "data/big.txt").write_bytes(ours)
    result = run_forked("update", "--yes", "--json", "-C", str(project), timeout=TIMEOUT)
    assert result.returncode == 4, result.stderr
    doc = json.loads(result.stdout)
    conflicts = [e for e in doc["buckets"]["conflict"] if e["path"] == "data/big.txt"]
    assert len(conflicts) == 1
    assert conflicts[0]["reason"].startswith("too large to merge as text (a version is ")
    assert (project / "data/big.txt").read_bytes() == ours  # neither merged nor marked
    assert (project / ".tether/merge/data/big.txt.theirs").read_bytes() == theirs
    assert (project / "docs/a.md").read_text() == "a 2\n"  # the rest of the update ran


def _three(tmp_path: Path, big: str) -> list[Path]:
    files = []
    for name in ("base", "ours", "theirs"):
        path = tmp_path / name
        path.write_bytes(_big(name) if name == big else b"small\n")
        files.append(path)
    return files


@pytest.mark.parametrize(
    ("big", "role"), [("base", "ancestor"), ("ours", "current"), ("theirs", "other")]
)
def test_the_merge_driver_refuses_a_version_past_the_bound(
    tmp_path: Path, big: str, role: str
) -> None:
    base, ours, theirs = _three(tmp_path, big)
    before = ours.read_bytes()
    result = run_forked(
        "merge-driver", str(base), str(ours), str(theirs), "data.txt", cwd=tmp_path, timeout=TIMEOUT
    )
    assert result.returncode == 1
    path = {"base": base, "ours": ours, "theirs": theirs}[big]
    assert result.stderr == (
        f"tether: {path}: the {role} version is {path.stat().st_size:,} bytes, over the "
        f"{TEXT_MERGE_MAX_BYTES:,} bytes tether merges at most; merge it by hand\n"
    )
    assert ours.read_bytes() == before  # git finds %A as it was and marks the path unmerged


def test_verify_refuses_a_file_past_the_bound(tmp_path: Path) -> None:
    base, ours, theirs = _three(tmp_path, "theirs")
    result = run_forked(
        "verify",
        "--baseline",
        str(base),
        "--current",
        str(ours),
        "--result",
        str(theirs),
        timeout=TIMEOUT,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"tether: {theirs}: the result file is {theirs.stat().st_size:,} bytes, over the "
        f"{TEXT_MERGE_MAX_BYTES:,} bytes tether verifies at most\n"
    )
