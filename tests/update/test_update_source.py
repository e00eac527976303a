"""``update --source``: a release that names another upstream is refused unless
``--switch-upstream`` says it is meant; a relative source is recorded relative to the
project, so a clone elsewhere (with the source beside it as before) still finds it."""

import json
import shutil

import pytest

from builders import make_release, run_tether, tree_digest


@pytest.fixture
def shelves(tmp_path):
    acme = tmp_path / "acme"
    make_release(acme, "1.0.0", {"a.txt": "a1\n"}, name="acme-kit")
    make_release(acme, "2.0.0", {"a.txt": "a2\n"}, name="acme-kit")
    other = tmp_path / "other"
    make_release(other, "2.0.0", {"a.txt": "other\n"}, name="other-kit")
    return acme, other


@pytest.fixture
def project(tmp_path, shelves):
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(shelves[0]), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    return project


def state(project):
    return json.loads((project / ".tether/state.json").read_text())


def test_a_source_naming_another_upstream_is_refused(project, shelves):
    before = tree_digest(project)
    for dry in ((), ("--dry-run",)):
        result = run_tether(
            "update",
            "--source",
            str(shelves[1]),
            "--to",
            "2.0.0",
            "--yes",
            *dry,
            "-C",
            str(project),
        )
        assert result.returncode == 1
        line = result.stderr.strip()
        assert len(line.splitlines()) == 1
        assert "release 2.0.0 is other-kit, not acme-kit" in line and "--switch-upstream" in line
    assert tree_digest(project) == before


def test_switch_upstream_moves_the_project(project, shelves):
    result = run_tether(
        "update",
        "--source",
        str(shelves[1]),
        "--to",
        "2.0.0",
        "--yes",
        "--switch-upstream",
        "--json",
        "-C",
        str(project),
    )
    assert result.returncode == 0, result.stderr
    assert any(
        "switched upstream from acme-kit to other-kit" in n
        for n in json.loads(result.stdout)["notes"]
    )
    assert (state(project)["upstream"], state(project)["source"]) == ("other-kit", str(shelves[1]))


def test_a_mirror_of_the_same_upstream_needs_no_switch(project, shelves, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(shelves[0], mirror)
    result = run_tether(
        "update", "--source", str(mirror), "--to", "2.0.0", "--yes", "-C", str(project)
    )
    assert result.returncode == 0, result.stderr
    assert state(project)["source"] == str(mirror)


def test_a_relative_source_is_recorded_relative_to_the_project(tmp_path, shelves):
    work = tmp_path / "work"
    (work / "proj").mkdir(parents=True)
    shutil.copytree(shelves[0], work / "releases")
    # Given from the project's folder and from beside it: both recorded from the project.
    result = run_tether("init", "--source", "../releases", "--to", "1.0.0", cwd=work / "proj")
    assert result.returncode == 0, result.stderr
    assert state(work / "proj")["source"] == "../releases"
    clone = tmp_path / "elsewhere" / "work"
    shutil.copytree(work, clone)
    shutil.rmtree(work)  # the original source is gone: only the clone's neighbour remains
    shutil.rmtree(clone / "proj/.tether/cache")  # git-ignored: a clone has none
    status = run_tether("status", "--check-latest", "--json", "-C", str(clone / "proj"))
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["latest_version"] == "2.0.0"
    # --source given relative to the current folder, recorded relative to the project.
    shutil.copytree(clone / "releases", clone / "mirror")
    result = run_tether(
        "update", "--source", "mirror", "--to", "2.0.0", "--yes", "-C", "proj", cwd=clone
    )
    assert result.returncode == 0, result.stderr
    assert (clone / "proj/a.txt").read_text() == "a2\n"
    assert state(clone / "proj")["source"] == "../mirror"
    result = run_tether("status", "--check-latest", "-C", str(clone / "proj"))
    assert result.returncode == 0, result.stderr


def test_the_switch_is_a_fact_of_the_update(project, shelves):
    """The flow records the switch as a fact (report/notes.py words it, as above)."""
    from tether.flows.notes import UpstreamSwitched
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.flows.update_report import UpdateStatus

    request = UpdateRequest(project, to="2.0.0", source=str(shelves[1]), switch_upstream=True)
    prepared = prepare_update(request)
    assert isinstance(prepared, PreparedUpdate)
    switched = UpstreamSwitched("acme-kit", "other-kit", str(shelves[1]))
    assert prepared.report(UpdateStatus.PLAN).notes == [switched]
