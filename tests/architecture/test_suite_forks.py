"""The suite's forked CLI children (tests/builders.py): the ones ``run_forked`` and
``start_forked`` start come from the test process's fork server, a small copy of it, and still
run as a child forked from the test process would: its environment, folder and umask at the
moment of the call, a crash point that kills the process for real; a test that patched its own
process gets a child forked from that process, which sees the patch."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import builders
from builders import ForkedChild, call, make_release, run_forked, start_forked
from tether.state import crashpoint

STEP = "file-written"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project on 1.0.0 with 2.0.0 on its shelf: an update writes one file."""
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "one\n"})
    make_release(shelf, "2.0.0", {"a.txt": "two\n"})
    folder = tmp_path / "project"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(folder)) == 0
    return folder


@pytest.fixture
def umask_027() -> Iterator[None]:
    previous = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(previous)


def held_at_gate(child: ForkedChild, journal: Path) -> None:
    """Wait until ``child`` wrote its first file record (it then holds at the gate)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if journal.exists() and f'"step":"{STEP}"'.encode() in journal.read_bytes():
            return
        time.sleep(0.005)
    raise AssertionError(f"the update ended or never reached its gate: {child.poll()}")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def umask_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("Umask:")[1].split()[0], 8)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_served_child_runs_in_the_tests_environment_folder_and_umask_and_its_crash_point_kills_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_027: None
) -> None:
    if os.environ.get("TESTS_FORK_DIRECTLY") or not builders._has_pidfds():
        pytest.skip("no fork server: every child is forked from the test process")
    assert builders._FORK_SERVER is not None, "the test process started no fork server"
    gate = tmp_path / "gate"
    gate.touch()
    # Only the environment of this process says where to hold, and only its folder where
    # the project is: the child runs there if it was given both.
    monkeypatch.setenv(crashpoint.PAUSE_VAR, f"{STEP}:1@{gate}")
    monkeypatch.chdir(project)
    child = start_forked("update", "--yes", env={crashpoint.ENV_VAR: f"{STEP}:1"})
    try:
        held_at_gate(child, project / ".tether/journal.jsonl")
        assert parent_of(child.pid) == builders._FORK_SERVER.pid != os.getpid()
        assert Path(f"/proc/{child.pid}/cwd").resolve() == project.resolve()
        assert umask_of(child.pid) == 0o027
    finally:
        gate.unlink()
    done = child.wait(60)
    assert done.returncode == crashpoint.EXIT_CODE, done.stderr
    assert json.loads((project / ".tether/state.json").read_text())["version"] == "1.0.0"


def test_a_served_child_that_hangs_is_killed_at_its_timeout(project: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    held = {crashpoint.PAUSE_VAR: f"{STEP}:1@{gate}"}
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_forked("update", "--yes", "-C", str(project), env=held, timeout=0.5)
    assert time.monotonic() - started < 60  # not the gate's own two minutes
    assert json.loads((project / ".tether/state.json").read_text())["version"] == "1.0.0"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_test_that_patched_its_own_process_gets_a_child_forked_from_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    monkeypatch.setattr(crashpoint, "PAUSE_LIMIT", 60.0)  # a patch the child must see
    held = {crashpoint.PAUSE_VAR: f"{STEP}:1@{gate}"}
    child = start_forked("update", "--yes", "-C", str(project), env=held)
    try:
        held_at_gate(child, project / ".tether/journal.jsonl")
        assert parent_of(child.pid) == os.getpid()
    finally:
        gate.unlink()
    assert child.wait(60).returncode == 0
    assert (project / "a.txt").read_text() == "two\n"
