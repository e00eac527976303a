"""The garbage collector during a command (cli/main.py, RUN_GC_THRESHOLD; docs/performance.md,
"Start-up"): a small project's status imports its modules and does its work without one
collection, the process's own thresholds come back when the command ends, and at exit every
object is frozen, so the interpreter's exit walks none of them. A garbage cycle left at exit
is then not finalized: status, check and update leave none with a finalizer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from builders import call, make_release

SCRIPT = """
import atexit, gc, sys

def at_exit():
    print("frozen at exit:", gc.get_freeze_count() > 0, gc.get_count()[0] < 10)

atexit.register(at_exit)  # runs after the handlers registered later (the command's)
started = []
gc.callbacks.append(lambda phase, info: phase == "start" and started.append(info["generation"]))

from tether.cli.main import main

before = gc.get_threshold()
collections = len(started)
code = main(sys.argv[1:])
during = len(started) - collections  # before anything else is made: the next object may start one
print("code", code)
print("collections", during)
print("thresholds kept", gc.get_threshold() == before)
"""

# What a run leaves for the collector, found the way the collector finds it (DEBUG_SAVEALL
# keeps what it would free): nothing a finalizer would act on (a generator's finally, a file
# to flush and close, a temp file to remove, a program's handle).
GARBAGE = """
import contextlib, gc, io, sys
from tether.cli.main import main
gc.collect()
gc.set_debug(gc.DEBUG_SAVEALL)
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
gc.collect()
resumable = ("generator", "coroutine", "async_generator")
acting = sorted(
    type(o).__name__
    for o in gc.garbage
    if hasattr(type(o), "__del__") or type(o).__name__ in resumable
)
print(code, len(gc.garbage) > 0, acting)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("collector")
    files = {f"docs/page{i}.md": f"page {i}\n" for i in range(20)}
    make_release(root / "shelf", "1.0.0", files)
    make_release(root / "shelf", "1.1.0", {**files, "docs/page1.md": "page one\n"})
    project = root / "project"
    assert call("init", "--source", str(root / "shelf"), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def test_a_status_runs_without_a_collection_and_leaves_the_collector_as_it_was(
    project: Path,
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, "status", "--json", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if not line.startswith(("{", " ", "}"))]
    assert lines == [
        "code 0",
        "collections 0",  # at Python's default (700) its imports alone made nine
        "thresholds kept True",
        "frozen at exit: True True",
    ], result.stdout


@pytest.mark.parametrize(
    "argv",
    [("status",), ("check", "--json"), ("update", "--yes", "--no-branch", "--json")],
    ids=" ".join,
)
def test_a_run_leaves_no_garbage_a_finalizer_would_act_on(
    tmp_path: Path, project: Path, argv: tuple[str, ...]
) -> None:
    copy = tmp_path / "project"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    result = subprocess.run(
        [sys.executable, "-c", GARBAGE, *argv, "-C", str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    code, _, acting = result.stdout.splitlines()[-1].partition(" ")
    assert code == "0", result.stdout
    assert acting.endswith(" []"), result.stdout
