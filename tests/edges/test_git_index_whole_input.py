"""A batch's conflict stages go to one ``git update-index -z --index-info``, which applies
every record it reads and writes the index when its input ends. tether killed (``kill -9``,
the OOM killer) while it hands git a large batch must not leave git an input cut short: git
would record the records before the cut, and one cut inside a path as an entry for a path
that does not exist. Real git, behind a stand-in that holds it back until the test has killed
tether; a resumed update records the whole batch again (``_unmerged_left_out``)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from builders import git

REAL_GIT = "/usr/bin/git"
PIPE_CAPACITY = 65536  # Linux's default: tether has more than this to hand git
CONFLICTS = 400  # ~110 bytes a record, four records a path: ~170 KiB

HOLDING_GIT = """#!/bin/sh
# git, except that update-index first says it started and waits for the gate.
if [ "$1" = "update-index" ]; then
  echo $$ > "$STARTED.tmp" && mv "$STARTED.tmp" "$STARTED"
  while [ ! -e "$GATE" ]; do sleep 0.01; done
fi
exec {real} "$@"
"""

RECORD = """
import json, sys
from pathlib import Path
from tether import git
repo, names = Path(sys.argv[1]), json.loads(sys.argv[2])
stages = [(1, b"base\\n", 0o100644), (2, b"ours\\n", 0o100644), (3, b"theirs\\n", 0o100644)]
git.record_unmerged_paths(repo, [(name, stages) for name in names])
"""


def _waited(check: object, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def _ended(pid: int) -> bool:
    """The process is gone or a zombie (whoever adopted it has yet to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _bytes_waiting(pid: int) -> int | None:
    """What stands unread in the stand-in's stdin when that is a pipe; None for a file."""
    path = f"/proc/{pid}/fd/0"
    if not os.readlink(path).startswith("pipe:"):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        waiting = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, waiting)
        return int.from_bytes(waiting, sys.byteorder)
    finally:
        os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(not os.path.exists(REAL_GIT), reason="needs git at /usr/bin/git")
def test_tether_killed_while_handing_git_a_batch_leaves_git_the_whole_batch(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    names = [f"src/module_{n:04d}/{'long_part_' * 5}{n:04d}.txt" for n in range(CONFLICTS)]
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    (stand_in / "git").write_text(HOLDING_GIT.format(real=REAL_GIT))
    (stand_in / "git").chmod(0o755)
    started, gate = tmp_path / "started", tmp_path / "gate"
    env = {
        **os.environ,
        "PATH": f"{stand_in}{os.pathsep}{os.environ['PATH']}",
        "STARTED": str(started),
        "GATE": str(gate),
    }
    tether = subprocess.Popen(
        [sys.executable, "-c", RECORD, str(repo), json.dumps(names)],
        env=env,
        start_new_session=True,  # killed alone, as kill -9 of its pid kills it
    )
    try:
        _waited(started.exists, "git update-index to start")
        held = int(started.read_text())

        def all_handed_over() -> bool:
            waiting = _bytes_waiting(held)
            return waiting is None or waiting > PIPE_CAPACITY - 4096  # a file, or a full pipe

        _waited(all_handed_over, "tether to hand git what it can")
        os.kill(tether.pid, signal.SIGKILL)
        tether.wait()
        gate.touch()
        _waited(lambda: _ended(held), "git to finish")
    finally:
        gate.touch()
        if tether.poll() is None:
            tether.kill()
            tether.wait()
    listed = [line for line in git(repo, "ls-files", "--stage", "-z").split("\0") if line]
    recorded: dict[str, list[str]] = {}
    for line in listed:
        meta, path = line.split("\t", 1)
        recorded.setdefault(path, []).append(meta.split()[2])
    assert set(recorded) <= set(names), sorted(set(recorded) - set(names))[:3]
    assert recorded == {name: ["1", "2", "3"] for name in names}
