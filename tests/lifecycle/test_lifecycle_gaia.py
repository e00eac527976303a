"""GAIA's update steps beyond the file merge, declared as data in the gaia profile and run by
real updates of GAIA-shaped projects: SPEC folderizing, the design-system hand-off, the audit
workflow refreshed from its template, the default_mode nudge and the update-check cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether, write_files
from tests.lifecycle.test_lifecycle_migrations import update
from tether.flows.lifecycle_plan import TrailerCount
from tether.report.lifecycle_steps import trailer_document

DESIGN = "wiki/concepts/Design System.md"
BASELINE_RULE = ".claude/rules/design-baseline.md"
FOLDERIZE = ".specify/extensions/gaia/lib/spec-folderize.sh"
TEMPLATE = ".gaia/cli/templates/workflows/code-review-audit.yml.tmpl"
WORKFLOW = ".github/workflows/code-review-audit.yml"
CACHE = ".gaia/local/cache/shared/update-check.json"
SPECS = ".gaia/local/specs"

# A small but real folderizer with the exit contract GAIA's has: 0 done (or nothing to do),
# 4 a flat file and a folder for the same SPEC, 2 a usage error.
FOLDERIZE_SCRIPT = f"""#!/bin/bash
[ $# -eq 0 ] || {{ echo "usage: spec-folderize.sh" >&2; exit 2; }}
cd "$(git rev-parse --show-toplevel)" || exit 3
n=0
for flat in {SPECS}/SPEC-*.md; do
  [ -e "$flat" ] || continue
  id=$(basename "$flat" .md); id=${{id#SPEC-}}
  if [ -e "{SPECS}/$id/SPEC.md" ]; then
    echo "spec-folderize: conflict: $flat and {SPECS}/$id/SPEC.md both exist" >&2; exit 4
  fi
done
for flat in {SPECS}/SPEC-*.md; do
  [ -e "$flat" ] || continue
  id=$(basename "$flat" .md); id=${{id#SPEC-}}
  mkdir -p "{SPECS}/$id" && mv "$flat" "{SPECS}/$id/SPEC.md" && n=$((n+1))
done
if [ $n -gt 0 ]; then echo "spec-folderize: migrated $n SPEC artifact(s)" >&2
else echo "spec-folderize: nothing to migrate" >&2; fi
exit 0
"""
USAGE_SCRIPT = "#!/bin/bash\necho 'usage: spec-folderize.sh' >&2\nexit 2\n"

CLASSES = {DESIGN: "wiki-owned", BASELINE_RULE: "shared", FOLDERIZE: "owned", TEMPLATE: "owned"}
WORKFLOW_V1 = "name: audit\non: pull_request\njobs: {audit: {runs-on: ubuntu-latest}}\n"
WORKFLOW_V2 = WORKFLOW_V1.replace("ubuntu-latest", "ubuntu-24.04")


def release_files(version: str, folderize: str = FOLDERIZE_SCRIPT) -> dict[str, str]:
    newer = version != "1.0.0"
    return {
        "README.md": f"readme {version}\n",
        DESIGN: "---\nestablished: false\n---\nNo design system is established yet.\n"
        + ("More guidance.\n" if newer else ""),
        BASELINE_RULE: "baseline rules\n" + ("tightened\n" if newer else ""),
        FOLDERIZE: folderize,
        TEMPLATE: WORKFLOW_V2 if newer else WORKFLOW_V1,
    }


def shelf(tmp_path: Path, folderize: str = FOLDERIZE_SCRIPT) -> Path:
    shelf = tmp_path / "rel"
    for version in ("1.0.0", "1.1.0"):
        files = release_files(version, folderize if version == "1.1.0" else FOLDERIZE_SCRIPT)
        root = make_release(shelf, version, files, CLASSES, profile="gaia")
        write_files(root, {"CHANGELOG.md": "# changes\n"})
    return shelf


def gaia_project(tmp_path: Path, releases: Path, extra: dict[str, str] | None = None) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(releases), "--to", "1.0.0")
    assert call(*init, "-C", str(project)) == 0
    write_files(project, extra or {})
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


def human_update(project: Path, *args: str):
    return run_tether("update", "--yes", "--no-branch", *args, "-C", str(project))


# --- Specs migrated -----------------------------------------------------------------------


def test_spec_folderize_runs_on_every_update_and_reports_the_count(tmp_path):
    flat = {f"{SPECS}/SPEC-7.md": "spec 7\n", f"{SPECS}/SPEC-9.md": "spec 9\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), flat)
    result = human_update(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / SPECS / "7/SPEC.md").read_text() == "spec 7\n"
    assert not (project / SPECS / "SPEC-7.md").exists()
    row = next(line for line in result.stdout.splitlines() if "Specs migrated:" in line)
    assert row.split() == ["Specs", "migrated:", "2"]
    state = json.loads((project / ".gaia/local/tether/state.json").read_text())
    assert state["applied_migrations"]["spec-folderize"]["status"] == "ok"


def test_spec_folderize_with_nothing_to_do_reports_zero(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path))
    code, doc = update(project)
    assert code == 0
    assert [(m["id"], m["summary"]) for m in doc["migrations"]] == [("spec-folderize", "0")]


def test_spec_folderize_conflict_is_a_blocking_item_after_a_full_merge(tmp_path):
    clash = {f"{SPECS}/SPEC-7.md": "flat\n", f"{SPECS}/7/SPEC.md": "folder\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), clash)
    result = human_update(project)
    assert result.returncode == 4
    assert "Specs migrated:" in result.stdout and "conflict, see action item below" in result.stdout
    assert "Action required: migration spec-folderize could not complete" in result.stdout
    assert f"{SPECS}/SPEC-7.md and {SPECS}/7/SPEC.md both exist" in result.stdout
    assert (project / "README.md").read_text() == "readme 1.1.0\n"  # the merge was kept
    assert (project / ".gaia/VERSION").read_text() == "1.1.0\n"
    assert (project / SPECS / "SPEC-7.md").read_text() == "flat\n"  # nothing resolved for you


def test_spec_folderize_usage_error_is_an_error_item_not_a_stop(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path, USAGE_SCRIPT))
    code, doc = update(project)
    assert code == 4
    assert doc["status"] == "updated" and doc["state_written"] is True
    [item] = doc["action_items"]
    assert (item["id"], item["status"]) == ("spec-folderize", "error")
    assert "usage: spec-folderize.sh" in item["stderr"]


# --- design system hand-off ---------------------------------------------------------------


ESTABLISHED = "---\nestablished: true\n---\nOur design system: teal, 8px grid.\n"


def test_established_design_system_is_left_entirely_alone(tmp_path):
    mine = {DESIGN: ESTABLISHED, BASELINE_RULE: "our own baseline\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), mine)
    code, doc = update(project)
    assert code == 0, doc
    assert (project / DESIGN).read_text() == ESTABLISHED
    assert (project / BASELINE_RULE).read_text() == "our own baseline\n"
    assert DESIGN in doc["buckets"]["skip"] and BASELINE_RULE in doc["buckets"]["skip"]
    assert DESIGN not in doc["backed_up"] and BASELINE_RULE not in doc["backed_up"]
    merge = project / ".gaia-merge"
    assert not (merge.exists() and any(merge.rglob("*")))
    backups = project / ".gaia-backup"
    saved = [p.name for p in backups.rglob("*")] if backups.exists() else []
    assert "Design System.md" not in saved and "design-baseline.md" not in saved


def test_design_system_not_established_merges_as_usual(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path))
    code, doc = update(project)
    assert code == 0
    assert DESIGN in doc["buckets"]["merged"] + doc["buckets"]["update"]
    assert "More guidance." in (project / DESIGN).read_text()
    assert (project / BASELINE_RULE).read_text() == "baseline rules\ntightened\n"


def test_hand_off_reason_is_shown_in_the_dry_run(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path), {DESIGN: ESTABLISHED})
    code, doc = update(project, "--dry-run")
    assert code == 0
    assert DESIGN in doc["buckets"]["skip"]
    assert (project / DESIGN).read_text() == ESTABLISHED


# --- the audit workflow, installed from a template ----------------------------------------


@pytest.mark.parametrize(
    ("installed", "bucket", "after"),
    [
        (WORKFLOW_V1, "update", WORKFLOW_V2),  # clean: replaced, backed up
        (WORKFLOW_V1 + "# self-hosted\n", "conflict", WORKFLOW_V1 + "# self-hosted\n"),
        (WORKFLOW_V2, "skip", WORKFLOW_V2),  # already current
        (None, "skip", None),  # CI never installed: nothing appears
    ],
)
def test_audit_workflow_three_way_classification(tmp_path, installed, bucket, after):
    extra = {WORKFLOW: installed} if installed is not None else {}
    project = gaia_project(tmp_path, shelf(tmp_path), extra)
    code, doc = update(project)
    assert code == (4 if bucket == "conflict" else 0), doc
    paths = doc["buckets"][bucket]
    assert WORKFLOW in (paths if bucket != "conflict" else [c["path"] for c in paths])
    target = project / WORKFLOW
    assert (target.read_text() if target.exists() else None) == after
    refreshed = [n for n in doc["notices"] if n["id"] == f"refreshed:{WORKFLOW}"]
    assert bool(refreshed) == (bucket == "update")
    if bucket == "update":
        assert WORKFLOW in doc["backed_up"]
    if bucket == "conflict":
        patch = project / ".gaia-merge/code-review-audit.yml.patch"  # flat, as GAIA names it
        assert "+jobs: {audit: {runs-on: ubuntu-24.04}}" in patch.read_text()


# --- default_mode nudge, gated on the tree before the merge --------------------------------


def test_default_mode_nudge_uses_the_pre_update_snapshot(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path), {".gaia/audit-ci.yml": "mode: ci\n"})
    code, doc = update(project)
    assert code == 0
    assert [n["id"] for n in doc["notices"]] == ["default-mode-opt-in"]


def test_default_mode_nudge_is_silent_once_the_key_is_there(tmp_path):
    config = {".gaia/audit-ci.yml": "default_mode: local\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), config)
    result = human_update(project)
    assert result.returncode == 0
    assert "per-author audit mode" not in result.stdout


def test_default_mode_nudge_holds_although_the_merge_adds_the_key(tmp_path):
    releases = shelf(tmp_path)
    # the release ships a script that adds the key during the update: the nudge must still
    # fire, because the condition is read before anything is written
    adds_key = FOLDERIZE_SCRIPT.replace(
        "exit 0\n", 'echo "default_mode: local" >> .gaia/audit-ci.yml\nexit 0\n'
    )
    (releases / "1.1.0" / FOLDERIZE).write_text(adds_key)
    project = gaia_project(tmp_path, releases, {".gaia/audit-ci.yml": "mode: ci\n"})
    result = human_update(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "default_mode: local" in (project / ".gaia/audit-ci.yml").read_text()
    assert "Notice: New: per-author audit mode." in result.stdout


# --- update-check cache --------------------------------------------------------------------


def test_update_check_cache_is_busted_keeping_serena_drift(tmp_path):
    cache = {
        "gaiaCurrent": "1.0.0",
        "gaiaLatest": "1.1.0",
        "gaiaHasUpdate": True,
        "outdatedCount": 3,
        "checkedAt": 1,
        "serenaLangDrift": ["python"],
        "other": "dropped",
    }
    project = gaia_project(tmp_path, shelf(tmp_path))
    write_files(project, {CACHE: json.dumps(cache)})
    code, doc = update(project)
    assert code == 0
    busted = json.loads((project / CACHE).read_text())
    checked = busted.pop("checkedAt")
    assert isinstance(checked, int) and checked > 1
    assert busted == {
        "serenaLangDrift": ["python"],
        "gaiaCurrent": "1.1.0",
        "gaiaLatest": "1.1.0",
        "gaiaHasUpdate": False,
        "outdatedCount": 0,
    }
    assert doc["post_update"] == [{"file": CACHE, "status": "written"}]


def test_missing_update_check_cache_is_not_created(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path))
    # The plan holds the fact (a code, no words); report/lifecycle_steps words it.
    from tether.flows.lifecycle_plan import PostUpdateCode, PostUpdateOutcome
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update

    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate), prepared
    fact = PostUpdateOutcome(CACHE, PostUpdateCode.NO_SUCH_FILE)
    assert prepared.lifecycle.post_planned == [fact]
    code, doc = update(project)
    assert code == 0
    assert not (project / CACHE).exists()
    assert doc["post_update"] == [{"file": CACHE, "status": "skipped: no such file"}]


def test_a_post_update_write_s_outcome_is_worded_in_report():
    from tether.flows.lifecycle_plan import PostUpdateCode, PostUpdateOutcome
    from tether.report.lifecycle_steps import post_update_entry

    said = {
        PostUpdateOutcome("a.json", PostUpdateCode.PLANNED): "planned",
        PostUpdateOutcome("a.json", PostUpdateCode.WRITTEN): "written",
        PostUpdateOutcome("a.json", PostUpdateCode.NO_SUCH_FILE): "skipped: no such file",
        PostUpdateOutcome("a.json", PostUpdateCode.NOT_AN_OBJECT): "skipped: not a JSON object",
        PostUpdateOutcome("a.json", PostUpdateCode.FAILED, "a is a FIFO"): "failed: a is a FIFO",
    }
    for outcome, status in said.items():
        assert post_update_entry(outcome) == {"file": "a.json", "status": status}


# --- trailer invalidations ------------------------------------------------------------------

# A stand-in for the external gh program (it needs the network and an account): it records
# its argv and answers `pr list` with the head commits in GH_PR_HEADS. It tests how tether
# reads gh's answer, never gh itself.
GH_STAND_IN = """#!{python}
import json, os, sys
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["pr", "list"]:
    print(json.dumps([{{"headRefOid": h}} for h in os.environ["GH_PR_HEADS"].split()]))
else:
    sys.exit("unexpected gh call")
"""


def stamped_commit(project: Path, message: str) -> str:
    git(project, "commit", "-q", "--allow-empty", "-m", message)
    return git(project, "rev-parse", "HEAD").strip()


def test_trailer_invalidations_count_open_prs_stamped_with_the_old_version(tmp_path, monkeypatch):
    project = gaia_project(tmp_path, shelf(tmp_path))
    sha = "a" * 40
    old = stamped_commit(project, f"feat: x\n\nGAIA-Audit: 1.0.0 {sha}\n")
    other = stamped_commit(project, f"feat: y\n\nGAIA-Audit: 0.9.0 {sha}\n")
    plain = stamped_commit(project, "feat: z\n")
    git(project, "reset", "-q", "--hard", "HEAD~3")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN.format(python=sys.executable))
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_PR_HEADS", f"{old} {other} {plain}")
    result = human_update(project)
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if "Trailer invalidations:" in line)
    assert row.split()[2] == "1"
    calls = [json.loads(line) for line in (tmp_path / "gh.log").read_text().splitlines()]
    assert calls == [["pr", "list", "--state", "open", "--limit", "500", "--json", "headRefOid"]]


def test_trailer_invalidations_unknown_without_gh(tmp_path, monkeypatch):
    project = gaia_project(tmp_path, shelf(tmp_path))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Only the programs the update needs: no gh anywhere on PATH.
    for program in ("git", "bash"):
        (bin_dir / program).symlink_to(shutil.which(program))
    tether = Path(sys.executable).parent / "tether"
    monkeypatch.setenv("PATH", str(bin_dir))
    result = subprocess.run(
        [str(tether), "update", "--yes", "--no-branch", "--json", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    doc = json.loads(result.stdout)
    [check] = doc["trailer_invalidations"]
    assert (check["trailer_key"], check["count"]) == ("GAIA-Audit", "unknown")
    # Why is a fact of the flow (gh's own words as its detail), worded in report/.
    assert check["reason"] == "the `gh` program is not installed"


@pytest.mark.parametrize(
    ("check", "reason"),
    [
        (TrailerCount("K", "L", "unknown", "no-checkout"), "not a git checkout"),
        (TrailerCount("K", "L", "unknown", "gh", "gh: HTTP 401"), "gh: HTTP 401"),
        (TrailerCount("K", "L", 3), ""),
    ],
)
def test_why_a_trailer_count_is_unknown_is_worded_in_report(check, reason):
    assert check.to_json()["reason"] == ""  # the flow's document leaves it to report/
    assert trailer_document(check) == {**check.to_json(), "reason": reason}


# --- region awareness lines -----------------------------------------------------------------


def test_gaia_off_switch_turns_region_awareness_off_and_says_so(tmp_path, monkeypatch):
    project = gaia_project(tmp_path, shelf(tmp_path))
    code, doc = update(project, "--dry-run")
    assert code == 0 and doc["regions"]["disabled"] is False
    monkeypatch.setenv("GAIA_UPDATE_NO_REGIONS", "1")
    code, doc = update(project, "--dry-run")
    assert doc["regions"]["disabled"] is True
    assert doc["regions"]["disabled_by"] == "GAIA_UPDATE_NO_REGIONS=1"
    result = human_update(project)
    assert "Regions: disabled for this run (GAIA_UPDATE_NO_REGIONS=1): awareness off" in (
        result.stdout
    )


def test_release_without_regions_says_none_declared(tmp_path):
    project = gaia_project(tmp_path, shelf(tmp_path))
    result = human_update(project)
    assert result.returncode == 0
    assert "Regions: none declared by this release" in result.stdout
