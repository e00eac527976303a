"""From a subfolder, every command finds its project the way git finds its repository:
the nearest folder above holding tether's record, never above the git repository's top."""

import json

import pytest

from builders import git, make_release, run_tether, write_files


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"docs/guide.md": "guide v1\n", "src/app.py": "app\n"})
    make_release(shelf, "1.1.0", {"docs/guide.md": "guide v2\n", "src/app.py": "app\n"})
    return shelf


@pytest.fixture
def project(tmp_path, shelf):
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    (project / "docs/deep/er").mkdir(parents=True)
    return project


def test_status_check_diff_and_update_work_from_a_subfolder(project):
    (project / "docs/guide.md").write_text("my guide\n")
    here = project / "docs/deep/er"
    status = run_tether("status", "--json", cwd=here)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["modified"] == ["docs/guide.md"]
    assert run_tether("check", cwd=here).returncode == 0
    # PATH arguments are read from the current folder, as git reads them.
    diff = run_tether("diff", "--json", "../../guide.md", cwd=here)
    assert diff.returncode == 0, diff.stderr
    assert [f["path"] for f in json.loads(diff.stdout)["files"]] == ["docs/guide.md"]
    update = run_tether("update", "--yes", "--json", cwd=project / "src")
    assert update.returncode in (0, 4), update.stderr
    assert json.loads(update.stdout)["to_version"] == "1.1.0"
    assert json.loads((project / ".tether/state.json").read_text())["version"] == "1.1.0"


def test_the_walk_stops_at_the_git_repository_top(project):
    """A repository inside the project (a vendored checkout) is a boundary: its folders
    are not the project's, as a nested repository is not its parent's for git."""
    vendored = project / "vendor/lib"
    write_files(vendored, {"sub/x.txt": "x\n"})
    git(vendored, "init", "-q")
    result = run_tether("status", cwd=vendored / "sub")
    assert result.returncode == 1
    assert "no tether install found" in result.stderr
    # The project's own repository is no boundary below its top.
    git(project, "init", "-q")
    assert run_tether("status", cwd=project / "docs/deep").returncode == 0


def test_dash_c_names_the_project_folder_exactly(project):
    result = run_tether("status", "-C", str(project / "docs"))
    assert result.returncode == 1
    assert "no tether install found" in result.stderr
