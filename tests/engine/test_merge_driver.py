"""``tether merge-driver`` used by a real ``git merge`` through .gitattributes."""

import json
import subprocess

from builders import git

PKG = {"name": "app", "version": "1.0.0", "dependencies": {"alpha": "^1.0.0", "beta": "^1.0.0"}}


def write_pkg(repo, **deps):
    doc = json.loads(json.dumps(PKG))
    doc["dependencies"].update(deps)
    (repo / "package.json").write_text(json.dumps(doc, indent=2) + "\n")


def setup_repo(tmp_path, with_driver):
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    if with_driver:
        git(
            repo,
            "config",
            "merge.tether.driver",
            "tether merge-driver --preset npm-package %O %A %B %P",
        )
        (repo / ".gitattributes").write_text("package.json merge=tether\n")
    write_pkg(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "upstream")
    write_pkg(repo, beta="^2.0.0")
    git(repo, "commit", "-qam", "bump beta")
    git(repo, "checkout", "-q", "main")
    write_pkg(repo, alpha="^1.5.0")
    git(repo, "commit", "-qam", "bump alpha")
    return repo


def merge(repo, branch="upstream"):
    """``git merge`` of ``branch`` into the checked-out one: git's error when it stopped (a
    conflict), else None."""
    try:
        git(repo, "merge", "-q", "--no-edit", branch)
    except subprocess.CalledProcessError as error:
        return error
    return None


def test_adjacent_dependency_bumps_merge_by_key(tmp_path):
    plain = setup_repo(tmp_path / "plain", with_driver=False)
    assert merge(plain) is not None  # git's own line merge conflicts on adjacent lines
    repo = setup_repo(tmp_path / "driver", with_driver=True)
    stopped = merge(repo)
    assert stopped is None, stopped and stopped.stdout + stopped.stderr
    deps = json.loads((repo / "package.json").read_text())["dependencies"]
    assert deps == {"alpha": "^1.5.0", "beta": "^2.0.0"}


def test_driver_reports_conflicts_to_git(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "merge.tether.driver", "tether merge-driver %O %A %B %P")
    (repo / ".gitattributes").write_text("*.txt merge=tether\n")
    (repo / "f.txt").write_text("a\nb\nc\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "other")
    (repo / "f.txt").write_text("a\nB\nc\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "f.txt").write_text("a\nmine\nc\n")
    git(repo, "commit", "-qam", "mine")
    assert merge(repo, "other") is not None
    text = (repo / "f.txt").read_text()
    assert "<<<<<<< ours\nmine\n||||||| base\nb\n=======\nB\n>>>>>>> theirs\n" in text
    assert "f.txt" in git(repo, "diff", "--name-only", "--diff-filter=U")
