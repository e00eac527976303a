"""Where tether finds a git working tree: a folder with no ``.git`` in it or above it is
outside any repository without starting git; inside one (at its top, in a subfolder, in a
linked worktree whose ``.git`` is a file) git itself is asked. GIT_DIR and its kind never
reach tether's git calls (``git.git_env``), so they change neither answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builders import call, git, make_release
from tether import git as tether_git


def counted_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Wrap tether's git runner to note each call (the real git still runs)."""
    calls: list[list[str]] = []
    real = tether_git.run_git

    def noting(args, *rest, **options):  # type: ignore[no-untyped-def]
        calls.append(list(args))
        return real(args, *rest, **options)

    monkeypatch.setattr(tether_git, "run_git", noting)
    return calls


def test_a_folder_with_no_git_above_is_answered_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any((parent / ".git").exists() for parent in tmp_path.parents):
        pytest.skip("the temporary folder lies inside a repository here")
    calls = counted_git(monkeypatch)
    folder = tmp_path / "plain" / "deeper"
    folder.mkdir(parents=True)
    assert tether_git.work_tree_top(folder) is None
    assert tether_git.inside_work_tree(folder) is False
    assert calls == []


def test_inside_a_repository_git_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))  # its .git is a file, not a folder
    calls = counted_git(monkeypatch)
    assert tether_git.work_tree_top(repo / "sub") == repo.resolve()
    assert tether_git.work_tree_top(linked) == linked.resolve()
    assert tether_git.inside_work_tree(repo / "sub") is True
    assert len(calls) == 3


def test_git_dir_in_the_environment_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a git hook would have it: GIT_DIR and GIT_WORK_TREE name a repository, yet a
    folder outside any is still outside, as git run with tether's environment says too."""
    repo = tmp_path / "elsewhere"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(work))
    asked = tether_git.run_git(["rev-parse", "--show-toplevel"], cwd=work, check=False)
    assert asked.returncode != 0  # git, with tether's environment, finds no working tree
    calls = counted_git(monkeypatch)
    assert tether_git.work_tree_top(work) is None
    if not any((parent / ".git").exists() for parent in tmp_path.parents):
        assert calls == []


def test_an_update_asks_git_for_its_working_tree_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Branch, dirty files, linked worktrees, apply and the version marker each need the
    working tree around the project: one update asks git once; the next update asks again
    (a repository may have been made between two commands)."""
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\nb\nc\n"})
    make_release(shelf, "1.1.0", {"a.txt": "a\nb\nc\nd\n"})
    make_release(shelf, "1.2.0", {"a.txt": "a\nb\nc\nd\ne\n"})
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "work")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "installed")
    calls = counted_git(monkeypatch)
    for version in ("1.1.0", "1.2.0"):
        assert call("update", "--yes", "--no-branch", "--to", version, "-C", str(project)) == 0
        git(project, "commit", "-qam", version)
    assert (project / "a.txt").read_text() == "a\nb\nc\nd\ne\n"
    # One question per update gives the working tree and whether it is a linked worktree.
    asked_tree = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
    assert [args for args in calls if "--show-toplevel" in args] == [asked_tree] * 2
    assert [args for args in calls if "--git-common-dir" in args] == [asked_tree] * 2
    # The commit and the branch it starts from, and whether the update branch exists: one
    # listing of the local branches per update.
    listing = ["for-each-ref", "--format=%(HEAD)%00%(objectname)%00%(refname)", "refs/heads/"]
    assert [args for args in calls if args[0] == "for-each-ref"] == [listing] * 2
    assert [args for args in calls if "--symbolic-full-name" in args] == []
    assert [args for args in calls if args[0] == "symbolic-ref"] == []


def test_forgetting_a_worktree_asks_git_only_where_worktrees_are_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "f.txt").write_text("f\n")
    git(source, "add", "-A")
    git(source, "commit", "-qm", "one")
    bare = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    calls = counted_git(monkeypatch)
    tether_git.worktree_forget(bare, tmp_path / "never-made")
    tether_git.worktree_forget(source, tmp_path / "never-made")
    assert calls == []  # neither has a worktree registered: nothing to ask
    for repo in (bare, source):
        work = tmp_path / f"work-{repo.name}"
        git(repo, "worktree", "add", "-q", str(work))
        git(repo, "worktree", "lock", str(work))  # as a killed ``worktree add`` leaves it
        shutil.rmtree(work)
        tether_git.worktree_forget(repo, work)
        assert str(work) not in git(repo, "worktree", "list")
    assert len(calls) == 4


def test_a_linked_worktree_names_its_main_checkout_even_with_a_line_break_in_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git answers one path a line; a folder whose name holds a line break is asked one
    question at a time instead, and still answered right."""
    for name in ("plain", "line\nbreak"):
        repo = tmp_path / name / "repo"
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "f.txt").write_text("f\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "one")
        linked = tmp_path / name / "linked"
        git(repo, "worktree", "add", "-q", str(linked))
        calls = counted_git(monkeypatch)
        assert tether_git.work_tree(repo) == tether_git.WorkTree(repo.resolve(), None)
        assert tether_git.work_tree(linked) == tether_git.WorkTree(linked.resolve(), repo.resolve())
        in_linked = tether_git.WorkTree(linked.resolve(), repo.resolve())
        assert tether_git.work_tree(linked / ".") == in_linked
        # One question per folder; with the line break, that one and three more.
        assert len(calls) == (3 if name == "plain" else 12)
        monkeypatch.undo()


def test_checked_out_tells_the_commit_and_the_branch_in_one_question(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert tether_git.checked_out(repo) == (None, "main")  # no commit yet
    (repo / "HEAD").write_text("a file named as the ref\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert tether_git.checked_out(repo) == (head, "main")
    git(repo, "tag", "main")  # a tag of the same name: the branch is still called main
    assert tether_git.checked_out(repo) == (head, "main")
    assert tether_git.current_branch(repo) == "main"
    git(repo, "switch", "-q", "--detach")
    assert tether_git.checked_out(repo) == (head, None)
    assert tether_git.current_branch(repo) is None
    assert tether_git.commit_of(repo, "refs/tags/main") == head
    assert tether_git.commit_of(repo, "refs/heads/nothing") is None
    assert tether_git.commit_of(repo, "--help") is None  # never an option
