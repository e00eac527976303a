"""``--remove-backups``: the saved patches go only after a run that verified every file;
by default, and whenever a file failed or a conflict is left, they stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from reapply_builders import (
    EXECUTE,
    PLANNER,
    PLANNER_MERGED,
    Gsd,
    cli,
    reapply_json,
    standard,
)
from tether.flows.reapply import (
    BaselineOptions,
    FileResult,
    ReapplyReport,
    ReapplyRequest,
    reapply,
)
from tether.flows.reapply.cleanup import REMOVING_PREFIX
from tether.flows.reapply.report import KeptBecause
from tether.report.reapply import drift_remedies, kept_because, reapply_document, render


def args(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target),
            "--pristine", str(gsd.pristine), *extra]  # fmt: skip


def test_backups_are_kept_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine"))
    assert code == 0
    assert (gsd.patches / "backup-meta.json").is_file()
    assert doc["backups_removed"] is None


def test_remove_backups_after_a_fully_verified_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 0
    assert not gsd.patches.exists()
    assert doc["backups_removed"] == str(gsd.patches.absolute())
    assert not [p for p in gsd.target.iterdir() if p.name.startswith(REMOVING_PREFIX)]
    assert gsd.read(PLANNER) == PLANNER_MERGED
    # the installed versions tether backed up stay: they are not the patches
    assert gsd.backups.is_dir()


def test_a_conflict_left_keeps_the_backups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--remove-backups"))
    assert code == 4
    assert (gsd.patches / EXECUTE).is_file()
    assert "conflict" in doc["backups_kept_because"]


def test_a_failed_file_keeps_the_backups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    (gsd.patches / EXECUTE).unlink()  # its saved copy is missing: that file fails
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 1
    assert (gsd.patches / "backup-meta.json").is_file() and (gsd.patches / PLANNER).is_file()
    assert "failed" in doc["backups_kept_because"]


def test_a_dry_run_never_removes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    assert cli(*args(gsd, "--auto", "keep-mine", "--remove-backups", "--dry-run")) == 0
    assert "patch backups kept" in capsys.readouterr().out
    assert (gsd.patches / "backup-meta.json").is_file()


# --- only the folder the installer made, never one above it, never through a link -----------


def test_patches_named_by_their_config_folder_remove_only_the_patch_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--patches`` naming the config folder (its child holds backup-meta.json): the run
    merges that child, and the cleanup removes that child, never the config folder."""
    gsd = standard(tmp_path)
    (gsd.target / "settings.json").write_text('{"mine": true}\n')  # the user's own file
    saved = [*gsd.meta_files, "backup-meta.json"]
    code, doc = reapply_json(
        capsys,
        "--patches", str(gsd.target), "-C", str(gsd.target),
        "--pristine", str(gsd.pristine), "--auto", "keep-mine", "--remove-backups",
    )  # fmt: skip
    assert code == 0, doc
    assert (gsd.target / "settings.json").read_text() == '{"mine": true}\n'
    assert gsd.read(PLANNER) == PLANNER_MERGED
    assert not gsd.patches.exists()
    assert doc["backups_removed"] == str(gsd.patches.absolute())
    assert sorted(doc["removed_files"]) == sorted(
        str(gsd.patches.absolute() / rel) for rel in saved
    )


def test_a_linked_patch_folder_is_kept_and_the_run_still_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    real = tmp_path / "elsewhere"
    gsd.patches.rename(real)
    gsd.patches.symlink_to(real, target_is_directory=True)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 0, doc
    assert gsd.patches.is_symlink() and (real / "backup-meta.json").is_file()
    assert (real / PLANNER).is_file()
    assert doc["backups_removed"] is None and "link" in doc["backups_kept_because"]


