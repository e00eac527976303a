"""How many git programs an update starts (docs/performance.md, "Small projects"): git is
asked once per batch, not once per file. The count is read from a stand-in ``git`` on PATH
that appends its arguments to a log and then runs the real git, so the repository ends up
exactly as a direct call would leave it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether

BASE = "".join(f"line {i}\n" for i in range(12))
CONFLICTED = ("docs/a.md", "docs/b.md", "src/c.py")


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository with a project in its ``kit/`` folder (not at the top, so paths
    in git's index differ from the project's) whose update to 2.0.0 conflicts in three
    files and updates three more."""
    shelf = tmp_path / "rel"
    v1 = {rel: BASE for rel in CONFLICTED} | {f"plain{i}.txt": BASE for i in range(3)}
    v2 = {rel: text.replace("line 5\n", "line 5 upstream\n") for rel, text in v1.items()}
    make_release(shelf, "1.0.0", v1)
    make_release(shelf, "2.0.0", v2)
    repo = tmp_path / "repo"
    project = repo / "kit"
    project.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    for rel in CONFLICTED:
        (project / rel).write_text(BASE.replace("line 5\n", "line 5 mine\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "install")
    return repo, project


def _record_git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git-calls.log"
    folder = tmp_path / "bin"
    folder.mkdir()
    stand_in = folder / "git"
    stand_in.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _unmerged(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "--unmerged")
    return sorted({line.split("\t", 1)[1] for line in out.splitlines()})


def test_three_conflicts_are_staged_with_one_git_call_for_the_blobs_and_one_for_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, project = _project(tmp_path)
    log = _record_git_calls(tmp_path, monkeypatch)
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(project))
    assert result.returncode == 4, result.stderr
    calls = [line.split() for line in log.read_text().splitlines()]
    subcommands = [next(arg for arg in argv if not arg.startswith("-")) for argv in calls]
    assert subcommands.count("hash-object") == 1
    assert subcommands.count("update-index") == 1
    assert not any("--show-prefix" in argv for argv in calls)
    # Where the working tree is; the commit and branch checked out and whether the update
    # branch exists come from one listing of the local branches.
    assert subcommands.count("rev-parse") == 1
    assert subcommands.count("for-each-ref") == 1
    assert _unmerged(repo) == [f"kit/{rel}" for rel in CONFLICTED]
    for rel in CONFLICTED:
        assert git(repo, "show", f":1:kit/{rel}") == BASE
        assert git(repo, "show", f":2:kit/{rel}") == BASE.replace("line 5\n", "line 5 mine\n")
        assert git(repo, "show", f":3:kit/{rel}") == BASE.replace("line 5\n", "line 5 upstream\n")


def test_one_listing_answers_what_checked_out_and_branch_commit_answer(tmp_path: Path) -> None:
    """On a branch, detached, unborn, with and without the asked branch: the same answers
    as the two separate questions."""
    from tether import git as tgit

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def both_ways() -> None:
        for name in ("chore/update-kit-2.0.0", "main"):
            alone = (*tgit.checked_out(repo), tgit.branch_commit(repo, name))
            assert tgit.checked_out_and_branch(repo, name) == alone

    both_ways()  # unborn: no commit yet
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    both_ways()  # on main, the asked branch absent
    git(repo, "branch", "chore/update-kit-2.0.0")
    both_ways()  # present, at the same commit
    git(repo, "checkout", "-q", "--detach")
    both_ways()  # detached


def test_the_blobs_scratch_files_go_to_tmpdir_and_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sides git stores for the conflicts pass through a private scratch folder in
    TMPDIR, as tempfile would place it; nothing of it is left after the update."""
    repo, project = _project(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(project))
    assert result.returncode == 4, result.stderr
    assert _unmerged(repo) == [f"kit/{rel}" for rel in CONFLICTED]
    assert list(scratch.iterdir()) == []


def test_the_blobs_are_stored_when_tmpdir_cannot_take_the_scratch_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TMPDIR that does not exist: the scratch folder goes where tempfile puts it."""
    from tether import git as tgit

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    blobs = [b"one\n", b"two\n", b""]
    ids = tgit.write_blobs(repo, blobs)
    assert [git(repo, "cat-file", "blob", oid) for oid in ids] == ["one\n", "two\n", ""]
    assert not (tmp_path / "missing").exists()


SCRIPT = """
import contextlib, io, sys
from tether.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(code)
print(" ".join(sorted(sys.modules)))
"""


def test_an_update_staging_conflicts_loads_neither_tempfile_nor_shutil(tmp_path: Path) -> None:
    """Storing the conflicts' sides needs no ``tempfile`` (nor its ``shutil`` and
    ``random``), merging them no ``typing``: an update's start-up does not pay for them
    (docs/performance.md)."""
    repo, project = _project(tmp_path)
    argv = ["update", "--yes", "--json", "--conflict", "markers", "-C", str(project)]
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=120
    )
    code, modules = result.stdout.splitlines()[-2:]
    assert code == "4", result.stderr
    assert _unmerged(repo) == [f"kit/{rel}" for rel in CONFLICTED]  # the sides were stored
    assert not {"tempfile", "shutil", "random"} & set(modules.split())
    # Nor typing: the line merge, its diff and the check of the merged lines (run here, for
    # the conflicted files) name its types only for the type checker.
    assert "tether.engine.textmerge" in modules.split()
    assert "typing" not in modules.split()
