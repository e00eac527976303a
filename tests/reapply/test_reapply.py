"""tether reapply: baselines (pristine, git history, release), drift, no-baseline conflicts,
incorporated changes and the verification gate, on real GSD-shaped folders."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    EXECUTE,
    EXECUTE_OURS,
    EXECUTE_V2,
    HELP,
    HELP_OURS,
    HELP_V1,
    HELP_V2,
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    cli,
    git,
    make_gsd,
    reapply_json,
    standard,
    statuses,
    write,
)
from tether.engine.verify import VerifyResult
from tether.flows.reapply import (
    BaselineOptions,
    FileResult,
    ReapplyReport,
    ReapplyRequest,
    both_versions,
    check_written,
    reapply,
    record_verification_failure,
)
from tether.flows.safety import PathGuard
from tether.report.reapply import reapply_document
from tether.state.lock import ProjectLock


def args(gsd: Any, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target), *extra]


# --- baselines ---------------------------------------------------------------------------------


def test_pristine_baseline_merges_verifies_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 4  # the execute workflow conflicts
    assert set(doc) >= {"checked", "failures", "drifted", "drifted_files", "results"}
    assert doc["checked"] == 3 and doc["failures"] == 0 and doc["drifted"] == 0
    assert statuses(doc) == {PLANNER: "merged", EXECUTE: "conflict", HELP: "incorporated"}
    for result in doc["results"]:
        assert set(result) >= {"file", "status", "missing", "reason"}
        assert result["baseline"] == "pristine"
    assert gsd.read(PLANNER) == PLANNER_MERGED
    assert gsd.read(HELP) == HELP_V2  # nothing written: the release already has the change
    # the patches stay where they were
    assert (gsd.patches / PLANNER).read_text() == PLANNER_OURS


def test_clean_merge_exits_0_and_keeps_the_file_mode(tmp_path: Path) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    os.chmod(gsd.target / PLANNER, 0o750)
    assert cli(*args(gsd, "--pristine", str(gsd.pristine))) == 0
    assert gsd.read(PLANNER) == PLANNER_MERGED
    assert stat.S_IMODE(os.stat(gsd.target / PLANNER).st_mode) == 0o750
    # the installed version was backed up before it was written over
    [run] = list(gsd.backups.iterdir())
    assert (run / "installed" / PLANNER).read_text() == PLANNER_V2


def test_git_history_of_the_target_is_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(
        tmp_path,
        {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)},
        pristine=False,
        git_history=True,
    )
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 0, doc
    [result] = doc["results"]
    assert (result["status"], result["baseline"]) == ("merged", "git")
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_git_history_walks_past_later_commits_to_the_matching_blob(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(
        tmp_path,
        {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)},
        pristine=False,
        git_history=True,
    )
    git(gsd.target, "add", "-A")
    git(gsd.target, "commit", "-q", "-m", "install 2.0.0")  # newest blob is not the baseline
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 0 and doc["results"][0]["baseline"] == "git"
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_git_option_names_a_repository_mirroring_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, pristine=False)
    mirror = tmp_path / "dotfiles"
    write(mirror, {PLANNER: PLANNER_V1})
    git(mirror, "init", "-q", "-b", "main")
    git(mirror, "add", "-A")
    git(mirror, "commit", "-q", "-m", "snapshot")
    write(mirror, {PLANNER: "something else\n"})
    git(mirror, "commit", "-q", "-am", "later")
    code, doc = reapply_json(capsys, *args(gsd, "--git", str(mirror)))
    assert code == 0 and doc["results"][0]["baseline"] == "git"


def test_baseline_release_from_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, pristine=False)
    shelf = tmp_path / "releases"
    write(shelf / "1.0.0", {PLANNER: PLANNER_V1})
    write(shelf / "2.0.0", {PLANNER: PLANNER_V2})
    source = ("--baseline-source", str(shelf), "--baseline-version", "1.0.0")
    code, doc = reapply_json(capsys, *args(gsd, *source))
    assert code == 0, doc
    assert doc["results"][0]["baseline"] == "release"
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_a_release_whose_copy_does_not_match_the_hash_is_no_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, pristine=False)
    shelf = tmp_path / "releases"
    write(shelf / "1.0.0", {PLANNER: PLANNER_V1 + "templated at install\n"})
    source = ("--baseline-source", str(shelf), "--baseline-version", "1.0.0")
    code, doc = reapply_json(capsys, *args(gsd, *source))
    assert code == 4
    [result] = doc["results"]
    assert (result["status"], result["baseline"]) == ("conflict", "none")
    assert "does not match the pristine hash" in result["reason"]


def test_priority_pristine_before_git(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, git_history=True)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 0 and doc["results"][0]["baseline"] == "pristine"


# --- drift -------------------------------------------------------------------------------------


def drifted(tmp_path: Path, **options: Any) -> Any:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, **options)
    # The pristine folder was refreshed to the new release after the backup was taken.
    write(gsd.pristine, {PLANNER: PLANNER_V2})
    return gsd


def test_pristine_drift_halts_the_file_and_names_the_remedies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = drifted(tmp_path)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 1
    assert doc["drifted"] == 1 and doc["drifted_files"] == [PLANNER] and doc["failures"] == 1
    [result] = doc["results"]
    assert result["status"] == "failed" and "pristine drift" in result["reason"]
    assert gsd.read(PLANNER) == PLANNER_V2  # not merged, silently or otherwise
    assert not gsd.backups.exists() or not any(gsd.backups.glob("*/installed/*"))
    remedies = " ".join(doc["remedies"])
    assert "re-anchor" in remedies and "merge by hand" in remedies
    # the way that works first: the release the patches were saved from, fetched from npm
    assert doc["remedies"][0].endswith("--baseline-source npm:get-shit-done-cc@1.0.0")
    # the drifted copy is the installed release itself: accepting it is not offered
    assert "--accept-pristine" not in remedies
    capsys.readouterr()
    assert cli(*args(gsd, "--pristine", str(gsd.pristine))) == 1
    human = capsys.readouterr().out
    assert "pristine drift stopped: " + PLANNER in human
    assert "1. use the release the patches were saved from" in human
    assert "2. re-anchor" in human and "3. restore from the patch" in human


def test_accepting_a_drifted_pristine_merges_but_never_claims_incorporated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    write(gsd.pristine, {PLANNER: PLANNER_V1.replace("<role>\n", "<role> \n")})  # other drift
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 1 and "--accept-pristine" in " ".join(doc["remedies"])
    extra = ("--pristine", str(gsd.pristine), "--accept-pristine", PLANNER)
    code, doc = reapply_json(capsys, *args(gsd, *extra))
    assert code == 0 and doc["drifted"] == 0
    assert "accepted" in doc["results"][0]["reason"]
    assert doc["results"][0]["status"] == "merged"


def test_accepting_a_pristine_copy_that_is_the_installed_release_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GSD 1.42 and later fill gsd-pristine/ from the new package: merging on it as the
    base would revert every upstream change (the merge is the saved copy itself)."""
    gsd = drifted(tmp_path)
    extra = ("--pristine", str(gsd.pristine), "--accept-pristine", PLANNER)
    code, doc = reapply_json(capsys, *args(gsd, *extra))
    assert code == 1
    [result] = doc["results"]
    assert result["status"] == "failed" and "installed release" in result["reason"]
    assert "npm:get-shit-done-cc@1.0.0" in result["reason"]
    assert gsd.read(PLANNER) == PLANNER_V2  # untouched: no upstream change undone


