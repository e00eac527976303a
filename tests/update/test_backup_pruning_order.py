"""Backup pruning keeps the runs that began last, in the order tether noted them, not by the
time in their names: with the clock set back, the newest run's name is the oldest."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from builders import call, make_release
from tether.flows.backups import RUN_ORDER_FILE
from tether.state import journal


def _clock_going_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reading of tether's clock an hour earlier than the one before (run ids too)."""
    now = [time.time_ns()]

    def earlier_each_time() -> tuple[time.struct_time, int]:
        now[0] -= 3600 * 1_000_000_000
        whole, nanos = divmod(now[0], 1_000_000_000)
        return time.gmtime(whole), nanos // 1000

    monkeypatch.setattr(journal, "_utc_clock", earlier_each_time)


def test_the_newest_runs_backups_are_kept_with_the_clock_set_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shelf = tmp_path / "releases"
    for i in range(8):
        make_release(shelf, f"1.{i}.0", {"a.txt": f"{i}\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    _clock_going_back(monkeypatch)
    for i in range(1, 8):  # seven updates, each backing up a.txt as it was (i - 1)
        assert call("update", "--yes", "--to", f"1.{i}.0", "-C", str(project)) == 0
    runs = list((project / ".tether/backup").iterdir())
    kept = sorted((run / "a.txt").read_text() for run in runs)
    # five earlier runs and the newest: the first update's backup (0) is the one pruned,
    # though its name, the latest time, sorts last
    assert kept == [f"{i}\n" for i in range(1, 7)]
    # the order file is kept to the runs whose folders are left
    recorded = (project / ".tether/cache" / RUN_ORDER_FILE).read_text().split()
    assert sorted(recorded) == sorted(run.name for run in runs)
    assert recorded == sorted(recorded, reverse=True)  # begun in order, named going back


def test_folders_made_before_the_order_was_noted_are_pruned_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shelf = tmp_path / "releases"
    for i in range(3):
        make_release(shelf, f"1.{i}.0", {"a.txt": f"{i}\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    _clock_going_back(monkeypatch)
    assert call("update", "--yes", "--to", "1.1.0", "-C", str(project)) == 0
    [noted] = (project / ".tether/backup").iterdir()
    backups = project / ".tether/backup"
    unnoted = [f"2099010{i}T000000000000Z-00000{i}" for i in range(1, 6)]  # named later
    for name in unnoted:
        (backups / name).mkdir()
    assert call("update", "--yes", "--to", "1.2.0", "-C", str(project)) == 0
    left = {run.name for run in backups.iterdir()}
    assert noted.name in left  # noted, so newer than any folder no run noted
    assert unnoted[0] not in left and set(unnoted[1:]) <= left
    assert len(left) == 6
