"""Backups are made as second names for the adopter's bytes (hard links) when that is safe,
and never share bytes with a file that tether did not replace."""

import os

from builders import call, make_release, run_tether
from tether.flows.apply import RunContext, execute_plan
from tether.flows.project import open_project
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FileAction, Op, UpdatePlan
from tether.state.journal import Journal


def installed(tmp_path, files_v1, files_v2):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", files_v1)
    make_release(shelf, "2.0.0", files_v2)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def backup_files(project):
    root = project / ".tether/backup"
    return {p.relative_to(root).parts[1:]: p for p in root.rglob("*") if p.is_file()}


def test_backup_keeps_the_original_after_the_file_is_edited_in_place(tmp_path):
    project = installed(tmp_path, {"f.txt": "a\nb\nc\n"}, {"f.txt": "a\nB\nc\n"})
    (project / "f.txt").write_text("a\nb\nc\nmine\n")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    [(parts, backup)] = backup_files(project).items()
    assert parts == ("f.txt",)
    assert backup.read_text() == "a\nb\nc\nmine\n"
    assert os.stat(backup).st_ino != os.stat(project / "f.txt").st_ino
    assert os.stat(backup).st_nlink == 1
    with open(project / "f.txt", "a") as handle:  # an edit in place, as some editors do
        handle.write("later\n")
    assert backup.read_text() == "a\nb\nc\nmine\n"


def test_file_with_another_hard_link_is_backed_up_as_a_copy(tmp_path):
    project = installed(tmp_path, {"f.txt": "one\n"}, {"f.txt": "two\n"})
    elsewhere = tmp_path / "elsewhere.txt"
    os.link(project / "f.txt", elsewhere)
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    [backup] = backup_files(project).values()
    elsewhere.write_text("edited through the other name\n")  # in place: same inode as before
    assert backup.read_text() == "one\n"
    assert (project / "f.txt").read_text() == "two\n"


def test_a_stopped_batch_leaves_no_backup_sharing_bytes_with_its_file(tmp_path):
    files = {f"f{i}.txt": f"v1 {i}\n" for i in range(4)}
    project_dir = installed(tmp_path, files, {k: v.replace("v1", "v2") for k, v in files.items()})
    project = open_project(project_dir)
    actions = [
        FileAction(rel, FileClass.SHARED, Bucket.UPDATE, Op.WRITE, b"new\n", 0o644)
        for rel in sorted(files)
    ]
    asked = []

    def stop_after_two_writes():  # asked once before the batch, then before each write
        asked.append(1)
        return len(asked) > 3

    ctx = RunContext(project, Journal(project_dir / ".tether/journal.jsonl"), "run-1", "update")
    outcome = execute_plan(ctx, UpdatePlan("kit", "1.0.0", "2.0.0", actions), stop_after_two_writes)
    assert outcome.interrupted
    written = [rel for rel in sorted(files) if (project_dir / rel).read_text() == "new\n"]
    assert written == ["f0.txt", "f1.txt"]
    for rel in sorted(files):
        backup = project_dir / ".tether/backup/run-1" / rel
        assert backup.read_text() == files[rel]
        assert os.stat(backup).st_nlink == 1, rel  # its own bytes, written or not
        assert os.stat(backup).st_ino != os.stat(project_dir / rel).st_ino
    with open(project_dir / "f3.txt", "a") as handle:
        handle.write("edited in place\n")
    assert (project_dir / ".tether/backup/run-1/f3.txt").read_text() == files["f3.txt"]


def _guarded_backups(tmp_path):
    from tether.flows.safety import PathGuard

    source = tmp_path / "proj" / "f.txt"
    source.parent.mkdir()
    source.write_bytes(b"the adopter's bytes\n")
    return PathGuard(tmp_path / "backup"), source


def test_a_linked_backup_reads_the_file_once(tmp_path, monkeypatch):
    """The usual backup (nothing at its name yet) is a link, and the bytes are read once,
    through the backup's name after the link, for the digest the journal records."""
    import hashlib

    from tether import fsio
    from tether.flows.backups import back_up

    guard, source = _guarded_backups(tmp_path)
    opened = []
    real_open = fsio.open_regular
    monkeypatch.setattr(fsio, "open_regular", lambda p: opened.append(str(p)) or real_open(p))
    saved = back_up(guard, "run/f.txt", source, may_link=True, durable=False)
    assert saved is not None and saved.linked and saved.written
    backup = tmp_path / "backup" / "run" / "f.txt"
    assert opened == [str(backup)]
    assert saved.sha256 == hashlib.sha256(b"the adopter's bytes\n").hexdigest()
    assert os.stat(backup).st_ino == os.stat(source).st_ino


def test_a_file_swapped_while_it_is_linked_is_backed_up_as_the_bytes_read(tmp_path, monkeypatch):
    """Replaced by another file between its look and its link: the link (to another file
    than the one looked at) is undone, and the backup holds what is read, with its digest."""
    import hashlib

    from tether.flows import backups

    guard, source = _guarded_backups(tmp_path)
    real_link = os.link
    swaps = []

    def link_after_a_swap(src, dst, **kwargs):
        if not swaps:
            swaps.append(src)
            os.rename(source.with_name("other"), source)  # a new file, a new inode
        return real_link(src, dst, **kwargs)

    source.with_name("other").write_bytes(b"swapped in\n")
    monkeypatch.setattr(backups.os, "link", link_after_a_swap)
    saved = backups.back_up(guard, "run/f.txt", source, may_link=True, durable=False)
    assert swaps and saved is not None
    backup = tmp_path / "backup" / "run" / "f.txt"
    assert backup.read_bytes() == b"swapped in\n"
    assert saved.sha256 == hashlib.sha256(b"swapped in\n").hexdigest()
    assert not (tmp_path / "backup" / "run" / "f.txt.2").exists()