def test_drift_is_harmless_when_git_holds_the_verified_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = drifted(tmp_path, git_history=True)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 0 and doc["drifted"] == 0
    [result] = doc["results"]
    assert result["baseline"] == "git" and "pristine drift" in result["reason"]
    assert gsd.read(PLANNER) == PLANNER_MERGED


# --- no baseline -------------------------------------------------------------------------------


def test_without_a_baseline_every_differing_file_is_a_conflict_showing_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path, pristine=False)
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 4
    assert statuses(doc) == {PLANNER: "conflict", EXECUTE: "conflict", HELP: "conflict"}
    assert gsd.read(HELP) == both_versions(HELP_OURS.encode(), HELP_V2.encode()).decode()
    text = gsd.read(EXECUTE)
    assert EXECUTE_OURS in text and EXECUTE_V2 in text and "<<<<<<< yours" in text
    # the installed versions were backed up first, next to the patches
    [run] = list(gsd.backups.iterdir())
    assert (run / "installed" / EXECUTE).read_text() == EXECUTE_V2
    assert doc["backup_dir"] == str(run)


def test_conflict_patch_style_leaves_the_installed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    extra = ("--pristine", str(gsd.pristine), "--conflict", "patch")
    code, doc = reapply_json(capsys, *args(gsd, *extra))
    assert code == 4
    [conflict] = [r for r in doc["results"] if r["status"] == "conflict"]
    assert gsd.read(EXECUTE) == EXECUTE_V2
    patch = Path(conflict["artifact"]).read_text()
    assert "-2. Run tests.\n+2. Run tests with coverage.\n" in patch


