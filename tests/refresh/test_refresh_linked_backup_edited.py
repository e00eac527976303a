"""A refresh is an update under the gbrain profile: its writer backs a file up as a second
name of its bytes until the write renames new bytes over it. Killed in between, then edited
in place, the file takes its backup with it: the resumed refresh says so instead of
trusting the backup, and keeps the edited bytes: the update's own behaviour
(tests/update/test_linked_backup_edited.py), through refresh's command, profile and folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

from builders import run_forked, run_tether
from tether.state import crashpoint

from .test_gbrain_refresh import BODY, ROOT, recipe

RULES = f"{ROOT}/rules.md"
NEW = BODY.replace("rule 8:", "rule 8 (v2):")  # the recipe's change
EDITED = BODY.replace("rule 1:", "rule 1 (ed):")  # the edit in place


def _killed_between_link_and_write(tmp_path: Path) -> tuple[Path, Path]:
    rec = recipe(tmp_path / "recipe", {"rules.md": (BODY, "0644")})
    host = tmp_path / "host"
    host.mkdir()
    init = run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    assert init.returncode == 0, init.stderr
    (rec / "src/rules.md").write_text(NEW)
    # killed once the backups and the intents are journaled, before the first write
    killed = run_forked("refresh", "--yes", "-C", str(host), crash="file-intent:1")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stdout + killed.stderr
    [run] = (host / ".tether/gbrain/backup").iterdir()
    backup = run / RULES
    assert os.path.samestat(os.lstat(backup), os.lstat(host / RULES))  # one file's bytes
    return host, backup


def _edit_in_place(host: Path, backup: Path) -> None:
    with open(host / RULES, "r+b") as edited:  # rewritten in place, as `>>` or `cat >` does
        edited.write(EDITED.encode())
    assert backup.read_text() == EDITED  # the run's backup went with it


def test_a_resumed_refresh_says_the_linked_backup_changed_with_the_file(tmp_path: Path) -> None:
    host, backup = _killed_between_link_and_write(tmp_path)
    _edit_in_place(host, backup)

    resumed = run_tether("refresh", "--yes", "--json", "-C", str(host))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    assert doc["resumed"] is True and doc["files"] == {RULES: "locally-modified"}
    [note] = doc["notes"]
    assert note.startswith(f"{RULES}: changed in place after the interrupted run")
    assert "the bytes the run backed up are lost" in note and doc["backup_dir"] in note
    # the recipe's line and the edit in place, both
    assert (host / RULES).read_text() == NEW.replace("rule 1:", "rule 1 (ed):")
    assert backup.read_text() == EDITED
    assert (backup.parent / "rules.md.2").read_text() == EDITED
    assert os.lstat(backup).st_nlink == 1  # the write renamed over the file: shared no more


def test_the_note_is_in_the_refresh_words_too(tmp_path: Path) -> None:
    host, backup = _killed_between_link_and_write(tmp_path)
    _edit_in_place(host, backup)
    resumed = run_tether("refresh", "--yes", "-C", str(host))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stdout.startswith("resuming interrupted refresh 0.4.0 → 0.4.0 (run ")
    assert f"note: {RULES}: changed in place after the interrupted run" in resumed.stdout


def test_a_resume_of_a_file_left_as_it_was_has_no_such_note(tmp_path: Path) -> None:
    host, backup = _killed_between_link_and_write(tmp_path)
    resumed = run_tether("refresh", "--yes", "--json", "-C", str(host))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not [n for n in json.loads(resumed.stdout)["notes"] if "changed in place" in n]
    assert backup.read_text() == BODY
    assert (host / RULES).read_text() == NEW


def test_a_resume_that_leaves_the_file_as_it_is_says_so_and_unshares_the_backup(
    tmp_path: Path,
) -> None:
    """The edit in place clashes with the recipe's change: the conflict is left as a patch
    (refresh's default), nothing renames over the file, so the first backup is given its
    own copy at the end, and the note is said all the same."""
    host, backup = _killed_between_link_and_write(tmp_path)
    clashing = BODY.replace("rule 8:", "rule 8 ME:")
    with open(host / RULES, "r+b") as edited:  # rewritten in place
        edited.write(clashing.encode())
    assert backup.read_text() == clashing

    resumed = run_tether("refresh", "--yes", "--json", "-C", str(host))
    assert resumed.returncode == 4, resumed.stdout + resumed.stderr
    doc = json.loads(resumed.stdout)
    assert [row["path"] for row in doc["buckets"]["conflict"]] == [RULES]
    [note] = doc["notes"]
    assert note.startswith(f"{RULES}: changed in place after the interrupted run")
    assert (host / RULES).read_text() == clashing  # your edit, left where it was
    assert backup.read_text() == clashing
    assert os.lstat(backup).st_nlink == 1  # its own copy: a later edit cannot reach it
    with open(host / RULES, "ab") as later:
        later.write(b"one more\n")
    assert backup.read_text() == clashing
