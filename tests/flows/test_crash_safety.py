"""Crash-safety: a run killed at any journal step, then rerun, ends exactly like an
uninterrupted run, loses no adopter byte, and writes state once."""

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from builders import (
    ForkedChild,
    call,
    make_release,
    run_forked,
    run_tether,
    start_forked,
    tree_digest,
)
from process_helpers import signal_delivered
from tether.flows.apply import BATCH_SIZE
from tether.state import crashpoint
from tether.state.journal import read_records

BASE = "".join(f"line {i}\n" for i in range(12))


def every_bucket_fixture(tmp_path: Path) -> Path:
    """A project whose update to 2.0.0 has a file in every bucket."""
    shelf = tmp_path / "releases"
    v1 = {
        "skip.txt": "same\n",
        "update.txt": "u1\n",
        "owned.sh": "o1\n",
        "merged.txt": BASE,
        "conflict.txt": "a\nb\nc\n",
        "removed.txt": "r1\n",
        "delete-me.txt": "gone upstream\n",
        "delete-kept.txt": "gone upstream\n",
    }
    v2 = {
        "skip.txt": "same\n",
        "update.txt": "u2\n",
        "owned.sh": "o2\n",
        "merged.txt": BASE.replace("line 10\n", "line 10 upstream\n"),
        "conflict.txt": "a\ntheirs\nc\n",
        "removed.txt": "r2\n",
        "add.txt": "new\n",
    }
    classes = {"owned.sh": "owned"}
    make_release(shelf, "1.0.0", v1, classes)
    make_release(shelf, "2.0.0", v2, classes)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "merged.txt").write_text(BASE.replace("line 1\n", "line 1 mine\n"))
    (project / "conflict.txt").write_text("a\nmine\nc\n")
    (project / "removed.txt").unlink()
    (project / "delete-kept.txt").write_text("I still use this\n")
    (project / "skip.txt").write_text("my own skip\n")
    return project


UPDATE = ("update", "--yes", "--json", "--delete-removed", "--conflict", "markers")


def run_update(
    project: Path, crash: str | None = None, *extra: str
) -> subprocess.CompletedProcess[str]:
    """The update in a forked child, which a crash point kills for real; without one, the
    same command run in the test's process (a rerun needs no process of its own, and a
    fork costs ~11 ms of CPU)."""
    if crash is None:
        return run_tether(*UPDATE, *extra, "-C", str(project))
    return run_forked(*UPDATE, *extra, "-C", str(project), crash=crash)


def user_tree(project: Path) -> dict[str, bytes]:
    """The tree a user sees: everything but tether's runtime folders (backups, cache, journal)."""
    runtime = (".tether/backup/", ".tether/cache/", ".tether/journal", ".tether/lock")
    return {k: v for k, v in tree_digest(project).items() if not k.startswith(runtime)}


def normalised(tree: dict[str, bytes]) -> dict[str, bytes]:
    """state.json carries timestamps; compare it without them."""
    out = dict(tree)
    state = json.loads(out.pop(".tether/state.json"))
    state.pop("installed_at"), state.pop("updated_at")
    out[".tether/state.json"] = json.dumps(state, sort_keys=True).encode()
    return out


def backups(project: Path) -> dict[str, bytes]:
    root = project / ".tether/backup"
    found: dict[str, bytes] = {}
    for run in root.iterdir() if root.exists() else []:
        for rel, data in tree_digest(run).items():
            found.setdefault(rel, data)
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    project = every_bucket_fixture(tmp)
    pristine = tmp / "pristine"
    shutil.copytree(project, pristine, symlinks=True)
    result = run_update(project)
    assert result.returncode == 4, result.stderr
    doc = json.loads(result.stdout)
    buckets = {name for name, entries in doc["buckets"].items() if entries}
    assert buckets >= {
        "add",
        "removed",
        "overwrite",
        "update",
        "merged",
        "skip",
        "conflict",
        "delete",
        "deleted",
    }
    records = read_records(project / ".tether/journal.jsonl")
    return pristine, normalised(user_tree(project)), crashpoint.points(records)


def test_crash_points_come_from_the_journal(reference):
    _, _, points = reference
    steps = {p.split(":")[0] for p in points}
    assert {
        "run-started",
        "file-backed-up",
        "file-written",
        "file-deleted",
        "finalize-started",
        "state-written",
        "run-complete",
    } <= steps
    assert len(points) >= 15


SHARDS = 4  # the crash points split so parallel workers share them; together: every point


