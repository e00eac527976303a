"""``--remove-backups``: the saved patches go only after a run that verified every file;
by default, and whenever a file failed or a conflict is left, they stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from reapply_builders import (
    EXECUTE,
    PLANNER,
    PLANNER_MERGED,
    Gsd,
    cli,
    reapply_json,
    standard,
)
from tether.flows.reapply.cleanup import REMOVING_PREFIX


def args(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "--target", str(gsd.target),
            "--pristine", str(gsd.pristine), *extra]  # fmt: skip


def test_backups_are_kept_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine"))
    assert code == 0
    assert (gsd.patches / "backup-meta.json").is_file()
    assert doc["backups_removed"] is None


def test_remove_backups_after_a_fully_verified_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 0
    assert not gsd.patches.exists()
    assert doc["backups_removed"] == str(gsd.patches.absolute())
    assert not [p for p in gsd.target.iterdir() if p.name.startswith(REMOVING_PREFIX)]
    assert gsd.read(PLANNER) == PLANNER_MERGED
    # the installed versions tether backed up stay: they are not the patches
    assert gsd.backups.is_dir()


def test_a_conflict_left_keeps_the_backups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--remove-backups"))
    assert code == 4
    assert (gsd.patches / EXECUTE).is_file()
    assert "conflict" in doc["backups_kept_because"]


def test_a_failed_file_keeps_the_backups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    (gsd.patches / EXECUTE).unlink()  # its saved copy is missing: that file fails
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 1
    assert (gsd.patches / "backup-meta.json").is_file() and (gsd.patches / PLANNER).is_file()
    assert "failed" in doc["backups_kept_because"]


def test_a_dry_run_never_removes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    assert cli(*args(gsd, "--auto", "keep-mine", "--remove-backups", "--dry-run")) == 0
    assert "patch backups kept" in capsys.readouterr().out
    assert (gsd.patches / "backup-meta.json").is_file()
