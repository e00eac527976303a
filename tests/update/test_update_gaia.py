"""`tether update --profile gaia` against GAIA's `/update-gaia` procedure, step by step: the
behaviours where tether used to differ from the document (docs/conformance/gaia-update.md
lists every requirement and the test that proves it).

Projects are built from GAIA-shaped releases on a local shelf (`.gaia/manifest.json`,
`.gaia/VERSION`, the mixed files `package.json`, `pnpm-workspace.yaml` and
`.gaia/audit-ci.yml`) in a real git repository, and updated by the real command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from builders import (
    call,
    git,
    make_release,
    run_forked,
    run_tether,
    tree_digest,
    write_files,
)
from tests.lifecycle.test_lifecycle_gaia import (
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
from tests.lifecycle.test_lifecycle_migrations import update
from tether.state import crashpoint

# A stand-in for the external gh program (it needs the network and an account): it records
# its arguments, one call a line, and answers `pr list` with the head commits in
# GH_PR_HEADS; any other call fails. A shell script, not Python: a shell starts in about
# 1 ms of CPU, an interpreter in 10 ms and more. It tests how tether reads gh's answer,
# never gh itself.
GH_STAND_IN = r"""#!/bin/sh
printf '%s\n' "$*" >> "$GH_LOG"
if [ "$1 $2" = "pr list" ]; then
    heads=""
    for head in $GH_PR_HEADS; do
        heads="$heads${heads:+, }{\"headRefOid\": \"$head\"}"
    done
    echo "[$heads]"
else
    echo "unexpected gh call" >&2
    exit 1
fi
"""

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
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
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


# --- Steps 7a-7c: the three mixed files, always key by key ---------------------------------

PKG = "package.json"
WORKSPACE = "pnpm-workspace.yaml"
AUDIT_CI = ".gaia/audit-ci.yml"


def package_json(version: str, deps: dict[str, str], name: str = "gaia") -> str:
    lines = ",\n".join(f'    "{k}": "{v}"' for k, v in deps.items())
    return (
        f'{{\n  "name": "{name}",\n  "version": "{version}",\n  "private": true,\n'
        f'  "dependencies": {{\n{lines}\n  }}\n}}\n'
    )


PKG_V1 = package_json("1.0.0", {"react": "^18.3.0", "react-router-dom": "^6.0.0"})
# GAIA 1.1.0 bumps react, drops react-router-dom and adds zod.
PKG_V2 = package_json("1.1.0", {"react": "^19.0.0", "zod": "^3.23.0"})
WORKSPACE_V1 = "# GAIA's pnpm settings\nminimumReleaseAge: 1440\noverrides:\n  lodash: ^4.17.21\n"
WORKSPACE_V2 = "# GAIA's pnpm settings\nminimumReleaseAge: 2880\noverrides:\n  semver: ^7.6.0\n"
AUDIT_V1 = "# audit knobs\nbudget_seconds: 1800\nmax_turns: 60\n"
AUDIT_V2 = "# audit knobs\nbudget_seconds: 1800\nmax_turns: 40\n"
CHANGELOG = """# Changelog

## [1.1.0] - 2025-07-01

### Removed

- `react-router-dom` is gone. **Action required:** run `pnpm remove react-router-dom`.

## [1.0.0] - 2025-06-01

