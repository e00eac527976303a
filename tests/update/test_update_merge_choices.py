"""Merge choices in the update flow: keep-mine that lasts, binary files, line endings,
git's unmerged stages, held markers, and the verifier's check of written files."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from builders import call, git, make_release, pty_session, run_tether
from tether.flows.apply import RunContext, execute_plan
from tether.flows.project import open_project
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FileAction, Op, UpdatePlan
from tether.state.journal import Journal

BASE = "".join(f"line {i}\n" for i in range(8))


def three_releases(tmp_path, files_by_version, classes=None):
    shelf = tmp_path / "rel"
    for version, files in files_by_version.items():
        make_release(shelf, version, files, classes)
    project = tmp_path / "proj"
    first = next(iter(files_by_version))
    assert call("init", "--source", str(shelf), "--to", first, "-C", str(project)) == 0
    return project


def update(project, *args):
    result = run_tether("update", "--yes", "--json", "-C", str(project), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_keep_mine_holds_across_two_updates(tmp_path):
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"f.txt": "a\nb\nc\n"},
            "2.0.0": {"f.txt": "a\nB2\nc\n"},
            "3.0.0": {"f.txt": "a\nB3\nc\n"},
        },
    )
    (project / "f.txt").write_text("a\nmine\nc\n")
    code, doc = update(project, "--to", "2.0.0", "--auto", "keep-mine")
    assert code == 0
    assert doc["buckets"]["conflict"][0]["decision"] == "keep-mine"
    assert (project / "f.txt").read_text() == "a\nmine\nc\n"
    assert (project / ".tether/merge/f.txt.theirs").read_text() == "a\nB2\nc\n"
    state = json.loads((project / ".tether/state.json").read_text())
    assert (
        state["files"]["f.txt"]["sha256"]
        != __import__("hashlib").sha256(b"a\nmine\nc\n").hexdigest()
    )
    code, doc = update(project, "--to", "3.0.0", "--auto", "keep-mine")
    assert code == 0
    assert (project / "f.txt").read_text() == "a\nmine\nc\n"  # still mine after the second release
    assert (project / ".tether/merge/f.txt.theirs").read_text() == "a\nB3\nc\n"


def test_take_theirs_writes_latest_and_keeps_a_backup(tmp_path):
    project = three_releases(
        tmp_path, {"1.0.0": {"f.txt": "a\nb\nc\n"}, "2.0.0": {"f.txt": "a\nB2\nc\n"}}
    )
    (project / "f.txt").write_text("a\nmine\nc\n")
    code, doc = update(project, "--auto", "take-theirs")
    assert code == 0
    assert doc["buckets"]["conflict"][0]["decision"] == "take-theirs"
    assert (project / "f.txt").read_text() == "a\nB2\nc\n"
    assert (project / doc["backup_dir"] / "f.txt").read_text() == "a\nmine\nc\n"


def test_binary_conflict_keeps_mine_and_stores_theirs(tmp_path):
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"logo.png": b"\x89PNG\x00base"},
            "2.0.0": {"logo.png": b"\x89PNG\x00theirs"},
        },
    )
    (project / "logo.png").write_bytes(b"\x89PNG\x00mine")
    code, doc = update(project)
    assert code == 4
    conflict = doc["buckets"]["conflict"][0]
    assert conflict["artifact"] == ".tether/merge/logo.png.theirs"
    assert (project / "logo.png").read_bytes() == b"\x89PNG\x00mine"
    assert (project / conflict["artifact"]).read_bytes() == b"\x89PNG\x00theirs"
    assert call("check", "-C", str(project)) == 3
    # binary changed on one side only still follows the equal-hash rules
    project2 = three_releases(
        tmp_path / "b",
        {
            "1.0.0": {"logo.png": b"\x89PNG\x00base"},
            "2.0.0": {"logo.png": b"\x89PNG\x00theirs"},
        },
    )
    code, doc = update(project2)
    assert code == 0 and doc["buckets"]["update"] == ["logo.png"]


def test_crlf_adopter_against_lf_releases(tmp_path):
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"f.txt": BASE},
            "2.0.0": {"f.txt": BASE.replace("line 6\n", "line 6 upstream\n")},
        },
    )
    mine = BASE.replace("line 1\n", "line 1 mine\n").replace("\n", "\r\n")
    (project / "f.txt").write_bytes(mine.encode())
    code, doc = update(project)
    assert code == 0 and doc["buckets"]["merged"] == ["f.txt"]
    data = (project / "f.txt").read_bytes()
    assert b"line 6 upstream\r\n" in data and b"line 1 mine\r\n" in data
    assert data.count(b"\r\n") == data.count(b"\n")  # every line keeps the adopter's CRLF


def test_utf8_bom_is_preserved(tmp_path):
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"f.txt": BASE},
            "2.0.0": {"f.txt": BASE.replace("line 6\n", "line 6 upstream\n")},
        },
    )
    (project / "f.txt").write_bytes(
        b"\xef\xbb\xbf" + BASE.replace("line 1\n", "line 1 mine\n").encode()
    )
    code, _ = update(project)
    assert code == 0
    data = (project / "f.txt").read_bytes()
    assert (
        data.startswith(b"\xef\xbb\xbf") and b"line 6 upstream" in data and b"line 1 mine" in data
    )


def test_markers_are_recorded_as_unmerged_stages_in_git(tmp_path):
    project = three_releases(
        tmp_path, {"1.0.0": {"f.txt": "a\nb\nc\n"}, "2.0.0": {"f.txt": "a\nB2\nc\n"}}
    )
    git(project, "init", "-q", "-b", "work")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    (project / "f.txt").write_text("a\nmine\nc\n")
    git(project, "commit", "-qam", "mine")
    code, _ = update(project, "--conflict", "markers")
    assert code == 4
    stages = git(project, "ls-files", "-u", "--", "f.txt").splitlines()
    assert [line.split()[2] for line in stages] == ["1", "2", "3"]
    blobs = {line.split()[2]: line.split()[1] for line in stages}
    assert git(project, "cat-file", "-p", blobs["1"]) == "a\nb\nc\n"
    assert git(project, "cat-file", "-p", blobs["2"]) == "a\nmine\nc\n"
    assert git(project, "cat-file", "-p", blobs["3"]) == "a\nB2\nc\n"
    assert "both modified" in git(project, "status")


def test_unresolved_markers_are_held_then_merged_after_resolution(tmp_path):
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"f.txt": "a\nb\nc\nd\ne\n"},
            "2.0.0": {"f.txt": "a\nB2\nc\nd\ne\n"},
            "3.0.0": {"f.txt": "a\nB2\nc\nd\nE3\n"},
        },
    )
    (project / "f.txt").write_text("a\nmine\nc\nd\ne\n")
    assert update(project, "--to", "2.0.0")[0] == 4
    with_markers = (project / "f.txt").read_text()
    code, doc = update(project, "--to", "3.0.0")
    assert code == 4
    assert doc["buckets"]["conflict"][0]["decision"] == "held"
    assert (project / "f.txt").read_text() == with_markers  # never nested
    (project / "f.txt").write_text("a\nmine and B2\nc\nd\ne\n")  # resolved against 2.0.0
    code, doc = update(project)
    assert code == 0, doc
    assert doc["buckets"]["merged"] == ["f.txt"]
    assert (project / "f.txt").read_text() == "a\nmine and B2\nc\nd\nE3\n"
    assert update(project)[1]["status"] == "up-to-date"


def test_verifier_restores_a_file_whose_written_merge_drops_a_line(tmp_path):
    project_dir = three_releases(tmp_path, {"1.0.0": {"cfg.yml": "a: 1\n"}})
    project = open_project(project_dir)
    ours = b"a: 1\nmodel: opus\n"
    (project_dir / "cfg.yml").write_bytes(ours)
    dropped = FileAction(
        "cfg.yml",
        FileClass.SHARED,
        Bucket.MERGED,
        Op.WRITE,
        b"a: 2\n",
        sides=(b"a: 1\n", ours, b"a: 2\n"),
    )
    ctx = RunContext(project, Journal(project_dir / ".tether/journal.jsonl"), "run-1", "update")
    outcome = execute_plan(ctx, UpdatePlan("kit", "1.0.0", "2.0.0", [dropped]))
    failed = outcome.actions[0]
    assert failed.bucket is Bucket.FAILED
    assert "model: opus" in failed.reason
    assert (project_dir / "cfg.yml").read_bytes() == ours
    assert (project_dir / ".tether/backup/run-1/cfg.yml").read_bytes() == ours


def test_interactive_choices_per_file(tmp_path):
    from tether.cli.interact import choose_conflicts
    from tether.flows.update import UpdateRequest, prepare_update

    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"a.txt": "1\n2\n3\n", "b.txt": "1\n2\n3\n", "c.txt": "1\n2\n3\n"},
            "2.0.0": {"a.txt": "1\nA\n3\n", "b.txt": "1\nB\n3\n", "c.txt": "1\nC\n3\n"},
        },
    )
    for name in ("a", "b", "c"):
        (project / f"{name}.txt").write_text(f"1\nmine {name}\n3\n")
    prepared = prepare_update(UpdateRequest(project))
    # diff, then keep my whole a; replace b whole with theirs; keep my whole file for the rest
    answers = iter(["d", "k", "r", "K"])
    shown: list[str] = []
    choose_conflicts(prepared, lambda prompt: next(answers), shown.append)
    decisions = {a.path: a.decision for a in prepared.plan.actions}
    assert decisions == {"a.txt": "keep-mine", "b.txt": "take-theirs", "c.txt": "keep-mine"}
    assert any("-mine a" in text and "+A" in text for text in shown)


def test_prompt_on_a_terminal_offers_both_levels_in_plain_words(tmp_path):
    """The question names the clashing lines and the whole file apart; [o] keeps my side
    of the clashing line and still takes upstream's change two lines away."""
    project = three_releases(
        tmp_path,
        {
            "1.0.0": {"f.txt": "level: info\ntheme: light\nretries: 3\n"},
            "2.0.0": {"f.txt": "level: warn\ntheme: light\nretries: 5\n"},
        },
    )
    (project / "f.txt").write_text("level: info\ntheme: light\nretries: 10\n")
    code, out = pty_session(
        ["update", "-C", str(project)],
        [("Apply this update? [y/N]", "y"), ("f.txt: both sides changed", "o")],
    )
    assert code == 0, out
    assert "[o] my side of the clashing lines" in out and "[k]eep my whole file" in out
    assert (project / "f.txt").read_text() == "level: warn\ntheme: light\nretries: 10\n"
    assert "(ours; 1 clashing hunk took your side" in out


