"""A backup made as a link shares the file's bytes until the write renames new bytes over
the file. Killed in between, then edited in place, the file takes its backup with it: the
resumed update says so instead of trusting the backup, and keeps the edited bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from builders import call, make_release, run_forked, run_tether
from tether.state import crashpoint

BASE = "a\nb\nc\nd\ne\n"


def _killed_between_link_and_write(tmp_path: Path) -> tuple[Path, Path]:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"f.txt": BASE})
    make_release(shelf, "1.1.0", {"f.txt": "A\nb\nc\nd\ne\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    # killed once the backups and the intents are journaled, before the first write
    killed = run_forked("update", "--yes", "-C", str(project), crash="file-intent:1")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stdout + killed.stderr
    [run] = (project / ".tether/backup").iterdir()
    backup = run / "f.txt"
    assert os.path.samestat(os.lstat(backup), os.lstat(project / "f.txt"))  # one file's bytes
    return project, backup


def test_a_resume_says_the_linked_backup_changed_with_the_file(tmp_path: Path) -> None:
    project, backup = _killed_between_link_and_write(tmp_path)
    # an edit in place, as `>>` does (sed -i writes a new file and renames it)
    with open(project / "f.txt", "r+b") as edited:
        edited.seek(8)
        edited.write(b"E")
    assert backup.read_text() == "a\nb\nc\nd\nE\n"  # the run's backup went with it

    resumed = run_tether("update", "--yes", "--json", "-C", str(project))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    [note] = [n for n in doc["notes"] if n.startswith("f.txt: changed in place")]
    assert "the bytes the run backed up are lost" in note
    assert (project / "f.txt").read_text() == "A\nb\nc\nd\nE\n"  # the release's line and yours
    assert backup.read_text() == "a\nb\nc\nd\nE\n"
    assert (backup.parent / "f.txt.2").read_text() == "a\nb\nc\nd\nE\n"
    assert os.lstat(backup).st_nlink == 1  # the write renamed over the file: shared no more


def test_a_resume_of_a_file_left_as_it_was_has_no_such_note(tmp_path: Path) -> None:
    project, backup = _killed_between_link_and_write(tmp_path)
    resumed = run_tether("update", "--yes", "--json", "-C", str(project))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not [n for n in json.loads(resumed.stdout)["notes"] if "changed in place" in n]
    assert backup.read_text() == BASE
    assert (project / "f.txt").read_text() == "A\nb\nc\nd\ne\n"


def test_a_resume_that_leaves_the_file_as_it_is_says_so_and_unshares_the_backup(
    tmp_path: Path,
) -> None:
    """The edit in place clashes with the release's change and ``--conflict patch`` leaves
    the file as it is: nothing renames over it, so the first backup gets its own copy once
    the writes are done, and the note is said all the same."""
    project, backup = _killed_between_link_and_write(tmp_path)
    with open(project / "f.txt", "r+b") as edited:  # the release's line, changed in place
        edited.write(b"Z")
    assert backup.read_text() == "Z\nb\nc\nd\ne\n"

    resumed = run_tether("update", "--yes", "--json", "--conflict", "patch", "-C", str(project))
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    assert [row["path"] for row in doc["buckets"]["conflict"]] == ["f.txt"]
    [note] = [n for n in doc["notes"] if n.startswith("f.txt: changed in place")]
    assert "the bytes the run backed up are lost" in note
    assert (project / "f.txt").read_text() == "Z\nb\nc\nd\ne\n"  # your edit, where it was
    assert os.lstat(backup).st_nlink == 1  # its own copy: a later edit cannot reach it
    with open(project / "f.txt", "ab") as later:
        later.write(b"f\n")
    assert backup.read_text() == "Z\nb\nc\nd\ne\n"
