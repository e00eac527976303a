"""A post-update write is journaled like any file the update writes, with why it was
written as a fact (``RowWhy(RowCode.POST_UPDATE_WRITE)``), never words: a run killed after
the write and resumed words the row the same (``report/reasons.row_reason``), and so does a
journal written before the fact, whose ``reason`` holds the words."""

from __future__ import annotations

import json
from pathlib import Path

from tests.lifecycle.test_lifecycle_declared import crash, project_at_v1
from tests.lifecycle.test_lifecycle_migrations import update
from tether.flows.apply import resume_info
from tether.flows.project import open_project
from tether.model.plan import Bucket, FileAction, RowCode, RowWhy
from tether.report.reasons import row_reason
from tether.state import crashpoint
from tether.state.journal import STEP_FILE_INTENT, STEP_FILE_WRITTEN, Journal

CACHE = "cache/kit-check.json"
WORDS = "post-update write"


def journal_of(project: Path) -> Journal:
    return open_project(project).journal()


def cache_records(project: Path) -> list[dict]:
    steps = (STEP_FILE_INTENT, STEP_FILE_WRITTEN)
    return [
        r for r in journal_of(project).records() if r["step"] in steps and r.get("path") == CACHE
    ]


def resumed_row(project: Path) -> FileAction:
    """The row a resumed run makes of what the journal says it wrote to the file."""
    journal = journal_of(project)
    run_id = str(journal.records()[-1]["run"])
    intent, written = resume_info(journal, run_id).done[CACHE]  # what _mark_resumed reads
    assert (intent.reason, intent.why) == (written.reason, written.why)
    done = intent
    return FileAction(CACHE, None, Bucket(done.bucket), reason=done.reason, why=done.why)


def test_the_journal_records_a_post_update_write_as_a_fact(tmp_path):
    project = project_at_v1(tmp_path, {CACHE: "{}"})
    code, doc = update(project)
    assert code == 0, doc
    records = cache_records(project)
    assert [r["step"] for r in records] == [STEP_FILE_INTENT, STEP_FILE_WRITTEN]
    for record in records:
        assert record["why"] == {"code": "post-update-write"} and "reason" not in record


def test_the_fact_is_worded_in_report():
    row = FileAction(CACHE, None, Bucket.UPDATE, why=RowWhy(RowCode.POST_UPDATE_WRITE))
    assert row_reason(row) == WORDS


def test_a_killed_and_resumed_run_words_the_write_the_same(tmp_path):
    project = project_at_v1(tmp_path, {CACHE: "{}"})
    assert crash(project, "post-update-written:1").returncode == crashpoint.EXIT_CODE
    row = resumed_row(project)
    assert row.why == RowWhy(RowCode.POST_UPDATE_WRITE) and row.reason == ""
    assert row_reason(row) == WORDS
    assert crash(project, None).returncode == 0


def test_a_journal_with_the_words_in_reason_is_read_as_before(tmp_path):
    project = project_at_v1(tmp_path, {CACHE: "{}"})
    assert crash(project, "post-update-written:1").returncode == crashpoint.EXIT_CODE
    # As a tether before the fact wrote them: the words in ``reason``, no ``why``.
    path = open_project(project).path(open_project(project).profile.journal_file)
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("path") == CACHE and record["step"] in (STEP_FILE_INTENT, STEP_FILE_WRITTEN):
            del record["why"]
            record["reason"] = WORDS
        lines.append(json.dumps(record, separators=(",", ":")))
    path.write_text("\n".join(lines) + "\n")
    row = resumed_row(project)
    assert row.why is None and row_reason(row) == WORDS
    assert crash(project, None).returncode == 0
    assert json.loads((project / CACHE).read_text())["current"] == "2.0.0"
