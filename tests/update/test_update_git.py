"""Release notes before confirming, and the git pre-flight of ``tether update``.

What ``--pr`` does now (it pushes nothing) is tested with ``tether pr`` in test_pr.py."""

import json

import pytest

from builders import call, git, make_release, run_tether
from tether.flows.plan import UpdateOptions
from tether.flows.preflight import GitOptions
from tether.flows.update import UpdateRequest, run_update

CHANGELOG = """# Changelog

## [Unreleased]
- not yet

## [1.2.0] - 2026-03-01
### Removed
- Dropped the left-pad shim. **Action required:** run `npm uninstall left-pad`.
- Removed `legacy.cfg` support: `rm legacy.cfg`

## [1.1.0] - 2026-02-01
### Added
- A faster linter.

## [1.0.0] - 2026-01-01
- First release.

[1.2.0]: https://example.invalid/compare
"""


@pytest.fixture
def repo(tmp_path):
    shelf = tmp_path / "rel"
    for i, v in enumerate(["1.0.0", "1.1.0", "1.2.0"]):
        make_release(
            shelf, v, {"a.txt": f"a{i}\n", "b.txt": "b\n"}, sentinels={"CHANGELOG.md": CHANGELOG}
        )
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "package.json").write_text('{"dependencies": {"left-pad": "^1.0.0"}}\n')
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


def test_release_notes_cover_every_skipped_version(repo):
    result = run_tether("update", "--dry-run", "-C", str(repo))
    out = result.stdout
    assert "## 1.2.0 - 2026-03-01" in out and "## 1.1.0" in out
    assert "## 1.0.0" not in out and "not yet" not in out and "example.invalid" not in out
    follow_ups = out.split("Follow-ups the release notes ask for")[1]
    assert "npm uninstall left-pad" in follow_ups
    assert "rm legacy.cfg" not in follow_ups  # the file is not here: the follow-up does not apply
    (repo / "legacy.cfg").write_text("x")
    doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(repo)).stdout)
    assert [s["version"] for s in doc["release_notes"]] == ["1.2.0", "1.1.0"]
    assert {a["target"] for a in doc["adopter_actions"]} == {"left-pad", "legacy.cfg"}


def test_branch_created_only_after_confirmation(repo):
    seen = []

    def refuse(prepared):
        seen.append(git(repo, "branch", "--show-current").strip())
        return False

    report = run_update(UpdateRequest(repo, options=UpdateOptions()), refuse)
    assert report.status == "cancelled"
    assert seen == ["main"]
    assert git(repo, "branch", "--show-current").strip() == "main"
    report = run_update(UpdateRequest(repo, options=UpdateOptions()), lambda p: True)
    assert report.status == "updated"
    assert report.branch == "chore/update-acme-kit-1.2.0"
    assert git(repo, "branch", "--show-current").strip() == "chore/update-acme-kit-1.2.0"
    assert git(repo, "log", "--oneline").count("\n") == 1  # never commits
    assert "you are now on branch chore/update-acme-kit-1.2.0" in _render(report)


def _render(report):
    from tether.report.update import render_update

    return render_update(report)


def test_no_branch_and_named_branch(repo):
    report = run_update(UpdateRequest(repo, to="1.1.0", git=GitOptions(no_branch=True)))
    assert report.branch is None and git(repo, "branch", "--show-current").strip() == "main"
    git(repo, "commit", "-qam", "update to 1.1.0")
    report = run_update(UpdateRequest(repo, to="1.2.0", git=GitOptions(branch="up/kit")))
    assert report.branch == "up/kit"


def test_dirty_files_the_plan_touches_refuse_unless_allowed(repo):
    (repo / "a.txt").write_text("a0 local edit\n")
    before = (repo / "a.txt").read_bytes()
    result = run_tether("update", "--yes", "--no-branch", "-C", str(repo))
    assert result.returncode == 1
    assert "uncommitted changes" in result.stderr and "a.txt" in result.stderr
    assert "--allow-dirty" in result.stderr
    assert (repo / "a.txt").read_bytes() == before
    result = run_tether(
        "update", "--yes", "--no-branch", "--allow-dirty", "--json", "-C", str(repo)
    )
    assert result.returncode in (0, 4), result.stderr
    assert json.loads(result.stdout)["dirty"] == ["a.txt"]


def test_linked_worktree_refused(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    result = run_tether("update", "--yes", "-C", str(linked))
    assert result.returncode == 1
    assert "linked worktree" in result.stderr and str(repo) in result.stderr
    assert f"run 'cd {repo}' and update there" in result.stderr
