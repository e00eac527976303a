"""Reapply writes through the shared writer, which backs the installed version up as a
second name of its bytes until the write renames the merge over it. Killed in between, then
edited in place, the file takes that backup with it: the resumed reapply says so, in an
update's words, instead of failing the file as if its backup were damaged; it merges the
saved copy into the edited bytes and keeps them beside the first backup."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reapply_builders import (
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    Gsd,
    make_gsd,
    reapply_forked,
)
from tether.state import crashpoint

APPENDED = "<!-- mine -->\n"  # added at the end by `>>`, an edit in place


def _command(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target),
            "--pristine", str(gsd.pristine), *extra]  # fmt: skip


def _killed_between_link_and_write(tmp_path: Path, *extra: str) -> tuple[Gsd, Path]:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    # killed once the backup and the intent are journaled, before the write
    killed = reapply_forked(*_command(gsd, *extra), crash="file-intent:1")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stdout + killed.stderr
    [run] = gsd.backups.iterdir()
    backup = run / "installed" / PLANNER
    assert os.path.samestat(os.lstat(backup), os.lstat(gsd.target / PLANNER))  # one file
    return gsd, backup


def _edit_in_place(gsd: Gsd, backup: Path) -> None:
    with open(gsd.target / PLANNER, "ab") as edited:
        edited.write(APPENDED.encode())
    assert backup.read_text() == PLANNER_V2 + APPENDED  # the run's backup went with it


def test_a_resumed_reapply_says_the_linked_backup_changed_with_the_file(tmp_path: Path) -> None:
    gsd, backup = _killed_between_link_and_write(tmp_path)
    _edit_in_place(gsd, backup)

    resumed = reapply_forked(*_command(gsd, "--json"))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["resumed"] is True
    [result] = doc["results"]
    assert result["status"] == "merged", result
    [note] = doc["notes"]
    assert note.startswith(f"{PLANNER}: changed in place after the interrupted run")
    assert "the bytes the run backed up are lost" in note and doc["backup_dir"] in note
    # your saved change, the release's and the edit in place, all three
    assert gsd.read(PLANNER) == PLANNER_MERGED + APPENDED
    assert backup.read_text() == PLANNER_V2 + APPENDED
    assert (backup.parent / "gsd-planner.md.2").read_text() == PLANNER_V2 + APPENDED
    assert os.lstat(backup).st_nlink == 1  # the write renamed over the file: shared no more
    assert (gsd.patches / PLANNER).read_text() == PLANNER_OURS  # the saved copy is kept


def test_the_note_is_in_the_words_too(tmp_path: Path) -> None:
    gsd, backup = _killed_between_link_and_write(tmp_path)
    _edit_in_place(gsd, backup)
    resumed = reapply_forked(*_command(gsd))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"note: {PLANNER}: changed in place after the interrupted run" in resumed.stdout
    assert gsd.read(PLANNER) == PLANNER_MERGED + APPENDED


def test_a_resume_of_a_file_left_as_it_was_has_no_such_note(tmp_path: Path) -> None:
    gsd, backup = _killed_between_link_and_write(tmp_path)
    resumed = reapply_forked(*_command(gsd, "--json"))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(resumed.stdout)["notes"] == []
    assert backup.read_text() == PLANNER_V2
    assert not (backup.parent / "gsd-planner.md.2").exists()
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_a_resume_that_does_not_write_the_file_says_so_and_unshares_the_backup(
    tmp_path: Path,
) -> None:
    """The edit in place clashes with the saved copy (it changes the line the saved copy
    deletes) and ``--conflict patch`` leaves the file as it is: nothing renames over it, so
    the first backup is given its own copy, and the note is said all the same."""
    gsd, backup = _killed_between_link_and_write(tmp_path, "--conflict", "patch")
    clashing = PLANNER_V2.replace("color: green", "color: azure")
    with open(gsd.target / PLANNER, "r+b") as edited:  # rewritten in place, same length
        edited.write(clashing.encode())
    assert backup.read_text() == clashing

    resumed = reapply_forked(*_command(gsd, "--conflict", "patch", "--json"))
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    [result] = doc["results"]
    assert result["status"] == "conflict" and "artifact" in result, result
    [note] = doc["notes"]
    assert note.startswith(f"{PLANNER}: changed in place after the interrupted run")
    assert gsd.read(PLANNER) == clashing  # your edit, left where it was
    assert backup.read_text() == clashing
    assert os.lstat(backup).st_nlink == 1  # its own copy: a later edit cannot reach it
    with open(gsd.target / PLANNER, "ab") as later:
        later.write(APPENDED.encode())
    assert backup.read_text() == clashing
