"""`tether update --profile gaia` against GAIA's `/update-gaia` procedure, step by step: the
behaviours where tether used to differ from the document (docs/conformance/gaia-update.md
lists every requirement and the test that proves it).

Projects are built from GAIA-shaped releases on a local shelf (`.gaia/manifest.json`,
`.gaia/VERSION`, the mixed files `package.json`, `pnpm-workspace.yaml` and
`.gaia/audit-ci.yml`) in a real git repository, and updated by the real command.
"""

from __future__ import annotations

import json
from pathlib import Path

from builders import run_forked, run_tether, tree_digest, write_files
from test_lifecycle_gaia import (
    BASELINE_RULE,
    DESIGN,
    FOLDERIZE,
    SPECS,
    WORKFLOW,
    WORKFLOW_V1,
    WORKFLOW_V2,
    gaia_project,
    shelf,
)
from test_lifecycle_migrations import update
from tether.state import crashpoint

# --- Step 7: the design-system sentinel ---------------------------------------------------

# GAIA's test is `grep -qE '^established:[[:space:]]*true'` on the page: these all count.
ESTABLISHED_FORMS = (
    "---\nestablished: true # approved by design review\n---\nOur system: teal, 8px grid.\n",
    "---\nestablished:true\n---\nOur system.\n",
    "---\ntitle: Design System\nestablished:\t true  \n---\nOur system.\n",
)


def test_design_page_established_with_a_trailing_comment_is_handed_over(tmp_path: Path) -> None:
    for index, page in enumerate(ESTABLISHED_FORMS):
        root = tmp_path / str(index)
        root.mkdir()
        mine = {DESIGN: page}  # the baseline rule file is left unedited: equal to B
        project = gaia_project(root, shelf(root), mine)
        before_rule = (project / BASELINE_RULE).read_bytes()
        result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
        assert result.returncode == 0, result.stdout + result.stderr
        assert (project / DESIGN).read_text() == page
        # Unedited, yet not replaced by the release's tightened rules: it is the adopter's now.
        assert (project / BASELINE_RULE).read_bytes() == before_rule
        merge, backups = project / ".gaia-merge", project / ".gaia-backup"
        assert not (merge.exists() and any(merge.rglob("*")))
        saved = {p.name for p in backups.rglob("*")} if backups.exists() else set()
        assert not saved & {"Design System.md", "design-baseline.md"}
        listing = result.stdout.split("Handed over to you", 1)[1]
        assert DESIGN in listing and BASELINE_RULE in listing


def test_design_page_not_established_by_gaias_rule_merges_as_usual(tmp_path: Path) -> None:
    # No line starts "established:" followed by blanks and "true": GAIA merges both files.
    for index, page in enumerate(
        (
            "---\nestablished: false # true once approved\n---\nDraft.\n",
            "---\n  established: true\n---\nIndented: not at the start of a line.\n",
            "---\nestablished: True\n---\nGAIA's grep is case-sensitive.\n",
        )
    ):
        root = tmp_path / str(index)
        root.mkdir()
        project = gaia_project(root, shelf(root), {DESIGN: page})
        code, doc = update(project)
        assert code in (0, 4), doc
        assert BASELINE_RULE in doc["buckets"]["update"]
        assert (project / BASELINE_RULE).read_text() == "baseline rules\ntightened\n"


def test_status_leaves_the_handed_over_design_files_to_the_adopter(tmp_path: Path) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path), {DESIGN: ESTABLISHED_FORMS[0]})
    write_files(project, {BASELINE_RULE: "our own baseline\n"})
    status = json.loads(run_tether("status", "--json", str(project)).stdout)
    assert status["adopter_owned"] == sorted([DESIGN, BASELINE_RULE])
    assert BASELINE_RULE not in status["modified"]


# --- a dry run never claims a write --------------------------------------------------------


def test_dry_run_says_what_the_real_run_would_do_and_claims_no_write(tmp_path: Path) -> None:
    flat_spec = {f"{SPECS}/SPEC-7.md": "spec 7\n", WORKFLOW: WORKFLOW_V1}
    project = gaia_project(tmp_path, shelf(tmp_path), flat_spec)
    before = tree_digest(project)
    dry = run_tether("update", "--dry-run", "--no-branch", "-C", str(project))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert tree_digest(project) == before
    out = dry.stdout
    assert f"Notice: {WORKFLOW} would be refreshed from this release's template." in out
    assert "was refreshed" not in out and "were refreshed" not in out
    specs = next(line for line in out.splitlines() if "Specs migrated:" in line)
    planned = f"would run after the merge: bash {FOLDERIZE}"
    assert " ".join(specs.split(":", 1)[1].split()) == planned
    rows = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert any(row.startswith("Would update (unchanged here)") for row in rows)
    assert not any(row.startswith(("Updated", "Replaced", "Added", "Merged")) for row in rows)
    real = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert f"Notice: {WORKFLOW} was refreshed from this release's template." in real.stdout
    assert (project / WORKFLOW).read_text() == WORKFLOW_V2


# --- Step 8b / Step 9: blocking state stays visible ---------------------------------------


def test_spec_migration_conflict_stays_blocking_in_status_and_check_until_settled(
    tmp_path: Path,
) -> None:
    clash = {f"{SPECS}/SPEC-7.md": "flat\n", f"{SPECS}/7/SPEC.md": "folder\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), clash)
    code, doc = update(project)
    assert code == 4 and doc["status"] == "updated"
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 3, check.stdout
    assert "clean" not in check.stdout
    assert "Action required: migration spec-folderize ended in conflict" in check.stdout
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert [(i["id"], i["status"]) for i in status["action_items"]] == [
        ("spec-folderize", "conflict")
    ]
    # Nothing newer: the update does not call the project up to date either.
    again = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert again.returncode == 3 and "already up to date" not in again.stdout
    # Running it again before the cause is settled changes nothing and says so.
    still = run_tether("migrations", "--rerun", "-C", str(project))
    assert still.returncode == 4, still.stdout + still.stderr
    assert "Action required: migration spec-folderize could not complete" in still.stdout
    assert run_tether("check", "-C", str(project)).returncode == 3
    # Settled by hand (keep the folder), then run again: nothing left to report.
    (project / SPECS / "SPEC-7.md").unlink()
    settled = run_tether("migrations", "--rerun", "--json", "-C", str(project))
    assert settled.returncode == 0, settled.stdout + settled.stderr
    assert [(m["id"], m["status"]) for m in json.loads(settled.stdout)["rerun"]] == [
        ("spec-folderize", "ok")
    ]
    final = run_tether("check", "-C", str(project))
    assert final.returncode == 0, final.stdout
    assert "spec-folderize" not in run_tether("status", "-C", str(project)).stdout


def test_run_killed_right_after_its_state_record_is_unfinished_in_check(tmp_path: Path) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    killed = run_forked(
        "update", "--yes", "--no-branch", "-C", str(project), crash="state-written:1"
    )
    assert killed.returncode == crashpoint.EXIT_CODE
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 3, check.stdout
    assert "an update was interrupted and is not finished" in check.stdout
    assert "its new state is recorded but it stopped before it completed" in check.stdout
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["unfinished"]["state_written"] is True
    finished = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "finished the interrupted update to 1.1.0" in finished.stdout
    assert run_tether("check", "-C", str(project)).returncode == 0
