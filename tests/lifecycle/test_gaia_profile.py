"""GAIA-shaped projects: detection, init writing GAIA's markers, status against a release
tether did not install."""

import json

from builders import call, make_release, run_tether, write_files

FILES = {
    "wiki/index.md": "# index\n",
    "agents/auditor.md": "auditor v1\n",
    ".gaia/scripts/gen.sh": "#!/bin/sh\n",
}
CLASSES = {
    "wiki/index.md": "wiki-owned",
    "agents/auditor.md": "shared",
    ".gaia/scripts/gen.sh": "owned",
}
SENTINELS = {"wiki/hot.md": "hot\n", "wiki/log.md": "log\n", "CHANGELOG.md": "# c\n"}


def gaia_release(shelf, version, files=FILES):
    root = make_release(shelf, version, files, CLASSES, profile="gaia")
    write_files(root, SENTINELS)
    return root


def test_init_with_gaia_profile_writes_gaia_markers(tmp_path):
    shelf = tmp_path / "rel"
    gaia_release(shelf, "2.0.0")
    project = tmp_path / "proj"
    assert (
        call(
            "init", "--profile", "gaia", "--source", str(shelf), "--to", "2.0.0", "-C", str(project)
        )
        == 0
    )
    assert (project / ".gaia/VERSION").read_text() == "2.0.0\n"
    manifest = json.loads((project / ".gaia/manifest.json").read_text())
    assert manifest["files"]["wiki/index.md"] == "wiki-owned"
    assert (project / "wiki/hot.md").read_text() == "hot\n"  # sentinel seeded once
    assert not (project / ".tether").exists()
    assert ".gaia-backup/" in (project / ".gitignore").read_text()
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["profile"] == "gaia"
    assert status["installed_version"] == "2.0.0"


def test_status_of_gaia_project_tether_did_not_install(tmp_path):
    shelf = tmp_path / "rel"
    root = gaia_release(shelf, "2.0.0")
    project = tmp_path / "proj"
    write_files(project, {p: (root / p).read_bytes() for p in FILES})
    write_files(
        project,
        {
            ".gaia/VERSION": "2.0.0\n",
            ".gaia/manifest.json": (root / ".gaia/manifest.json").read_bytes(),
        },
    )
    write_files(project, {"wiki/hot.md": "my hot list\n", "agents/auditor.md": "auditor mine\n"})
    result = run_tether("status", "--json", "--source", str(shelf), "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["profile"] == "gaia"
    assert doc["modified"] == ["agents/auditor.md"]  # sentinels are never compared
    assert doc["clean"] == 2
    # without a source tether says what it needs
    result = run_tether("status", "-C", str(project))
    assert result.returncode == 1 and "--source" in result.stderr
    # an owned edit fails the check, a shared one does not
    assert call("check", "--source", str(shelf), "-C", str(project)) == 0
    (project / ".gaia/scripts/gen.sh").write_text("#!/bin/sh\necho hacked\n")
    assert call("check", "--source", str(shelf), "-C", str(project)) == 3


def test_forced_profile_and_unknown_profile(tmp_path):
    result = run_tether("status", "--profile", "nope", "-C", str(tmp_path))
    assert result.returncode == 2 and "unknown profile" in result.stderr


def test_uncommitted_gaia_update_is_reported_not_up_to_date(tmp_path):
    from builders import git

    shelf = tmp_path / "rel"
    gaia_release(shelf, "2.0.0")
    gaia_release(shelf, "2.1.0", {**FILES, "agents/auditor.md": "auditor v2\n"})
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q")
    assert (
        call(
            "init", "--profile", "gaia", "--source", str(shelf), "--to", "2.0.0", "-C", str(project)
        )
        == 0
    )
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert (project / ".gaia/VERSION").read_text() == "2.1.0\n"
    assert (project / ".gaia-backup").is_dir()
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert "up to date" not in result.stdout
    assert "the update to 2.1.0 is applied but not committed" in result.stdout
    assert ".gaia/VERSION says 2.1.0, the last commit has 2.0.0" in result.stdout
    assert "git checkout -- .gaia/VERSION" in result.stdout
    doc = json.loads(run_tether("update", "--yes", "--json", "-C", str(project)).stdout)
    assert doc["status"] == "not-committed"
    git(project, "add", "-A")
    git(project, "commit", "-qm", "update")
    result = run_tether("update", "--yes", "-C", str(project))
    assert "last commit" not in result.stdout
