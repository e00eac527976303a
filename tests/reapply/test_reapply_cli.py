"""tether reapply on the command line: --save (a new folder every run), usage errors, the
human summary, and the command wired through the main entry point."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from reapply_builders import (
    EXECUTE,
    HELP,
    MANIFEST,
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    cli,
    install_manifest,
    make_gsd,
    standard,
    write,
)
from tether.cli import main as cli_main


def saved_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def customised_install(tmp_path: Path) -> Path:
    """An install of 1.0.0 whose planner the user changed, not yet upgraded."""
    target = tmp_path / "claude"
    files = {PLANNER: PLANNER_V1, HELP: "# Help\n"}
    write(target, files)
    install_manifest(target, "1.0.0", files)
    write(target, {PLANNER: PLANNER_OURS})
    return target


def save(target: Path, patches: Path, *extra: str) -> int:
    return cli(
        "--save", "-C", str(target), "--manifest", str(target / MANIFEST),
        "--patches", str(patches), *extra,
    )  # fmt: skip


def test_save_twice_gives_two_folders_and_never_touches_the_first(tmp_path: Path) -> None:
    target = customised_install(tmp_path)
    patches = tmp_path / "saved"
    assert save(target, patches) == 0
    [first] = saved_folders(patches)
    first_bytes = {p: p.read_bytes() for p in first.rglob("*") if p.is_file()}
    write(target, {PLANNER: PLANNER_OURS + "another edit\n"})
    time.sleep(0.001)
    assert save(target, patches) == 0
    folders = saved_folders(patches)
    assert len(folders) == 2 and folders[0] == first
    assert {p: p.read_bytes() for p in first.rglob("*") if p.is_file()} == first_bytes
    assert (folders[1] / PLANNER).read_text().endswith("another edit\n")


def test_saved_folder_has_the_gsd_backup_shape(tmp_path: Path) -> None:
    target = customised_install(tmp_path)
    patches = tmp_path / "saved"
    assert save(target, patches) == 0
    [folder] = saved_folders(patches)
    meta = json.loads((folder / "backup-meta.json").read_text())
    assert set(meta) == {
        "backed_up_at", "from_version", "from_manifest_timestamp", "files", "pristine_hashes"
    }  # fmt: skip
    manifest = json.loads((target / MANIFEST).read_text())
    assert meta["files"] == [PLANNER]  # the help page is unchanged: not saved
    assert meta["pristine_hashes"] == {PLANNER: manifest["files"][PLANNER]}
    assert meta["from_version"] == "1.0.0"
    assert meta["from_manifest_timestamp"] == manifest["timestamp"]
    assert (folder / PLANNER).read_text() == PLANNER_OURS


def test_save_with_nothing_customised_writes_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = customised_install(tmp_path)
    write(target, {PLANNER: PLANNER_V1})
    patches = tmp_path / "saved"
    capsys.readouterr()
    assert save(target, patches, "--json") == 0
    assert json.loads(capsys.readouterr().out)["saved"] is None
    assert not patches.exists() or saved_folders(patches) == []


def test_save_upgrade_reapply_round_trip_picks_the_newest_save(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = customised_install(tmp_path)
    patches = tmp_path / "saved"
    pristine = tmp_path / "pristine"
    write(pristine, {PLANNER: PLANNER_V1})
    write(target, {PLANNER: "an older customisation\n"})
    assert save(target, patches) == 0
    write(target, {PLANNER: PLANNER_OURS})
    time.sleep(0.001)
    assert save(target, patches) == 0
    write(target, {PLANNER: PLANNER_V2})  # the new release is installed
    capsys.readouterr()
    code = cli("--patches", str(patches), "-C", str(target), "--pristine", str(pristine))
    assert code == 0
    assert (target / PLANNER).read_text() == PLANNER_MERGED
    out = capsys.readouterr().out
    assert "1 merged" in out and str(saved_folders(patches)[-1]) in out


def test_interrupted_save_is_never_taken_for_a_backup(tmp_path: Path) -> None:
    target = customised_install(tmp_path)
    patches = tmp_path / "saved"
    assert save(target, patches) == 0
    [complete] = saved_folders(patches)
    partial = patches / ".partial-29990101T000000000000Z-abcdef"
    write(partial, {"backup-meta.json": json.dumps({"files": [], "pristine_hashes": {}})})
    from tether.flows.reapply import find_patch_set

    assert find_patch_set(patches) == complete


def test_human_summary_lists_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    capsys.readouterr()
    code = cli("--patches", str(gsd.patches), "-C", str(gsd.target), "--pristine",
               str(gsd.pristine))  # fmt: skip
    out = capsys.readouterr().out
    assert code == 4
    assert "1 merged, 1 incorporated, 1 conflict" in out
    assert f"conflict      {EXECUTE}" in out
    assert "installed versions backed up in" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--save", "-C", "t", "--patches", "p"],
        ["-C", "t", "--patches", "p", "--manifest", "m"],
        ["-C", "t", "--patches", "p", "--baseline-source", "s"],
        ["-C", "t", "--patches", "p", "--git", "g", "--no-git"],
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main.main(["reapply", *argv]) == 2
    assert "tether: " in capsys.readouterr().err


def test_through_the_main_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    argv = ["reapply", "--patches", str(gsd.patches), "-C", str(gsd.target)]
    capsys.readouterr()
    assert cli_main.main([*argv, "--pristine", str(gsd.pristine), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0]["status"] == "merged"
    # a missing target is a one-line error, exit 1
    assert cli_main.main(["reapply", "--patches", str(gsd.patches), "-C", "nowhere"]) == 1
    assert "not a directory" in capsys.readouterr().err


def test_the_summary_closes_with_the_files_updated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path / "a")
    argv = ["--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    assert cli(*argv, "--dry-run") == 4
    last = capsys.readouterr().out.splitlines()[-1]
    assert (
        last
        == "1 file(s) would be updated; 1 file(s) still need you (conflicts or failures above)."
    )
    assert cli(*argv, "--auto", "keep-mine") == 0  # the planner merged, the workflow kept
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "2 file(s) updated. Your local modifications are active again."
