"""The run journal: durable appends, torn-line tolerance, unfinished-run detection, rotation,
and the crash point the fault-injection harness relies on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.errors import TetherError
from tether.state import crashpoint
from tether.state.journal import (
    STEP_FILE_WRITTEN,
    STEP_RUN_STARTED,
    Backup,
    Journal,
    new_run_id,
    unfinished_run,
)


@pytest.fixture(autouse=True)
def _no_crash(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(crashpoint.ENV_VAR, raising=False)
    crashpoint.reset()
    yield
    crashpoint.reset()


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / ".tether" / "journal.jsonl")


def start(journal: Journal, run_id: str, to: str = "2.0.0") -> None:
    journal.run_started(
        run_id, from_version="1.0.0", to_version=to, plan_digest="p1", command="update"
    )


def test_round_trip(journal: Journal) -> None:
    start(journal, "r1")
    journal.file_written("r1", "docs/guide.md", "ab" * 32)
    journal.append("r1", STEP_FILE_WRITTEN, path="x", sha256="cd", extra=[1, "two"])
    records = journal.records()
    assert [r["step"] for r in records] == ["run-started", "file-written", "file-written"]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[0]["from_version"] == "1.0.0" and records[0]["to_version"] == "2.0.0"
    assert records[1] == {**records[1], "run": "r1", "path": "docs/guide.md", "sha256": "ab" * 32}
    assert records[2]["extra"] == [1, "two"]
    assert all(str(r["at"]).endswith("Z") for r in records)
    assert journal.path.read_bytes().count(b"\n") == 3


def test_missing_journal_has_no_records(journal: Journal) -> None:
    assert journal.records() == []
    assert journal.unfinished_run() is None


def test_undecodable_path_round_trips(journal: Journal) -> None:
    name = os.fsdecode(b"caf\xe9.txt")  # a Latin-1 name on a UTF-8 system: surrogate escape
    journal.file_skipped("r1", name, "unchanged")
    assert journal.records()[0]["path"] == name


def test_unknown_step_and_reserved_fields_are_refused(journal: Journal) -> None:
    with pytest.raises(ValueError, match="unknown journal step"):
        journal.append("r1", "file-writen", path="x")
    with pytest.raises(ValueError, match="seq"):
        journal.append("r1", STEP_FILE_WRITTEN, seq=7)


def test_seq_continues_in_a_new_process(journal: Journal) -> None:
    start(journal, "r1")
    journal.file_written("r1", "a", "1")
    resumed = Journal(journal.path)
    resumed.file_written("r1", "b", "2")
    resumed.file_written("r2", "c", "3")
    assert [(r["run"], r["seq"]) for r in journal.records()] == [
        ("r1", 1),
        ("r1", 2),
        ("r1", 3),
        ("r2", 1),
    ]


def test_torn_last_line_is_ignored_and_cut_before_next_append(journal: Journal) -> None:
    start(journal, "r1")
    journal.file_written("r1", "a", "1")
    with open(journal.path, "ab") as handle:
        handle.write(b'{"run":"r1","step":"file-wri')  # a crash mid-write
    assert [r["seq"] for r in journal.records()] == [1, 2]

    journal.file_written("r1", "b", "2")
    assert [r.get("path") for r in journal.records()] == [None, "a", "b"]
    assert b"file-wri\n" not in journal.path.read_bytes()


def test_torn_only_line_is_cut(journal: Journal) -> None:
    journal.path.parent.mkdir(parents=True)
    journal.path.write_bytes(b'{"run":"r0"')
    assert journal.records() == []
    start(journal, "r1")
    assert [r["run"] for r in journal.records()] == ["r1"]


def test_damage_before_the_last_line_is_an_error(journal: Journal) -> None:
    start(journal, "r1")
    with open(journal.path, "ab") as handle:
        handle.write(b"not json\n")
    journal.file_written("r1", "a", "1")
    with pytest.raises(TetherError, match="line 2 is damaged"):
        journal.records()


def test_unfinished_run_complete_abandoned_unfinished(journal: Journal) -> None:
    start(journal, "r1")
    journal.run_complete("r1")
    assert journal.unfinished_run() is None

    start(journal, "r2")
    journal.file_written("r2", "a", "1")
    assert (run := journal.unfinished_run()) is not None and run.run_id == "r2"
    journal.run_abandoned("r2")
    assert journal.unfinished_run() is None

    start(journal, "r3", to="3.0.0")
    run = journal.unfinished_run()
    assert run is not None
    assert (run.run_id, run.from_version, run.to_version) == ("r3", "1.0.0", "3.0.0")
    assert (run.plan_digest, run.command) == ("p1", "update")
    assert run.started == journal.records()[-1]["at"]
    assert not run.finalize_started and not run.state_written


def test_unfinished_run_reports_progress(journal: Journal) -> None:
    start(journal, "r1")
    journal.file_backed_up("r1", "a", ".tether/backup/r1/a", "adopter")
    journal.file_written("r1", "a", "new-a")
    journal.file_failed("r1", "b", "permission denied")
    journal.file_skipped("r1", "c", "unchanged")
    journal.file_backed_up("r1", "d", ".tether/backup/r1/d", "adopter-d")
    journal.file_deleted("r1", "d")
    # A resume replans and must not lose the first backup of "a".
    journal.run_started(
        "r1", from_version="1.0.0", to_version="2.0.0", plan_digest="p2", command="update"
    )
    journal.file_backed_up("r1", "a", ".tether/backup/r1/a", "new-a")
    journal.file_written("r1", "b", "new-b")
    journal.finalize_started("r1")
    journal.state_written("r1")

    run = journal.unfinished_run()
    assert run is not None
    assert run.backed_up == {
        "a": Backup(".tether/backup/r1/a", "adopter"),
        "d": Backup(".tether/backup/r1/d", "adopter-d"),
    }
    assert run.written == {"a": "new-a", "b": "new-b"}
    assert run.failed == {}
    assert run.skipped == {"c": "unchanged"}
    assert run.deleted == {"d"}
    assert run.plan_digest == "p2"
    assert run.finalize_started and run.state_written
    assert run.last_seq == 12


def test_records_without_their_start_are_ignored() -> None:
    records: list[dict[str, object]] = [
        {"run": "old", "step": "file-written", "seq": 5, "path": "a", "sha256": "1"},
    ]
    assert unfinished_run(records) is None


def test_rotation_after_1_mb_keeps_one_old_file(journal: Journal) -> None:
    padding = "x" * 100_000
    for number in range(2):
        run_id = f"r{number}"
        start(journal, run_id)
        for index in range(11):  # > 1 MB in one run: never rotated mid-run
            journal.file_skipped(run_id, f"f{index}", padding)
        journal.run_complete(run_id)
        assert len(journal.records()) == 13

    start(journal, "r2")
    old = Journal(journal.rotated_path).records()
    assert {r["run"] for r in old} == {"r1"}  # r0's file was replaced: one old file only
    assert [r["run"] for r in journal.records()] == ["r2"]
    assert journal.records()[0]["seq"] == 1
    siblings = sorted(p.name for p in journal.path.parent.iterdir())
    assert siblings == ["journal.jsonl", "journal.jsonl.1"]


def test_no_rotation_while_a_run_is_unfinished(journal: Journal) -> None:
    small = Journal(journal.path, rotate_bytes=100)
    start(small, "r1")
    small.file_skipped("r1", "a", "y" * 200)
    start(small, "r2")  # r1 never finished: its records must stay readable
    assert not small.rotated_path.exists()
    assert (run := small.unfinished_run()) is not None and run.run_id == "r2"
    assert {r["run"] for r in small.records()} == {"r1", "r2"}


def test_new_run_id_sorts_and_is_filesystem_safe() -> None:
    ids = [new_run_id() for _ in range(50)]
    assert sorted(ids) == ids
    assert len(set(ids)) == 50
    for run_id in ids:
        assert all(c.isalnum() or c == "-" for c in run_id), run_id


CRASHER = """
import sys
from pathlib import Path
from tether.state.journal import Journal
journal = Journal(Path(sys.argv[1]))
for index in range(5):
    journal.file_written("r1", f"f{index}", "0" * 64)
