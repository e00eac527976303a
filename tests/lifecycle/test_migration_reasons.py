"""Why a migration could not start and how its program ended are facts (``ProgramWhy``, a
code with its data): the journal records the fact, and ``report/lifecycle_steps`` words it in
the update document, its text and ``tether migrations --rerun``. A run killed and resumed
words it the same; a journal written before the fact (words in ``reason``) is still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import run_tether
from lifecycle.test_lifecycle_migrations import crash, installed, migration, script, shelf_with
from tether.flows.lifecycle_plan import MigrationResult, ProgramCode, ProgramWhy
from tether.flows.project import open_project
from tether.process import Finished
from tether.report.lifecycle_steps import migration_document, program_reason
from tether.state import crashpoint
from tether.state.journal import STEP_MIGRATION_FINISHED

FAILING = [migration("m20", "2.0.0", exit={"ok": [0], "conflict": [4]})]
FAILING_SCRIPTS = {"mig/m20.sh": script("m20", 2)}
EXITED_2 = "ran and exited 2"


def journal_path(project: Path) -> Path:
    opened = open_project(project)
    return opened.path(opened.profile.journal_file)


def finished_records(project: Path) -> list[dict]:
    lines = journal_path(project).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return [r for r in records if r.get("step") == STEP_MIGRATION_FINISHED]


def update_json(project: Path) -> dict:
    argv = ("update", "--yes", "--no-branch", "--json", "--to", "2.0.0", "-C", str(project))
    result = run_tether(*argv)
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def test_the_journal_records_how_a_migration_ended_as_a_code(tmp_path):
    project = installed(tmp_path, shelf_with(tmp_path, FAILING, FAILING_SCRIPTS))
    doc = update_json(project)
    [record] = finished_records(project)
    assert record["why"] == {"code": "exited", "exit_code": 2}
    assert record["reason"] == ""  # no words in the journal
    [entry] = doc["migrations"]
    assert entry["reason"] == EXITED_2 and "why" not in entry
    [item] = doc["action_items"]
    assert item["reason"] == EXITED_2 and "why" not in item


def test_a_migration_the_release_does_not_ship_is_skipped_with_the_fact(tmp_path):
    declared = [migration("m20", "2.0.0")]  # its program, mig/m20.sh, is not in the release
    project = installed(tmp_path, shelf_with(tmp_path, declared, {}))
    doc = update_json(project)
    [record] = finished_records(project)
    assert record["status"] == "skipped"
    assert record["why"] == {"code": "not-shipped", "operand": "mig/m20.sh"}
    [entry] = doc["migrations"]
    assert entry["reason"] == "this release does not ship mig/m20.sh"


def test_a_killed_and_resumed_run_words_the_journaled_fact_the_same(tmp_path):
    whole = installed(tmp_path / "whole", shelf_with(tmp_path / "whole", FAILING, FAILING_SCRIPTS))
    expected = update_json(whole)
    project = installed(tmp_path, shelf_with(tmp_path, FAILING, FAILING_SCRIPTS))
    crashed = crash(project, "migration-finished:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    resumed = update_json(project)
    assert resumed["migrations"][0]["reason"] == expected["migrations"][0]["reason"] == EXITED_2
    assert resumed["action_items"] == expected["action_items"]


def test_a_journal_written_with_words_in_reason_is_read_and_shown_as_before(tmp_path):
    project = installed(tmp_path, shelf_with(tmp_path, FAILING, FAILING_SCRIPTS))
    crashed = crash(project, "migration-finished:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    # Rewrite the record as a tether before the fact wrote it: words, no ``why``.
    path = journal_path(project)
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("step") == STEP_MIGRATION_FINISHED:
            record.pop("why")
            record["reason"] = "ran and exited 2 (as an older tether put it)"
        lines.append(json.dumps(record, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n")
    resumed = update_json(project)
    [item] = resumed["action_items"]
    assert item["reason"] == "ran and exited 2 (as an older tether put it)"
    text = run_tether("migrations", "--pending", "-C", str(project))
    assert text.returncode == 0, text.stderr


@pytest.mark.parametrize(
    ("finished", "code"),
    [
        (Finished(("bash",), started=True, exit_code=3), ProgramCode.EXITED),
        (Finished(("bash",), started=True, exit_code=-9), ProgramCode.KILLED),
        (
            Finished(("bash",), started=True, timed_out=True, timeout=5, limit="TETHER_X"),
            ProgramCode.TIMED_OUT,
        ),
        (Finished(("bash",), started=True, timed_out=True), ProgramCode.TIMED_OUT),
        (Finished(("bash",), started=False, error="no such file"), ProgramCode.NOT_STARTED),
    ],
)
def test_how_a_program_ended_is_worded_as_the_process_edge_says_it(finished, code):
    from tether.flows.lifecycle_plan import program_end

    why = program_end(finished)
    assert why.code is code
    said = finished.end_words()
    assert program_reason(why) == (said if not finished.started else f"ran and {said}")
    assert ProgramWhy.from_json(json.loads(json.dumps(why.to_json()))) == why


@pytest.mark.parametrize(
    ("why", "words"),
    [
        (ProgramWhy(ProgramCode.NOT_SHIPPED, operand="m.sh"), "this release does not ship m.sh"),
        (
            ProgramWhy(ProgramCode.MISSING_FROM_RELEASE, operand="m.sh"),
            "m.sh is missing from the release",
        ),
        (ProgramWhy(ProgramCode.NOT_A_FILE, operand="m.sh"), "m.sh is not a file in the project"),
        (
            ProgramWhy(ProgramCode.OPERAND_UNSAFE, operand="../m", detail="path contains '..'"),
            "operand '../m': path contains '..'",
        ),
        (
            ProgramWhy(ProgramCode.OPERAND_NOT_RELEASED, operand="m.sh"),
            "operand 'm.sh' is not a path the release ships",
        ),
        (
            ProgramWhy(ProgramCode.OPERAND_OUTSIDE, operand="m.sh"),
            "operand 'm.sh' resolves through a link out of the project",
        ),
        (
            ProgramWhy(
                ProgramCode.INTERPRETER_UNSAFE,
                program="/bin/sh",
                detail="interpreter '/bin/sh' is not a bare program name",
            ),
            "interpreter '/bin/sh' is not a bare program name",
        ),
        (
            ProgramWhy(ProgramCode.LOG_FAILED, program="bash", detail="denied"),
            "could not start 'bash': cannot write the log (denied)",
        ),
    ],
)
def test_why_a_migration_could_not_start_is_worded_in_report(why, words):
    assert program_reason(why) == words
    result = MigrationResult("m", "2.0.0", "after", "bash m.sh", "refused", why=why)
    document = migration_document(result.to_json())
    fields = {key: value for key, value in result.to_json().items() if key != "why"}
    assert document == {**fields, "reason": words}
    old = MigrationResult.from_record({**result.to_json(), "why": None, "reason": words})
    assert old.why is None and migration_document(old.to_json())["reason"] == words


@pytest.mark.parametrize(
    ("why", "words"),
    [
        (ProgramWhy(ProgramCode.EXITED, exit_code=7), "exited 7"),
        (
            ProgramWhy(ProgramCode.TIMED_OUT, seconds=30.0),
            "timed out after 30 s; its process group was stopped",
        ),
        (
            ProgramWhy(ProgramCode.NOT_A_FILE, operand="cli/gaia"),
            "cli/gaia is not a file in the project",
        ),
        (
            ProgramWhy(ProgramCode.NOT_SHIPPED, operand="cli/gaia"),
            "this release does not ship cli/gaia",
        ),
    ],
)
def test_the_update_pings_fact_is_worded_in_report(why, words):
    from tether.flows.ping import Ping
    from tether.report.lifecycle_steps import ping_document

    ping = Ping("cli/gaia ping", "failed", why=why).to_json()
    assert ping["reason"] == "" and ping["why"] == why.to_json()  # the flow holds no words
    assert ping_document(ping) == {"command": "cli/gaia ping", "status": "failed", "reason": words}


def test_a_refused_operand_is_the_same_fact_for_a_migration_and_a_region(tmp_path):
    from tether.flows.regen import operand_refusal

    (tmp_path / "proj").mkdir()
    (tmp_path / "elsewhere.sh").write_text("true\n")
    (tmp_path / "proj" / "m.sh").symlink_to(tmp_path / "elsewhere.sh")
    shipped = {"m.sh"}
    assert operand_refusal(tmp_path / "proj", "m.sh", shipped) == ProgramWhy(
        ProgramCode.OPERAND_OUTSIDE, operand="m.sh"
    )
    assert operand_refusal(tmp_path / "proj", "../m.sh", shipped) == ProgramWhy(
        ProgramCode.OPERAND_UNSAFE, operand="../m.sh", detail="path contains '..'"
    )
    assert operand_refusal(tmp_path / "proj", "n.sh", shipped) == ProgramWhy(
        ProgramCode.OPERAND_NOT_RELEASED, operand="n.sh"
    )


@pytest.mark.parametrize("code", [["exited"], {"a": 1}, None, 3])
def test_a_hand_edited_program_code_is_no_fact_and_the_words_kept_are_given(code):
    from tether.report.lifecycle_steps import migration_reason, ping_reason

    assert ProgramWhy.from_json({"code": code, "exit_code": 1}) is None
    record = {"why": {"code": code}, "reason": "ran and exited 1"}
    assert migration_reason(record) == "ran and exited 1"
    assert ping_reason(record) == "ran and exited 1"