def test_a_patch_folder_holding_an_unlisted_file_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy from an older backup, not in backup-meta.json, may be the only one left."""
    gsd = standard(tmp_path)
    (gsd.patches / "agents/old-custom.md").write_text("from an earlier backup\n")
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "keep-mine", "--remove-backups"))
    assert code == 0, doc
    assert (gsd.patches / "agents/old-custom.md").read_text() == "from an earlier backup\n"
    assert "agents/old-custom.md" in doc["backups_kept_because"]


def test_a_patch_folder_holding_the_install_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """backup-meta.json in the install folder itself: the saved copies are the installed
    files, every file is incorporated, and the folder is still not removed."""
    gsd = standard(tmp_path)
    (gsd.patches / "backup-meta.json").rename(gsd.target / "backup-meta.json")
    before = gsd.read(PLANNER)
    code, doc = reapply_json(
        capsys, "--patches", str(gsd.target), "-C", str(gsd.target), "--remove-backups"
    )
    assert code == 0, doc
    assert gsd.read(PLANNER) == before
    assert "installed release" in doc["backups_kept_because"]


# --- take-theirs never deletes the only copy ---------------------------------------------------


def test_take_theirs_keeps_the_patches_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--auto", "take-theirs", "--remove-backups"))
    assert code == 0, doc
    assert (gsd.patches / EXECUTE).read_text() == gsd.ours[EXECUTE]  # the only copy stays
    assert doc["backups_removed"] is None and doc["removed_files"] == []
    assert EXECUTE in doc["backups_kept_because"]
    assert "take-theirs" in doc["backups_kept_because"]


# --- why the patches stay: a fact in the report, worded in report/reapply --------------------


def test_why_the_patches_stay_is_a_fact_the_report_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    real = tmp_path / "elsewhere"
    gsd.patches.rename(real)
    gsd.patches.symlink_to(real, target_is_directory=True)
    options = BaselineOptions(pristine=gsd.pristine)
    request = ReapplyRequest(
        gsd.patches, gsd.target, options, auto="keep-mine", remove_backups=True
    )
    report = reapply(request)
    kept = KeptBecause("folder-is-link", folder=str(gsd.patches.absolute()))
    assert report.backups_kept_because == kept
    words = f"{gsd.patches.absolute()} is a link; tether removes no folder through a link"
    assert kept_because(kept) == words
    assert reapply_document(report)["backups_kept_because"] == words
    assert f"patch backups kept in {gsd.patches} ({words})" in render(report)


def test_a_take_theirs_names_every_file_that_dropped_yours(tmp_path: Path) -> None:
    gsd = standard(tmp_path)
    options = BaselineOptions(pristine=gsd.pristine)
    request = ReapplyRequest(
        gsd.patches, gsd.target, options, auto="take-theirs", remove_backups=True
    )
    kept = reapply(request).backups_kept_because
    assert kept is not None and kept.kind == "settled-theirs"
    assert (EXECUTE, "take-theirs") in kept.settled
    assert kept_because(kept).startswith(
        f"{len(kept.settled)} file(s) settled toward the installed release ("
    )


KEPT_WORDS = [
    (KeptBecause("dry-run"), "dry run"),
    (KeptBecause("failed", 2), "2 file(s) failed; your copies are needed to merge by hand"),
    (KeptBecause("conflicts", 1), "1 conflict(s) left; your copies are needed to settle them"),
    (
        KeptBecause("settled-theirs", settled=(("a.md", "take-theirs"), ("b.md", "drop"))),
        "2 file(s) settled toward the installed release (a.md: take-theirs, b.md: drop): the "
        "saved copy is the only copy of the change of yours it dropped",
    ),
    (
        KeptBecause("holds-install", folder="/i", target="/i"),
        "/i holds the installed release /i; not removing it",
    ),
    (
        KeptBecause("unlisted", folder="/p", path="x.md"),
        "/p holds x.md, which backup-meta.json does not list; not removing a file that may "
        "be the only copy",
    ),
    (KeptBecause("error", message="cannot read"), "cannot read"),
]


@pytest.mark.parametrize(("kept", "words"), KEPT_WORDS, ids=[k.kind for k, _ in KEPT_WORDS])
def test_every_reason_to_keep_has_its_words(kept: KeptBecause, words: str) -> None:
    assert kept_because(kept) == words


def test_the_drift_remedies_offer_accepting_only_a_copy_that_is_not_the_install() -> None:
    installed = FileResult(PLANNER, "failed", drifted=True, pristine_is_installed=True)
    report = ReapplyReport(Path("p"), Path("t"), [installed], from_version="1.2.0")
    assert not report.accept_offered
    remedies = drift_remedies(report)
    assert remedies[0] == (
        "use the release the patches were saved from as the baseline, fetched from the npm "
        "registry: rerun with --baseline-source npm:get-shit-done-cc@1.2.0"
    )
    assert len(remedies) == 3
    installed.pristine_is_installed = False
    assert report.accept_offered and len(drift_remedies(report)) == 4
    assert drift_remedies(ReapplyReport(Path("p"), Path("t"), [])) == []
