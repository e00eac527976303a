"""Generated regions inside ``tether update``: masked comparison, patch without the region
body, regeneration after the merge, and the switch that turns regions off."""

import json
import os

from builders import call, make_release, run_tether

START, END = "<!-- kit:remit:start -->", "<!-- kit:remit:end -->"
GEN = """#!/usr/bin/env bash
# Rewrites the remit block of every agent file from roster.txt.
set -eu
body=$(cat roster.txt)
for f in agents/*.md; do
  awk -v s='<!-- kit:remit:start -->' -v e='<!-- kit:remit:end -->' -v b="$body" '
    $0 == s { print; print b; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
done
"""


def agent(intro: str, body: str, outro: str = "Be brief.\n") -> str:
    return f"{intro}{START}\n{body}{END}\n{outro}"


def regions_release(shelf, version, agent_text, extra=None):
    files = {
        "agents/reviewer.md": agent_text,
        "scripts/gen.sh": GEN,
        "roster.txt": "default remit\n",
    }
    files.update(extra or {})
    regions = [
        {
            "id": "remit",
            "startMarker": START,
            "endMarker": END,
            "paths": ["agents/reviewer.md"],
            "regenerate": {"interpreter": "bash", "operand": "scripts/gen.sh", "args": []},
        }
    ]
    return make_release(
        shelf, version, files, {"scripts/gen.sh": "owned"}, extra={"regions": regions}
    )


def setup(tmp_path, v2_agent, v2_extra=None):
    shelf = tmp_path / "rel"
    regions_release(shelf, "1.0.0", agent("# Reviewer\n", "default remit\n"))
    regions_release(shelf, "2.0.0", v2_agent, v2_extra)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    # the adopter ran the generator with their own roster: only the region body differs
    (project / "roster.txt").write_text("our remit: review all of src/\n")
    os.system(f"cd {project} && bash scripts/gen.sh")
    assert "our remit" in (project / "agents/reviewer.md").read_text()
    return project


def update(project, *args):
    result = run_tether("update", "--yes", "--json", "-C", str(project), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_region_only_divergence_is_a_skip(tmp_path):
    project = setup(
        tmp_path,
        agent("# Reviewer\n", "default remit\n"),
        {"other.md": "new file so the release differs\n"},
    )
    code, doc = update(project)
    assert code == 0
    assert "agents/reviewer.md" in doc["buckets"]["skip"]
    assert "our remit" in (project / "agents/reviewer.md").read_text()


def test_upstream_edit_outside_region_replaces_then_regenerates(tmp_path):
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    code, doc = update(project)
    assert code == 0, doc
    assert "agents/reviewer.md" in doc["buckets"]["update"]
    text = (project / "agents/reviewer.md").read_text()
    assert text.startswith("# Reviewer v2\n") and "our remit: review all of src/" in text
    assert doc["regenerated"][0]["status"] == "regenerated"
    human = run_tether("status", "-C", str(project))  # the project is usable afterwards
    assert human.returncode == 0


def test_divergence_outside_region_conflicts_with_a_patch_without_region_body(tmp_path):
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    path = project / "agents/reviewer.md"
    path.write_text(path.read_text().replace("# Reviewer\n", "# Our reviewer\n"))
    code, doc = update(project)
    assert code == 4
    conflict = doc["buckets"]["conflict"][0]
    assert conflict["path"] == "agents/reviewer.md"
    patch = (project / conflict["artifact"]).read_text()
    assert "-# Our reviewer" in patch and "+# Reviewer v2" in patch
    assert "our remit" not in patch and "default remit" not in patch
    assert "# Our reviewer" in path.read_text()  # the adopter's file stays
    assert doc["regenerated"][0]["status"] == "skipped"


def test_no_regions_switch_compares_whole_files(tmp_path):
    project = setup(tmp_path, agent("# Reviewer\n", "default remit, v2 wording\n"))
    _, doc = update(project, "--dry-run")
    assert "agents/reviewer.md" in doc["buckets"]["skip"]
    _code, doc = update(project, "--dry-run", "--no-regions")
    assert doc["regions"]["disabled"] is True
    assert "agents/reviewer.md" in [c["path"] for c in doc["buckets"]["conflict"]]
    env_run = run_tether("update", "--dry-run", "-C", str(project))
    assert "Regions: disabled" not in env_run.stdout
    os.environ["TETHER_NO_REGIONS"] = "1"
    try:
        env_run = run_tether("update", "--dry-run", "-C", str(project))
    finally:
        del os.environ["TETHER_NO_REGIONS"]
    assert "Regions: disabled for this run" in env_run.stdout


def test_the_plan_shows_the_programs_it_will_run_before_anything_runs(tmp_path):
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    before = (project / "agents/reviewer.md").read_bytes()
    dry = run_tether("update", "--dry-run", "-C", str(project))
    assert "Programs the release ships that this update runs (1):" in dry.stdout
    assert "bash scripts/gen.sh (region" in dry.stdout
    doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert [p["command"] for p in doc["regions"]["programs"]] == ["bash scripts/gen.sh"]
    assert (project / "agents/reviewer.md").read_bytes() == before  # nothing ran
    # The summary a person confirms on a terminal is the same rendering of the plan.
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.report.update import render_plan_summary

    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate)
    assert "bash scripts/gen.sh" in render_plan_summary(prepared.report("plan"))


