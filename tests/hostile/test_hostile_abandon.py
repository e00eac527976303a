"""``update --abandon`` killed, and killed updates abandoned: an abandon killed at any of its
journal steps, then run again, ends exactly like an uninterrupted one, and no temporary file
(``.<name>.<hex>.tether-tmp``) a killed write left stays behind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders import run_forked, run_tether, tree_digest
from tests.flows.test_crash_safety import every_bucket_fixture, run_update, user_tree
from tether.fsio import TEMP_SUFFIX
from tether.state import crashpoint
from tether.state.journal import read_records

ABANDON_STEPS = ("abandon-started", "file-unwritten", "file-restored", "run-abandoned")


def leftovers(project: Path) -> list[str]:
    return sorted(str(p.relative_to(project)) for p in project.rglob(f"*{TEMP_SUFFIX}"))


def abandon(project: Path, crash: str | None = None):
    return run_forked("update", "--abandon", "-C", str(project), crash=crash)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """A project whose update was killed half way (after its third file write), the tree it
    had before that update, and the tree and journal steps of an uninterrupted abandon."""
    tmp = tmp_path_factory.mktemp("interrupted")
    project = every_bucket_fixture(tmp)
    before = user_tree(project)
    crashed = run_update(project, "file-written:3")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    killed = tmp / "killed"
    shutil.copytree(project, killed, symlinks=True)
    seen = len(read_records(project / ".tether/journal.jsonl"))
    done = abandon(project)
    assert done.returncode == 0, done.stderr
    records = read_records(project / ".tether/journal.jsonl")[seen:]
    assert records[0]["step"] == "abandon-started"
    assert records[-1]["step"] == "run-abandoned"
    return killed, before, user_tree(project), crashpoint.points(records)


def test_an_uninterrupted_abandon_restores_the_tree_it_started_from(interrupted):
    _, before, abandoned, points = interrupted
    assert abandoned == before
    steps = {p.split(":")[0] for p in points}
    assert steps == set(ABANDON_STEPS), points  # every kind of step is a crash point


def test_an_abandon_killed_at_every_journal_step_ends_as_an_uninterrupted_one(
    interrupted, tmp_path
):
    killed, before, abandoned, points = interrupted
    for n, point in enumerate(points):
        project = tmp_path / f"run{n}"
        shutil.copytree(killed, project, symlinks=True)
        crashed = abandon(project, crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        if not point.startswith("run-abandoned"):
            # A plain update would finish the run half rolled back: it says to abandon.
            refused = run_tether("update", "--yes", "-C", str(project))
            assert refused.returncode == 1, (point, refused.stdout)
            assert "was interrupted; run 'tether update --abandon' again" in refused.stderr
            again = abandon(project)
            assert again.returncode == 0, (point, again.stderr)
        assert user_tree(project) == abandoned == before, point
        assert leftovers(project) == [], point
        records = read_records(project / ".tether/journal.jsonl")
        assert records[-1]["step"] == "run-abandoned", point


def test_temporary_files_of_killed_writes_are_swept_by_the_abandon(interrupted, tmp_path):
    """A write killed between creating its temporary file and renaming it leaves
    ``.<name>.<hex>.tether-tmp`` beside its target (the update's, or a killed abandon's put
    back) or in the run's backup folder; the abandon removes every one."""
    killed, before, _, _ = interrupted
    project = tmp_path / "project"
    shutil.copytree(killed, project, symlinks=True)
    [run] = [p for p in (project / ".tether/backup").iterdir()]
    planted = [
        project / f".update.txt.0badc0de{TEMP_SUFFIX}",  # a file the run wrote
        project / f".conflict.txt.0badc0de{TEMP_SUFFIX}",
        run / f".update.txt.1badc0de{TEMP_SUFFIX}",  # a backup being written
    ]
    for path in planted:
        path.write_bytes(b"half written")
    mine = project / f".notes.txt.2badc0de{TEMP_SUFFIX}"  # not beside any path of the run
    mine.write_bytes(b"the adopter's own")
    done = abandon(project)
    assert done.returncode == 0, done.stderr
    assert leftovers(project) == [mine.name]  # only the one tether has no business with
    assert {k: v for k, v in user_tree(project).items() if k != mine.name} == before


def test_kill_9_during_an_abandon_then_abandon_again(tmp_path, monkeypatch):
    """A real kill -9 while the abandon is held after its first batch of put backs, then
    the abandon run again: the tree the update started from, no temporary file anywhere."""
    from builders import start_forked
    from tests.flows.test_crash_safety import HELD_AT, big_fixture, held_update, wait_for_records
    from tether.flows import apply

    # The update is killed in its first batch of writes with a second batch still to come,
    # as with the real batch of 512, for a tenth of the files (the children are forked from
    # this process, so they see the smaller batch).
    monkeypatch.setattr(apply, "BATCH_SIZE", 32)
    project = big_fixture(tmp_path, count=32 + HELD_AT)
    before = tree_digest(project / "f")
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    update = held_update(project, gate)
    assert wait_for_records(journal, "file-written", HELD_AT, update)
    update.kill()
    update.wait()
    gate.unlink()
    gate.touch()
    held = {crashpoint.PAUSE_VAR: f"file-restored:1@{gate}"}
    rolling_back = start_forked("update", "--abandon", "-C", str(project), env=held)
    assert wait_for_records(journal, "file-restored", 1, rolling_back)
    rolling_back.kill()
    rolling_back.wait()
    gate.unlink()
    again = abandon(project)
    assert again.returncode == 0, again.stderr
    assert tree_digest(project / "f") == before
    assert leftovers(project) == []


def test_status_and_check_after_an_interrupted_abandon_name_the_step_that_works(
    interrupted, tmp_path
):
    """An abandon killed half way leaves a run only another abandon can finish (update
    refuses it): `status` and `check` name that abandon, never "rerun tether update"."""
    killed, before, _, points = interrupted
    point = next(p for p in points if p.startswith("file-restored"))
    project = tmp_path / "project"
    shutil.copytree(killed, project, symlinks=True)
    assert abandon(project, crash=point).returncode == crashpoint.EXIT_CODE
    status = run_tether("status", "-C", str(project))
    check = run_tether("check", "-C", str(project))
    as_json = run_tether("status", "--json", "-C", str(project))
    assert check.returncode == 3, check.stdout
    for said in (status.stdout, check.stdout):
        assert "its abandon was interrupted; run 'tether update --abandon' again" in said
        assert "rerun 'tether update'" not in said
    unfinished = json.loads(as_json.stdout)["unfinished"]
    assert unfinished["abandon_started"] is True
    # The step named is the one that works; the other one refuses.
    refused = run_tether("update", "--yes", "-C", str(project))
    assert refused.returncode == 1
    assert abandon(project).returncode == 0
    assert user_tree(project) == before
    assert "unfinished" not in run_tether("status", "-C", str(project)).stdout