@pytest.mark.parametrize("shard", range(SHARDS))
def test_crash_at_every_journal_step_then_rerun(reference, tmp_path, shard):
    pristine, expected, points = reference
    before = user_tree(pristine)
    mine = points[shard::SHARDS]
    print(f"crash points exercised here: {len(mine)} of {len(points)} ({2 * len(mine)} runs)")
    for n, point in enumerate(mine):
        project = tmp_path / f"run{n}"
        shutil.copytree(pristine, project, symlinks=True)
        crashed = run_update(project, crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        rerun = run_update(project)
        # The fixture leaves a conflict: a rerun that finishes the run reports it (4); after
        # a crash past run-complete the update is done, and the rerun says its conflict is
        # still open (3), as 'check' would.
        expected_code = 3 if point.startswith("run-complete") else 4
        assert rerun.returncode == expected_code, (point, rerun.stderr)
        after = user_tree(project)
        # (a) byte-identical to the uninterrupted run
        assert normalised(after) == expected, point
        # (b) every adopter byte from before is in the tree or the backups
        saved = backups(project)
        for rel, data in before.items():
            if rel.startswith(".tether/"):
                continue
            assert after.get(rel) == data or saved.get(rel) == data, (point, rel)
        # (c) state written exactly once
        records = read_records(project / ".tether/journal.jsonl")
        assert sum(r["step"] == "state-written" for r in records) == 1, point
        assert records[-1]["step"] == "run-complete", point
        # (d) every stat-cache entry describes the bytes on disk: status trusts them
        assert stat_cache_mismatches(project) == [], point


def stat_cache_mismatches(project: Path) -> list[str]:
    """Cache entries a later status would trust (the file's stat key is the recorded one)
    whose hash is not that of the bytes on disk. An entry whose file changed since is never
    trusted (``StatCache.lookup``) and is no mismatch."""
    doc = json.loads((project / ".tether/cache/stat.json").read_text())
    wrong = []
    for rel, (size, mtime, ctime, ino, sha) in doc["files"].items():
        try:
            info = (project / rel).stat()
        except FileNotFoundError:
            continue
        if (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino) != (
            size,
            mtime,
            ctime,
            ino,
        ):
            continue
        if hashlib.sha256((project / rel).read_bytes()).hexdigest() != sha:
            wrong.append(rel)
    return wrong


# An update of BIG files fills one batch of writes and starts a second: a signal or a kill
# while the run is held after HELD_AT written files (TETHER_PAUSE_AT) lands mid-update, and
# a stop takes effect at the batch boundary with files still to write.
HELD_AT = 20
BIG = BATCH_SIZE + HELD_AT


def big_fixture(tmp_path: Path, count: int = BIG) -> Path:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {f"f/{i:05d}.txt": f"v1 {i}\n" for i in range(count)})
    make_release(shelf, "2.0.0", {f"f/{i:05d}.txt": f"v2 {i}\n" for i in range(count)})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def held_update(
    project: Path, gate: Path, *flags: str, at: str = f"file-written:{HELD_AT}"
) -> ForkedChild:
    """``tether update --yes`` in a child forked from the test's process, running while the
    test goes on, held still after the journal step ``at`` while the file ``gate`` exists
    (created here; the test removes it to let the run go)."""
    gate.touch()
    held = {crashpoint.PAUSE_VAR: f"{at}@{gate}"}
    return start_forked("update", "--yes", *flags, "-C", str(project), env=held)


def wait_for_records(
    journal: Path, step: str, at_least: int, proc: subprocess.Popen[str] | ForkedChild
) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_bytes().count(f'"step":"{step}"'.encode()) >= at_least:
            return True
        time.sleep(0.005)
    return False


