"""bench/alternate.py's command line: the source trees before ``--``, tether's arguments after."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bench.alternate import DEFAULT_ARGS, read_arguments

REPO = Path(__file__).resolve().parents[2]


def test_the_words_after_the_double_dash_are_tethers_not_source_trees() -> None:
    project, runs, trees, args = read_arguments(
        ["proj", "--runs", "3", "old=/a/src", "new=/b/src", "--", "status"]
    )
    assert (project, runs, trees, args) == (
        Path("proj"),
        3,
        {"old": "/a/src", "new": "/b/src"},
        ["status"],
    )
    # an option of tether's after -- is tether's too, and a second -- is passed on as it is
    assert read_arguments(["p", "a=x", "--", "update", "--yes", "--", "f"])[3] == [
        "update",
        "--yes",
        "--",
        "f",
    ]


def test_without_a_command_the_update_is_measured() -> None:
    assert read_arguments(["p", "a=x", "b=y"])[3] == DEFAULT_ARGS
    assert read_arguments(["p", "a=x", "b=y", "--"])[3] == DEFAULT_ARGS


def test_a_tree_without_a_name_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        read_arguments(["p", "old=x", "status"])
    assert exit_.value.code == 2
    assert "'status': a source tree is NAME=SRC" in capsys.readouterr().err


def test_the_script_runs_a_command_given_after_the_double_dash(tmp_path: Path) -> None:
    # The real script, both "trees" this worktree's src, on an empty folder: tether --version
    # needs no project, so the whole loop (copies, runs, medians) runs in about a second.
    source = str(REPO / "src")
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "alternate.py"),
            str(tmp_path),
            "--runs",
            "2",
            f"old={source}",
            f"new={source}",
            "--",
            "--version",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "2 runs each" in run.stdout
    assert [line.split()[0] for line in run.stdout.splitlines()[1:]] == ["old", "new"]