def test_identical_copy_is_incorporated_even_without_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {HELP: ("v1\n", "mine\n", "mine\n")}, pristine=False)
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 0 and statuses(doc) == {HELP: "incorporated"}


def test_unchecked_release_baseline_is_never_claimed_incorporated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {HELP: (HELP_V1, HELP_OURS, HELP_V2)}, pristine=False)
    gsd.set_meta(pristine_hashes={})  # older installers record none
    shelf = tmp_path / "releases"
    write(shelf / "1.0.0", {HELP: HELP_V1})
    source = ("--baseline-source", str(shelf), "--baseline-version", "1.0.0")
    code, doc = reapply_json(capsys, *args(gsd, *source))
    assert code == 0
    [result] = doc["results"]
    assert result["status"] == "merged" and "never claimed as incorporated" in result["reason"]
    assert gsd.read(HELP) == HELP_V2


def test_a_file_the_new_release_dropped_is_a_conflict_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    (gsd.target / PLANNER).unlink()
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 4 and "no longer has this file" in doc["results"][0]["reason"]
    assert not (gsd.target / PLANNER).exists()


def test_missing_saved_copy_and_unsafe_path_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    gsd.set_meta(files=[PLANNER, "../escape.md", "agents/gone.md"])
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 1
    reasons = {r["file"]: r["reason"] for r in doc["results"]}
    assert "unsafe path" in reasons["../escape.md"]
    assert "is missing" in reasons["agents/gone.md"]
    assert statuses(doc)[PLANNER] == "merged"


# --- the verification gate ---------------------------------------------------------------------


def test_verification_gate_catches_a_dropped_short_line_and_a_readded_deletion(
    tmp_path: Path,
) -> None:
    """The gate reads the written file back. Here the bytes on disk lost the user's
    ``model: opus`` (11 characters) and brought back the ``color: green`` they deleted: the
    gate names both and puts the installed version back."""
    target = tmp_path / PLANNER
    tools = "tools: Read, Write, Bash\n"
    bad = PLANNER_MERGED.replace("model: opus\n", "").replace(tools, tools + "color: green\n")
    write(tmp_path, {PLANNER: bad})
    verdict = check_written(
        PathGuard(tmp_path),
        PLANNER,
        PLANNER_V1.encode(),
        PLANNER_OURS.encode(),
        PLANNER_V2.encode(),
    )
    assert not verdict.preserved
    assert verdict.missing == [(4, "model: opus")]
    assert verdict.readded == [(5, "color: green")]
    assert target.read_text() == PLANNER_V2


