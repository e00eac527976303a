import json
import os
import stat

import pytest

from builders import call, make_release, run_tether, tree_digest, write_files

V1 = {
    "docs/guide.md": "guide v1\n",
    "bin/lint.sh": "#!/bin/sh\necho lint\n",
    "cfg/app.yml": "a: 1\n",
}
CLASSES = {"bin/lint.sh": "owned"}


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", V1, CLASSES, sentinels={"CHANGELOG.md": "# log\n"})
    os.chmod(shelf / "1.0.0" / "bin/lint.sh", 0o755)
    make_release(shelf, "1.1.0", {**V1, "docs/guide.md": "guide v2\n"}, CLASSES)
    return shelf


def test_init_into_empty_dir_copies_files_and_records_state(tmp_path, shelf):
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    assert (project / "docs/guide.md").read_text() == "guide v1\n"
    assert stat.S_IMODE(os.stat(project / "bin/lint.sh").st_mode) == 0o755
    assert (project / "CHANGELOG.md").read_text() == "# log\n"  # sentinel seeded
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["version"] == "1.0.0"
    assert state["source"] == str(shelf)
    assert set(state["files"]) == set(V1)
    assert "cache/" in (project / ".tether/.gitignore").read_text()


def test_init_records_identical_and_customised_files(tmp_path, shelf):
    project = tmp_path / "proj"
    write_files(project, {"docs/guide.md": "my guide\n", "cfg/app.yml": "a: 1\n", "mine.txt": "x"})
    # --restore-missing: the project lacks bin/lint.sh (tests/flows/test_init_existing.py)
    result = run_tether(
        "init",
        "--source",
        str(shelf),
        "--to",
        "1.0.0",
        "--restore-missing",
        "--json",
        "-C",
        str(project),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["customised"] == ["docs/guide.md"]
    assert report["identical"] == ["cfg/app.yml"]
    assert sorted(report["added"]) == ["bin/lint.sh"]
    assert (project / "docs/guide.md").read_text() == "my guide\n"  # never overwritten
    assert (project / "mine.txt").read_text() == "x"
    # the baseline is the release's bytes, so the customised file shows as modified
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["modified"] == ["docs/guide.md"]
    assert status["clean"] == 2


def test_reinit_refused_without_force(tmp_path, shelf):
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    result = run_tether("init", "--source", str(shelf), "--to", "1.1.0", "-C", str(project))
    assert result.returncode == 1
    assert "already installed" in result.stderr and "--force" in result.stderr
    assert call("init", "--source", str(shelf), "--to", "1.1.0", "--force", "-C", str(project)) == 0


def test_status_clean_modified_deleted_and_latest(tmp_path, shelf):
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / "docs/guide.md").write_text("changed\n")
    (project / "cfg/app.yml").unlink()
    result = run_tether("status", "--json", "--check-latest", "-C", str(project))
    doc = json.loads(result.stdout)
    assert doc["profile"] == "native"
    assert doc["installed_version"] == "1.0.0"
    assert doc["latest_version"] == "1.1.0"
    assert doc["clean"] == 1
    assert doc["modified"] == ["docs/guide.md"]
    assert doc["deleted"] == ["cfg/app.yml"]
    plain = run_tether("status", "-C", str(project))
    assert "Modified (1)" in plain.stdout and "docs/guide.md" in plain.stdout


def test_check_exit_codes(tmp_path, shelf):
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert call("check", "-C", str(project)) == 0
    (project / "docs/guide.md").write_text("customised shared file\n")
    assert call("check", "-C", str(project)) == 0  # customising shared files is expected
    assert call("check", "--check-latest", "-C", str(project)) == 3
    (project / "bin/lint.sh").write_text("#!/bin/sh\nexit 0\n")
    result = run_tether("check", "--json", "-C", str(project))
    assert result.returncode == 3
    assert json.loads(result.stdout)["reasons"] == ["owned-drift"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--source", "ftp://example.invalid/x", "--to", "1.0.0"], "unknown source"),
        (["--source", "{shelf}", "--to", "9.9.9"], "9.9.9"),
        (["--source", "{tmp}/nope", "--to", "1.0.0"], "nope"),
    ],
)
def test_init_bad_input_writes_nothing(tmp_path, shelf, args, message):
    project = tmp_path / "proj"
    project.mkdir()
    args = [a.format(shelf=shelf, tmp=tmp_path) for a in args]
    result = run_tether("init", *args, "-C", str(project))
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(project.iterdir()) == []


def test_init_with_malformed_manifest_writes_nothing(tmp_path):
    shelf = tmp_path / "releases"
    write_files(
        shelf / "1.0.0",
        {"a.md": "x", ".tether/manifest.json": '{"schema_version": 1,"files":{"../a":"owned"}}'},
    )
    project = tmp_path / "proj"
    project.mkdir()
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert "manifest.json" in result.stderr and "'..'" in result.stderr
    assert tree_digest(project) == {}


def test_dir_that_is_a_file_and_broken_state(tmp_path, shelf):
    not_dir = tmp_path / "file"
    not_dir.write_text("x")
    result = run_tether("status", "-C", str(not_dir))
    assert result.returncode == 1 and "not a directory" in result.stderr
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / ".tether/state.json").write_text("{broken")
    result = run_tether("status", "-C", str(project))
    assert result.returncode == 1
    assert "state.json" in result.stderr and "does not parse" in result.stderr
    assert "Traceback" not in result.stderr


def test_usage_error_exit_2(tmp_path):
    result = run_tether("init", "--to", "1.0.0", "-C", str(tmp_path))
    assert result.returncode == 2


def test_help_lists_every_command():
    from tether.cli.main import COMMANDS

    result = run_tether("--help")
    assert result.returncode == 0
    for name in COMMANDS:
        assert name in result.stdout


def test_status_outside_a_project(tmp_path):
    result = run_tether("status", "-C", str(tmp_path))
    assert result.returncode == 1
    assert "tether init" in result.stderr


def test_every_command_module_is_registered():
    from pathlib import Path

    import tether.cli
    from tether.cli.main import COMMANDS

    modules = {p.stem for p in Path(tether.cli.__file__).parent.glob("*_cmd.py")}
    registered = {module.rsplit(".", 1)[-1] for module, _ in COMMANDS.values()}
    assert modules == registered
