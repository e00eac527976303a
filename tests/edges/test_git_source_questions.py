"""A git repository as a release source asks git each question once per command: the kinds
of its tags (``for-each-ref refs/tags``) are read once for listing the versions and
exporting the one asked for, and a repository on disk, found to be one when the source was
opened, is not asked again whether it is one. The cached clone of a remote is asked again
after a fetch brought tags in, so a new tag is judged as fetched (real git throughout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders import git, run_tether
from helpers_sources import commit_release, init_repo
from tether import git as tether_git

VERSIONS = ("1.0.0", "1.1.0")


def upstream(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "upstream")
    for version in VERSIONS:
        commit_release(repo, {"guide.md": f"guide {version}\n"}, f"v{version}")
    return repo


def noted_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], Path | None]]:
    """Every call of tether's git runner, with the folder it ran in (the real git runs)."""
    calls: list[tuple[list[str], Path | None]] = []
    real = tether_git.run_git

    def noting(args, cwd=None, **options):  # type: ignore[no-untyped-def]
        calls.append((list(args), cwd))
        return real(args, cwd, **options)

    monkeypatch.setattr(tether_git, "run_git", noting)
    return calls


def tag_questions(calls: list[tuple[list[str], Path | None]]) -> int:
    return sum(1 for args, _ in calls if args[0] == "for-each-ref" and args[-1] == "refs/tags")


def test_a_repository_on_disk_is_asked_once_what_its_tags_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = upstream(tmp_path)
    project = tmp_path / "proj"
    calls = noted_git(monkeypatch)
    done = run_tether("init", "--source", str(repo), "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert (project / "guide.md").read_text() == "guide 1.0.0\n"
    assert tag_questions(calls) == 1
    in_repo = [args for args, cwd in calls if cwd is not None and cwd.resolve() == repo.resolve()]
    assert sum(1 for args in in_repo if args[0] == "rev-parse") == 1  # when opened
    calls.clear()
    done = run_tether("update", "--yes", "--to", "1.1.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert (project / "guide.md").read_text() == "guide 1.1.0\n"
    assert tag_questions(calls) == 1


def test_the_cached_clone_is_asked_again_after_a_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = upstream(tmp_path)
    project = tmp_path / "proj"
    source = f"file://{repo}"
    calls = noted_git(monkeypatch)
    done = run_tether("init", "--source", source, "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert tag_questions(calls) == 1  # the clone, once made
    calls.clear()
    done = run_tether("update", "--yes", "--to", "1.1.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert (project / "guide.md").read_text() == "guide 1.1.0\n"
    assert tag_questions(calls) == 1  # the clone already held the tag: nothing fetched
    # A tag made upstream after the clone, naming a tree: listed as a release (the clone
    # cannot tell its kind yet), judged once fetched.
    tree = git(repo, "rev-parse", "v1.1.0^{tree}").strip()
    git(repo, "tag", "v2.0.0", tree)
    calls.clear()
    done = run_tether("update", "--yes", "--to", "2.0.0", "-C", str(project))
    assert done.returncode == 1
    assert f"{source}: tag v2.0.0 names a tree, not a commit, so it is no release" in done.stderr
    assert (project / "guide.md").read_text() == "guide 1.1.0\n"
    assert tag_questions(calls) == 2  # before the fetch and after it