- First release.
"""


def mixed_shelf(tmp_path: Path, v2: dict[str, str] | None = None) -> Path:
    """GAIA 1.0.0 and 1.1.0 with the three mixed files (classed shared, as GAIA ships them)."""
    releases = tmp_path / "rel"
    v1 = {PKG: PKG_V1, WORKSPACE: WORKSPACE_V1, AUDIT_CI: AUDIT_V1, "README.md": "one\n"}
    later = {PKG: PKG_V2, WORKSPACE: WORKSPACE_V2, AUDIT_CI: AUDIT_V2, "README.md": "two\n"}
    later.update(v2 or {})
    for version, files in (("1.0.0", v1), ("1.1.0", later)):
        root = make_release(releases, version, files, profile="gaia")
        write_files(root, {"CHANGELOG.md": CHANGELOG})
    return releases


def mixed_project(tmp_path: Path, mine: dict[str, str] | None = None, **v2: str) -> Path:
    return gaia_project(tmp_path, mixed_shelf(tmp_path, v2 or None), mine)


def structured_rows(doc: dict) -> dict[str, str]:
    return {row.split(": ", 1)[0]: row.split(": ", 1)[1] for row in doc["structured"]}


def test_unedited_mixed_files_are_merged_key_by_key_not_replaced(tmp_path: Path) -> None:
    project = mixed_project(tmp_path)  # every file still equals the installed release
    planned = run_tether("update", "--dry-run", "-C", str(project)).stdout
    assert "Would update" in planned or "Updated" in planned, planned
    code, doc = update(project)
    assert code == 0, doc
    # package.json: GAIA's bump applied; the dependency GAIA removed stays (removals are
    # suggestions only); the one it added is suggested, not inserted; identity untouched.
    assert (project / PKG).read_text() == PKG_V1.replace("^18.3.0", "^19.0.0")
    # pnpm-workspace.yaml: the setting changed; the override GAIA dropped stays; the new one
    # is a suggestion; comments kept.
    assert (project / WORKSPACE).read_text() == WORKSPACE_V1.replace("1440", "2880")
    assert (project / AUDIT_CI).read_text() == AUDIT_V2
    rows = structured_rows(doc)
    assert rows[PKG] == "1 applied, 0 conflicts, 1 suggestion (see .gaia-merge/package.json.notes)"
    assert rows[WORKSPACE].startswith("1 applied, 0 conflicts, 1 suggestion (see ")
    assert rows[AUDIT_CI] == "1 applied, 0 conflicts, 0 suggestions"
    notes = (project / ".gaia-merge/package.json.notes").read_text()
    assert "zod" in notes and "react-router-dom" not in notes
    # The follow-up is still true: the dependency GAIA removed is still declared here.
    assert [a["command"] for a in doc["adopter_actions"]] == ["pnpm remove react-router-dom"]
    # Updated, not "merged with your edits": the adopter edited none of them.
    assert sorted(doc["buckets"]["update"]) == sorted([AUDIT_CI, PKG, WORKSPACE, "README.md"])
    assert doc["buckets"]["merged"] == []
    assert "merge with your edits" not in planned.lower()
    # Nothing is committed for the adopter: the update is theirs to review and commit.
    assert git(project, "rev-list", "--count", "HEAD").strip() == "1"
    assert doc["commit_message"] == "chore: update GAIA to v1.1.0"


def test_mixed_files_upstream_did_not_change_are_a_clean_skip_row(tmp_path: Path) -> None:
    project = mixed_project(tmp_path, **{PKG: PKG_V1, WORKSPACE: WORKSPACE_V1, AUDIT_CI: AUDIT_V1})
    code, doc = update(project)
    assert code == 0, doc
    assert structured_rows(doc) == dict.fromkeys(
        (AUDIT_CI, PKG, WORKSPACE), "no managed-key changes (clean skip)"
    )
    assert not (project / ".gaia-merge").exists()


def test_mixed_file_without_a_baseline_is_a_whole_file_conflict(tmp_path: Path) -> None:
    # Older releases shipped no pnpm-workspace.yaml; the adopter wrote their own since.
    releases = mixed_shelf(tmp_path)
    (releases / "1.0.0" / WORKSPACE).unlink()
    manifest = releases / "1.0.0/.gaia/manifest.json"
    data = json.loads(manifest.read_text())
    del data["files"][WORKSPACE]
    manifest.write_text(json.dumps(data))
    mine = "overrides:\n  our-fork: ^1.0.0\n"
    project = gaia_project(tmp_path, releases, {WORKSPACE: mine})
    patch = ".gaia-merge/pnpm-workspace.yaml.patch"
    # The flow finds the fact (no baseline, the patch); report/update words it.
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.model.plan import FieldMergeRow

    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate), prepared
    fact = FieldMergeRow(WORKSPACE, "whole-file-conflict", artifact=patch)
    assert prepared.plan.structured[WORKSPACE] == fact
    code, doc = update(project)
    assert code == 4, doc
    assert (project / WORKSPACE).read_text() == mine
    assert [c["artifact"] for c in doc["buckets"]["conflict"]] == [patch]
    assert structured_rows(doc)[WORKSPACE] == (
        f"whole-file conflict, no installed copy to merge key by key against (see {patch})"
    )


def test_a_re_pinned_key_is_a_key_level_conflict_not_a_file_level_one(tmp_path: Path) -> None:
    mine = {PKG: PKG_V1.replace("^18.3.0", "^18.2.0")}  # the adopter re-pinned react
    project = mixed_project(tmp_path, mine)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / PKG).read_text() == mine[PKG]  # the adopter's pin is kept
    notes = project / ".gaia-merge/package.json.notes"
    assert "^18.2.0" in notes.read_text() and "^19.0.0" in notes.read_text()
    out = result.stdout
    assert f"{PKG}: 0 applied, 1 conflict, 1 suggestion (see .gaia-merge/package.json.notes)" in out
    conflicts_row = next(line for line in out.splitlines() if line.strip().startswith("Conflicts"))
    assert conflicts_row.split()[-1] == "0"
    assert "run your package manager's install: a dependency manifest changed" in out
    step = next(line for line in out.splitlines() if "reconcile the keys" in line)
    assert ".gaia-merge/package.json.notes" in step and "then delete the notes" in step
    # The notes file is informational: check does not wait for it to go.
    assert notes.exists()
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 0, check.stdout


def test_take_theirs_settles_key_conflicts_and_keeps_every_other_key(tmp_path: Path) -> None:
    mine_pkg = package_json(
        "0.4.0", {"react": "^18.2.0", "react-router-dom": "^6.0.0", "our-lib": "^2.0.0"}, "app"
    )
    project = mixed_project(tmp_path, {PKG: mine_pkg})
    code, doc = update(project, "--auto", "take-theirs")
    assert code == 0, doc
    # The re-pinned key takes the release's value; the project's name, version and own
    # dependency, and the dependency GAIA removed, all stay.
    assert (project / PKG).read_text() == mine_pkg.replace("^18.2.0", "^19.0.0")
    rows = structured_rows(doc)
    assert rows[PKG].startswith("0 applied, 0 conflicts, 1 conflict settled toward the release")
    # Every file a row names exists.
    for row in doc["structured"]:
        if "(see " in row:
            named = row.rsplit("(see ", 1)[1].rstrip(")")
            assert (project / named).is_file(), row


def test_take_theirs_with_nothing_left_to_note_names_no_notes_file(tmp_path: Path) -> None:
    # No suggestion either: the only item is the settled conflict.
    latest = package_json("1.1.0", {"react": "^19.0.0", "react-router-dom": "^6.0.0"})
    mine = {PKG: PKG_V1.replace("^18.3.0", "^18.2.0")}
    project = mixed_project(tmp_path, mine, **{PKG: latest})
    code, doc = update(project, "--auto", "take-theirs")
    assert code == 0, doc
    assert (project / PKG).read_text() == mine[PKG].replace("^18.2.0", "^19.0.0")
    row = structured_rows(doc)[PKG]
    named = row.rsplit("(see ", 1)[1].rstrip(")") if "(see " in row else None
    assert named is None or (project / named).is_file(), row


def test_dry_run_field_merge_rows_say_what_would_be_written(tmp_path: Path) -> None:
    project = mixed_project(tmp_path)
    before = tree_digest(project)
    code, doc = update(project, "--dry-run")
    assert code == 0, doc
    assert tree_digest(project) == before
    rows = structured_rows(doc)
    assert rows[PKG] == (
        "1 to apply, 0 conflicts, 1 suggestion (notes would go to .gaia-merge/package.json.notes)"
    )
    assert not any(" applied" in row or "(see " in row for row in rows.values())


# --- Step 7c: the audit roster arrives ----------------------------------------------------

ROSTER_MEMBER = (
    "  - name: code-audit-github-workflows\n"
    "    globs:\n"
    '      - ".github/workflows/**"\n'
    "    scope: repo\n"
)


def test_roster_member_arrives_when_the_adopter_file_has_no_auditors_list() -> None:
    from tether.engine.structured import merge_structured, rules_for

    rules = rules_for(AUDIT_CI, {"preset": "gaia-audit-ci"})
    base = b"budget_seconds: 1800\n"  # GAIA <= 1.6.1: no roster at all
    latest = b"budget_seconds: 1800\nauditors:\n" + ROSTER_MEMBER.encode()
    mine = b"# ours\nbudget_seconds: 900\naudit_authors: alice=local\n"
    result = merge_structured(AUDIT_CI, rules, base, latest, mine)
    assert [(i.section, i.key) for i in result.applied] == [
        ("auditors", "code-audit-github-workflows")
    ]
    assert result.new_text.decode().startswith(mine.decode())  # every line of ours kept
    written = yaml.safe_load(result.new_text)
    assert written["auditors"] == yaml.safe_load(latest)["auditors"]
    assert written["budget_seconds"] == 900


def test_roster_list_the_adopter_removed_is_not_recreated() -> None:
    from tether.engine.structured import merge_structured, rules_for

    rules = rules_for(AUDIT_CI, {"preset": "gaia-audit-ci"})
    base = b"budget_seconds: 1800\nauditors:\n" + ROSTER_MEMBER.replace("-workflows", "").encode()
    latest = base + ROSTER_MEMBER.encode()
    mine = b"budget_seconds: 1800\n"  # the adopter deleted the whole roster
    result = merge_structured(AUDIT_CI, rules, base, latest, mine)
    assert result.new_text == mine
    assert [(i.key, i.reason) for i in result.suggestions] == [
        ("code-audit-github-workflows", "added")
    ]


# A stand-in for GAIA's own `.gaia/scripts/verify-audit-roster.sh`, written for this test (GAIA's
# script needs the rest of GAIA's tree: its roster-parsing library and machinery list). It
# checks the two invariants an update can break, on the same files: every `code-audit-*`
# agent the tree ships is a member of the roster in `.gaia/audit-ci.yml` (one that is not
# is never dispatched), and every member's agent file carries one remit region whose bullet
# globs are the member's roster globs, in roster order. Exit 0 when both hold, 1 otherwise.
VERIFY_ROSTER = r"""#!/usr/bin/env bash
set -u
config=.gaia/audit-ci.yml
start='<!-- gaia:audit-remit:start -->'
end='<!-- gaia:audit-remit:end -->'
# "member<TAB>glob" for every glob of every roster member, in roster order.
rows=$(awk '
  /^auditors[[:space:]]*:/ { inside = 1; next }
  inside && /^[A-Za-z_]/ { inside = 0 }
  !inside { next }
  /^[[:space:]]*-[[:space:]]+name[[:space:]]*:/ {
    member = $0; sub(/^[^:]*:[[:space:]]*/, "", member); globs = 0; next
  }
  /^[[:space:]]+globs[[:space:]]*:/ { globs = 1; next }
  /^[[:space:]]+[A-Za-z_]+[[:space:]]*:/ { globs = 0; next }
  globs && /^[[:space:]]*-[[:space:]]+/ {
    glob = $0; sub(/^[[:space:]]*-[[:space:]]+/, "", glob); gsub(/^["'\'']|["'\'']$/, "", glob)
    print member "\t" glob
  }
' "$config")
members=$(printf '%s\n' "$rows" | cut -f1 | awk 'NF && !seen[$0]++')
failed=0
for agent in .claude/agents/code-audit-*.md; do
  [ -e "$agent" ] || continue
  name=$(basename "$agent" .md)
  if ! printf '%s\n' "$members" | grep -qxF -- "$name"; then
    echo "FAIL unregistered: $agent is no member of the roster in $config"
    failed=1
  fi
done
for member in $members; do
  agent=".claude/agents/$member.md"
  [ -f "$agent" ] || { echo "FAIL missing: $agent"; failed=1; continue; }
  want=$(printf '%s\n' "$rows" | awk -F'\t' -v m="$member" '$1 == m { print $2 }')
  got=$(awk -v s="$start" -v e="$end" '
    $0 == s { n++; inside = 1; next }
    $0 == e { inside = 0; next }
    inside && /^- `.*`$/ { print substr($0, 4, length($0) - 4) }
    END { if (n != 1) print "REGIONS " n }
  ' "$agent")
  if [ "$want" != "$got" ]; then
    echo "FAIL parity: $agent remit region does not hold $member's roster globs"
    failed=1
  fi
done
exit "$failed"
"""
VERIFY = ".gaia/scripts/verify-audit-roster.sh"
# GAIA's .gaia/audit-ci.yml up to 1.6.1: knobs only, no roster (the shape of GAIA's file:
# scalar knobs and the retrigger_workflows list indented under its key).
AUDIT_CI_161 = """\
# Knobs for the code-review-audit CI workflow.
gate_label: null
budget_seconds: 1800
max_turns: 60
push_fixes: true
retrigger_workflows:
  - Chromatic
  - Tests
"""


def roster_release_files() -> tuple[dict[str, str], dict[str, str], dict[str, object]]:
    """Files of a later GAIA release with a roster, their classes, and its manifest extras."""
    from tests.regions.test_regen_audit_remit import END as REMIT_END
    from tests.regions.test_regen_audit_remit import START as REMIT_START
    from tests.regions.test_regen_audit_remit import WRITER, WRITER_SCRIPT, agent

    members = {
        "code-audit-bash": [".gaia/**/*.sh", ".husky/**"],
        "code-audit-github-workflows": [".github/workflows/**"],
    }
    roster = "".join(
        f"  - name: {name}\n    globs:\n" + "".join(f'      - "{g}"\n' for g in globs)
        for name, globs in members.items()
    )
    config = AUDIT_CI_161 + "default_mode: local\nauditors:\n" + roster
    agents = {f".claude/agents/{name}.md": agent(name, f"You are {name}.") for name in members}
    files = {AUDIT_CI: config, WRITER: WRITER_SCRIPT, VERIFY: VERIFY_ROSTER, **agents}
    classes = {path: "owned" for path in files if path != AUDIT_CI}
    region = {
        "id": "audit-remit",
        "startMarker": REMIT_START,
        "endMarker": REMIT_END,
        "paths": sorted(agents),
        "regenerate": {"interpreter": "bash", "operand": WRITER, "args": []},
    }
    return files, classes, {"regions": [region]}


def test_roster_arrives_and_gaias_roster_check_passes_after_the_update(tmp_path: Path) -> None:
    # The adopter tuned a knob and recorded a per-author mode: their file differs from 1.6.1.
    mine = AUDIT_CI_161.replace("budget_seconds: 1800", "budget_seconds: 900")
    mine += 'audit_authors: "alice=local"\n'
    project = roster_project(tmp_path, mine)
    # The release itself passes the check, as GAIA's release does.
    assert subprocess.run(["bash", VERIFY], cwd=tmp_path / "rel/1.7.0").returncode == 0
    code, doc = update(project)
    assert code == 0, doc
    text = (project / AUDIT_CI).read_text()
    assert text.startswith(mine)  # every line of the adopter's file is still there
    roster = yaml.safe_load(text)["auditors"]
    assert [m["name"] for m in roster] == ["code-audit-bash", "code-audit-github-workflows"]
    assert [r["status"] for r in doc["regenerated"]] == ["regenerated"]
    check = subprocess.run(["bash", VERIFY], cwd=project, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    # The check can fail: without the roster the shipped auditors are dispatched by no one.
    (project / AUDIT_CI).write_text(mine)
    without = subprocess.run(["bash", VERIFY], cwd=project, capture_output=True, text=True)
    assert without.returncode == 1 and "FAIL unregistered" in without.stdout


def roster_project(tmp_path: Path, mine: str, filled: bool = True) -> Path:
    """A project installed from a 1.6.1-shaped release (no roster) with ``mine`` as its
    .gaia/audit-ci.yml, and a later release that ships the roster and its agents (their
    remit regions filled by the writer, as GAIA ships them, unless not ``filled``)."""
    releases = tmp_path / "rel"
    make_release(releases, "1.6.1", {AUDIT_CI: AUDIT_CI_161}, profile="gaia")
    files, classes, extra = roster_release_files()
    latest = make_release(releases, "1.7.0", files, classes, profile="gaia", extra=extra)
    if filled:
        subprocess.run(["bash", ".gaia/scripts/write-audit-remits.sh"], cwd=latest, check=True)
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(releases), "--to", "1.6.1")
    assert call(*init, "-C", str(project)) == 0
    write_files(project, {AUDIT_CI: mine})
    git(project, "add", "-A")
    git(project, "commit", "-qm", "GAIA 1.6.1")
    return project


def test_summary_names_the_paths_regeneration_rewrote(tmp_path: Path) -> None:
    mine = AUDIT_CI_161.replace("max_turns: 60", "max_turns: 30")
    project = roster_project(tmp_path, mine, filled=False)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "Regions: 1 regenerated, 0 failed, 0 skipped, 0 refused" in out
    listing = out.split("Rewritten by regeneration (they now differ from the release copy)")[1]
    assert ".claude/agents/code-audit-bash.md" in listing
    # GAIA's regions are audit gate machinery: earlier clearances no longer cover them.
    assert "Notice: The regenerated files are audit gate machinery" in out


def test_roster_that_fell_back_to_a_patch_skips_its_region_and_says_how_to_run_it(
    tmp_path: Path,
) -> None:
    project = roster_project(tmp_path, "budget_seconds: [unclosed\n")
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 4, result.stdout + result.stderr
    out = result.stdout
    assert f"{AUDIT_CI} → .gaia-merge/audit-ci.yml.patch" in out  # flat, as GAIA names it
    assert (tmp_path / "proj/.gaia-merge/audit-ci.yml.patch").is_file()
    assert (
        "audit-remit (skipped: its input .gaia/audit-ci.yml fell back to a whole-file "
        "conflict): run by hand: bash .gaia/scripts/write-audit-remits.sh"
    ) in out
    step = next(line for line in out.splitlines() if "for each region not regenerated" in line)
    assert step.endswith("then bash .gaia/scripts/verify-audit-roster.sh to confirm")
    assert "audit gate machinery" not in out  # nothing was regenerated


# --- Step 9 notes and Step 10 next steps, as GAIA lists them -------------------------------


def test_next_steps_name_the_quality_gate_the_commit_message_and_patch_deletion(
    tmp_path: Path,
) -> None:
    gate = "wiki/decisions/Quality Gate.md"
    mine = {gate: "# Quality gate\npnpm typecheck && pnpm lint && pnpm test\n"}
    mine[BASELINE_RULE] = "our own rules\n"  # both sides changed it: a patch
    project = gaia_project(tmp_path, shelf(tmp_path), mine)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 4, result.stdout + result.stderr
    steps = result.stdout.split("Next steps:", 1)[1]
    assert "delete each artifact once you have resolved it" in steps
    assert f"run the quality gate as {gate} describes" in steps
    assert "run your tests" not in steps
    assert "git commit -m 'chore: update GAIA to v1.1.0'" in steps


def test_open_pull_requests_stamped_with_the_old_version_get_the_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    git(project, "commit", "-q", "--allow-empty", "-m", f"feat: x\n\nGAIA-Audit: 1.0.0 {'a' * 40}")
    stamped = git(project, "rev-parse", "HEAD").strip()
    git(project, "reset", "-q", "--hard", "HEAD~1")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_PR_HEADS", stamped)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "Note: 1 open pull request(s) carry a GAIA-Audit trailer stamped with 1.0.0. On their "
        "next push CI runs the full audit again. To keep re-audits down, merge or close such "
        "pull requests before updating."
    ) in result.stdout


def regions_release(releases: Path, version: str, regions: list[object]) -> None:
    files = {
        "agents/a.md": f"# A {version}\n<!-- r:start -->\nbody\n<!-- r:end -->\n",
        "gen.sh": "#!/bin/bash\nexit 0\n",
    }
    make_release(
        releases, version, files, {"gen.sh": "owned"}, profile="gaia", extra={"regions": regions}
    )


def region(ident: str, operand: str = "gen.sh") -> dict[str, object]:
    return {
        "id": ident,
        "startMarker": "<!-- r:start -->",
        "endMarker": "<!-- r:end -->",
        "paths": ["agents/a.md"],
        "regenerate": {"interpreter": "bash", "operand": operand, "args": []},
    }


def test_region_notes_say_what_each_state_means(tmp_path: Path) -> None:
    releases = tmp_path / "rel"
    regions_release(releases, "1.0.0", [region("old"), region("kept")])
    # 1.1.0 drops "old", ships a malformed declaration, and one whose operand is no shipped
    # path (refused: there is nothing for the adopter to run).
    regions_release(releases, "1.1.0", [region("kept", "/bin/evil.sh"), {"id": "broken"}])
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert (
        call(
            "init",
            "--profile",
            "gaia",
            "--source",
            str(releases),
            "--to",
            "1.0.0",
            "-C",
            str(project),
        )
        == 0
    )
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "Their paths are compared whole from now on" in out  # dropped "old"
    assert "GAIA_UPDATE_NO_REGIONS=1 switches region awareness off for a run" in out
    refused = next(line for line in out.splitlines() if line.strip().startswith("kept (refused"))
    assert refused.endswith("nothing to run by hand; the remedy is in the release")
    assert "/bin/evil.sh" not in refused.split("):", 1)[1]
    assert "Their generated block does not match what your own configuration" in out


def test_region_fallback_says_the_path_went_back_to_the_whole_file_comparison(
    tmp_path: Path,
) -> None:
    releases = tmp_path / "rel"
    regions_release(releases, "1.0.0", [region("r")])
    regions_release(releases, "1.1.0", [region("r")])
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(releases), "--to", "1.0.0")
    assert call(*init, "-C", str(project)) == 0
    # The adopter's copy carries the start marker twice: its region cannot be masked.
    doubled = "# A 1.0.0\n<!-- r:start -->\n<!-- r:start -->\nbody\n<!-- r:end -->\n"
    write_files(project, {"agents/a.md": doubled})
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    out = result.stdout
    assert "Region fallbacks (malformed markers, compared whole) (1):" in out
    assert "These paths went back to the whole-file comparison for this run" in out


def test_files_merged_with_the_adopters_edits_are_named_for_review(tmp_path: Path) -> None:
    # Both sides changed the rules file, on different lines: GAIA would leave a patch;
    # tether merges it, and names it so the merge gets reviewed.
    project = gaia_project(tmp_path, shelf(tmp_path), {BASELINE_RULE: "# ours\nbaseline rules\n"})
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / BASELINE_RULE).read_text() == "# ours\nbaseline rules\ntightened\n"
    listing = result.stdout.split("Merged with your edits (review them", 1)[1]
    assert f"  {BASELINE_RULE}\n" in listing


# --- Step 3 without a terminal -------------------------------------------------------------


def test_nothing_to_do_is_said_without_a_terminal_or_yes(tmp_path: Path) -> None:
    # An agent runs the update with no terminal; it must hear "up to date", not "pass --yes".
    project = gaia_project(tmp_path, shelf(tmp_path))
    same = run_tether("update", "--no-branch", "--to", "1.0.0", "-C", str(project))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "already up to date" in same.stdout
    # Something to apply still needs consent: nothing is written without it.
    before = (project / ".gaia/VERSION").read_text()
    pending = run_tether("update", "--no-branch", "-C", str(project))
    assert pending.returncode == 1 and "pass --yes" in pending.stderr
    assert (project / ".gaia/VERSION").read_text() == before


# --- Step 1: no version marker -------------------------------------------------------------


def test_a_project_without_the_version_marker_gets_gaias_message(tmp_path: Path) -> None:
    # A tree with GAIA's manifest but no .gaia/VERSION and no record of an install.
    project = tmp_path / "proj"
    write_files(project, {".gaia/manifest.json": '{"files": {"README.md": "owned"}}'})
    for command in (("update", "--yes"), ("status",), ("check",)):
        result = run_tether(*command, "-C", str(project))
        assert result.returncode == 1, result.stdout
        assert result.stderr == (
            f"tether: {project}/.gaia/VERSION: not found: this project was not scaffolded from "
            "GAIA, or the marker was deleted; run /gaia-init on a fresh create-gaia scaffold "
            "first (or restore the marker: git checkout -- .gaia/VERSION)\n"
        )
    assert [p.name for p in project.rglob("*")] == [".gaia", "manifest.json"]  # nothing written


# --- Pre-flight: the worktree check comes first ----------------------------------------------


def test_linked_worktree_is_refused_first_quoting_mains_cached_update_check(
    tmp_path: Path,
) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    cache = project / ".gaia/local/cache/shared/update-check.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text('{"gaiaCurrent": "1.0.0", "gaiaLatest": "1.1.0", "gaiaHasUpdate": true}')
    linked = tmp_path / "spec-42"
    git(project, "worktree", "add", "-q", str(linked), "-b", "spec-42")
    for args in (("--yes",), ("--dry-run",), ("--yes", "--to", "1.0.0")):
        result = run_tether("update", *args, "-C", str(linked))
        assert result.returncode == 1, result.stdout
        assert result.stderr == (
            f"tether: {linked} is a linked worktree: an update belongs in the main checkout "
            f"{project}; cached on main: GAIA 1.0.0 installed; latest 1.1.0 (update "
            f"available); run 'cd {project}' and update there\n"
        )
    # Nothing was written in the worktree: no lock, no fetched release.
    assert not (linked / ".gaia/local").exists()
    assert git(linked, "status", "--porcelain", "--ignored").strip() == ""
    cache.unlink()
    result = run_tether("update", "--yes", "-C", str(linked))
    assert "cached state unavailable on main; symlinks may be broken, run " in result.stderr


def test_audit_ci_notes_are_flat_in_the_merge_folder_as_gaia_names_them(tmp_path: Path) -> None:
    mine = AUDIT_CI_161.replace("max_turns: 60", "max_turns: 30")
    project = roster_project(tmp_path, mine)
    code, doc = update(project)
    assert code == 0, doc
    # default_mode is new upstream: a suggestion, in the notes GAIA calls audit-ci.yml.notes.
    assert structured_rows(doc)[AUDIT_CI].endswith("(see .gaia-merge/audit-ci.yml.notes)")
    assert "default_mode" in (project / ".gaia-merge/audit-ci.yml.notes").read_text()
    assert not (project / ".gaia-merge/.gaia").exists()


# --- Step 4b: leftovers of an earlier run ------------------------------------------------


def test_leftover_merge_artifacts_get_a_heads_up_before_the_question_and_in_a_dry_run(
    tmp_path: Path,
) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    write_files(project, {".gaia-merge/README.md.patch": "--- an earlier run's patch\n"})
    heads_up = "Heads up: .gaia-merge/ still holds artifacts from an earlier run"
    dry = run_tether("update", "--dry-run", "--no-branch", "-C", str(project))
    assert heads_up in dry.stdout
    assert "  .gaia-merge/README.md.patch" in dry.stdout.split(heads_up, 1)[1]
    # On a terminal the plan shown before the question carries it too.
    from tether.flows.preflight import GitOptions
    from tether.flows.update import PreparedUpdate, UpdateRequest, run_update
    from tether.report.update import render_plan_summary

    shown: list[str] = []

    def confirm(prepared: PreparedUpdate) -> bool:
        shown.append(render_plan_summary(prepared.report("plan")))
        return False  # abort

    report = run_update(UpdateRequest(project, git=GitOptions(no_branch=True)), confirm)
    assert report.status == "cancelled" and heads_up in shown[0]
    assert (project / ".gaia-merge/README.md.patch").is_file()  # never deleted


# --- Step 3: the installed version ahead of every release ----------------------------------


def test_installed_version_ahead_of_the_newest_release_is_a_warning_never_a_downgrade(
    tmp_path: Path,
) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    assert run_tether("update", "--yes", "--no-branch", "-C", str(project)).returncode == 0
    # The newest release the source offers is withdrawn: 1.0.0 is the newest now.
    shutil.rmtree(tmp_path / "rel/1.1.0")
    before = tree_digest(project)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(
        "tether update: warning: the installed version (gaia 1.1.0) is ahead of the newest "
        "release (1.0.0); nothing to do, and tether never downgrades"
    )
    assert tree_digest(project) == before
    code, doc = update(project)
    assert (code, doc["status"]) == (0, "ahead")
    # Asked for by name, a downgrade is still refused.
    named = run_tether("update", "--yes", "--to", "1.0.0", "-C", str(project))
    assert named.returncode == 1 and "refusing to downgrade from 1.1.0 to 1.0.0" in named.stderr


# --- Step 7d: a failing regeneration never fails the update --------------------------------


def test_a_regeneration_program_that_fails_leaves_the_update_standing(tmp_path: Path) -> None:
    releases = tmp_path / "rel"
    regions_release(releases, "1.0.0", [region("r")])
    regions_release(releases, "1.1.0", [region("r")])
    write_files(
        releases / "1.1.0", {"gen.sh": "#!/bin/bash\necho 'roster unreadable' >&2\nexit 3\n"}
    )
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(releases), "--to", "1.0.0")
    assert call(*init, "-C", str(project)) == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert (project / ".gaia/VERSION").read_text().strip() == "1.1.0"  # the update stands
    assert "Regions: 0 regenerated, 1 failed, 0 skipped, 0 refused" in out
    failed = next(line for line in out.splitlines() if line.strip().startswith("r (failed"))
    assert failed.endswith("run by hand: bash gen.sh")


# --- status and check after a first update killed half way -----------------------------------


def test_a_killed_first_update_with_a_source_shows_as_unfinished_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A GAIA project tether never installed: GAIA's 1.0.0 tree, its marker, in git. Its first
    # update names the releases with --source. The default source, GitHub, is never reached:
    # a stand-in `gh` that fails and records its arguments takes its place.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN)  # fails but pr list
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_PR_HEADS", "")
    releases = shelf(tmp_path)
    project = tmp_path / "proj"
    shutil.copytree(releases / "1.0.0", project)
    write_files(project, {".gaia/VERSION": "1.0.0\n"})
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "GAIA 1.0.0")
    update_args = ("update", "--yes", "--no-branch", "--source", str(releases))
    killed = run_forked(*update_args, "-C", str(project), crash="file-written:1")
    assert killed.returncode == crashpoint.EXIT_CODE
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 3, check.stdout + check.stderr
    assert "unfinished update 1.0.0 → 1.1.0" in check.stdout
    status = run_tether("status", "--json", "-C", str(project))
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    assert doc["unfinished"]["to_version"] == "1.1.0" and doc["compared"] is False
    not_compared = "the files were not compared with the installed release: "
    rerun = "give the rerun the same --source the interrupted update was given"
    assert doc["notes"][0].startswith(not_compared) and doc["notes"][1] == rerun
    checked = json.loads(run_tether("check", "--json", "-C", str(project)).stdout)
    assert checked["notes"] == doc["notes"]
    human = run_tether("status", "-C", str(project)).stdout
    assert "clean 0" not in human
    assert f"note: {doc['notes'][0]}\nnote: {rerun}" in human
    assert f"note: {doc['notes'][0]}\nnote: {rerun}" in check.stdout
    finished = run_tether(*update_args, "-C", str(project))
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert run_tether("check", "-C", str(project)).returncode == 0
    release_calls = [c for c in (tmp_path / "gh.log").read_text().splitlines() if "pr" not in c]
    assert release_calls  # status asked the stand-in, never GitHub


# --- Step 4b: pruning runs only after Proceed ----------------------------------------------


def test_backups_are_pruned_only_once_the_update_is_confirmed(tmp_path: Path) -> None:
    from tether.flows.preflight import GitOptions
    from tether.flows.update import UpdateRequest, run_update

    project = gaia_project(tmp_path, shelf(tmp_path))
    earlier = [f"2026010{i}T000000000000Z-00000{i}" for i in range(1, 8)]  # seven earlier runs
    for run in earlier:
        write_files(project, {f".gaia-backup/{run}/README.md": "an earlier backup\n"})

    def runs() -> list[str]:
        return sorted(p.name for p in (project / ".gaia-backup").iterdir())

    request = UpdateRequest(project, git=GitOptions(no_branch=True))
    aborted = run_update(request, lambda prepared: False)
    assert aborted.status == "cancelled" and runs() == earlier
    dry = run_update(UpdateRequest(project, dry_run=True, git=GitOptions(no_branch=True)))
    assert dry.status == "dry-run" and runs() == earlier
    done = run_update(request)
    assert done.status == "updated"
    assert runs() == sorted([*earlier[-5:], str(done.run_id)])  # five earlier runs kept
    again = run_update(request)  # nothing newer (applied, not committed yet): nothing pruned
    assert again.status == "not-committed"
    assert runs() == sorted([*earlier[-5:], str(done.run_id)])


def test_a_resumed_run_prunes_nothing(tmp_path: Path) -> None:
    """GAIA Step 4b never runs for the interrupted run Step 3 surfaces: its backups (and
    those of the runs before it) are still in flight."""
    project = gaia_project(tmp_path, shelf(tmp_path))
    update = ("update", "--yes", "--no-branch", "-C", str(project))
    assert run_forked(*update, crash="file-written:1").returncode == crashpoint.EXIT_CODE
    [interrupted] = sorted(p.name for p in (project / ".gaia-backup").iterdir())
    earlier = [f"2026010{i}T000000000000Z-00000{i}" for i in range(1, 8)]  # would be pruned
    for run in earlier:
        write_files(project, {f".gaia-backup/{run}/README.md": "an earlier backup\n"})
    (project / ".gaia-merge").mkdir(exist_ok=True)
    resumed = run_tether(*update)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming interrupted update" in resumed.stdout
    assert sorted(p.name for p in (project / ".gaia-backup").iterdir()) == [*earlier, interrupted]
    assert (project / ".gaia-merge").is_dir()


def test_an_empty_merge_folder_is_removed_once_the_update_is_confirmed(tmp_path: Path) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    (project / ".gaia-merge").mkdir()
    dry = run_tether("update", "--dry-run", "-C", str(project))
    assert dry.returncode == 0 and (project / ".gaia-merge").is_dir()
    done = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (project / ".gaia-merge").exists()


def test_a_merge_folder_that_is_a_link_is_never_removed(tmp_path: Path) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".gaia-merge").symlink_to(elsewhere)
    run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert (project / ".gaia-merge").is_symlink() and elsewhere.is_dir()


# --- The adopter's own files: never touched ---------------------------------------------------


def test_sentinels_and_files_outside_the_manifest_are_never_touched(tmp_path: Path) -> None:
    """GAIA's implicit adopter-owned class: anything the manifest does not list, and
    wiki/hot.md, wiki/log.md and CHANGELOG.md even when the release ships its own."""
    releases = shelf(tmp_path)
    for version in ("1.0.0", "1.1.0"):
        write_files(
            releases / version,
            {
                "wiki/hot.md": f"GAIA's hot list {version}\n",
                "wiki/log.md": f"GAIA's log {version}\n",
                "CHANGELOG.md": f"# GAIA's changes\n\n## [{version}]\n\n- Release.\n",
                "docs/unlisted.md": f"shipped, not in the manifest {version}\n",
            },
        )
    mine = {
        "wiki/hot.md": "our hot list\n",
        "wiki/log.md": "our log\n",
        "CHANGELOG.md": "# Our changes\n",
        "docs/unlisted.md": "our page\n",
        "src/app.ts": "export {};\n",
    }
    project = gaia_project(tmp_path, releases, mine)
    code, doc = update(project)
    assert code == 0, doc
    for rel, text in mine.items():
        assert (project / rel).read_text() == text, rel
        assert all(rel not in paths for paths in doc["buckets"].values()), rel
    assert not list((project / ".gaia-backup").rglob("hot.md"))
    assert (project / ".gaia/VERSION").read_text() == "1.1.0\n"  # the bump alone


# --- Step 9: GAIA's update ping, best effort --------------------------------------------------

# Stands in for GAIA's bundled CLI: records its arguments (outside the project) and exits
# with PING_EXIT.
GAIA_CLI = """#!/bin/sh
printf '%s\\n' "$*" >> "$PING_LOG"
exit "${PING_EXIT:-0}"
"""


def ping_project(tmp_path: Path) -> Path:
    releases = shelf(tmp_path)
    for version in ("1.0.0", "1.1.0"):
        root = releases / version
        write_files(root, {".gaia/cli/gaia": GAIA_CLI})
        (root / ".gaia/cli/gaia").chmod(0o755)
        manifest = root / ".gaia/manifest.json"
        data = json.loads(manifest.read_text())
        data["files"][".gaia/cli/gaia"] = "owned"
        manifest.write_text(json.dumps(data))
    return gaia_project(tmp_path, releases)


def test_the_update_ping_is_sent_once_the_version_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "ping.log"
    monkeypatch.setenv("PING_LOG", str(log))
    project = ping_project(tmp_path)
    dry = run_tether("update", "--dry-run", "--no-branch", "-C", str(project))
    assert ".gaia/cli/gaia ping --event update --from 1.0.0 --to 1.1.0 (update ping" in dry.stdout
    assert not log.exists()  # a dry run runs no program
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    assert log.read_text() == "ping --event update --from 1.0.0 --to 1.1.0\n"
    assert "Update ping:" in result.stdout and "sent (" in result.stdout


def test_a_failing_ping_never_fails_the_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PING_LOG", str(tmp_path / "ping.log"))
    monkeypatch.setenv("PING_EXIT", "7")
    project = ping_project(tmp_path)
    code, doc = update(project)
    assert code == 0, doc
    ping = doc["ping"]  # how it ended is a fact of the flow, worded by report/
    assert (ping["status"], ping["reason"]) == ("failed", "exited 7") and "why" not in ping
    assert (project / ".gaia/VERSION").read_text().strip() == "1.1.0"


@pytest.mark.parametrize(
    ("variable", "flag", "reason"),
    [
        ("TETHER_NO_UPDATE_PING", (), "TETHER_NO_UPDATE_PING=1"),
        (None, ("--no-programs",), "--no-programs"),
    ],
)
def test_the_ping_can_be_left_out(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str | None,
    flag: tuple[str, ...],
    reason: str,
) -> None:
    log = tmp_path / "ping.log"
    monkeypatch.setenv("PING_LOG", str(log))
    if variable:
        monkeypatch.setenv(variable, "1")
    project = ping_project(tmp_path)
    code, doc = update(project, *flag)
    assert code == 0, doc
    assert doc["ping"] == {
        "command": ".gaia/cli/gaia ping --event update --from 1.0.0 --to 1.1.0",
        "status": "not-run",
        "reason": reason,
    }
    assert not log.exists()


def test_cached_releases_other_than_the_installed_and_the_new_one_are_pruned(
    tmp_path: Path,
) -> None:
    from helpers_sources import commit_release, init_repo

    upstream = init_repo(tmp_path / "upstream")
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        files = {"README.md": f"readme {version}\n"}
        manifest = {"version": version, "files": {"README.md": "owned"}}
        files[".gaia/manifest.json"] = json.dumps(manifest)
        commit_release(upstream, files, f"v{version}")
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(upstream), "--to", "1.0.0")
    result = run_tether(*init, "-C", str(project))
    assert result.returncode == 0, result.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    cache = project / ".gaia/local/cache/shared/update-gaia/releases"

    def cached() -> list[str]:
        return sorted(p.name for p in cache.glob("*/*") if not p.name.startswith("."))

    assert cached() == ["1.0.0"]
    assert update(project, "--to", "1.1.0")[0] == 0
    assert cached() == ["1.0.0", "1.1.0"]  # the installed release and the new one
    git(project, "commit", "-qam", "1.1.0")
    dry = update(project, "--dry-run")
    assert dry[1]["status"] == "dry-run" and cached() == ["1.0.0", "1.1.0", "1.2.0"]
    assert update(project)[0] == 0
    assert cached() == ["1.1.0", "1.2.0"]  # 1.0.0 pruned once the update was confirmed


# --- --abandon: how much was put back, and what cannot be -----------------------------------


def changed_paths(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


def test_abandon_counts_the_files_it_put_back_and_names_one_changed_since(
    tmp_path: Path,
) -> None:
    from tests.flows.test_crash_safety import every_bucket_fixture, run_update, user_tree

    project = every_bucket_fixture(tmp_path)
    before = user_tree(project)
    assert run_update(project, "finalize-started:1").returncode == crashpoint.EXIT_CODE
    wrote = changed_paths(before, user_tree(project))
    assert "add.txt" in wrote  # a file the run created, which it would remove
    (project / "add.txt").write_text("my own words now\n")
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert (
        f"put back {len(wrote) - 1} of the {len(wrote)} files the interrupted run wrote "
        f"({len(wrote) - 1} restored from .tether/backup/"
    ) in result.stdout
    assert "left as they are: add.txt (changed since the run wrote it)" in result.stdout
    assert (project / "add.txt").read_text() == "my own words now\n"
    after = user_tree(project)
    assert changed_paths(before, after) == {"add.txt"}


def test_abandon_names_the_spec_folder_moves_it_cannot_undo(tmp_path: Path) -> None:
    flat = {f"{SPECS}/SPEC-7.md": "spec 7\n", f"{SPECS}/SPEC-9.md": "spec 9\n"}
    project = gaia_project(tmp_path, shelf(tmp_path), flat)
    before = tree_digest(project)
    update = ("update", "--yes", "--no-branch", "-C", str(project))
    assert run_forked(*update, crash="migration-finished:1").returncode == crashpoint.EXIT_CODE
    moved = {f"{SPECS}/SPEC-7.md", f"{SPECS}/SPEC-9.md", f"{SPECS}/7/SPEC.md", f"{SPECS}/9/SPEC.md"}
    runtime = (".gaia-backup/", ".gaia/local/tether/", ".gaia/local/cache/")
    wrote = {
        p for p in changed_paths(before, tree_digest(project)) if not p.startswith(runtime)
    } - moved
    assert wrote  # the merge wrote files before the migration ran
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert f"put back all {len(wrote)} files the interrupted run wrote" in result.stdout
    assert (
        f"not undone: what migration spec-folderize changed (`bash {FOLDERIZE}`, ok; "
        "Specs migrated: 2)"
    ) in result.stdout
    # The files are back; the SPEC moves are not, as the note says.
    after = tree_digest(project)
    assert {p for p in changed_paths(before, after) if not p.startswith(runtime)} == moved
    assert (project / SPECS / "7/SPEC.md").read_text() == "spec 7\n"


def test_abandon_says_nothing_of_a_migration_that_moved_nothing(tmp_path: Path) -> None:
    project = gaia_project(tmp_path, shelf(tmp_path))
    update = ("update", "--yes", "--no-branch", "-C", str(project))
    assert run_forked(*update, crash="migration-finished:1").returncode == crashpoint.EXIT_CODE
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert "not undone" not in result.stdout


# --- Done when: an update settled and committed leaves nothing behind ----------------------


def test_an_update_settled_and_committed_leaves_nothing_in_status_or_check(
    tmp_path: Path,
) -> None:
    """Every kind of follow-up at once: a file-level conflict (a patch), a re-pinned key
    (notes), a suggestion, a changelog follow-up and a SPEC migration conflict. Settled by
    hand and committed, status and check name nothing of that update."""
    from tests.lifecycle.test_lifecycle_gaia import CLASSES
    from tests.lifecycle.test_lifecycle_gaia import release_files as lifecycle_files

    releases = tmp_path / "rel"
    mixed = {
        "1.0.0": {PKG: PKG_V1, WORKSPACE: WORKSPACE_V1, AUDIT_CI: AUDIT_V1},
        "1.1.0": {PKG: PKG_V2, WORKSPACE: WORKSPACE_V2, AUDIT_CI: AUDIT_V2},
    }
    for version, files in mixed.items():
        files = lifecycle_files(version) | files
        root = make_release(releases, version, files, CLASSES, profile="gaia")
        write_files(root, {"CHANGELOG.md": CHANGELOG})
    mine = {
        PKG: PKG_V1.replace("^18.3.0", "^18.2.0"),
        "README.md": "my readme\n",
        f"{SPECS}/SPEC-7.md": "flat\n",
        f"{SPECS}/7/SPEC.md": "folder\n",
    }
    project = gaia_project(tmp_path, releases, mine)
    code, doc = update(project)
    assert code == 4, doc
    assert [a["command"] for a in doc["adopter_actions"]] == ["pnpm remove react-router-dom"]
    merge = project / ".gaia-merge"
    assert sorted(p.name for p in merge.iterdir()) == [
        "README.md.patch",
        "package.json.notes",
        "pnpm-workspace.yaml.notes",
    ]
    before = run_tether("check", "-C", str(project))
    assert before.returncode == 3, before.stdout
    # Settled by hand: the conflict resolved and its patch deleted, the notes read and
    # deleted, the follow-up done, the SPEC kept as a folder and the migration run again.
    (project / "README.md").write_text("my readme, and what 1.1.0 changed\n")
    for artifact in merge.iterdir():
        artifact.unlink()
    pkg = (project / PKG).read_text()
    (project / PKG).write_text(pkg.replace(',\n    "react-router-dom": "^6.0.0"', ""))
    (project / SPECS / "SPEC-7.md").unlink()
    assert run_tether("migrations", "--rerun", "-C", str(project)).returncode == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "chore: update GAIA to v1.1.0")
    check = run_tether("check", "-C", str(project))
    assert (check.returncode, check.stdout.strip()) == (0, "tether check: clean (gaia 1.1.0)")
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["conflicts"] == [] and status["action_items"] == []
    assert status["unfinished"] is None and status["notes"] == []
    shown = run_tether("status", "-C", str(project)).stdout
    for word in ("conflict", "Action required", ".gaia-merge", "spec-folderize", "react-router"):
        assert word not in shown, (word, shown)
    again = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert again.returncode == 0 and "already up to date" in again.stdout, again.stdout
