"""A FIFO, socket or device where a managed file belongs is reported, never read.

Reading a FIFO waits for a writer that never comes and ``/dev/zero`` never ends, so every
command here runs as a real process with a timeout: a regression fails instead of hanging
the suite.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import call, in_forked_child, make_release, run_forked
from helpers_sources import listing

GUIDE = "docs/guide.md"
TOOL = "bin/tool.sh"
TIMEOUT = 30  # seconds; each command here takes well under one


def tether(*args: str) -> subprocess.CompletedProcess[str]:
    result = run_forked(*args, timeout=TIMEOUT)  # a child: a read blocked on a FIFO times out
    assert "Traceback" not in result.stderr, result.stderr
    return result


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    # A socket's path must be short: bind by a relative name from inside its folder.
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path.name)
    finally:
        os.chdir(here)


def make_zero_device(path: Path) -> None:
    """A character device with /dev/zero's numbers: a read never ends."""
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    zero = os.stat("/dev/zero").st_rdev
    os.mknod(path, stat.S_IFCHR | 0o666, zero)


def make_link_to_dev_zero(path: Path) -> None:
    os.symlink("/dev/zero", path)


SPECIALS: dict[str, Callable[[Path], None]] = {
    "fifo": make_fifo,
    "socket": make_socket,
    "device": make_zero_device,
    "link to /dev/zero": make_link_to_dev_zero,
}


def reader_note(kind: str) -> str:
    """Why status leaves the path unread: a link is never followed, whatever it leads to."""
    if kind.startswith("link"):
        return "is a symbolic link; tether does not read through links; not read"
    return "is not a regular file (a FIFO, socket or device); not read"


def writer_refusal(kind: str) -> str:
    """Why init and update leave the path alone: neither writes through a link, whatever it
    leads to, and neither reads anything else that is not a regular file."""
    return "is a symbolic link" if kind.startswith("link") else "not a regular file"


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "releases"
    classes = {TOOL: "owned"}
    make_release(shelf, "1.0.0", {GUIDE: "one\ntwo\n", TOOL: "echo 1\n"}, classes)
    make_release(shelf, "1.1.0", {GUIDE: "one\nTWO upstream\n", TOOL: "echo 1\n"}, classes)
    make_release(shelf, "1.2.0", {GUIDE: "one\nTWO again\n", TOOL: "echo 2\n"}, classes)
    return shelf


@pytest.fixture
def project(tmp_path: Path, shelf: Path) -> Path:
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def replace_with(project: Path, rel: str, kind: str) -> None:
    (project / rel).unlink()
    SPECIALS[kind](project / rel)


