"""Hostile release lifecycles (docs/lifecycle.md, docs/security.md): what a release's lifecycle
steps may run and write. A release runs no program in a dry run or under --no-programs, names
none of tether's own paths, prints nothing raw to the terminal, writes nothing it has not
listed and backed up, and cannot steer a write through a link a program made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether, tree_digest

BASE = {"app.txt": "one\n"}


def shelf_with(tmp_path: Path, lifecycle: dict[str, object], files: dict[str, str]) -> Path:
    """Releases 1.0.0 (plain) and 2.0.0 (``files`` added, ``lifecycle`` declared)."""
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", BASE)
    make_release(shelf, "2.0.0", {"app.txt": "two\n", **files}, extra=lifecycle)
    return shelf


def installed(tmp_path: Path, shelf: Path, mine: dict[str, str] | None = None) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", str(project)) == 0
    for rel, text in (mine or {}).items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


def project_files(project: Path) -> dict[str, bytes]:
    """The project and tether's records, without the lock and the release cache."""
    return {
        rel: data
        for rel, data in tree_digest(project).items()
        if not rel.startswith((".tether/lock", ".tether/cache", ".git/"))
    }


# --- item 4: every lifecycle path obeys the reserved-path rule, at manifest load ------------


@pytest.mark.parametrize(
    ("lifecycle", "where"),
    [
        (
            {"post_update": [{"file": ".tether/state.json", "set": {"source": "evil"}}]},
            "post_update[0].file: '.tether/state.json'",
        ),
        (
            {"templates": [{"target": ".tether/state.json", "template": "t.tmpl"}]},
            "templates[0].target: '.tether/state.json'",
        ),
        (
            {"templates": [{"target": ".TETHER/journal.jsonl", "template": "t.tmpl"}]},
            "templates[0].target: '.TETHER/journal.jsonl'",
        ),
        (
            {"ownership": [{"paths": [".tether/lock"], "when": {"exists": "app.txt"}}]},
            "ownership[0].paths: '.tether/lock'",
        ),
        (
            {
                "notices": [
                    {"id": "n", "when": {"file": ".tether/state.json", "matches": "x"}, "text": "t"}
                ]
            },
            "notices[0] (n).when.file: '.tether/state.json'",
        ),
        (
            {"post_update": [{"file": ".git/config", "set": {"a": 1}}]},
            "post_update[0].file: '.git/config'",
        ),
    ],
)
def test_a_lifecycle_path_in_tethers_records_is_refused_at_manifest_load(
    tmp_path, lifecycle, where
):
    shelf = shelf_with(tmp_path, lifecycle, {"t.tmpl": "x\n"})
    project = installed(tmp_path, shelf)
    before = project_files(project)
    for args in (("--dry-run",), ("--yes", "--no-branch")):
        result = run_tether("update", *args, "-C", str(project))
        assert result.returncode == 1, result.stdout
        manifest = shelf / "2.0.0/.tether/manifest.json"
        assert result.stderr.startswith(f"tether: {manifest}: {where}: "), result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert project_files(project) == before
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["source"] == str(shelf) and state["version"] == "1.0.0"


def test_manifest_build_refuses_a_post_update_on_tethers_state(tmp_path, capsys):
    from builders import write_files

    repo = tmp_path / "upstream"
    config = (
        'name = "kit"\nversion = "2.0.0"\n\n[[post_update]]\nfile = ".tether/state.json"\n'
        'set = { source = "https://evil.example/kit.tar.gz" }\n'
    )
    write_files(repo, {"app.txt": "x\n", "tether.toml": config})
    assert call("manifest", "build", "-C", str(repo)) == 1
    err = capsys.readouterr().err
    assert "tether.toml: post_update[0].file: '.tether/state.json': path is reserved" in err
    assert err.count("\n") == 1
    assert not (repo / ".tether/manifest.json").exists()
