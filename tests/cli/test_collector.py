"""The garbage collector during a command (cli/main.py, RUN_GC_THRESHOLD; docs/performance.md,
"Start-up"): a small project's status imports its modules and does its work without one
collection, the process's own thresholds come back when the command ends, and at exit the
collector is off, while a garbage cycle left at exit is still finalized."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from builders import call, make_release

SCRIPT = """
import atexit, gc, sys

def at_exit():
    print("enabled at exit:", gc.isenabled())

atexit.register(at_exit)  # runs after the handlers registered later (the command's)
started = []
gc.callbacks.append(lambda phase, info: phase == "start" and started.append(info["generation"]))

class Cycle:
    def __del__(self):
        print("cycle finalized")

from tether.cli.main import main

before = gc.get_threshold()
collections = len(started)
code = main(sys.argv[1:])
during = len(started) - collections  # before anything else is made: the next object may start one
print("code", code)
print("collections", during)
print("thresholds kept", gc.get_threshold() == before)
cycle = Cycle()
cycle.itself = cycle
del cycle
"""


def test_a_status_runs_without_a_collection_and_leaves_the_collector_as_it_was(
    tmp_path: Path,
) -> None:
    files = {f"docs/page{i}.md": f"page {i}\n" for i in range(20)}
    make_release(tmp_path / "shelf", "1.0.0", files)
    project = tmp_path / "project"
    assert (
        call("init", "--source", str(tmp_path / "shelf"), "--to", "1.0.0", "-C", str(project)) == 0
    )
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
        "collections 0",  # at Python's default (700) its imports alone made several
        "thresholds kept True",
        "enabled at exit: False",
        "cycle finalized",
    ], result.stdout