def still_special(path: Path) -> bool:
    mode = os.lstat(path).st_mode
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_status_reports_a_special_file_without_reading_it(project: Path, kind: str) -> None:
    replace_with(project, GUIDE, kind)
    result = tether("status", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["modified"] == [GUIDE]
    assert doc["not_regular"] == [GUIDE]
    assert f"{GUIDE}: {reader_note(kind)}" in doc["notes"]
    plain = tether("status", "-C", str(project))
    assert reader_note(kind) in plain.stdout
    assert still_special(project / GUIDE)


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_check_fails_on_a_special_file(project: Path, kind: str) -> None:
    replace_with(project, TOOL, kind)
    result = tether("check", "--json", "-C", str(project))
    assert result.returncode == 3, result.stderr
    doc = json.loads(result.stdout)
    assert doc["reasons"] == ["owned-drift", "not-regular-files"]
    assert doc["not_regular"] == [TOOL]
    plain = tether("check", "-C", str(project))
    assert plain.returncode == 3
    assert plain.stdout.startswith(
        "tether check: failed (acme-kit 1.0.0): owned files differ from the installed release;"
    )
    assert "not regular files" in plain.stdout.splitlines()[0]
    assert f"note: {TOOL}: {reader_note(kind)}" in plain.stdout


def test_check_fails_on_a_special_file_at_a_shared_path(project: Path) -> None:
    # Shared drift alone passes check; a FIFO where a file belongs does not.
    replace_with(project, GUIDE, "fifo")
    result = tether("check", "--json", "-C", str(project))
    assert result.returncode == 3
    assert json.loads(result.stdout)["reasons"] == ["not-regular-files"]


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_diff_shows_a_special_file_as_gone_without_reading_it(project: Path, kind: str) -> None:
    replace_with(project, GUIDE, kind)
    result = tether("diff", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["files"]
    assert entry["path"] == GUIDE and entry["status"] == "modified"
    assert entry["note"] == reader_note(kind)
    assert (entry["added"], entry["removed"]) == (0, 2)


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_update_fails_that_path_and_leaves_it_alone(project: Path, kind: str) -> None:
    replace_with(project, GUIDE, kind)
    result = tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 1, result.stderr
    failed = {f["path"]: f["reason"] for f in json.loads(result.stdout)["buckets"]["failed"]}
    assert writer_refusal(kind) in failed[GUIDE]
    assert still_special(project / GUIDE)


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_update_with_an_open_conflict_at_a_special_file(project: Path, kind: str) -> None:
    (project / GUIDE).write_text("one\nTWO mine\n")
    first = tether("update", "--yes", "--json", "--to", "1.1.0", "-C", str(project))
    assert first.returncode == 4, first.stderr  # markers left in the guide
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["conflicts"][GUIDE]["style"] == "markers"
    replace_with(project, GUIDE, kind)

    status = json.loads(tether("status", "--json", "-C", str(project)).stdout)
    assert status["not_regular"] == [GUIDE]
    assert status["conflicts"] == []  # cannot hold markers: the special file is the problem

    result = tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 1, result.stderr
    failed = {f["path"]: f["reason"] for f in json.loads(result.stdout)["buckets"]["failed"]}
    assert writer_refusal(kind) in failed[GUIDE]
    assert still_special(project / GUIDE)


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_init_refuses_a_special_file_at_a_managed_path(
    tmp_path: Path, shelf: Path, kind: str
) -> None:
    project = tmp_path / "fresh"
    (project / "docs").mkdir(parents=True)
    SPECIALS[kind](project / GUIDE)
    before = sorted(os.listdir(project)), sorted(os.listdir(project / "docs"))
    result = tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.startswith(f"tether: {project / GUIDE}: ")
    assert writer_refusal(kind) in result.stderr and len(result.stderr.splitlines()) == 1
    assert (sorted(os.listdir(project)), sorted(os.listdir(project / "docs"))) == before
    assert still_special(project / GUIDE)


def test_a_special_file_at_the_version_marker_is_one_line(tmp_path: Path) -> None:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.md": "a\n"}, profile="gaia")
    project = tmp_path / "proj"
    args = ("init", "--profile", "gaia", "--source", str(shelf), "--to", "1.0.0")
    assert call(*args, "-C", str(project)) == 0
    marker = project / ".gaia/VERSION"
    marker.unlink()
    os.mkfifo(marker)
    result = tether("status", "--json", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr == f"tether: {marker}: cannot read (not a regular file)\n"


def test_a_fifo_gitignore_stops_init_with_one_line(tmp_path: Path, shelf: Path) -> None:
    project = tmp_path / "fresh"
    (project / ".tether").mkdir(parents=True)
    os.mkfifo(project / ".tether/.gitignore")
    result = tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert "is not a regular file (a FIFO, socket or device)" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert listing(project) == [".tether", ".tether/.gitignore"]  # the failed init undone


def read_each(path: Path) -> int:
    """Each of tether's file readers on ``path``, printing the refusals."""
    from tether.fsio import NotRegularFileError, read_bytes, read_regular, sha256_file

    for reader in (read_bytes, read_regular, sha256_file):
        try:
            reader(str(path))
        except NotRegularFileError as error:
            print(reader.__name__, error)
    return 0


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_the_file_readers_refuse_without_waiting(tmp_path: Path, kind: str) -> None:
    # Also what keeps a path swapped for a FIFO after its stat from hanging a run. In a
    # forked child: a reader blocked on the FIFO fails the test at the timeout.
    SPECIALS[kind](tmp_path / "special")
    result = in_forked_child(lambda: read_each(tmp_path / "special"), timeout=TIMEOUT)
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "read_bytes not a regular file",
        "read_regular not a regular file",
        "sha256_file not a regular file",
    ]