def test_kill_9_mid_run_then_rerun(tmp_path):
    project = big_fixture(tmp_path)
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    proc = held_update(project, gate)
    assert wait_for_records(journal, "file-written", HELD_AT, proc), (
        "update ended before it could be killed"
    )
    proc.kill()
    proc.wait()
    gate.unlink()
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["version"] == "1.0.0"
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["resumed"] is True
    for i in (0, BIG // 2, BIG - 1):
        assert (project / f"f/{i:05d}.txt").read_text() == f"v2 {i}\n"
    backed = backups(project)
    assert len(backed) == BIG and all(v.startswith(b"v1 ") for v in backed.values())
    leftovers = [p for p in project.rglob("*.tether-tmp")]
    assert leftovers == []


def test_second_concurrent_update_gets_the_lock_error(tmp_path):
    project = big_fixture(tmp_path)
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    first = held_update(project, gate, at="run-started:1")
    assert wait_for_records(journal, "run-started", 1, first)
    second = run_tether("update", "--yes", "-C", str(project))
    gate.unlink()
    assert first.wait(timeout=120).returncode == 0
    assert second.returncode == 1
    assert "another tether run is in progress (pid" in second.stderr
    assert json.loads((project / ".tether/state.json").read_text())["version"] == "2.0.0"
    assert (project / "f/00042.txt").read_text() == "v2 42\n"


def test_other_target_refused_while_unfinished_and_abandon_restores(tmp_path):
    shelf_project = every_bucket_fixture(tmp_path)
    shelf = tmp_path / "releases"
    make_release(shelf, "3.0.0", {"x.txt": "x\n"})
    before = user_tree(shelf_project)
    crashed = run_update(shelf_project, "file-written:3", "--to", "2.0.0")
    assert crashed.returncode == crashpoint.EXIT_CODE
    result = run_tether("update", "--yes", "--to", "3.0.0", "-C", str(shelf_project))
    assert result.returncode == 1
    assert "2.0.0" in result.stderr and "3.0.0" in result.stderr and "--abandon" in result.stderr
    result = run_tether("update", "--abandon", "-C", str(shelf_project))
    assert result.returncode == 0, result.stderr
    assert user_tree(shelf_project) == before
    result = run_tether("update", "--yes", "--to", "3.0.0", "--json", "-C", str(shelf_project))
    assert result.returncode in (0, 4), result.stderr


def test_interrupted_after_state_written_says_so(tmp_path):
    project = every_bucket_fixture(tmp_path)
    crashed = run_update(project, crash="state-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE
    result = run_tether("update", "--yes", "-C", str(project))
    # The run had finished all but its last journal line; its conflict is still open.
    assert result.returncode == 4
    assert "interrupted before it completed" in result.stdout
    assert "finished the interrupted update to 2.0.0" in result.stdout
    assert "already up to date" not in result.stdout
    assert "conflict.txt" in result.stdout


def test_sigterm_stops_after_the_current_file_and_rerun_finishes(tmp_path):
    import signal

    project = big_fixture(tmp_path)
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    proc = held_update(project, gate)
    assert wait_for_records(journal, "file-written", HELD_AT, proc), "update ended first"
    proc.send_signal(signal.SIGTERM)
    assert signal_delivered(proc.pid, signal.SIGTERM)  # it lands while the run is held
    gate.unlink()
    done = proc.wait(timeout=60)
    out, err = done.stdout, done.stderr
    assert proc.returncode == 130, err
    assert "stopped by a signal; run the same command again" in out
    records = read_records(journal)
    written = sum(r["step"] == "file-written" for r in records)
    assert HELD_AT <= written < BIG
    assert not any(r["step"] == "state-written" for r in records)
    # every file the run reported written holds the new bytes; the rest are untouched
    for record in records:
        if record["step"] == "file-written":
            assert (project / str(record["path"])).read_text().startswith("v2 ")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert (project / f"f/{BIG - 1:05d}.txt").read_text() == f"v2 {BIG - 1}\n"


def test_resume_replans_a_file_edited_after_the_interruption(tmp_path):
    project = every_bucket_fixture(tmp_path)
    crashed = run_update(project, "file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE
    # update.txt comes after add.txt in plan order: not yet reached; the user edits it
    (project / "update.txt").write_text("u1 edited meanwhile\n")
    rerun = run_update(project)
    assert rerun.returncode == 4, rerun.stderr
    doc = json.loads(rerun.stdout)
    conflict_paths = [c["path"] for c in doc["buckets"]["conflict"]]
    assert "update.txt" in conflict_paths  # merged against the edit, never overwritten blindly
    assert "u1 edited meanwhile" in (project / "update.txt").read_text()


def test_a_resumed_run_removes_its_targets_temps_listing_each_folder_once(tmp_path, monkeypatch):
    """A killed write leaves ``.<name>.<hex>.tether-tmp`` beside its target. The resumed run
    removes those of its targets (names with glob characters and dots too) and no other,
    and lists a folder of many targets a few times in all, not once per file (it did: a
    resumed run of n files in one folder matched every name in it n times)."""
    names = [f"f/{i:02d}.txt" for i in range(40)] + ["f/[draft].md", "f/notes.v2.md"]
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {name: f"v1 {name}\n" for name in names})
    make_release(shelf, "2.0.0", {name: f"v2 {name}\n" for name in names})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    crashed = run_update(project, "file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    folder = project / "f"
    theirs = [folder / f".{Path(name).name}.0badc0de.tether-tmp" for name in names]
    theirs.append(folder / ".notes.v2.md..tether-tmp")  # an empty middle still matches
    others = [
        folder / ".mine.txt.0badc0de.tether-tmp",  # beside no target of the run
        folder / ".notes.tether-tmp",  # no name and dot before the suffix
        folder / ".notes.v2.md.tether-tmp.keep",
    ]
    for temp in theirs + others:
        temp.write_bytes(b"half-written\n")
    listed: list[str] = []
    real_scandir, real_listdir = os.scandir, os.listdir

    def scandir(path=".", *args):
        listed.append(os.path.realpath(path))
        return real_scandir(path, *args)

    def listdir(path=".", *args):
        listed.append(os.path.realpath(path))
        return real_listdir(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", listdir)
    rerun = run_update(project)
    monkeypatch.undo()
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["resumed"] is True
    assert [temp.name for temp in theirs if temp.exists()] == []
    assert [temp.name for temp in others if temp.exists()] == [temp.name for temp in others]
    assert listed.count(os.path.realpath(folder)) <= 4, listed.count(os.path.realpath(folder))
