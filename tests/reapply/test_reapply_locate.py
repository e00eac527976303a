"""tether reapply without --patches: the patches are looked for where GSD's installer leaves
them, in GSD's order, and gsd-pristine/ beside them is the default pristine folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders import schema_validator
from reapply_builders import EXECUTE, HELP, PLANNER, cli, make_gsd, standard, statuses
from tether.cli import main as cli_main
from tether.flows.reapply import PATCHES_FOLDER, candidate_places

VARIABLES = (
    "KILO_CONFIG_DIR", "KILO_CONFIG", "XDG_CONFIG_HOME", "OPENCODE_CONFIG_DIR",
    "OPENCODE_CONFIG", "GEMINI_CONFIG_DIR", "CODEX_HOME", "CLAUDE_CONFIG_DIR",
)  # fmt: skip


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home and a working directory of our own, no runtime variable set."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = cli(*argv, "--json")
    return code, json.loads(capsys.readouterr().out)


def test_places_are_tried_in_gsd_order() -> None:
    env = {
        "HOME": "/h",
        "KILO_CONFIG": "/k/kilo.json",  # the first kilo variable set wins
        "XDG_CONFIG_HOME": "/x",
        "OPENCODE_CONFIG_DIR": "~/oc",
        "GEMINI_CONFIG_DIR": "/g",
        "CODEX_HOME": "/c",
        "CLAUDE_CONFIG_DIR": "/cl",
    }
    places = candidate_places(env, Path("/w"))
    got = [(str(p.folder.parent), p.source) for p in places]
    assert got == [
        ("/k", "KILO_CONFIG"),
        ("/h/oc", "OPENCODE_CONFIG_DIR"),
        ("/g", "GEMINI_CONFIG_DIR"),
        ("/c", "CODEX_HOME"),
        ("/cl", "CLAUDE_CONFIG_DIR"),
        ("/h/.config/kilo", "global"),
        ("/h/.config/opencode", "global"),
        ("/h/.opencode", "global"),
        ("/h/.gemini", "global"),
        ("/h/.codex", "global"),
        ("/h/.claude", "global"),
        ("/w/.config/kilo", "local"),
        ("/w/.kilo", "local"),
        ("/w/.config/opencode", "local"),
        ("/w/.opencode", "local"),
        ("/w/.gemini", "local"),
        ("/w/.codex", "local"),
        ("/w/.claude", "local"),
    ]
    assert all(p.folder.name == PATCHES_FOLDER for p in places)
    xdg = candidate_places({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, Path("/w"))
    assert [str(p.folder.parent) for p in xdg[:2]] == ["/x/kilo", "/x/opencode"]


def test_found_through_the_runtime_variable_and_reported(
    world: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(world)
    # An earlier place with a folder but no backup-meta.json is passed over.
    (world / "home/.config/kilo" / PATCHES_FOLDER).mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(gsd.target))
    code, doc = run_json(capsys, "-C", str(gsd.target), "--dry-run")
    assert code == 4
    assert doc["patches_dir"] == str(gsd.patches)
    assert doc["patches_source"] == "CLAUDE_CONFIG_DIR"
    assert str(gsd.patches) in doc["searched"]  # type: ignore[operator]
    capsys.readouterr()
    cli("-C", str(gsd.target), "--dry-run")
    assert "patches found via CLAUDE_CONFIG_DIR" in capsys.readouterr().out


def test_global_then_local_install_fallbacks(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(world / "build", {EXECUTE: ("a\n", "a\nmine\n", "b\n")}, pristine=False)
    local = world / "work/.codex"
    shutil.copytree(gsd.target, local)
    code, doc = run_json(capsys, "--dry-run")
    assert code == 4  # no baseline: the file is a conflict
    assert (doc["patches_source"], doc["patches_dir"]) == ("local", str(local / PATCHES_FOLDER))
    assert doc["project_dir"] == str(local)  # the install the patches belong to
    home = world / "home/.gemini"
    shutil.copytree(gsd.target, home)
    _, doc = run_json(capsys, "--dry-run")
    assert (doc["patches_source"], doc["patches_dir"]) == ("global", str(home / PATCHES_FOLDER))
    assert doc["project_dir"] == str(home)


def test_found_patches_go_into_the_install_beside_them_never_another(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """~/.claude's patches are never merged into a project's own .claude: -C naming another
    install is refused with nothing written; naming the patches says it is meant."""
    gsd = make_gsd(world / "home", {EXECUTE: ("a\n", "a\nmine\n", "b\n")}, pristine=False)
    gsd.target.rename(world / "home/.claude")
    project = world / "work/.claude"
    project.mkdir(parents=True)
    (project / "get-shit-done/workflows").mkdir(parents=True)
    (project / EXECUTE).write_text("the project's own\n")
    assert cli_main.main(["reapply", "-C", str(project), "--auto", "keep-mine"]) == 1
    err = capsys.readouterr().err
    assert "belong to the install at" in err and str(world / "home/.claude") in err
    assert (project / EXECUTE).read_text() == "the project's own\n"
    assert not (project / ".tether").exists()
    # without -C the install they belong to is the target
    code, doc = run_json(capsys, "--auto", "keep-mine")
    assert code == 0 and doc["project_dir"] == str(world / "home/.claude")
    assert (world / "home/.claude" / EXECUTE).read_text() == "a\nmine\n"
    assert (project / EXECUTE).read_text() == "the project's own\n"


def test_named_patches_into_another_install_are_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path / "a", {EXECUTE: ("a\n", "a\nmine\n", "b\n")}, pristine=False)
    other = tmp_path / "other"
    shutil.copytree(gsd.target, other, ignore=shutil.ignore_patterns(PATCHES_FOLDER))
    code, doc = run_json(capsys, "--patches", str(gsd.patches), "-C", str(other), "--dry-run")
    assert code == 4 and doc["project_dir"] == str(other)


def test_a_folder_of_saves_needs_the_install_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {EXECUTE: ("a\n", "a\nmine\n", "b\n")}, pristine=False)
    saves = tmp_path / "saves"
    shutil.copytree(gsd.patches, saves / "20250101T000000000000Z-abcdef")
    assert cli_main.main(["reapply", "--patches", str(saves)]) == 2
    assert "-C DIR" in capsys.readouterr().err


def test_no_patches_anywhere_is_nothing_to_reapply_exit_0(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = world / "claude"
    target.mkdir()
    code, doc = run_json(capsys, "-C", str(target))
    assert code == 0
    assert doc["patches_dir"] is None and doc["results"] == [] and doc["checked"] == 0
    schema_validator("reapply").validate(doc)
    assert str(world / "home/.claude" / PATCHES_FOLDER) in doc["searched"]  # type: ignore[operator]
    capsys.readouterr()
    assert cli("-C", str(target)) == 0
    out = capsys.readouterr().out
    assert "Nothing to reapply" in out and str(world / "work/.claude") in out
    assert not (target / ".tether").exists()  # nothing written


def test_a_patches_folder_without_metadata_is_refused_naming_every_place(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = world / "claude"
    target.mkdir()
    (world / "home/.claude" / PATCHES_FOLDER).mkdir(parents=True)
    assert cli_main.main(["reapply", "-C", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tether: ") and "backup-meta.json" in err
    assert str(world / "work/.kilo" / PATCHES_FOLDER) in err  # the list of places searched


def test_gsd_pristine_beside_the_patches_is_used_without_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    argv = ("--patches", str(gsd.patches), "-C", str(gsd.target), "--dry-run")
    _, before = run_json(capsys, *argv)
    assert set(statuses(before).values()) == {"conflict"}  # no baseline: three conflicts
    beside = gsd.patches.parent / "gsd-pristine"
    shutil.move(gsd.pristine, beside)
    code, doc = run_json(capsys, *argv)
    assert statuses(doc) == {PLANNER: "merged", EXECUTE: "conflict", HELP: "incorporated"}
    assert doc["pristine_dir"] == str(beside)
    assert code == 4
