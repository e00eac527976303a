"""A plan's row carries why it is what it is as a fact (``FileAction.why``, a code and its
data) wherever a flow, not the decision table, decided it; ``report/reasons.row_reason``
words it, the same words in the text report and the JSON rows."""

import json
from pathlib import Path

import pytest

from builders import call, make_release, run_tether
from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
from tether.model.plan import (
    Bucket,
    FileAction,
    MergeNote,
    MergeNoteCode,
    RowCode,
    RowWhy,
    SideFault,
    SideProblem,
)
from tether.report.reasons import row_reason


def planned(project: Path, path: str, request: UpdateRequest | None = None) -> FileAction:
    prepared = prepare_update(request or UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate), prepared
    return next(a for a in prepared.plan.actions if a.path == path)


def worded(why: RowWhy) -> str:
    return row_reason(FileAction("p", None, Bucket.SKIP, why=why))


@pytest.fixture
def dropped(tmp_path: Path) -> Path:
    """1.0.0 ships old.md, 2.0.0 and 2.1.0 drop it; the project is at 1.0.0."""
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "a\n", "old.md": "old\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a2\n"})
    make_release(shelf, "2.1.0", {"a.txt": "a3\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def test_a_file_dropped_upstream_and_edited_here_is_a_fact_worded_in_report(dropped):
    (dropped / "old.md").write_text("mine\n")
    row = planned(dropped, "old.md", UpdateRequest(dropped, to="2.0.0"))
    assert (row.bucket, row.why, row.reason) == (Bucket.DELETE, RowWhy(RowCode.MODIFIED_HERE), "")
    assert worded(RowWhy(RowCode.MODIFIED_HERE)) == "modified here"
    text = run_tether("update", "--to", "2.0.0", "--dry-run", "-C", str(dropped)).stdout
    assert "  old.md (modified here)\n" in text


@pytest.mark.parametrize("edited", [False, True])
def test_a_leftover_row_names_the_release_that_dropped_it_as_data(dropped, edited):
    assert call("update", "--to", "2.0.0", "--yes", "-C", str(dropped)) == 0
    if edited:
        (dropped / "old.md").write_text("mine\n")
    row = planned(dropped, "old.md")
    assert row.why == RowWhy(RowCode.LEFTOVER, "2.0.0", modified=edited) and row.reason == ""
    words = "removed upstream in 2.0.0" + ("; modified here" if edited else "")
    assert worded(RowWhy(RowCode.LEFTOVER, "2.0.0", modified=edited)) == words
    text = run_tether("update", "--dry-run", "-C", str(dropped)).stdout
    assert f"  old.md ({words})\n" in text
    # Nothing newer: the up-to-date update lists it with the same words.
    again = run_tether("update", "--to", "2.0.0", "-C", str(dropped)).stdout
    assert f"  old.md ({words})\n" in again


def test_delete_removed_with_only_edited_leftovers_is_up_to_date(dropped):
    """Whether a leftover is unmodified is read from the fact, not searched for in words."""
    assert call("update", "--to", "2.0.0", "--yes", "-C", str(dropped)) == 0
    (dropped / "old.md").write_text("mine\n")
    args = ("update", "--to", "2.0.0", "--yes", "--delete-removed", "--json", "-C", str(dropped))
    doc = json.loads(run_tether(*args).stdout)
    assert doc["status"] == "up-to-date" and doc["buckets"]["delete"] == ["old.md"]
    assert (dropped / "old.md").read_text() == "mine\n"
    (dropped / "old.md").write_text("old\n")  # as shipped again: removed on request
    doc = json.loads(run_tether(*args).stdout)
    assert doc["buckets"]["deleted"] == ["old.md"] and not (dropped / "old.md").exists()


def test_a_row_fact_survives_the_journal_and_an_unknown_one_is_no_fact():
    for why in (RowWhy(RowCode.LEFTOVER, "2.0.0", modified=True), RowWhy(RowCode.MODIFIED_HERE)):
        assert RowWhy.from_json(json.loads(json.dumps(why.to_json()))) == why
    assert RowWhy.from_json({"code": "a later kind"}) is None
    assert RowWhy.from_json("removed upstream in 2.0.0") is None


def two_releases(tmp_path: Path, name: str, v1: str | bytes, v2: str | bytes, **extra) -> Path:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {name: v1}, extra=extra or None)
    make_release(shelf, "2.0.0", {name: v2}, extra=extra or None)
    make_release(shelf, "3.0.0", {name: v2}, extra=extra or None)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def conflict_row(project: Path, *args: str) -> dict[str, object]:
    result = run_tether("update", "--to", "2.0.0", "--dry-run", "--json", "-C", str(project), *args)
    rows = json.loads(result.stdout)["buckets"]["conflict"]
    assert len(rows) == 1, rows
    return dict(rows[0])


LINES = "".join(f"line {n}\n" for n in range(8))


def test_a_file_still_holding_markers_is_held_with_the_update_that_left_them(tmp_path):
    project = two_releases(tmp_path, "f.txt", LINES, LINES.replace("line 3", "theirs"))
    (project / "f.txt").write_text(LINES.replace("line 3", "mine"))
    assert call("update", "--to", "2.0.0", "--yes", "-C", str(project)) == 4
    row = planned(project, "f.txt", UpdateRequest(project, to="3.0.0"))
    assert (row.decision, row.why, row.reason) == ("held", RowWhy(RowCode.HELD, "2.0.0"), "")
    words = "still has the conflict markers of the update to 2.0.0; resolve them first"
    args = ("update", "--to", "3.0.0", "--dry-run", "-C", str(project))
    doc = json.loads(run_tether(*args, "--json").stdout)
    assert doc["buckets"]["conflict"][0]["reason"] == words
    assert f"  f.txt → f.txt (held; {words})\n" in run_tether(*args).stdout


def test_a_binary_conflict_and_its_whole_file_settlement_are_facts(tmp_path):
    project = two_releases(tmp_path, "b.dat", b"\0one\n", b"\0theirs\n")
    (project / "b.dat").write_bytes(b"\0mine\n")
    row = planned(project, "b.dat", UpdateRequest(project, to="2.0.0"))
    assert (row.why, row.reason) == (RowWhy(RowCode.BINARY), "")
    assert conflict_row(project)["reason"] == "binary file"
    settled = planned(project, "b.dat", UpdateRequest(project, "2.0.0", options=ours()))
    assert settled.why == RowWhy(RowCode.NO_LINES, side="keep-mine")
    assert conflict_row(project, "--auto", "ours")["reason"] == (
        "binary file: no lines to merge, keep-mine"
    )


def ours():
    from tether.flows.plan import UpdateOptions

    return UpdateOptions(auto="ours")


def test_markers_that_would_break_a_first_line_leave_a_patch_saying_so(tmp_path):
    project = two_releases(tmp_path, "run.sh", "#!/bin/sh\necho 1\n", "#!/bin/bash\necho 1\n")
    (project / "run.sh").write_text("#!/bin/dash\necho 1\n")
    row = planned(project, "run.sh", UpdateRequest(project, to="2.0.0"))
    assert (row.decision, row.why) == ("patch", RowWhy(RowCode.FRONT_MATTER))
    assert conflict_row(project)["reason"] == (
        "conflict markers at line 1 would break the file's first line (front matter)"
    )


def test_clashing_hunks_settled_toward_a_side_count_them(tmp_path):
    project = two_releases(tmp_path, "f.txt", LINES, LINES.replace("line 3", "theirs"))
    (project / "f.txt").write_text(LINES.replace("line 3", "mine"))
    row = planned(project, "f.txt", UpdateRequest(project, "2.0.0", options=ours()))
    assert row.why == RowWhy(RowCode.HUNKS_SETTLED, count=1, side="ours")
    assert conflict_row(project, "--auto", "ours")["reason"] == (
        "1 clashing hunk took your side; every other change of both sides merged"
    )


JSON_V1 = '{\n"a": 1,\n"m": 0,\n"z": 2\n}\n'


def test_a_clean_line_merge_that_does_not_parse_carries_the_parsers_problem(tmp_path):
    project = two_releases(tmp_path, "cfg.json", JSON_V1, JSON_V1.replace('"m"', '"x": 1,\n"m"'))
    (project / "cfg.json").write_text(JSON_V1.replace('"z"', '"x": 2,\n"z"'))
    row = planned(project, "cfg.json", UpdateRequest(project, to="2.0.0"))
    assert row.why is not None and row.why.code is RowCode.MERGE_BROKEN and row.why.detail
    assert (row.why.side, row.why.unchecked) == ("", False)
    words = f"the clean line merge is not valid: {row.why.detail}"
    assert conflict_row(project)["reason"] == words
    text = run_tether("update", "--to", "2.0.0", "--dry-run", "-C", str(project)).stdout
    assert f"cfg.json (conflict markers in the file; {words})" in text


PKG = '{\n  "name": "kit",\n  "devDependencies": {\n    "eslint": "^8.0.0"\n  }\n}\n'
NPM = {"merge": {"package.json": {"preset": "npm-package"}}}


def test_managed_keys_changed_on_both_sides_name_how_many_and_the_notes(tmp_path):
    project = two_releases(tmp_path, "package.json", PKG, PKG.replace("^8", "^9"), **NPM)
    (project / "package.json").write_text(PKG.replace("^8.0.0", "^8.5.0"))
    row = planned(project, "package.json", UpdateRequest(project, to="2.0.0"))
    notes = ".tether/merge/package.json.notes"
    assert row.why == RowWhy(RowCode.KEYS_KEPT, count=1, path=notes)
    assert row_reason(row) == f"1 managed key changed on both sides: yours kept, see {notes}"


def test_a_side_that_does_not_parse_is_not_merged_key_by_key(tmp_path):
    project = two_releases(tmp_path, "package.json", PKG, PKG.replace("^8", "^9"), **NPM)
    (project / "package.json").write_text(PKG.replace("^8.0.0", "^8.5.0") + "{")
    row = planned(project, "package.json", UpdateRequest(project, to="2.0.0"))
    assert row.why is not None and row.why.code is RowCode.NOT_PARSED and not row.why.detail
    [side] = row.why.unread
    assert (side.role, side.fault) == ("current", SideFault.NOT_PARSED) and side.message
    words = f"current file does not parse: {side.message}"
    assert conflict_row(project)["reason"] == words == row_reason(row)


def test_a_journal_from_before_the_sides_were_facts_is_worded_as_it_was():
    """A journal tether wrote before ``RowWhy.unread`` held a field merge's unread sides in
    ``detail`` as words: a resumed run reads them and shows the same row, and the fact a
    run journals now reads back to the same words."""
    words = "baseline file does not parse: invalid JSON: x; current file does not parse: y"
    old = RowWhy.from_json({"code": "not-parsed", "detail": words})
    assert old == RowWhy(RowCode.NOT_PARSED, detail=words) and worded(old) == words
    unread = (
        SideProblem("baseline", SideFault.NOT_PARSED, "invalid JSON: x"),
        SideProblem("current", SideFault.NOT_PARSED, "y"),
    )
    record = json.loads(json.dumps(RowWhy(RowCode.NOT_PARSED, unread=unread).to_json()))
    assert record == {
        "code": "not-parsed",
        "unread": [
            {"role": "baseline", "fault": "not-parsed", "message": "invalid JSON: x"},
            {"role": "current", "fault": "not-parsed", "message": "y"},
        ],
    }
    new = RowWhy.from_json(record)
    assert new is not None and new.unread == unread and worded(new) == words
    assert SideProblem.from_json({"role": "latest", "fault": "a later kind"}) is None


GIT_FAILED = MergeNote(MergeNoteCode.GIT_FAILED, "git: no", favor="theirs")
PAST_SIZE = MergeNote(MergeNoteCode.PAST_TEXT_SIZE, "big")
# Every fact a flow puts on a row and its words, exactly as the reports give them.
WORDS = [
    (RowWhy(RowCode.LEFTOVER, "2.0.0"), "removed upstream in 2.0.0"),
    (RowWhy(RowCode.LEFTOVER, "2.0.0", True), "removed upstream in 2.0.0; modified here"),
    (RowWhy(RowCode.MODIFIED_HERE), "modified here"),
    (
        RowWhy(RowCode.HELD, "2.0.0"),
        "still has the conflict markers of the update to 2.0.0; resolve them first",
    ),
    (RowWhy(RowCode.BINARY), "binary file"),
    (
        RowWhy(RowCode.HASH_ONLY),
        "only the hash of the copied version is known (gbrain's record): no line merge; "
        "keep-mine or take-theirs settles it",
    ),
    (
        RowWhy(RowCode.FRONT_MATTER),
        "conflict markers at line 1 would break the file's first line (front matter)",
    ),
    (
        RowWhy(RowCode.MERGE_BROKEN, detail="invalid JSON: x"),
        "the clean line merge is not valid: invalid JSON: x",
    ),
    (
        RowWhy(RowCode.MERGE_BROKEN, detail="timed out", unchecked=True),
        "the clean line merge could not be checked: timed out",
    ),
    (
        RowWhy(RowCode.MERGE_BROKEN, side="theirs", detail="invalid JSON: x"),
        "taking the release's side of the clashing lines: the clean line merge is not valid: "
        "invalid JSON: x",
    ),
    (
        RowWhy(RowCode.HUNKS_SETTLED, count=2, side="theirs", note=GIT_FAILED),
        "2 clashing hunks took the release's side; every other change of both sides merged "
        "(too large for tether's own line merge, and git: no: the whole file is theirs)",
    ),
    (
        RowWhy(RowCode.MERGE_NOTE, note=MergeNote(MergeNoteCode.MEMORY_BOUND)),
        "too large for tether's own line merge, and a line merge would take more than 4x its "
        "size in memory: the whole file is one conflict",
    ),
    (
        RowWhy(RowCode.MERGE_NOTE, note=MergeNote(MergeNoteCode.PAST_TEXT_SIZE, "too large (x)")),
        "too large (x)",
    ),
    (
        RowWhy(RowCode.REGION_HUNKS_SETTLED, count=1, side="ours"),
        "1 clashing hunk outside its generated region took your side; every other change of "
        "both sides merged",
    ),
    (RowWhy(RowCode.NO_LINES, side="take-theirs"), "binary file: no lines to merge, take-theirs"),
    (
        RowWhy(
            RowCode.NO_LINES, side="keep-mine", note=MergeNote(MergeNoteCode.PAST_TEXT_SIZE, "big")
        ),
        "big: no lines to merge, keep-mine",
    ),
    (RowWhy(RowCode.NOT_PARSED, detail="invalid JSON: y"), "invalid JSON: y"),
    (
        RowWhy(RowCode.NOT_PARSED, unread=(SideProblem("latest", SideFault.NOT_PARSED, "z"),)),
        "latest file does not parse: z",
    ),
    (
        RowWhy(RowCode.NOT_PARSED, unread=(SideProblem("current", SideFault.TOO_LARGE, "", 64),)),
        "current file is larger than 64 KiB (the limit for a key-by-key merge)",
    ),
    (RowWhy(RowCode.NO_BASELINE), "no installed copy to merge key by key against"),
    (
        RowWhy(RowCode.KEYS_KEPT, count=2, path="m/p.notes"),
        "2 managed keys changed on both sides: yours kept, see m/p.notes",
    ),
    (RowWhy(RowCode.OUTSIDE_REGION), "differs outside its generated region"),
    (RowWhy(RowCode.MERGED_OUTSIDE_REGION), "merged outside its generated region"),
    (RowWhy(RowCode.HANDED_OVER, detail="a.md has x"), "adopter-owned: a.md has x"),
    (RowWhy(RowCode.TEMPLATE_INSTALLED), "template installed"),
    (RowWhy(RowCode.TEMPLATE_REFRESHED, path="t/a.tmpl"), "refreshed from t/a.tmpl"),
    (RowWhy(RowCode.TEMPLATE_DIVERGED), "template-installed; matches neither template"),
    (
        RowWhy(RowCode.TEMPLATE_UNAVAILABLE),
        "template-installed; the installed release's template is unavailable",
    ),
    (RowWhy(RowCode.TEMPLATE_NOT_INSTALLED), "template-installed; not installed here"),
    (RowWhy(RowCode.TEMPLATE_IN_SYNC), "template-installed; in sync"),
    (RowWhy(RowCode.POST_UPDATE_WRITE), "post-update write"),
]


@pytest.mark.parametrize(("why", "words"), WORDS)
def test_each_row_fact_is_worded_in_report(why, words):
    assert worded(why) == words
    assert RowWhy.from_json(json.loads(json.dumps(why.to_json()))) == why


def test_every_row_code_and_merge_note_has_words():
    assert {why.code for why, _ in WORDS} == set(RowCode)
    notes = {why.note.code for why, _ in WORDS if why.note is not None}
    assert notes == set(MergeNoteCode)


def test_a_refresh_asks_about_a_dropped_file_saying_edited_only_when_it_was():
    """The question names an edit from the row's fact: an unmodified leftover is not
    "edited here" although its row has a reason."""
    from types import SimpleNamespace

    from tether.cli.interact import choose_source_deletions
    from tether.model.plan import UpdatePlan

    rows = {
        "kept.md": RowWhy(RowCode.LEFTOVER, "2.0.0"),
        "edited.md": RowWhy(RowCode.LEFTOVER, "2.0.0", modified=True),
        "dropped.md": RowWhy(RowCode.MODIFIED_HERE),
        "plain.md": None,
    }
    plan = UpdatePlan("kit", "1.0.0", "2.0.0")
    plan.actions = [FileAction(p, None, Bucket.DELETE, why=why) for p, why in rows.items()]
    asked: list[str] = []

    def answer(question: str) -> str:
        asked.append(question)
        return "k"

    choose_source_deletions(SimpleNamespace(plan=plan), answer)
    edited = {q.split(":")[0] for q in asked if "(edited here)" in q}
    assert (len(asked), edited) == (4, {"edited.md", "dropped.md"})
    assert all(a.decision == "keep" for a in plan.actions)


@pytest.mark.parametrize("point", ["file-intent:1", "file-written:1", "finalize-started:1"])
def test_a_resumed_run_words_a_row_from_the_fact_its_journal_kept(tmp_path, point):
    """A file the interrupted run already wrote replans as nothing to do; its row is
    reported from the journal, whose record keeps the row's fact (here: binary files
    settled whole toward the release), so the words are an uninterrupted run's."""
    from builders import run_forked
    from tether.state import crashpoint

    def binaries(root: Path) -> Path:
        shelf = root / "releases"
        make_release(shelf, "1.0.0", {f"b{i}.dat": b"\0one\n" for i in range(3)})
        make_release(shelf, "2.0.0", {f"b{i}.dat": b"\0theirs\n" for i in range(3)})
        project = root / "proj"
        assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
        for i in range(3):
            (project / f"b{i}.dat").write_bytes(b"\0mine\n")
        return project

    command = ("update", "--yes", "--json", "--auto", "theirs")
    whole = run_tether(*command, "-C", str(binaries(tmp_path / "whole")))
    rows = json.loads(whole.stdout)["buckets"]["conflict"]
    words = "binary file: no lines to merge, take-theirs"
    assert [row["reason"] for row in rows] == [words] * 3
    project = binaries(tmp_path / "cut")
    crashed = run_forked(*command, "-C", str(project), crash=point)
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    resumed = run_tether(*command, "-C", str(project))
    assert json.loads(resumed.stdout)["buckets"]["conflict"] == rows


@pytest.mark.parametrize("code", ["hunks-settled", "region-hunks-settled", "merge-broken"])
def test_a_hand_edited_side_in_a_journaled_fact_is_worded_without_a_traceback(code):
    why = RowWhy.from_json({"code": code, "count": 2, "side": "mine", "detail": "bad"})
    assert why is not None
    assert "mine" in row_reason(FileAction("a.txt", None, Bucket.CONFLICT, why=why))


@pytest.mark.parametrize(
    "edit",
    [
        ('"bucket":"conflict"', '"bucket":"mine"'),
        ('"bucket":"conflict"', '"bucket":["conflict"]'),
        ('"sha256":"', '"sha":"'),
    ],
    ids=["unknown bucket", "bucket not a string", "no sha256"],
)
def test_a_hand_edited_file_record_stops_the_resume_with_one_line(tmp_path, edit):
    """A file record in a shape tether never writes (a crash only tears the last line, which
    the reader drops) stops the rerun with one line naming the journal, the record and what
    to do; nothing is written."""
    from builders import run_forked
    from tether.state import crashpoint

    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"b.dat": b"\0one\n", "keep.txt": b"same\n"})
    make_release(shelf, "2.0.0", {"b.dat": b"\0theirs\n", "keep.txt": b"same\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "b.dat").write_bytes(b"\0mine\n")
    command = ("update", "--yes", "--json", "--auto", "theirs", "-C", str(project))
    crashed = run_forked(*command, crash="file-intent:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    journal = next((project / ".tether").rglob("journal*.jsonl"))
    text = journal.read_text()
    assert edit[0] in text
    journal.write_text(text.replace(edit[0], edit[1]))

    # The project's files and tether's records, the lock and the stat cache (its own
    # bookkeeping) left out.
    def files() -> dict[Path, bytes]:
        kept = (project / ".tether" / "lock", project / ".tether" / "cache")
        return {
            p: p.read_bytes()
            for p in project.rglob("*")
            if p.is_file() and not any(p == k or k in p.parents for k in kept)
        }

    before = files()
    resumed = run_tether(*command)
    assert resumed.returncode == 1
    assert "Traceback" not in resumed.stderr
    assert resumed.stderr.count("\n") == 1
    assert str(journal) in resumed.stderr and "'b.dat'" in resumed.stderr
    assert "is damaged; repair or remove that line" in resumed.stderr
    assert files() == before