RENAMED_BASE = "".join(f"step {i}: do the thing number {i}\n" for i in range(12))


@pytest.mark.parametrize("declared", [True, False])
def test_rename_carries_adopter_edits(tmp_path, declared):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"docs/old-guide.md": RENAMED_BASE, "k.txt": "k\n"})
    upstream = RENAMED_BASE.replace("step 10: do", "step 10: now do")
    extra = {"renames": [{"from": "docs/old-guide.md", "to": "guide/new.md"}]} if declared else None
    make_release(shelf, "2.0.0", {"guide/new.md": upstream, "k.txt": "k\n"}, extra=extra)
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    mine = RENAMED_BASE.replace("step 2: do", "step 2: (we skip this) do")
    (project / "docs/old-guide.md").write_text(mine)
    code, doc = update(project)
    assert code == 0, doc
    assert doc["renames"] == [
        {"from_path": "docs/old-guide.md", "path": "guide/new.md", "bucket": "merged"}
    ]
    text = (project / "guide/new.md").read_text()
    assert "step 2: (we skip this) do" in text and "step 10: now do" in text
    assert doc["buckets"]["delete"] == ["docs/old-guide.md"]  # old path: the deletion rules
    assert (project / "docs/old-guide.md").read_text() == mine
    human = run_tether("update", "--dry-run", "-C", str(project))
    assert human.returncode == 0


def test_unrelated_new_file_is_not_a_rename(tmp_path):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.md": RENAMED_BASE})
    make_release(shelf, "2.0.0", {"b.md": "something else entirely\n"})
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / "a.md").write_text(RENAMED_BASE + "mine\n")
    _code, doc = update(project)
    assert doc["renames"] == [] and doc["buckets"]["add"] == ["b.md"]


@given(
    st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b""]), max_size=30),
    st.lists(st.sampled_from([b"a", b"b", b"c", b"e", b""]), max_size=30),
)
def test_shared_lines_is_the_multiset_intersection(left, right):
    from collections import Counter

    from tether.flows.renames import shared_lines

    expected = sum((Counter(left) & Counter(right)).values())
    assert shared_lines(Counter(left), Counter(right)) == expected
