"""The patch folder GSD's installer writes and the one ``tether reapply --save`` writes are
interchangeable, both ways: the same files with the same bytes and a ``backup-meta.json``
with the same fields, and each reapplies into the other's install with the same outcome."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    EXECUTE,
    EXECUTE_OURS,
    EXECUTE_V1,
    EXECUTE_V2,
    HELP,
    HELP_OURS,
    HELP_V1,
    HELP_V2,
    MANIFEST,
    PATCHES,
    PLANNER,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    cli,
    install_manifest,
    installer_backup,
    reapply_json,
    write,
)

V1 = {PLANNER: PLANNER_V1, EXECUTE: EXECUTE_V1, HELP: HELP_V1}
OURS = {PLANNER: PLANNER_OURS, EXECUTE: EXECUTE_OURS, HELP: HELP_OURS}
V2 = {PLANNER: PLANNER_V2, EXECUTE: EXECUTE_V2, HELP: HELP_V2}


def customised_install(root: Path) -> Path:
    target = root / "claude"
    write(target, V1)
    install_manifest(target, "1.0.0", V1)
    write(target, OURS)
    return target


def saved_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.name != "backup-meta.json"
    }


def meta(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "backup-meta.json").read_text())
    return data


def tree(target: Path) -> dict[str, bytes]:
    return {rel: (target / rel).read_bytes() for rel in V2}


@pytest.fixture
def both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path, Path]:
    """Two identical customised installs; one backed up by GSD's installer, the other by
    ``tether reapply --save``; then 2.0.0 installed over both."""
    gsd_target = customised_install(tmp_path / "gsd")
    installer_backup(gsd_target)
    gsd_patches = gsd_target / PATCHES
    tether_target = customised_install(tmp_path / "tether")
    saves = tmp_path / "tether" / "saves"
    manifest = str(tether_target / MANIFEST)
    assert cli("--save", "-C", str(tether_target), "--manifest", manifest,
               "--patches", str(saves)) == 0  # fmt: skip
    capsys.readouterr()
    [tether_patches] = list(saves.iterdir())
    for target in (gsd_target, tether_target):
        write(target, V2)
        install_manifest(target, "2.0.0", V2)
    pristine = tmp_path / "pristine"
    write(pristine, V1)
    return gsd_target, gsd_patches, tether_target, tether_patches


def test_save_writes_what_the_installer_writes(both: tuple[Path, Path, Path, Path]) -> None:
    _, gsd_patches, _, tether_patches = both
    assert saved_files(tether_patches) == saved_files(gsd_patches)
    ours, theirs = meta(tether_patches), meta(gsd_patches)
    assert set(ours) == set(theirs)
    for key in ("from_version", "from_manifest_timestamp", "files", "pristine_hashes"):
        assert ours[key] == theirs[key], key
    assert {type(v) for v in ours.values()} == {type(v) for v in theirs.values()}
    # GSD's own reader looks a file's hash up by its path, as the jq query in its workflow
    for rel in ours["files"]:
        assert len(ours["pristine_hashes"][rel]) == 64


def test_each_patch_folder_reapplies_into_the_other_install(
    both: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd_target, gsd_patches, tether_target, tether_patches = both
    pristine = str(tmp_path / "pristine")
    # tether's save into the install GSD backed up, GSD's folder into the other
    code_a, doc_a = reapply_json(
        capsys,
        "--patches",
        str(tether_patches),
        "-C",
        str(gsd_target),
        "--pristine",
        pristine,
    )
    code_b, doc_b = reapply_json(
        capsys,
        "--patches",
        str(gsd_patches),
        "-C",
        str(tether_target),
        "--pristine",
        pristine,
    )
    assert code_a == code_b == 4  # EXECUTE conflicts on both
    outcome_a = [(r["file"], r["status"], r["hunks"]) for r in doc_a["results"]]
    outcome_b = [(r["file"], r["status"], r["hunks"]) for r in doc_b["results"]]
    assert outcome_a == outcome_b
    assert {r["status"] for r in doc_a["results"]} == {"merged", "conflict", "incorporated"}
    assert tree(gsd_target) == tree(tether_target)


def test_a_gsd_folder_among_tether_saves_is_taken_like_a_save(
    both: tuple[Path, Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd_target, gsd_patches, _, tether_patches = both
    saves = tether_patches.parent
    shutil.copytree(gsd_patches, saves / "99999999T999999Z-gsd")  # sorts newest
    code, doc = reapply_json(capsys, "--patches", str(saves), "-C", str(gsd_target),
                             "--pristine", str(tmp_path / "pristine"), "--dry-run")  # fmt: skip
    assert code == 4
    assert doc["patches_dir"].endswith("99999999T999999Z-gsd")