def test_a_region_file_taken_over_is_not_regenerated(tmp_path):
    """``tether own``: the region's program would write the file, so the region is skipped,
    naming the reason, and the file stays exactly as the adopter has it."""
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    assert call("own", "-C", str(project), "agents/reviewer.md") == 0
    before = (project / "agents/reviewer.md").read_bytes()
    (project / "roster.txt").write_text("a new remit\n")
    code, doc = update(project)
    assert code == 0, doc
    assert doc["regenerated"][0]["status"] == "skipped"
    assert "agents/reviewer.md is yours (tether own)" in doc["regenerated"][0]["reason"]
    assert (project / "agents/reviewer.md").read_bytes() == before


def test_why_a_region_was_not_regenerated_is_a_fact_the_document_words(tmp_path):
    """What held the program back, and the switch that stops every program, travel as
    facts of the outcome; the update document and its text give their words."""
    from tether.flows.preflight import GitOptions
    from tether.flows.regen import HeldBy, NotRun, NotRunWhy
    from tether.flows.update import UpdateRequest, run_update
    from tether.report.update import render_update, update_document

    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    assert call("own", "-C", str(project), "agents/reviewer.md") == 0
    dry = run_update(UpdateRequest(project, dry_run=True, git=GitOptions(no_branch=True)))
    assert dry.regenerated == []  # a dry run runs nothing and says nothing of it
    report = run_update(UpdateRequest(project, git=GitOptions(no_branch=True)))
    [outcome] = report.regenerated
    held = ((HeldBy.YOURS, "agents/reviewer.md"),)
    assert (outcome.why, outcome.reason) == (NotRunWhy(NotRun.HELD_BACK, held=held), "")
    words = "agents/reviewer.md is yours (tether own)"
    assert update_document(report)["regenerated"][0]["reason"] == words
    assert f"remit (skipped: {words}): run by hand: bash scripts/gen.sh" in render_update(report)


def test_edits_outside_the_region_on_lines_upstream_left_merge_and_regenerate(tmp_path):
    """The adopter changed a line upstream did not touch; upstream changed another: the
    masked texts merge cleanly, the file is written with both edits and the region is
    regenerated from the adopter's roster (no whole-file patch)."""
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    path = project / "agents/reviewer.md"
    path.write_text(path.read_text().replace("Be brief.\n", "Be thorough.\n"))
    code, doc = update(project)
    assert code == 0, doc
    assert "agents/reviewer.md" in doc["buckets"]["merged"]
    assert doc["buckets"]["conflict"] == []
    assert path.read_text() == agent(
        "# Reviewer v2\n", "our remit: review all of src/\n", "Be thorough.\n"
    )
    assert doc["regenerated"][0]["status"] == "regenerated"
    assert not (project / ".tether/merge/agents/reviewer.md.patch").exists()


def test_the_merged_region_file_keeps_the_adopters_body_when_no_program_runs(tmp_path):
    """With --no-programs the region is not regenerated: the written merge holds the body the
    adopter's own program made, never the release's."""
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    path = project / "agents/reviewer.md"
    path.write_text(path.read_text().replace("Be brief.\n", "Be thorough.\n"))
    code, doc = update(project, "--no-programs")
    assert code == 0, doc
    assert path.read_text() == agent(
        "# Reviewer v2\n", "our remit: review all of src/\n", "Be thorough.\n"
    )
    assert doc["regenerated"][0]["status"] == "skipped"


