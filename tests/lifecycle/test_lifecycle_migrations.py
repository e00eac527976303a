"""Versioned migrations declared by a release (docs/lifecycle.md), run by real updates on real
projects: order across versions, the exit contract, dry runs, --skip-migrations, state, and
crashes before, during and after a migration."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from builders import call, git, make_release, run_forked, run_tether, schema_validator, tree_digest
from tether.state import crashpoint

LOG = "mig.log"  # adopter data the migrations append to (not a release file)


def script(tag: str, exit_code: int = 0, extra: str = "") -> str:
    """A migration program: appends one line naming itself and the versions, then exits."""
    return (
        "#!/bin/bash\n"
        f'line="{tag} $TETHER_VERSION_FROM $TETHER_VERSION_TO $(pwd -P)"\n'
        f'echo "$line" >> "$TETHER_PROJECT_ROOT/{LOG}"\n'
        f"{extra}"
        f"exit {exit_code}\n"
    )


def migration(ident: str, version: str | None, when: str = "after", **more: object) -> dict:
    entry: dict[str, object] = {"id": ident, "when": when, "run": ["bash", f"mig/{ident}.sh"]}
    if version is not None:
        entry["version"] = version
    entry.update(more)
    return entry


BASE = {"app.txt": "one\n"}
SCRIPTS = {f"mig/{i}.sh": script(i) for i in ("m09", "m12", "m15", "m20")}
DECLARED = [
    migration("m20", "2.0.0"),
    migration("m12", "1.2.0"),
    migration("m15", "1.5.0", "before"),
    migration("m09", "0.9.0"),
]


def shelf_with(tmp_path: Path, declared: list[dict], scripts: dict[str, str]) -> Path:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", BASE)
    make_release(
        shelf,
        "1.5.0",
        {**BASE, "app.txt": "two\n", **scripts},
        extra={
            "migrations": [
                m for m in declared if m.get("version") in ("0.9.0", "1.2.0", "1.5.0", None)
            ]
        },
    )
    make_release(
        shelf, "2.0.0", {**BASE, "app.txt": "three\n", **scripts}, extra={"migrations": declared}
    )
    return shelf


def installed(tmp_path: Path, shelf: Path, version: str = "1.0.0") -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", version, "-C", str(project)) == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


def update(project: Path, *args: str) -> tuple[int, dict]:
    """``tether update --json``; its document must match the published schema."""
    result = run_tether("update", "--yes", "--no-branch", "--json", *args, "-C", str(project))
    assert result.stdout, result.stderr
    doc = json.loads(result.stdout)
    if "error" not in doc:
        schema_validator("update-report").validate(doc)
    return result.returncode, doc


def log_lines(project: Path) -> list[str]:
    path = project / LOG
    return path.read_text().splitlines() if path.exists() else []


def state(project: Path) -> dict:
    return json.loads((project / ".tether/state.json").read_text())


def test_update_across_versions_runs_each_crossed_migration_in_order(tmp_path):
    project = installed(tmp_path, shelf_with(tmp_path, DECLARED, SCRIPTS))
    code, doc = update(project, "--to", "2.0.0")
    assert code == 0, doc
    real = str(project.resolve())
    # before-migrations first, then after-migrations in version order; 0.9.0 is not crossed
    assert log_lines(project) == [
        f"m15 1.0.0 2.0.0 {real}",
        f"m12 1.0.0 2.0.0 {real}",
        f"m20 1.0.0 2.0.0 {real}",
    ]
    assert [(m["id"], m["status"]) for m in doc["migrations"]] == [
        ("m15", "ok"),
        ("m12", "ok"),
        ("m20", "ok"),
    ]
    assert sorted(state(project)["applied_migrations"]) == ["m12", "m15", "m20"]
    assert (project / "app.txt").read_text() == "three\n"


def test_two_updates_run_each_migration_once(tmp_path):
    project = installed(tmp_path, shelf_with(tmp_path, DECLARED, SCRIPTS))
    assert update(project, "--to", "1.5.0")[0] == 0
    assert [line.split()[0] for line in log_lines(project)] == ["m15", "m12"]
    git(project, "add", "-A")
    git(project, "commit", "-qm", "1.5")
    code, doc = update(project, "--to", "2.0.0")
    assert code == 0
    assert [line.split()[:3] for line in log_lines(project)][2:] == [["m20", "1.5.0", "2.0.0"]]
    assert [m["id"] for m in doc["migrations"]] == ["m20"]
    listed = run_tether("migrations", "--json", "-C", str(project))
    rows = {m["id"]: m["status"] for m in json.loads(listed.stdout)["migrations"]}
    assert rows == {"m20": "applied", "m12": "applied", "m15": "applied", "m09": "not-run"}


def test_before_migration_runs_before_any_file_is_written(tmp_path):
    check = 'cp "$TETHER_PROJECT_ROOT/app.txt" "$TETHER_PROJECT_ROOT/seen-by-before.txt"\n'
    scripts = {**SCRIPTS, "mig/m15.sh": script("m15", extra=check)}
    project = installed(tmp_path, shelf_with(tmp_path, DECLARED, scripts))
    assert update(project, "--to", "2.0.0")[0] == 0
    assert (project / "seen-by-before.txt").read_text() == "one\n"  # not yet merged


CONFLICT = 'echo "flat SPEC-7.md and folder 7/SPEC.md both exist" >&2\n'


def test_conflict_exit_is_a_blocking_action_item_not_a_stop(tmp_path):
    declared = [
        migration("m20", "2.0.0", exit={"ok": [0], "conflict": [4]}, label="Specs migrated")
    ]
    scripts = {"mig/m20.sh": script("m20", 4, CONFLICT)}
    project = installed(tmp_path, shelf_with(tmp_path, declared, scripts))
    code, doc = update(project, "--to", "2.0.0")
    assert code == 4  # finished, with something left for a person
    assert doc["status"] == "updated" and doc["state_written"] is True
    assert (project / "app.txt").read_text() == "three\n"  # everything merged is kept
    [item] = doc["action_items"]
    assert item["status"] == "conflict" and "SPEC-7.md" in item["stderr"]
    assert state(project)["applied_migrations"]["m20"]["status"] == "conflict"
    human = run_tether("migrations", "--pending", "-C", str(project)).stdout
    assert "m20 (2.0.0, after): conflict" in human


def test_other_exit_is_an_error_item_and_the_summary_names_it(tmp_path):
    declared = [
        migration("m20", "2.0.0", exit={"ok": [0], "conflict": [4]}, label="Specs migrated")
    ]
    scripts = {"mig/m20.sh": script("m20", 2, 'echo "usage: m20" >&2\n')}
    project = installed(tmp_path, shelf_with(tmp_path, declared, scripts))
    result = run_tether("update", "--yes", "--no-branch", "--to", "2.0.0", "-C", str(project))
    assert result.returncode == 4
    assert "Specs migrated:" in result.stdout and "error, see action item below" in result.stdout
    assert "Action required: migration m20 could not complete" in result.stdout
    assert "usage: m20" in result.stdout


def test_failed_migration_runs_again_on_the_next_update(tmp_path):
    declared = [migration("m15", "1.5.0", exit={"ok": [0], "conflict": [4]})]
    shelf = shelf_with(tmp_path, declared, {"mig/m15.sh": script("m15", 4)})
    # 2.0.0 ships a fixed program
    (shelf / "2.0.0/mig/m15.sh").write_text(script("m15-fixed"))
    project = installed(tmp_path, shelf)
    assert update(project, "--to", "1.5.0")[0] == 4
    git(project, "add", "-A")
    git(project, "commit", "-qm", "1.5")
    code, doc = update(project, "--to", "2.0.0")
    assert code == 0, doc
    assert [line.split()[0] for line in log_lines(project)] == ["m15", "m15-fixed"]
    assert state(project)["applied_migrations"]["m15"]["status"] == "ok"


def test_summary_pattern_capture_goes_into_the_summary(tmp_path):
    noisy = 'echo "spec-folderize: migrated 3 SPEC artifact(s)" >&2\n'
    declared = [
        migration("m20", "2.0.0", summary_pattern=r"migrated (\d+)", label="Specs migrated")
    ]
    project = installed(
        tmp_path, shelf_with(tmp_path, declared, {"mig/m20.sh": script("m20", 0, noisy)})
    )
    code, doc = update(project, "--to", "2.0.0")
    assert code == 0
    assert doc["migrations"][0]["summary"] == "3"
    git(project, "checkout", "-q", ".")  # not needed for the check below; keeps git quiet


def test_dry_run_runs_no_migration_even_one_declaring_dry_run_args(tmp_path):
    """A dry run executes no program the release ships: a migration declaring dry-run
    arguments (a "before" one, which would run the release's copy) is listed, not run."""
    # Proof outside the project: nothing a dry run puts back there can hide that it ran.
    proof = tmp_path / "ran-in-dry-run.txt"
    marker = f'echo ran > "{proof}"\n'
    declared = [
        migration("m12", "1.2.0", "before", dry_run_args=["--check"]),
        migration("m20", "2.0.0"),
    ]
    scripts = {"mig/m12.sh": script("m12", 0, marker), "mig/m20.sh": script("m20", 0, marker)}
    project = installed(tmp_path, shelf_with(tmp_path, declared, scripts))
    before = adopter_files(project)
    code, doc = update(project, "--dry-run", "--to", "2.0.0")
    assert code == 0
    assert adopter_files(project) == before
    assert not proof.exists() and log_lines(project) == []
    rows = {m["id"]: (m["status"], m["dry_run"], m["reason"]) for m in doc["migrations"]}
    none_run = "a dry run runs no program a release ships"
    assert rows == {"m12": ("planned", False, none_run), "m20": ("planned", False, none_run)}
    human = run_tether("update", "--dry-run", "--to", "2.0.0", "-C", str(project)).stdout
    assert "would run before the merge: bash mig/m12.sh" in human
    assert "would run after the merge: bash mig/m20.sh" in human
    assert "Programs the release ships that this update runs (2):" in human
    assert "bash mig/m12.sh (migration m12, before the merge, the release's copy)" in human
    assert not proof.exists()


def test_why_a_dry_run_lists_a_migration_is_its_status_worded_in_report():
    # The flow records the fact (status planned, no words); report/ words the reason in the
    # update document, the same words as before.
    from tether.flows.lifecycle_plan import LifecyclePlan
    from tether.flows.lifecycle_steps import dry_run_migrations
    from tether.model.lifecycle_declarations import Migration
    from tether.report.lifecycle_steps import migration_document

    plan = LifecyclePlan(migrations=[Migration("m12", "1.2.0", "before", ("bash", "m.sh"))])
    dry_run_migrations(plan)
    [result] = plan.migration_results()
    assert (result.status, result.reason) == ("planned", "")
    document = migration_document(result.to_json())
    assert document == {**result.to_json(), "reason": "a dry run runs no program a release ships"}
    assert list(document) == list(result.to_json())  # the same keys, in the same order
    skipped = {**result.to_json(), "status": "skipped", "reason": "--skip-migrations"}
    assert migration_document(skipped) == skipped


def test_skip_migrations_is_loud_recorded_and_run_by_the_next_update(tmp_path):
    declared = [migration("m12", "1.2.0")]
    project = installed(tmp_path, shelf_with(tmp_path, declared, SCRIPTS))
    result = run_tether(
        "update", "--yes", "--no-branch", "--skip-migrations", "--to", "1.5.0", "-C", str(project)
    )
    assert result.returncode == 0, result.stderr
    assert "MIGRATIONS SKIPPED (--skip-migrations): 1 due migration(s)" in result.stdout
    assert log_lines(project) == []
    pending = json.loads(run_tether("migrations", "--pending", "--json", "-C", str(project)).stdout)
    assert [(m["id"], m["status"]) for m in pending["migrations"]] == [("m12", "skipped")]
    git(project, "add", "-A")
    git(project, "commit", "-qm", "1.5")
    assert update(project, "--to", "2.0.0")[0] == 0
    assert [line.split()[0] for line in log_lines(project)] == ["m12"]


# --- crashes ------------------------------------------------------------------------------


def crash(project: Path, point: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    argv = ("update", "--yes", "--no-branch", "--to", "2.0.0", *args, "-C", str(project))
    return run_forked(*argv, crash=point)


@pytest.mark.parametrize(
    ("point", "runs"),
    [
        ("run-started:1", 1),  # before the migration started: the rerun runs it
        ("migration-finished:1", 1),  # after it finished: the rerun does not run it again
        ("file-written:1", 1),  # files half written after a before-migration
        ("state-written:1", 1),  # after everything but the last record
    ],
)
def test_crash_then_rerun_runs_each_migration_once(tmp_path, point, runs):
    declared = [migration("m15", "1.5.0", "before"), migration("m20", "2.0.0")]
    project = installed(tmp_path, shelf_with(tmp_path, declared, SCRIPTS))
    crashed = crash(project, point)
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    rerun = crash(project, None)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    lines = [line.split()[0] for line in log_lines(project)]
    assert lines.count("m15") == runs and lines.count("m20") == runs
    assert (project / "app.txt").read_text() == "three\n"
    assert sorted(state(project)["applied_migrations"]) == ["m15", "m20"]


def test_crash_during_a_migration_runs_it_again_and_says_so(tmp_path):
    # The program kills tether itself halfway: a real crash while the migration runs.
    killer = (
        'if [ ! -e "$TETHER_PROJECT_ROOT/killed-once" ]; then '
        'touch "$TETHER_PROJECT_ROOT/killed-once"; kill -9 $PPID; sleep 5; fi\n'
    )
    scripts = {**SCRIPTS, "mig/m15.sh": script("m15", extra=killer)}
    declared = [migration("m15", "1.5.0", "before")]
    project = installed(tmp_path, shelf_with(tmp_path, declared, scripts))
    crashed = crash(project, None)
    assert crashed.returncode == -9
    # The plan of the rerun holds the fact (report/notes.py words it in the output below).
    from tether.flows.notes import MigrationInterrupted
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update

    prepared = prepare_update(UpdateRequest(project, to="2.0.0", command="update --to 2.0.0"))
    assert isinstance(prepared, PreparedUpdate)
    assert prepared.lifecycle.notes == [MigrationInterrupted("m15")]
    rerun = crash(project, None)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "migration m15 was interrupted while it ran; it runs again" in rerun.stdout
    assert [line.split()[0] for line in log_lines(project)] == ["m15", "m15"]
    assert state(project)["applied_migrations"]["m15"]["status"] == "ok"


# --- bad declarations ---------------------------------------------------------------------


def test_update_refuses_a_bad_declaration_naming_the_entry(tmp_path):
    declared = [migration("m20", "2.0.0", when="later")]
    project = installed(tmp_path, shelf_with(tmp_path, [], SCRIPTS))
    manifest = tmp_path / "shelf/2.0.0/.tether/manifest.json"
    doc = json.loads(manifest.read_text())
    doc["migrations"] = declared
    manifest.write_text(json.dumps(doc))
    before = adopter_files(project)
    result = run_tether("update", "--yes", "--no-branch", "--to", "2.0.0", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "migrations[0] (m20): 'when' must be before or after, got 'later'" in result.stderr
    assert adopter_files(project) == before


def adopter_files(project: Path) -> dict[str, bytes]:
    """The project's files and tether's state (the lock and the cache aside)."""
    return {
        rel: data
        for rel, data in tree_digest(project).items()
        if not rel.startswith((".tether/lock", ".tether/cache", ".git/"))
    }
