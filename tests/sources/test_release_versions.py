"""A version is a version: ``v2.0.0`` and ``2.0.0`` name one release everywhere, and every
record stores the version, never the tag's spelling."""

import json

import pytest

from builders import make_release, run_tether


@pytest.fixture
def shelf(tmp_path):
    """Releases whose folders are spelled as tags (v1.0.0, v2.0.0)."""
    shelf = tmp_path / "releases"
    make_release(shelf, "v1.0.0", {"a.txt": "a1\n", "b.txt": "b\n"})
    make_release(shelf, "v2.0.0", {"a.txt": "a2\n", "b.txt": "b\n"})
    return shelf


def _state(project):
    return json.loads((project / ".tether/state.json").read_text())


def test_init_to_a_tag_records_the_version(tmp_path, shelf):
    project = tmp_path / "proj"
    result = run_tether(
        "init", "--source", str(shelf), "--to", "v1.0.0", "--json", "-C", str(project)
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["version"] == "1.0.0"
    assert _state(project)["version"] == "1.0.0"


def test_update_to_the_installed_release_spelled_as_a_tag_is_up_to_date(tmp_path, shelf):
    project = tmp_path / "proj"
    run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    moved = run_tether("update", "--to", "v2.0.0", "--yes", "--json", "-C", str(project))
    assert moved.returncode == 0, moved.stderr
    document = json.loads(moved.stdout)
    assert (document["from_version"], document["to_version"]) == ("1.0.0", "2.0.0")
    assert _state(project)["version"] == "2.0.0"
    again = run_tether("update", "--to", "v2.0.0", "--yes", "--json", "-C", str(project))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["status"] == "up-to-date"
    assert _state(project)["version"] == "2.0.0"


def test_a_record_spelled_as_a_tag_is_the_same_release(tmp_path, shelf):
    """A state an earlier tether wrote with the tag's spelling still names its release."""
    project = tmp_path / "proj"
    run_tether("init", "--source", str(shelf), "--to", "2.0.0", "-C", str(project))
    state = _state(project)
    state["version"] = "v2.0.0"
    (project / ".tether/state.json").write_text(json.dumps(state))
    result = run_tether("update", "--to", "2.0.0", "--yes", "--json", "-C", str(project))
    assert json.loads(result.stdout)["status"] == "up-to-date", result.stderr


def test_a_refused_downgrade_says_what_to_do(tmp_path, shelf):
    project = tmp_path / "proj"
    run_tether("init", "--source", str(shelf), "--to", "2.0.0", "-C", str(project))
    result = run_tether("update", "--to", "v1.0.0", "--yes", "-C", str(project))
    assert result.returncode == 1
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "refusing to downgrade from 2.0.0 to 1.0.0" in line
    assert "git revert" in line and "git log -- .tether/state.json" in line
    assert _state(project)["version"] == "2.0.0"