"""


def test_crash_point_exits_after_nth_durable_append(journal: Journal) -> None:
    env = {**os.environ, crashpoint.ENV_VAR: "file-written:2"}
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(journal.path)], env=env, timeout=30, check=False
    )
    assert proc.returncode == crashpoint.EXIT_CODE
    assert [r["path"] for r in journal.records()] == ["f0", "f1"]


def test_crash_point_counts_per_step(monkeypatch: pytest.MonkeyPatch, journal: Journal) -> None:
    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)
    monkeypatch.setenv(crashpoint.ENV_VAR, "run-started:2")
    start(journal, "r1")
    journal.file_written("r1", "a", "1")
    assert exits == []
    start(journal, "r1")
    assert exits == [crashpoint.EXIT_CODE]


def test_crash_spec_is_validated() -> None:
    assert crashpoint.parse_spec("file-written:2") == ("file-written", 2)
    for bad in ("file-written", "file-written:0", ":3", "file-written:x"):
        with pytest.raises(TetherError, match=crashpoint.ENV_VAR):
            crashpoint.parse_spec(bad)


def test_points_enumerate_every_record(journal: Journal) -> None:
    start(journal, "r1")
    journal.file_written("r1", "a", "1")
    journal.file_written("r1", "b", "2")
    journal.run_complete("r1")
    assert crashpoint.points(journal.records()) == [
        f"{STEP_RUN_STARTED}:1",
        "file-written:1",
        "file-written:2",
        "run-complete:1",
    ]


def test_run_ids_and_record_times_are_utc_as_before(journal: Journal) -> None:
    """The run id and each record's ``at`` keep the shapes they had when ``datetime`` wrote
    them: the run id's UTC time to the microsecond, ``at`` as ISO 8601 with a ``Z``."""
    import datetime as dt

    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    run_id = new_run_id()
    journal.append(run_id, STEP_RUN_STARTED, from_version="1.0.0", to_version="1.1.0")
    after = dt.datetime.now(dt.UTC)
    started = dt.datetime.strptime(run_id[:22], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=dt.UTC)
    at = next(iter(journal.records()))["at"]
    assert isinstance(at, str) and len(at) == len("2024-05-01T12:00:00.123456Z")
    assert at.endswith("Z")
    recorded = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
    assert before <= started <= after
    assert before <= recorded <= after
