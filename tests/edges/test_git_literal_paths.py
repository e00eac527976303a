"""Shipped file names that are git pathspec magic (``*``, ``[ab].md``, ``:(top)x``) are handed
to git as the paths they are: an update changing ``[ab].md`` does not blame the adopter's
uncommitted ``a.md`` as "uncommitted changes in files this update changes", and the index
and history questions tether asks about one path answer for that path only. Real git."""

from __future__ import annotations

from pathlib import Path

from builders import call, git, make_release, run_tether
from tether import git as tgit

MAGIC = ("[ab].md", "*", "?.txt")


def _project(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    for version in ("1.0.0", "2.0.0"):
        make_release(shelf, version, {name: f"{name} {version}\n" for name in MAGIC})
    project = tmp_path / "app"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    for own in ("a.md", "b.md", "x.txt", "notes.md"):  # the adopter's files, not the release's
        (project / own).write_text("mine\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    for own in ("a.md", "b.md", "x.txt", "notes.md"):
        (project / own).write_text("mine, edited and not committed\n")
    return project


def test_an_update_blames_no_file_a_shipped_name_only_matches_as_a_pattern(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert "uncommitted" not in result.stderr
    for name in MAGIC:
        assert (project / name).read_text() == f"{name} 2.0.0\n"
    assert (project / "a.md").read_text() == "mine, edited and not committed\n"


def test_a_shipped_file_with_its_own_uncommitted_edit_is_still_named(tmp_path: Path) -> None:
    """The control: a literal path is still checked, and only it is named."""
    project = _project(tmp_path)
    (project / "[ab].md").write_text("edited by hand\n")
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.startswith(
        "tether: uncommitted changes in files this update changes ([ab].md); "
    )


def test_index_and_history_questions_take_paths_literally(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert tgit.dirty_paths(project, ["*", "[ab].md"]) == []
    entries = tgit.index_entries(project, ["*", "[ab].md"])
    assert {rel: len(found) for rel, found in entries.items()} == {"*": 1, "[ab].md": 1}
    assert tgit.tracked_paths(project, ["?.txt"]) == ["?.txt"]


def test_conflict_stages_are_recorded_for_a_path_whose_folder_name_holds_a_line_break(
    tmp_path: Path,
) -> None:
    """The batched ``update-index --index-info`` takes one path per record: a project in a
    folder whose name holds a line break (legal on every POSIX file system) must neither
    lose its conflict stages nor have the pieces of its name read as other index records
    (here one that would drop ``keep.txt`` from the index)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "keep.txt").write_text("kept\n")
    git(repo, "add", "keep.txt")
    git(repo, "commit", "-qm", "keep")
    odd = f"app\n0 {'0' * 40}\tkeep.txt\nx"
    (repo / odd).mkdir()
    rel = f"{odd}/f.txt"
    (repo / rel).write_text("<<<<<<< ours\n")
    stages = [(1, b"base\n", 0o100644), (2, b"ours\n", 0o100644), (3, b"theirs\n", 0o100644)]
    tgit.record_unmerged_paths(repo, [(rel, stages)])
    listed = git(repo, "ls-files", "--stage", "-z").split("\0")
    names = sorted((line.split("\t", 1)[1], line.split()[2]) for line in listed if line)
    assert names == sorted([("keep.txt", "0"), (rel, "1"), (rel, "2"), (rel, "3")])
