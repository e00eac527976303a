"""The projects registry and ``tether projects``: real files in tmp dirs, read-only commands
byte-identical afterwards, writers atomic and keeping what they do not understand."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from builders import call, make_release
from tether.report.projects import NOT_TETHERED_NOTE, install_summary
from tether.runs.projects import InstallFound, install_found
from tether.runs.registry import registry_path

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
EMPTY = "No projects registered. Use tether projects add to register one."

# Every command that only reads the registry; each must leave it byte for byte as it was.
READ_ONLY = [
    ["projects", "list"],
    ["projects", "list", "--json"],
    ["projects", "show", "alpha"],
    ["fleet", "status"],
    ["fleet", "status", "--json", "--jobs", "2"],
    ["fleet", "update", "--dry-run"],
    ["fleet", "update", "--dry-run", "--json", "--projects", "alpha,nope"],
    ["fleet", "update", "--yes", "--keyword", "no-such-keyword"],
]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default registry location under a private XDG config home (TETHER_REGISTRY unset)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TETHER_REGISTRY", raising=False)
    return tmp_path / "config" / "tether" / "projects.json"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def project(tmp_path: Path, name: str) -> Path:
    shelf = tmp_path / "rel"
    if not shelf.exists():
        make_release(shelf, "1.0.0", {"a.txt": "a\n"})
        make_release(shelf, "1.1.0", {"a.txt": "a2\n"})
    root = tmp_path / name
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    return root


def test_paths_follow_flag_then_env_then_xdg(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "c"), "TETHER_REGISTRY": str(tmp_path / "e.json")}
    assert registry_path(str(tmp_path / "f.json"), env) == tmp_path / "f.json"
    assert registry_path(None, env) == tmp_path / "e.json"
    assert registry_path(None, {"XDG_CONFIG_HOME": str(tmp_path / "c")}) == (
        tmp_path / "c" / "tether" / "projects.json"
    )
    relative = registry_path(None, {"XDG_CONFIG_HOME": "relative/ignored"})
    assert relative == Path.home() / ".config" / "tether" / "projects.json"


def test_missing_registry_is_empty_and_never_created(registry: Path, capsys) -> None:
    for command in READ_ONLY:
        assert call(*command) == (1 if command[1] == "show" else 0), command
        out = capsys.readouterr().out
        if "--json" in command:
            assert json.loads(out)["projects"] == []
        elif command[1] != "show":
            assert EMPTY in out, command
    assert not registry.exists() and not registry.parent.exists()


def test_show_unknown_name_is_an_error(registry: Path, capsys) -> None:
    assert call("projects", "show", "ghost") == 1
    assert "no project named 'ghost'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ('{"version": 2, "projects": {}}\n', 0, EMPTY),
        ('{"version": 2, "projects": null}\n', 0, EMPTY),
        ('{"version": 0, "projects": {}}\n', 0, EMPTY),
        ('{\n  "version": 3,\n  "projects": {}\n}', 1, "unsupported registry version: 3"),
        ('{"version": 2, "projects": {', 1, "registry file is not valid JSON"),
        ("", 1, "registry file is not valid JSON"),
        ('{"version": true}', 1, "unsupported registry version: true"),
        ('{"version": 2, "projects": []}', 1, "registry file is malformed"),
    ],
    ids=[
        "empty-projects",
        "null-projects",
        "version-0",
        "version-3",
        "invalid-json",
        "empty-file",
        "bool-version",
        "list",
    ],
)
def test_odd_registries_are_left_byte_identical(
    registry: Path, capsys, content: str, code: int, message: str
) -> None:
    registry.parent.mkdir(parents=True)
    registry.write_text(content)
    before = digest(registry)
    for command in READ_ONLY:
        if command[1] == "show" and code == 0:
            continue  # an empty registry has no "alpha" to show
        got = call(*command)
        captured = capsys.readouterr()
        assert got == code, (command, captured.err)
        where = captured.err if code else captured.out
        if not (code == 0 and "--json" in command):
            assert message in where, (command, where)
        assert "Traceback" not in captured.err
    assert digest(registry) == before
    if code:  # a writer refuses just the same and writes nothing
        assert call("projects", "add", str(registry.parent)) == code
        assert message in capsys.readouterr().err
        assert digest(registry) == before


def test_v1_records_pass_through_a_write_unchanged(registry: Path, tmp_path: Path, capsys) -> None:
    old = {
        "name": "old",
        "path": str(tmp_path / "old"),
        "keywords": ["legacy"],
        "description": "from v1",
        "createdAt": "2020-01-01T00:00:00.000Z",
        "updatedAt": "2020-01-01T00:00:00.000Z",
        "owner": "someone else's field",
    }
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"version": 1, "theme": "dark", "projects": {"old": old}}))
    before = digest(registry)
    assert call("projects", "list") == 0
    assert call("fleet", "status") == 0
    out = capsys.readouterr().out
    assert "No selectable projects after path-drift filtering.\n- old — " in out
    assert digest(registry) == before
    new = project(tmp_path, "new")
    assert call("projects", "add", str(new), "--keyword", "web,api", "--keyword", "web") == 0
    doc = json.loads(registry.read_text())
    assert doc["version"] == 2 and doc["theme"] == "dark"
    assert list(doc["projects"]) == ["old", "new"]
    assert doc["projects"]["old"] == old
    added = doc["projects"]["new"]
    assert added["path"] == str(new.resolve()) and added["keywords"] == ["web", "api"]
    assert ISO_UTC.match(added["createdAt"]) and added["updatedAt"] == added["createdAt"]
    assert "repoType" not in added


def test_add_list_show_remove(registry: Path, tmp_path: Path, capsys) -> None:
    alpha, beta = project(tmp_path, "alpha"), project(tmp_path, "beta")
    assert call("projects", "add", str(alpha), "--description", "first one") == 0
    assert call("projects", "add", str(beta), "--name", "b", "--keyword", "web") == 0
    capsys.readouterr()
    written = digest(registry)
    # Duplicates are refused and change nothing.
    assert call("projects", "add", str(beta), "--name", "alpha") == 1
    assert "already registered" in capsys.readouterr().err
    assert call("projects", "add", str(beta), "--name", "other") == 1
    assert "already registered as 'b'" in capsys.readouterr().err
    assert call("projects", "add", str(tmp_path / "nowhere")) == 1
    assert call("projects", "add", str(alpha), "--name", "a,b") == 2
    assert digest(registry) == written
    assert call("projects", "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)["projects"]
    assert [p["name"] for p in listed] == ["alpha", "b"]
    assert listed[0]["description"] == "first one" and listed[1]["keywords"] == ["web"]
    assert call("projects", "show", "b") == 0
    out = capsys.readouterr().out
    assert "acme-kit 1.0.0 (native profile)" in out and str(beta) in out
    assert call("projects", "list") == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[:2] == ["| name | path | keywords | description |", "|---|---|---|---|"]
    assert rows[2:] == [f"| alpha | {alpha} |  | first one |", f"| b | {beta} | web |  |"]
    assert call("projects", "remove", "alpha") == 0
    assert capsys.readouterr().out == f"unregistered alpha ({alpha}); its files are untouched\n"
    assert call("projects", "remove", "alpha") == 1
    assert list(json.loads(registry.read_text())["projects"]) == ["b"]
    assert alpha.is_dir()  # unregistering never touches the project
    assert [p.name for p in registry.parent.iterdir()] == ["projects.json"]  # no temp files


def test_add_notes_a_folder_without_tether(registry: Path, tmp_path: Path, capsys) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert call("projects", "add", str(plain)) == 0
    assert "no tether install there yet" in capsys.readouterr().out


def test_selection_filters_and_missing_paths(registry: Path, tmp_path: Path, capsys) -> None:
    alpha, beta = project(tmp_path, "alpha"), project(tmp_path, "beta")
    plain = tmp_path / "plain"
    plain.mkdir()
    gone = project(tmp_path, "gone")
    for path, words in ((alpha, "web"), (beta, "api"), (plain, "web"), (gone, "web")):
        assert call("projects", "add", str(path), "--keyword", words) == 0
    for child in sorted(gone.rglob("*"), reverse=True):
        child.unlink() if not child.is_dir() or child.is_symlink() else child.rmdir()
    gone.rmdir()
    capsys.readouterr()
    before = digest(registry)

    assert call("fleet", "status", "--projects", "beta,zeta", "--projects", "yota") == 1
    out, err = capsys.readouterr()
    assert out == "" and "not in the registry: zeta, yota" in err  # nothing runs on a typo

    assert call("fleet", "status", "--projects", "beta") == 0
    out = capsys.readouterr().out
    assert "| beta |" in out and "| alpha |" not in out

    assert call("fleet", "status", "--keyword", "WEB", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in doc["projects"]] == ["alpha"]
    assert [p["name"] for p in doc["skipped_path_missing"]] == ["gone"]
    assert [p["name"] for p in doc["skipped_not_tethered"]] == ["plain"]
    assert (
        doc["projects"][0]["latest_version"] == "1.1.0" and doc["projects"][0]["update_available"]
    )

    assert call("fleet", "update", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "## Skipped (path missing) (1)\n- gone: " in out
    assert "## Skipped (not tethered) (1)\n- plain: " in out
    assert "## Pending projects (2)" in out and "## Applied projects" not in out
    assert "## Isolation: branch (dry run: nothing created)" in out
    assert "## Suggested next steps" in out
    assert digest(registry) == before
    assert (alpha / "a.txt").read_text() == "a\n"  # a dry run writes no project


def test_version_0_records_are_read_normally(registry: Path, tmp_path: Path, capsys) -> None:
    alpha = project(tmp_path, "alpha")
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"version": 0, "projects": {"alpha": {"path": str(alpha)}}}))
    capsys.readouterr()
    before = digest(registry)
    assert call("projects", "list", "--json") == 0
    assert [p["name"] for p in json.loads(capsys.readouterr().out)["projects"]] == ["alpha"]
    assert digest(registry) == before


DRIFTED = ["fleet", "status"], ["fleet", "update", "--yes"], ["deps", "plan", "--level", "minor"]


@pytest.mark.parametrize("command", DRIFTED, ids=lambda c: " ".join(c[:2]))
def test_every_path_drifted_prints_the_drift_and_exits_0(
    registry: Path, tmp_path: Path, capsys, command: list[str]
) -> None:
    # A file where a project folder was is drift too: the path must be a directory.
    now_a_file = tmp_path / "now-a-file"
    now_a_file.write_text("not a project\n")
    gone = tmp_path / "gone"
    projects = {"filed": {"path": str(now_a_file)}, "gone": {"path": str(gone)}}
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"version": 2, "projects": projects}))
    before = digest(registry)

    assert call(*command) == 0
    out = capsys.readouterr().out
    assert out == (
        "No selectable projects after path-drift filtering.\n"
        f"- filed — {now_a_file}\n- gone — {gone}\n"
    )
    assert call(*command, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert "message" not in doc  # the command's own document, with no project in it
    skipped = doc["summary"] if command[1] == "update" else doc
    assert skipped["skipped_path_missing"] == [
        {"name": "filed", "project_dir": str(now_a_file)},
        {"name": "gone", "project_dir": str(gone)},
    ]
    assert doc["packages" if command[0] == "deps" else "projects"] == []
    assert digest(registry) == before
    assert not (tmp_path / "state").exists()  # no run folder for a run that did not start


def test_what_show_finds_installed_is_a_fact_the_report_words(
    registry: Path, tmp_path: Path, capsys
) -> None:
    """Installed, nothing installed, folder gone: found in runs/projects.py, worded in
    report/projects.py, the document's ``tether`` carrying the words."""
    root = project(tmp_path, "alpha")
    plain = tmp_path / "plain"
    plain.mkdir()
    found = install_found(root)
    assert found == InstallFound(
        "installed", upstream="acme-kit", version="1.0.0", profile="native"
    )
    assert install_summary(found) == "acme-kit 1.0.0 (native profile)"
    bare = install_found(plain)
    assert bare.state == "not-tethered" and bare.error
    assert install_summary(bare) == f"not tethered ({bare.error})"
    assert install_found(tmp_path / "gone") == InstallFound("path-missing")
    assert install_summary(InstallFound("path-missing")) == "path missing"
    capsys.readouterr()
    assert call("projects", "add", str(plain), "--json") == 0
    assert json.loads(capsys.readouterr().out)["note"] == NOT_TETHERED_NOTE
    assert call("projects", "show", "plain", "--json") == 0
    assert json.loads(capsys.readouterr().out)["tether"] == install_summary(bare)
