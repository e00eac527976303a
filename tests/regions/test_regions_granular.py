"""Region regeneration is suppressed per region: only a region whose declared input fell
back to a whole-file conflict is skipped, every declared path of a region not regenerated is
named, writes outside a region's paths are named in the human summary, and a stale patch for
a declared path this run handled is reported as superseded."""

import json

from builders import call, make_release, run_tether, write_files
from tests.update.test_update_regions import END, GEN, START, agent

PACKAGE_V1 = '{\n  "name": "kit",\n  "version": "1.0.0"\n}\n'
PACKAGE_V2 = '{\n  "name": "kit",\n  "version": "2.0.0"\n}\n'


def release(shelf, version, package):
    files = {
        "agents/reviewer.md": agent("# Reviewer\n", "default remit\n"),
        "agents/writer.md": agent("# Writer\n", "default remit\n"),
        "scripts/gen.sh": GEN,
        "roster.txt": "default remit\n",
        "package.json": package,
    }
    regen = {"interpreter": "bash", "operand": "scripts/gen.sh", "args": []}
    regions = [
        {
            "id": "remit",
            "startMarker": START,
            "endMarker": END,
            "paths": ["agents/reviewer.md"],
            "inputs": ["package.json"],
            "regenerate": regen,
        },
        {
            "id": "writer-remit",
            "startMarker": START,
            "endMarker": END,
            "paths": ["agents/writer.md"],
            "regenerate": regen,
        },
    ]
    extra = {"regions": regions, "merge": {"package.json": {"preset": "npm-package"}}}
    make_release(shelf, version, files, {"scripts/gen.sh": "owned"}, extra=extra)


def test_only_the_region_whose_input_fell_back_is_skipped(tmp_path):
    shelf = tmp_path / "rel"
    release(shelf, "1.0.0", PACKAGE_V1)
    release(shelf, "2.0.0", PACKAGE_V2)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    write_files(
        project,
        {
            "package.json": "{ not json\n",  # the field merge falls back to a whole-file patch
            "roster.txt": "our remit\n",
            # left by a run from before the release declared regions
            ".tether/merge/agents/writer.md.patch": "--- stale\n",
        },
    )
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    doc = json.loads(result.stdout)
    assert [c["path"] for c in doc["buckets"]["conflict"]] == ["package.json"]
    outcomes = {o["id"]: o for o in doc["regenerated"]}
    assert outcomes["remit"]["status"] == "skipped"
    assert (
        outcomes["remit"]["reason"] == "its input package.json fell back to a whole-file conflict"
    )
    assert outcomes["writer-remit"]["status"] == "regenerated"
    assert "our remit" in (project / "agents/writer.md").read_text()
    # the program also rewrote reviewer.md, outside writer-remit's paths: put back
    assert outcomes["writer-remit"]["reverted_paths"] == ["agents/reviewer.md"]
    assert doc["regions"]["unregenerated_paths"] == ["agents/reviewer.md"]
    assert ".tether/merge/agents/writer.md.patch" in doc["superseded_artifacts"]
    assert ".tether/merge/agents/writer.md.patch" not in doc["earlier_artifacts"]


def test_human_summary_names_unregenerated_and_put_back_paths(tmp_path):
    shelf = tmp_path / "rel"
    release(shelf, "1.0.0", PACKAGE_V1)
    release(shelf, "2.0.0", PACKAGE_V2)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    write_files(project, {"package.json": "{ not json\n", "roster.txt": "our remit\n"})
    result = run_tether("update", "--yes", "-C", str(project))
    out = result.stdout
    assert "Declared paths not regenerated (their region was skipped, refused or failed)" in out
    assert "Put back after regeneration" in out
    assert "agents/reviewer.md (region writer-remit)" in out
