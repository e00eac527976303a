"""What ``tether update`` says: bucket wording, where conflicts are, --all, the branch a
dry run would create, and open conflicts when there is nothing newer."""

import json
from pathlib import Path

from builders import call, git, make_release, pty_session, run_tether


def project_with(tmp_path: Path, count: int = 3, conflicts: int = 1, owned: int = 1) -> Path:
    """1.0.0 → 2.0.0: ``count`` untouched shared files, ``conflicts`` files both sides
    changed on the same line, ``owned`` untouched owned files."""
    shelf = tmp_path / "rel"
    v1: dict[str, str] = {}
    v2: dict[str, str] = {}
    classes: dict[str, str] = {}
    for i in range(count):
        v1[f"s{i:02d}.txt"], v2[f"s{i:02d}.txt"] = f"s{i}\n", f"s{i} v2\n"
    for i in range(conflicts):
        v1[f"c{i:02d}.txt"], v2[f"c{i:02d}.txt"] = "a\nb\nc\n", "a\ntheirs\nc\n"
    for i in range(owned):
        v1[f"o{i}.sh"], v2[f"o{i}.sh"] = "o1\n", "o2\n"
        classes[f"o{i}.sh"] = "owned"
    make_release(shelf, "1.0.0", v1, classes)
    make_release(shelf, "2.0.0", v2, classes)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    for i in range(conflicts):
        (project / f"c{i:02d}.txt").write_text("a\nmine\nc\n")
    return project


def rows_of(out: str) -> list[str]:
    """The count rows of a summary: indented, ending in a number."""
    return [line for line in out.splitlines() if line.startswith("  ") and line[-1].isdigit()]


def test_buckets_say_what_happened(tmp_path):
    project = project_with(tmp_path)
    out = run_tether("update", "--yes", "-C", str(project)).stdout
    rows = {label.strip(): count for label, _, count in (r.rpartition(" ") for r in rows_of(out))}
    assert "Overwritten" not in out
    assert rows["Replaced (owned, unchanged here)"] == "1"
    assert rows["Updated (unchanged here)"] == "3"
    assert rows["Conflicts (markers in the files)"] == "1"
    doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert set(doc["buckets"]) >= {"overwrite", "update", "merged", "skip", "conflict"}


def test_an_owned_file_that_was_yours_says_it_was_backed_up(tmp_path):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a\n", "tool.sh": "upstream\n"}, {"tool.sh": "owned"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "tool.sh").write_text("my own tool\n")
    out = run_tether("update", "--yes", "-C", str(project)).stdout
    assert "Replaced (owned; your copy backed up)" in out
    assert "unchanged here" not in out


def test_conflict_header_points_at_the_patches(tmp_path):
    project = project_with(tmp_path)
    out = run_tether("update", "--yes", "--conflict", "patch", "-C", str(project)).stdout
    assert "Conflicts (patches in .tether/merge/)" in out
    assert "c00.txt → .tether/merge/c00.txt.patch" in out


def test_all_lifts_the_twenty_line_cap(tmp_path):
    project = project_with(tmp_path, count=0, conflicts=25, owned=0)
    capped = run_tether("update", "--dry-run", "-C", str(project)).stdout
    assert "… and 5 more (--all lists every one)" in capped
    assert "c24.txt" not in capped
    every = run_tether("update", "--dry-run", "--all", "-C", str(project)).stdout
    assert "more (--all" not in every
    assert all(f"c{i:02d}.txt" in every for i in range(25))


def test_the_question_names_the_branch_it_will_switch_to(tmp_path):
    """What a person confirms at the terminal says where the update lands, as --dry-run
    does; declining switches nothing."""
    project = project_with(tmp_path)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    code, out = pty_session(["update", "-C", str(project)], [("Apply this update? [y/N]", "n")])
    assert code == 0, out
    before = out.split("Apply this update?")[0]
    assert "Branch: will switch to a new branch chore/update-acme-kit-2.0.0 once you confirm" in (
        before
    )
    assert git(project, "branch", "--show-current").strip() == "main"


def test_dry_run_names_the_branch_it_would_create(tmp_path):
    project = project_with(tmp_path)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    out = run_tether("update", "--dry-run", "-C", str(project)).stdout
    assert "Branch: would switch to a new branch chore/update-acme-kit-2.0.0" in out
    doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert doc["branch"] == "chore/update-acme-kit-2.0.0"
    assert git(project, "branch", "--show-current").strip() == "main"  # nothing switched
    git(project, "switch", "-q", "-c", "work")
    doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert doc["branch"] is None  # not on main/master: the update stays on this branch


def test_open_conflicts_and_nothing_newer_exit_3(tmp_path):
    project = project_with(tmp_path)
    assert run_tether("update", "--yes", "-C", str(project)).returncode == 4
    again = run_tether("update", "--yes", "-C", str(project))
    assert again.returncode == 3
    assert "up to date" not in again.stdout
    assert "1 conflict(s) from an earlier update are not resolved" in again.stdout
    assert "c00.txt (see c00.txt)" in again.stdout
    doc = json.loads(run_tether("update", "--yes", "--json", "-C", str(project)).stdout)
    assert doc["status"] == "conflicts-open"
    assert [c["path"] for c in doc["open_conflicts"]] == ["c00.txt"]
    (project / "c00.txt").write_text("a\nresolved\nc\n")
    resolved = run_tether("update", "--yes", "-C", str(project))
    assert resolved.returncode == 0, resolved.stdout
    assert run_tether("check", "-C", str(project)).returncode == 0


def test_settled_conflicts_are_labelled_as_what_was_done_not_as_conflicts(tmp_path):
    """--auto keep-mine names the release's copy where it really is; ours/theirs are listed as
    clashing lines settled; none of them is counted or listed under "Conflicts"."""
    kept = project_with(tmp_path / "kept", count=0, owned=0)
    out = run_tether("update", "--yes", "--auto", "keep-mine", "-C", str(kept)).stdout
    rows = {label.strip(): count for label, _, count in (r.rpartition(" ") for r in rows_of(out))}
    assert rows["Conflicts"] == "0"
    assert rows["Kept yours whole (release's copy beside it)"] == "1"
    listed = out.split("Kept yours whole (the release's copy goes beside it")[1]
    copy = listed.split("(the release's copy: ")[1].split(")")[0]
    assert (kept / copy).read_text() == "a\ntheirs\nc\n"
    assert "Conflicts (" not in out
    ours = project_with(tmp_path / "ours", count=0, owned=0)
    out = run_tether("update", "--yes", "--auto", "ours", "-C", str(ours)).stdout
    assert "Clashing lines settled (every other change of both sides merged) (1):" in out
    assert "Conflicts (" not in out
    assert (ours / "c00.txt").read_text() == "a\nmine\nc\n"


def test_a_conflict_written_again_is_not_also_listed_as_superseded(tmp_path):
    """An update leaving a patch where an earlier run left one lists it once: as this run's."""
    shelf = tmp_path / "rel"
    for version, line in (("1.0.0", "b"), ("2.0.0", "theirs"), ("3.0.0", "theirs3")):
        make_release(shelf, version, {"c.txt": f"a\n{line}\nc\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "c.txt").write_text("a\nmine\nc\n")
    args = ("--yes", "--conflict", "patch", "-C", str(project))
    assert call("update", "--to", "2.0.0", *args) == 4
    result = run_tether("update", "--json", *args)
    doc = json.loads(result.stdout)
    assert [a["artifact"] for a in doc["buckets"]["conflict"]] == [".tether/merge/c.txt.patch"]
    assert doc["superseded_artifacts"] == [] and doc["earlier_artifacts"] == []
