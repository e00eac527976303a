"""``tether status`` and ``tether check`` on files with a generated region: a body that
update regenerated is no drift; an edit outside the region still is."""

import json
import shutil

from builders import call, make_release, run_tether
from tests.update.test_update_regions import END, GEN, START, agent

AGENT = "agents/reviewer.md"


def release(shelf, version, agent_text, agent_class="owned"):
    regions = [
        {
            "id": "remit",
            "startMarker": START,
            "endMarker": END,
            "paths": [AGENT],
            "regenerate": {"interpreter": "bash", "operand": "scripts/gen.sh", "args": []},
        }
    ]
    files = {AGENT: agent_text, "scripts/gen.sh": GEN, "roster.txt": "default remit\n"}
    classes = {AGENT: agent_class, "scripts/gen.sh": "owned"}
    return make_release(shelf, version, files, classes, extra={"regions": regions})


def regenerated_project(tmp_path, agent_class="owned"):
    """Installed 1.0.0, the adopter's roster changed, then updated to 2.0.0: the update
    rewrote the agent file's region body from the adopter's roster."""
    shelf = tmp_path / "rel"
    release(shelf, "1.0.0", agent("# Reviewer\n", "default remit\n"), agent_class)
    v2 = release(shelf, "2.0.0", agent("# Reviewer v2\n", "default remit\n"), agent_class)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "roster.txt").write_text("our remit: review all of src/\n")
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["regenerated"][0]["status"] == "regenerated"
    regenerated = (project / AGENT).read_bytes()
    assert b"our remit" in regenerated and regenerated != (v2 / AGENT).read_bytes()
    return project


def status(project, *args):
    result = run_tether("status", "--json", "-C", str(project), *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def check(project, *args):
    result = run_tether("check", "--json", "-C", str(project), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_regenerated_region_is_no_drift(tmp_path):
    project = regenerated_project(tmp_path)
    doc = status(project)
    # the roster is the adopter's own edit (a shared file); the agent file is clean
    assert (doc["modified"], doc["modified_owned"], doc["clean"]) == (["roster.txt"], [], 2)
    code, doc = check(project)
    assert (code, doc["reasons"]) == (0, [])
    human = run_tether("check", "-C", str(project))
    assert human.returncode == 0 and "clean" in human.stdout


def test_a_shared_region_file_regenerated_is_clean(tmp_path):
    project = regenerated_project(tmp_path, agent_class="shared")
    assert status(project)["modified"] == ["roster.txt"]


def test_an_edit_outside_the_region_is_still_owned_drift(tmp_path):
    project = regenerated_project(tmp_path)
    path = project / AGENT
    path.write_text(path.read_text().replace("Be brief.", "Be thorough."))
    doc = status(project)
    assert (doc["modified"], doc["modified_owned"]) == ([AGENT, "roster.txt"], [AGENT])
    code, doc = check(project)
    assert (code, doc["reasons"]) == (3, ["owned-drift"])


def test_malformed_markers_compare_the_whole_file(tmp_path):
    project = regenerated_project(tmp_path)
    path = project / AGENT
    path.write_text(path.read_text() + END + "\n")  # a second end marker
    assert check(project)[0] == 3


def test_no_regions_flag_compares_whole_files(tmp_path):
    project = regenerated_project(tmp_path)
    assert status(project, "--no-regions")["modified_owned"] == [AGENT]
    assert check(project, "--no-regions")[0] == 3
    assert check(project)[0] == 0  # the switch holds for one run only


def test_no_regions_environment_variable_compares_whole_files(tmp_path, monkeypatch):
    project = regenerated_project(tmp_path)
    monkeypatch.setenv("TETHER_NO_REGIONS", "1")
    assert status(project)["modified_owned"] == [AGENT]
    assert check(project)[0] == 3
    monkeypatch.setenv("TETHER_NO_REGIONS", "0")
    assert check(project)[0] == 0


def offline_project(tmp_path):
    """Installed, then the pristine cache and the source both gone (a fresh clone with no
    way to fetch): only the project's own copy of the installed manifest is left."""
    shelf = tmp_path / "rel"
    release(shelf, "1.0.0", agent("# Reviewer\n", "default remit\n"))
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    shutil.rmtree(project / ".tether/cache")
    shutil.rmtree(shelf)
    return project, shelf


def test_files_equal_to_their_record_are_clean_offline(tmp_path):
    project, _ = offline_project(tmp_path)
    code, doc = check(project)
    assert (code, doc["clean"]) == (0, 3)


def test_a_differing_file_outside_any_region_is_judged_offline(tmp_path):
    # The region declarations come from the project's copy of the installed manifest.
    project, _ = offline_project(tmp_path)
    (project / "scripts/gen.sh").write_text("echo edited\n")
    code, doc = check(project)
    assert (code, doc["modified_owned"]) == (3, ["scripts/gen.sh"])


def test_a_tampered_manifest_copy_is_not_trusted(tmp_path):
    project, shelf = offline_project(tmp_path)
    copy = project / ".tether/manifest.json"
    copy.write_text(copy.read_text().replace('"remit"', '"other"'))
    (project / "scripts/gen.sh").write_text("echo edited\n")
    result = run_tether("check", "-C", str(project))
    assert result.returncode == 1 and str(shelf) in result.stderr


def test_a_differing_region_file_needs_the_baseline_bytes(tmp_path):
    project, shelf = offline_project(tmp_path)
    path = project / AGENT
    path.write_text(path.read_text().replace("default remit", "regenerated remit"))
    result = run_tether("check", "-C", str(project))
    assert result.returncode == 1 and str(shelf) in result.stderr
    assert "Traceback" not in result.stderr