def test_verification_gate_passes_a_real_merge_and_leaves_it(tmp_path: Path) -> None:
    write(tmp_path, {PLANNER: PLANNER_MERGED})
    verdict = check_written(
        PathGuard(tmp_path),
        PLANNER,
        PLANNER_V1.encode(),
        PLANNER_OURS.encode(),
        PLANNER_V2.encode(),
    )
    assert verdict.preserved and (tmp_path / PLANNER).read_text() == PLANNER_MERGED


def test_gate_failure_in_a_run_lists_the_missing_lines_and_exits_1() -> None:
    result = FileResult(PLANNER, "merged")
    report = ReapplyReport(Path("p"), Path("t"), [result, FileResult(EXECUTE, "conflict")])
    assert report.exit_code() == 4
    verdict = VerifyResult(False, [(4, "model: opus")], [(5, "color: green")])
    record_verification_failure(result, verdict, Path("p") / PLANNER)
    assert report.exit_code() == 1
    document = reapply_document(report)["results"][0]
    assert document["status"] == "failed"
    assert document["missing"] == [{"line": 4, "text": "model: opus"}]
    assert document["readded"] == [{"line": 5, "text": "color: green"}]
    assert "installed version is back" in document["reason"]


def test_two_saved_paths_naming_one_file_are_not_both_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A linked folder inside the install makes two saved paths one file: the second merge
    would undo the first, so it is refused and left to a person."""
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    alias = "linked/gsd-planner.md"
    (gsd.target / "linked").symlink_to("agents")
    write(gsd.patches, {alias: PLANNER_V1.replace("You are a", "You are a careful")})
    write(gsd.pristine, {alias: PLANNER_V1})
    recorded = gsd.meta()["pristine_hashes"][PLANNER]
    gsd.set_meta(files=[PLANNER, alias], pristine_hashes={PLANNER: recorded, alias: recorded})
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 1
    assert statuses(doc) == {PLANNER: "merged", alias: "failed"}
    assert f"same file on disk as {PLANNER}" in doc["results"][1]["reason"]
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gsd = standard(tmp_path)
    before = {p: p.read_bytes() for p in gsd.target.rglob("*") if p.is_file()}
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine), "--dry-run"))
    assert code == 4 and doc["dry_run"] is True
    assert statuses(doc) == {PLANNER: "merged", EXECUTE: "conflict", HELP: "incorporated"}
    after = {p: p.read_bytes() for p in gsd.target.rglob("*") if p.is_file()}
    assert after == before
    assert not gsd.backups.exists()


# --- reruns, locking ---------------------------------------------------------------------------


def test_rerun_after_a_finished_run_claims_nothing_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    assert cli(*args(gsd, "--pristine", str(gsd.pristine))) == 4
    merged_bytes = gsd.read(PLANNER)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 4
    assert statuses(doc) == {PLANNER: "merged", EXECUTE: "conflict", HELP: "incorporated"}
    reasons = {r["file"]: r["reason"] for r in doc["results"]}
    assert "already reapplied" in reasons[PLANNER]
    assert "still unresolved" in reasons[EXECUTE]
    assert gsd.read(PLANNER) == merged_bytes
    assert len(list(gsd.backups.glob("*/installed"))) == 1  # the rerun wrote no new backup


@pytest.mark.parametrize(
    "resolution",
    [EXECUTE_OURS, EXECUTE_V2.replace("the test suite", "the test suite with coverage")],
    ids=["took-my-line", "wrote-a-new-line"],
)
def test_a_conflict_resolved_by_hand_is_reported_so_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], resolution: str
) -> None:
    """Not "incorporated: already in the installed release" (the person put it there), and
    no new conflict markers written over the resolution."""
    gsd = standard(tmp_path)
    assert cli(*args(gsd, "--pristine", str(gsd.pristine))) == 4
    (gsd.target / EXECUTE).write_text(resolution)
    merged_planner = gsd.read(PLANNER)
    (gsd.target / PLANNER).write_text(merged_planner + "one more line of mine\n")
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 0, doc
    by_file = {r["file"]: r for r in doc["results"]}
    assert (by_file[EXECUTE]["status"], by_file[EXECUTE]["resolution"]) == ("resolved", "by-hand")
    assert "by hand" in by_file[EXECUTE]["reason"]
    assert by_file[PLANNER]["status"] == "merged"  # an earlier merge edited since: not adopted
    assert "already reapplied" in by_file[PLANNER]["reason"]
    assert gsd.read(EXECUTE) == resolution
    assert gsd.read(PLANNER) == merged_planner + "one more line of mine\n"


def test_a_half_resolved_conflict_is_still_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = standard(tmp_path)
    assert cli(*args(gsd, "--pristine", str(gsd.pristine))) == 4
    half = "edited\n" + gsd.read(EXECUTE)
    (gsd.target / EXECUTE).write_text(half)
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 4 and statuses(doc)[EXECUTE] == "conflict"
    assert gsd.read(EXECUTE) == half  # no second set of markers


def test_a_held_lock_on_the_target_refuses_the_run(tmp_path: Path) -> None:
    from tether.errors import TetherError

    gsd = standard(tmp_path)
    with ProjectLock(gsd.target / ".tether/lock", command="update"), pytest.raises(TetherError):
        reapply(ReapplyRequest(gsd.patches, gsd.target, BaselineOptions(pristine=gsd.pristine)))
    assert gsd.read(PLANNER) == PLANNER_V2


def test_runtime_files_are_git_ignored_in_the_target(tmp_path: Path) -> None:
    gsd = standard(tmp_path, git_history=True)
    assert cli(*args(gsd)) == 4
    ignored = (gsd.target / ".tether/.gitignore").read_text().split()
    assert "lock" in ignored and "journal.jsonl*" in ignored
    status = git(gsd.target, "status", "--porcelain", "--untracked-files=all")
    assert ".tether/lock" not in status and "journal" not in status


def test_patches_json_is_exactly_the_gsd_shape(tmp_path: Path) -> None:
    gsd = standard(tmp_path)
    meta = json.loads((gsd.patches / "backup-meta.json").read_text())
    assert set(meta) == {
        "backed_up_at",
        "from_version",
        "from_manifest_timestamp",
        "files",
        "pristine_hashes",
    }


def test_a_lossy_merge_equal_to_the_installed_file_fails_instead_of_incorporated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge engine that drops the user's change and returns the installed file untouched
    writes nothing, so the writer's gate never runs: reapply verifies that path itself."""
    from tether.engine.textmerge import MergeResult
    from tether.flows.reapply import decide

    def lossy_merge(base: bytes, ours: bytes, theirs: bytes, **_: Any) -> tuple[MergeResult, str]:
        return MergeResult(theirs, 0), ""  # the injected fault: the user's lines are gone

    monkeypatch.setattr(decide, "merge_sides", lossy_merge)
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine)))
    assert code == 1
    [result] = doc["results"]
    assert result["status"] == "failed"
    assert result["missing"] == [{"line": 4, "text": "model: opus"}]
    assert result["readded"] == [{"line": 5, "text": "color: green"}]
    assert "installed file is left as it is" in result["reason"]
    assert gsd.read(PLANNER) == PLANNER_V2


def test_a_lossy_merge_fails_on_an_unverified_baseline_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same fault with an unverifiable baseline (the "nothing to write" branch)."""
    from tether.engine.textmerge import MergeResult
    from tether.flows.reapply import decide

    def lossy_merge(base: bytes, ours: bytes, theirs: bytes, **_: Any) -> tuple[MergeResult, str]:
        return MergeResult(theirs, 0), ""

    monkeypatch.setattr(decide, "merge_sides", lossy_merge)
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    gsd.set_meta(pristine_hashes={PLANNER: "0" * 64})  # drifted, then accepted: unverified
    accept = ("--accept-pristine", PLANNER, "--dry-run")
    code, doc = reapply_json(capsys, *args(gsd, "--pristine", str(gsd.pristine), *accept))
    assert code == 1
    assert statuses(doc) == {PLANNER: "failed"}