def test_malformed_markers_still_leave_the_whole_file_conflict(tmp_path):
    """A duplicated start marker turns masking off: a person looks at the whole file."""
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    path = project / "agents/reviewer.md"
    before = path.read_text().replace("Be brief.\n", f"Be thorough.\n{START}\n")
    path.write_text(before)
    code, doc = update(project)
    assert code == 4
    assert [c["path"] for c in doc["buckets"]["conflict"]] == ["agents/reviewer.md"]
    assert path.read_text() == before


def overlapping(tmp_path):
    """Both sides changed the heading line of a region file (a real overlap)."""
    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n", "Be brief, v2.\n"))
    path = project / "agents/reviewer.md"
    path.write_text(path.read_text().replace("# Reviewer\n", "# Our reviewer\n"))
    return project, path


def test_auto_hunk_choices_settle_a_region_files_overlap_and_regenerate(tmp_path):
    """--auto ours/theirs settle a declared path's clashing lines as for any other file: the
    other side's change on another line is merged in, the region keeps the adopter's body and
    is regenerated, nothing is left for a person."""
    project, path = overlapping(tmp_path)
    code, doc = update(project, "--auto", "ours")
    assert code == 0, doc
    [settled] = doc["buckets"]["conflict"]
    assert settled["decision"] == "ours" and settled["path"] == "agents/reviewer.md"
    assert path.read_text() == agent(
        "# Our reviewer\n", "our remit: review all of src/\n", "Be brief, v2.\n"
    )
    assert doc["regenerated"][0]["status"] == "regenerated"
    project, path = overlapping(tmp_path / "theirs")
    code, doc = update(project, "--auto", "theirs")
    assert code == 0, doc
    assert path.read_text() == agent(
        "# Reviewer v2\n", "our remit: review all of src/\n", "Be brief, v2.\n"
    )


def test_auto_whole_file_choices_settle_a_region_files_overlap(tmp_path):
    """keep-mine keeps the adopter's file whole with the release's copy beside it;
    take-theirs takes the release's (backed up) and regenerates the region from the
    adopter's roster."""
    project, path = overlapping(tmp_path)
    before = path.read_text()
    code, doc = update(project, "--auto", "keep-mine")
    assert code == 0, doc
    [kept] = doc["buckets"]["conflict"]
    assert kept["decision"] == "keep-mine" and path.read_text() == before
    assert (project / kept["artifact"]).read_text() == agent(
        "# Reviewer v2\n", "default remit\n", "Be brief, v2.\n"
    )
    project, path = overlapping(tmp_path / "take")
    code, doc = update(project, "--auto", "take-theirs")
    assert code == 0, doc
    assert path.read_text() == agent(
        "# Reviewer v2\n", "our remit: review all of src/\n", "Be brief, v2.\n"
    )
    assert doc["regenerated"][0]["status"] == "regenerated"


def test_a_masked_merge_killed_at_any_journal_step_resumes_to_the_same_bytes(tmp_path):
    """kill -9 (os._exit at each journal record) during an update that merges a region file
    outside its region and regenerates it; the rerun ends byte-identical to the run that was
    never stopped, and the adopter's own edit is never lost."""
    import shutil

    from builders import run_forked, tree_digest
    from tether.state import crashpoint
    from tether.state.journal import read_records

    project = setup(tmp_path, agent("# Reviewer v2\n", "default remit\n"))
    path = project / "agents/reviewer.md"
    path.write_text(path.read_text().replace("Be brief.\n", "Be thorough.\n"))
    pristine = tmp_path / "pristine"
    shutil.copytree(project, pristine)
    argv = ("update", "--yes", "--json", "-C")
    # Only a run a crash point stops needs a process of its own; the others run here.
    assert run_tether(*argv, str(project)).returncode == 0
    points = crashpoint.points(read_records(project / ".tether/journal.jsonl"))
    assert any(p.startswith("file-written") for p in points)
    runtime = (
        ".tether/backup/",
        ".tether/cache/",
        ".tether/journal",
        ".tether/lock",
        ".tether/logs/",
    )

    def user_files(root):
        tree = tree_digest(root)
        tree.pop(".tether/state.json")  # timestamps
        return {k: v for k, v in tree.items() if not k.startswith(runtime)}

    expected = user_files(project)
    assert b"Be thorough." in expected["agents/reviewer.md"]
    for n, point in enumerate(points):
        copy = tmp_path / f"run{n}"
        shutil.copytree(pristine, copy)
        crashed = run_forked(*argv, str(copy), crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        rerun = run_tether(*argv, str(copy))
        assert rerun.returncode in (0, 3), (point, rerun.stderr)
        assert user_files(copy) == expected, point
