"""The committed version marker (GAIA's .gaia/VERSION) says which release is installed.

tether's own record lives in a git-ignored folder, so a branch switch, a pull or a hand edit
can leave it naming another release than the one whose files are in the tree.
"""

import json
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether, write_files

CLASSES = {"agents/auditor.md": "shared", "wiki/index.md": "wiki-owned"}
RELEASES = {
    "1.7.0": {"agents/auditor.md": "auditor 1.7\n", "wiki/index.md": "index 1.7\n"},
    "1.8.0": {"agents/auditor.md": "auditor 1.8\n", "wiki/index.md": "index 1.7\n"},
    "1.9.0": {"agents/auditor.md": "auditor 1.8\n", "wiki/index.md": "index 1.9\n"},
}
STATE = ".gaia/local/tether/state.json"


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "rel"
    for version, files in RELEASES.items():
        root = make_release(shelf, version, files, CLASSES, profile="gaia")
        write_files(root, {"CHANGELOG.md": "# changes\n"})
    return shelf


def gaia_project(tmp_path: Path, shelf: Path, version: str = "1.7.0") -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(shelf), "--to", version)
    assert call(*init, "-C", str(project)) == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", f"install {version}")
    return project


def update(project: Path, *extra: str):
    return run_tether("update", "--yes", "--no-branch", *extra, "-C", str(project))


def recorded_version(project: Path) -> str:
    return json.loads((project / STATE).read_text())["version"]


def test_branch_switch_to_an_older_marker_replays_the_release_it_skipped(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    git(project, "switch", "-q", "-c", "feature")
    assert update(project, "--to", "1.8.0").returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "update to 1.8.0")
    git(project, "switch", "-q", "main")
    assert (project / ".gaia/VERSION").read_text() == "1.7.0\n"
    assert recorded_version(project) == "1.8.0"  # git-ignored: it stayed behind
    result = update(project, "--to", "1.9.0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tether update: 1.7.0 → 1.9.0")
    assert ".gaia/VERSION says 1.7.0 but tether's record says 1.8.0" in result.stdout
    # 1.8.0's change landed although tether's record claimed it was installed.
    assert (project / "agents/auditor.md").read_text() == "auditor 1.8\n"
    assert (project / "wiki/index.md").read_text() == "index 1.9\n"
    assert (project / ".gaia/VERSION").read_text() == "1.9.0\n"
    assert recorded_version(project) == "1.9.0"


def test_status_and_check_follow_the_marker(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    git(project, "switch", "-q", "-c", "feature")
    assert update(project, "--to", "1.8.0").returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "update to 1.8.0")
    git(project, "switch", "-q", "main")
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["installed_version"] == "1.7.0"
    assert status["modified"] == []  # the tree is 1.7.0's, exactly
    assert any("tether's record says 1.8.0" in note for note in status["notes"])
    assert run_tether("check", "-C", str(project)).returncode == 0


def test_marker_edited_by_hand_to_another_release_is_the_baseline(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    (project / ".gaia/VERSION").write_text("1.8.0\n")
    result = update(project, "--to", "1.9.0", "--allow-dirty")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tether update: 1.8.0 → 1.9.0")
    assert "the marker wins" in result.stdout


def test_marker_naming_a_release_that_cannot_be_fetched_is_refused(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    (project / ".gaia/VERSION").write_text("1.6.0\n")
    before = (project / "agents/auditor.md").read_bytes()
    result = update(project, "--to", "1.9.0")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "tether: .gaia/VERSION says 1.6.0 but tether's record says 1.7.0" in result.stderr
    assert "release 1.6.0 cannot be fetched" in result.stderr
    assert (project / "agents/auditor.md").read_bytes() == before
    assert recorded_version(project) == "1.7.0"


def test_marker_ahead_of_the_record_is_up_to_date(tmp_path, shelf):
    """A teammate's committed update arrives by a pull; the local record is older."""
    project = gaia_project(tmp_path, shelf)
    assert update(project, "--to", "1.8.0").returncode == 0
    older_record = (project / STATE).read_bytes()
    assert update(project, "--to", "1.9.0").returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "update to 1.9.0")
    (project / STATE).write_bytes(older_record)
    assert recorded_version(project) == "1.8.0"
    result = update(project, "--json")
    doc = json.loads(result.stdout)
    assert doc["status"] == "up-to-date", doc
    assert (doc["from_version"], doc["to_version"]) == ("1.9.0", "1.9.0")
    assert any("tether's record says 1.8.0" in note for note in doc["notes"])
    assert (project / "agents/auditor.md").read_text() == "auditor 1.8\n"
    assert run_tether("check", "-C", str(project)).returncode == 0


def test_missing_marker_is_refused_with_one_line(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    (project / ".gaia/VERSION").unlink()
    for command in (("update", "--yes"), ("status",), ("check",)):
        result = run_tether(*command, "-C", str(project))
        assert result.returncode == 1, command
        assert result.stderr.count("\n") == 1
        assert ".gaia/VERSION: missing" in result.stderr
        assert "git checkout -- .gaia/VERSION" in result.stderr
    assert not (project / ".gaia/VERSION").exists()  # nothing written


def test_uncommitted_marker_quotes_the_marker_not_the_record(tmp_path, shelf):
    project = gaia_project(tmp_path, shelf)
    assert update(project, "--to", "1.9.0").returncode == 0
    result = update(project, "--to", "1.9.0")
    assert result.returncode == 0
    assert "already up to date" not in result.stdout
    assert "the update to 1.9.0 is applied but not committed" in result.stdout
    assert "(.gaia/VERSION says 1.9.0, the last commit has 1.7.0)" in result.stdout
    assert "git checkout -- .gaia/VERSION" in result.stdout
    # Starting over as the note says: the committed marker names 1.7.0 again, and the
    # rerun replays 1.7.0 → 1.9.0 over the files already there.
    git(project, "checkout", "--", ".gaia/VERSION")
    again = update(project, "--to", "1.9.0", "--allow-dirty")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("tether update: 1.7.0 → 1.9.0")
    assert (project / ".gaia/VERSION").read_text() == "1.9.0\n"


def test_the_marker_winning_is_a_fact_of_the_baseline_worded_in_every_report(tmp_path, shelf):
    """load_baseline records the marker winning as a fact; status, diff and update word it
    the same way (report/notes.py)."""
    from tether.flows.baseline import load_baseline
    from tether.flows.notes import MarkerWins
    from tether.flows.project import open_project

    project = gaia_project(tmp_path, shelf)
    (project / ".gaia/VERSION").write_text("1.8.0\n")
    baseline = load_baseline(open_project(project))
    assert baseline.notes == [MarkerWins(".gaia/VERSION", "1.8.0", "1.7.0")]
    words = (
        ".gaia/VERSION says 1.8.0 but tether's record says 1.7.0: the marker wins, so release "
        "1.8.0 is the installed baseline for this run"
    )
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["notes"] == [words]
    diff = run_tether("diff", "-C", str(project))
    assert f"# note: {words}" in diff.stdout.splitlines()
    dry = json.loads(update(project, "--to", "1.9.0", "--dry-run", "--json").stdout)
    assert words in dry["notes"]
