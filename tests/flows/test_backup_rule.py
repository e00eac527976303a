"""The one backup rule (``flows.backups.back_up``), which the writer (update, refresh,
reapply) and the regeneration runner share: the first backup of a file is never written
over, and a later backup of different bytes goes beside it as ``<name>.<n>``."""

from pathlib import Path

from tether.flows.backups import back_up
from tether.flows.safety import PathGuard
from tether.fsio import sha256_bytes


def folders(tmp_path: Path) -> tuple[Path, PathGuard]:
    source = tmp_path / "project" / "notes.md"
    source.parent.mkdir()
    return source, PathGuard(tmp_path / "backup")


def test_a_first_backup_is_written_once_and_then_kept(tmp_path: Path) -> None:
    source, guard = folders(tmp_path)
    source.write_text("original\n")
    saved = back_up(guard, "notes.md", source)
    assert saved is not None and saved.written and saved.name == "notes.md"
    assert saved.sha256 == sha256_bytes(b"original\n")
    source.write_text("changed later\n")
    second = back_up(guard, "notes.md", source, first=saved.sha256)
    assert second is not None and second.name == "notes.md.2"
    assert (guard.root / "notes.md").read_text() == "original\n"
    assert (guard.root / "notes.md.2").read_text() == "changed later\n"
    source.write_text("changed again\n")
    third = back_up(guard, "notes.md", source, first=saved.sha256)
    assert third is not None and third.name == "notes.md.3"
    assert (guard.root / "notes.md").read_text() == "original\n"


def test_bytes_the_first_backup_holds_are_not_backed_up_again(tmp_path: Path) -> None:
    source, guard = folders(tmp_path)
    source.write_text("original\n")
    first = back_up(guard, "notes.md", source)
    assert first is not None
    assert back_up(guard, "notes.md", source, first=first.sha256) is None
    assert sorted(p.name for p in guard.root.iterdir()) == ["notes.md"]


def test_a_copy_written_before_a_crash_is_used_not_duplicated(tmp_path: Path) -> None:
    """No first backup in the journal, but the same bytes already in place: the copy an
    interrupted attempt made just before it could record it."""
    source, guard = folders(tmp_path)
    source.write_text("original\n")
    guard.write("notes.md", b"original\n")
    saved = back_up(guard, "notes.md", source)
    assert saved is not None and not saved.written and saved.name == "notes.md"
    assert sorted(p.name for p in guard.root.iterdir()) == ["notes.md"]


def test_other_bytes_already_in_place_are_never_replaced(tmp_path: Path) -> None:
    """An earlier step of the run saved the adopter's original there (regeneration after
    the writer): it stays, the new bytes go beside it."""
    source, guard = folders(tmp_path)
    guard.write("notes.md", b"the adopter's original\n")
    source.write_text("written by the run\n")
    saved = back_up(guard, "notes.md", source)
    assert saved is not None and saved.name == "notes.md.2"
    assert (guard.root / "notes.md").read_text() == "the adopter's original\n"
    assert (guard.root / "notes.md.2").read_text() == "written by the run\n"


def test_a_link_at_the_backup_name_is_neither_followed_nor_replaced(tmp_path: Path) -> None:
    source, guard = folders(tmp_path)
    source.write_text("original\n")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not tether's\n")
    guard.root.mkdir()
    (guard.root / "notes.md").symlink_to(elsewhere)
    saved = back_up(guard, "notes.md", source)
    assert saved is not None and saved.name == "notes.md.2"
    assert elsewhere.read_text() == "not tether's\n"
    assert (guard.root / "notes.md").is_symlink()


def test_a_link_backup_only_when_asked(tmp_path: Path) -> None:
    source, guard = folders(tmp_path)
    source.write_text("original\n")
    copied = back_up(guard, "copy.md", source)
    linked = back_up(guard, "link.md", source, may_link=True)
    assert copied is not None and not copied.linked
    assert linked is not None and linked.linked
    assert (guard.root / "copy.md").stat().st_ino != source.stat().st_ino
    assert (guard.root / "link.md").stat().st_ino == source.stat().st_ino
