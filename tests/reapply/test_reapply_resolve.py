"""Settling reapply's conflicts: per file on a terminal (a real pseudo-terminal as stdin),
with the same choices as ``update``, or ``--auto`` for scripts; ``--json`` never asks."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from builders import run_forked
from reapply_builders import (
    EXECUTE,
    EXECUTE_OURS,
    EXECUTE_V2,
    HELP,
    HELP_OURS,
    HELP_V2,
    PLANNER,
    PLANNER_OURS,
    PLANNER_V2,
    Gsd,
    both_sides,
    reapply_json,
    standard,
    statuses,
)
from tether.cli.interact import FOR_ALL, conflict_choices

# Without a baseline the clashing lines are not known: only the whole-file answers.
WHOLE_FILE = conflict_choices(hunk_level=False)
HUNK_LEVEL = conflict_choices(hunk_level=True)


def args(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target), *extra]


def run_on_terminal(argv: list[str], answers: str) -> subprocess.CompletedProcess[str]:
    """tether reapply with a pseudo-terminal as stdin, the answers typed into it ahead."""
    main, terminal = os.openpty()
    try:
        os.write(main, answers.encode())
        return run_forked("reapply", *argv, stdin_fd=terminal, timeout=60)
    finally:
        os.close(terminal)
        os.close(main)


def test_each_conflict_is_asked_on_a_terminal_with_updates_choices(tmp_path: Path) -> None:
    gsd = standard(tmp_path, pristine=False)  # three conflicts, in backup-meta order
    done = run_on_terminal(args(gsd), "d\nk\nr\nw\n")
    assert done.returncode == 4, done.stderr  # the one left with markers
    assert done.stderr.count(WHOLE_FILE) == 4  # asked again after the diff
    assert "[o] my side of the clashing lines" not in done.stderr  # no baseline, no hunks
    assert f"+++ b/{PLANNER}" in done.stderr and "+model: opus" in done.stderr
    assert gsd.read(PLANNER) == PLANNER_OURS  # mine
    assert gsd.read(HELP) == HELP_V2  # theirs
    assert gsd.read(EXECUTE) == both_sides(EXECUTE_OURS, EXECUTE_V2)  # markers
    assert "resolved: keep-mine" in done.stdout and "resolved: take-theirs" in done.stdout
    assert "Traceback" not in done.stderr


def test_keep_mine_for_all_answers_once(tmp_path: Path) -> None:
    gsd = standard(tmp_path, pristine=False)
    done = run_on_terminal(args(gsd), "K\n")  # a capital letter: for every file
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(WHOLE_FILE) == 1
    assert [gsd.read(PLANNER), gsd.read(HELP)] == [PLANNER_OURS, HELP_OURS]


def test_json_never_asks_even_on_a_terminal(tmp_path: Path) -> None:
    gsd = standard(tmp_path, pristine=False)
    done = run_on_terminal([*args(gsd), "--json"], "m\nm\nm\n")
    assert done.returncode == 4
    assert FOR_ALL not in done.stderr
    assert set(statuses(json.loads(done.stdout)).values()) == {"conflict"}


def test_end_of_input_at_the_prompt_writes_nothing(tmp_path: Path) -> None:
    gsd = standard(tmp_path, pristine=False)
    done = run_on_terminal(args(gsd), "\x04")  # ^D: the end of input
    assert done.returncode == 1
    assert "end of input" in done.stderr
    assert gsd.read(PLANNER) == PLANNER_V2 and not gsd.backups.exists()


@pytest.mark.parametrize(
    ("choice", "expected", "status"),
    [("keep-mine", PLANNER_OURS, "resolved"), ("take-theirs", PLANNER_V2, "resolved")],
)
def test_auto_settles_every_conflict_for_scripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], choice: str, expected: str, status: str
) -> None:
    gsd = standard(tmp_path, pristine=False)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", choice))
    assert code == 0
    assert set(statuses(doc).values()) == {status}
    assert {r["resolution"] for r in doc["results"]} == {choice}
    assert gsd.read(PLANNER) == expected


def test_auto_keep_mine_on_a_three_way_conflict_writes_the_saved_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)  # EXECUTE conflicts on its pristine baseline
    extra = ("--pristine", str(gsd.pristine), "--auto", "keep-mine", "--conflict", "patch")
    code, doc = reapply_json(capsys, *args(gsd, *extra))
    assert code == 0
    result = {r["file"]: r for r in doc["results"]}[EXECUTE]
    assert result["status"] == "resolved" and "artifact" not in result
    assert gsd.read(EXECUTE) == EXECUTE_OURS
    [run] = list(gsd.backups.iterdir())
    assert (run / "installed" / EXECUTE).read_text() == EXECUTE_V2


def test_every_file_and_its_pending_state_comes_before_the_first_question(
    tmp_path: Path,
) -> None:
    gsd = standard(tmp_path)  # merged, conflict, incorporated (on the pristine baseline)
    done = run_on_terminal(args(gsd, "--pristine", str(gsd.pristine)), "k\n")
    assert done.returncode == 0, done.stderr
    question = done.stderr.index(HUNK_LEVEL)
    rows = {PLANNER: "merged", HELP: "incorporated", EXECUTE: "pending (conflict)"}
    for number, (file, state) in enumerate(rows.items(), 1):
        found = re.search(
            rf"^ +{number}  {re.escape(file)} +{re.escape(state)}$", done.stderr, re.M
        )
        assert found is not None and found.start() < question, done.stderr
