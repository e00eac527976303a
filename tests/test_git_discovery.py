"""Where tether finds a git working tree: a folder with no ``.git`` in it or above it is
outside any repository without starting git; inside one (at its top, in a subfolder, in a
linked worktree whose ``.git`` is a file) git itself is asked. GIT_DIR and its kind never
reach tether's git calls (``git.git_env``), so they change neither answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import git
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
