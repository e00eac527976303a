"""Field-aware merges and syntax-safe line merges inside ``tether update``."""

import json

from builders import call, make_release, run_tether

PKG_V1 = (
    '{\n  "name": "kit",\n  "version": "1.0.0",\n  "devDependencies": {\n'
    '    "eslint": "^8.0.0",\n    "vitest": "^1.0.0"\n  }\n}\n'
)


def pkg_project(tmp_path, v2_text, mine_text, merge=True):
    shelf = tmp_path / "rel"
    extra = {"merge": {"package.json": {"preset": "npm-package"}}} if merge else None
    make_release(shelf, "1.0.0", {"package.json": PKG_V1}, extra=extra)
    make_release(shelf, "2.0.0", {"package.json": v2_text}, extra=extra)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "package.json").write_text(mine_text)
    return project


def update(project, *args):
    result = run_tether("update", "--yes", "--json", "-C", str(project), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_rename_and_version_bump_merge_by_field(tmp_path):
    v2 = PKG_V1.replace('"1.0.0"', '"2.0.0"').replace("^8.0.0", "^9.0.0")
    mine = PKG_V1.replace('"kit"', '"our-app"').replace('"1.0.0"', '"0.3.0"')
    project = pkg_project(tmp_path, v2, mine)
    code, doc = update(project)
    assert code == 0
    assert doc["buckets"]["merged"] == ["package.json"]
    assert doc["structured"] == ["package.json: 1 applied, 0 conflicts, 0 suggestions"]
    text = (project / "package.json").read_text()
    assert text == mine.replace("^8.0.0", "^9.0.0")  # only the managed value's line changed


def test_same_key_changed_both_sides_is_a_key_level_conflict_with_notes(tmp_path):
    # The adopter's pin is kept and both pins are noted: the file holds nothing unresolved,
    # so it is no file-level conflict (no exit 4, nothing for check to wait for).
    v2 = PKG_V1.replace("^8.0.0", "^9.0.0")
    mine = PKG_V1.replace("^8.0.0", "^8.5.0")
    project = pkg_project(tmp_path, v2, mine)
    code, doc = update(project)
    assert code == 0, doc
    assert doc["buckets"]["conflict"] == []
    assert doc["buckets"]["skip"] == ["package.json"]
    notes_path = ".tether/merge/package.json.notes"
    assert doc["structured"] == [
        f"package.json: 0 applied, 1 conflict, 0 suggestions (see {notes_path})"
    ]
    notes = (project / notes_path).read_text()
    assert "eslint" in notes and "^8.5.0" in notes and "^9.0.0" in notes
    assert (project / "package.json").read_text() == mine  # the adopter's value is kept
    assert call("check", "-C", str(project)) == 0
    human = run_tether("status", "-C", str(project)).stdout
    assert "Unresolved" not in human


def test_unparsable_adopter_file_is_a_whole_file_conflict(tmp_path):
    v2 = PKG_V1.replace("^8.0.0", "^9.0.0")
    project = pkg_project(tmp_path, v2, '{"name": "x",,}\n')
    code, doc = update(project)
    assert code == 4
    conflict = doc["buckets"]["conflict"][0]
    assert conflict["artifact"].endswith("package.json.patch")
    assert (project / "package.json").read_text() == '{"name": "x",,}\n'
    result = run_tether("update", "--dry-run", "-C", str(project))
    assert result.returncode == 3  # no newer release; the conflict is still open
    assert "1 conflict(s) from an earlier update are not resolved" in result.stdout


def test_clean_line_merge_that_duplicates_a_key_is_a_conflict(tmp_path):
    base = '{\n  "a": 1,\n  "m": 2,\n  "z": 3\n}\n'
    mine = '{\n  "a": 1,\n  "new": true,\n  "m": 2,\n  "z": 3\n}\n'
    theirs = '{\n  "a": 1,\n  "m": 2,\n  "z": 3,\n  "new": false\n}\n'
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"cfg.json": base})
    make_release(shelf, "2.0.0", {"cfg.json": theirs})
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / "cfg.json").write_text(mine)
    code, doc = update(project)
    assert code == 4
    assert doc["buckets"]["conflict"][0]["path"] == "cfg.json"
    text = (project / "cfg.json").read_text()
    assert text.startswith("<<<<<<< ours\n") and text.count('"new"') == 2


def test_the_summary_row_is_a_fact_of_the_flow_worded_in_report(tmp_path):
    # The update carries what each field merge did as a FieldMergeRow; report/update words
    # it, in the text and the JSON alike, and says what a dry run would do.
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.model.plan import FieldMergeRow
    from tether.report.update import field_merge_row

    v2 = PKG_V1.replace("^8.0.0", "^9.0.0")
    mine = PKG_V1.replace("^8.0.0", "^8.5.0")
    project = pkg_project(tmp_path, v2, mine)
    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate), prepared
    notes_path = ".tether/merge/package.json.notes"
    fact = FieldMergeRow("package.json", "merged", 0, 1, 0, artifact=notes_path)
    assert prepared.plan.structured == {"package.json": fact}
    said = f"package.json: 0 applied, 1 conflict, 0 suggestions (see {notes_path})"
    assert field_merge_row(fact) == said
    assert field_merge_row(fact, planned=True) == (
        f"package.json: 0 to apply, 1 conflict, 0 suggestions (notes would go to {notes_path})"
    )
    text = run_tether("update", "--dry-run", "-C", str(project)).stdout
    assert "  package.json: 0 to apply, 1 conflict, 0 suggestions (notes would go to" in text


def test_field_merge_rows_without_key_counts_are_worded_in_report():
    from tether.model.plan import FieldMergeRow, SideFault, SideProblem
    from tether.report.update import field_merge_row

    no_baseline = FieldMergeRow("a.json", "whole-file-conflict", artifact="m/a.json.patch")
    assert field_merge_row(no_baseline) == (
        "a.json: whole-file conflict, no installed copy to merge key by key against "
        "(see m/a.json.patch)"
    )
    assert field_merge_row(no_baseline, planned=True).endswith(
        "(a patch would go to m/a.json.patch)"
    )
    big = (SideProblem("latest", SideFault.TOO_LARGE, limit_kib=1),)
    too_large = FieldMergeRow("b.json", "line-merge", unread=big)
    assert field_merge_row(too_large, planned=True) == (
        "b.json: would be merged line by line: the latest file is larger than 1 KiB "
        "(the limit for a key-by-key merge)"
    )
    bad = (SideProblem("current", SideFault.NOT_PARSED, "bad"),)
    assert field_merge_row(FieldMergeRow("c.json", "not-merged", unread=bad)) == (
        "c.json: not merged, current file does not parse: bad"
    )
    assert field_merge_row(FieldMergeRow("d.json", "clean-skip")) == (
        "d.json: no managed-key changes (clean skip)"
    )
    settled = FieldMergeRow("e.json", "merged", 2, 0, 1, settled=1)
    assert field_merge_row(settled) == (
        "e.json: 2 applied, 0 conflicts, 1 conflict settled toward the release, 1 suggestion"
    )
