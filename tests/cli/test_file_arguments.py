"""The single-file commands (``verify``, ``merge-fields``, ``merge-driver``,
``region-compare``) read the files they are given by the rule every other reader follows:
a FIFO (or socket, or device) is refused in one line naming it and its role, never waited
on. Each command runs in a forked child with a timeout, so a regression fails instead of
hanging the suite."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import run_forked

TIMEOUT = 20  # seconds; each command here takes a fraction of one

START, END = "<!-- r:start -->", "<!-- r:end -->"

# command -> (the arguments given three files, the roles in order as the message names them)
Command = Callable[[Path, Path, Path], list[str]]
COMMANDS: dict[str, tuple[Command, tuple[str, str, str]]] = {
    "verify": (
        lambda a, b, c: ["verify", "--baseline", str(a), "--current", str(b), "--result", str(c)],
        ("the baseline file", "the current file", "the result file"),
    ),
    "merge-fields": (
        lambda a, b, c: [
            "merge-fields",
            "--preset",
            "npm-package",
            "--baseline",
            str(a),
            "--latest",
            str(b),
            "--current",
            str(c),
        ],
        ("the baseline file", "the latest file", "the current file"),
    ),
    "merge-driver": (
        lambda a, b, c: ["merge-driver", str(a), str(b), str(c), "package.json"],
        ("the ancestor version", "the current version", "the other version"),
    ),
    "region-compare": (
        lambda a, b, c: [
            "region-compare",
            "--baseline",
            str(a),
            "--latest",
            str(b),
            "--current",
            str(c),
            "--start-marker",
            START,
            "--end-marker",
            END,
        ],
        ("the --baseline file", "the --latest file", "the --current file"),
    ),
}
TEXT = '{\n  "name": "app",\n  "version": "1.0.0"\n}\n'


@pytest.mark.parametrize("position", [0, 1, 2], ids=["first", "second", "third"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_given_as_a_file_is_refused_not_waited_on(
    tmp_path: Path, command: str, position: int
) -> None:
    files = [tmp_path / "one.json", tmp_path / "two.json", tmp_path / "three.json"]
    for path in files:
        path.write_text(TEXT)
    fifo = files[position]
    fifo.unlink()
    os.mkfifo(fifo)
    build, roles = COMMANDS[command]
    result = run_forked(*build(*files), cwd=tmp_path, timeout=TIMEOUT)
    assert result.returncode == 1
    assert result.stderr == (
        f"tether: {fifo}: cannot read {roles[position]} (not a regular file)\n"
    )
    assert [p.read_text() for p in files if p != fifo] == [TEXT, TEXT]  # nothing written


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_same_files_as_regular_files_are_read(tmp_path: Path, command: str) -> None:
    """The control: the same command on three regular files runs to its answer."""
    files = [tmp_path / "one.json", tmp_path / "two.json", tmp_path / "three.json"]
    for path in files:
        path.write_text(TEXT)
    build, _roles = COMMANDS[command]
    result = run_forked(*build(*files), cwd=tmp_path, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
