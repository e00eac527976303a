"""reapply without a recorded baseline: mechanical drift is told apart from the user's edits,
the file stays a conflict that shows those edits (or asks, when there are none), and the
user's own git commits serve as the baseline when they exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from reapply_builders import (
    HELP,
    HELP_OURS,
    HELP_V1,
    HELP_V2,
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    Gsd,
    cli,
    git,
    make_gsd,
    reapply_json,
    write,
)
from tether.engine.twoway import compare_two_way, drift_key
from tether.flows.reapply.baseline import user_commit_chain

SCRIPT = "scripts/sync.md"
SCRIPT_V1 = '# Sync\n\nRun:\n  cd "$HOME/.claude/gsd" && ./sync.sh\n  rm -f ~/.cache/gsd\n'
# The installer rewrote the home folder and quoting, added "|| true" and re-indented.
SCRIPT_DRIFT = (
    "# Sync\n\nRun:\n    cd /Users/bob/.claude/gsd && ./sync.sh\n"
    "  rm -f ${HOME}/.cache/gsd || true\n\n"
)
SCRIPT_EDITED = SCRIPT_DRIFT.replace("Run:\n", "Run:\n  git pull --rebase\n")
SCRIPT_V2 = SCRIPT_V1 + "Done.\n"


def args(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target), *extra]


def test_drift_key_forgets_paths_home_quoting_or_true_and_whitespace() -> None:
    spellings = [
        'cd "$HOME/.claude" || true',
        "cd ~/.claude",
        "  cd   '${HOME}/.claude'",
        "cd /Users/bob/.claude",
        "cd /home/bob/.claude||true",
    ]
    assert {drift_key(line) for line in spellings} == {"cd ~/.claude"}
    assert drift_key("cd ~/.claude/other") != drift_key("cd ~/.claude")
    assert drift_key("cd /srv/me/x", home="/srv/me") == "cd ~/x"


def test_two_way_compare_keeps_only_the_users_edits() -> None:
    compared = compare_two_way(SCRIPT_EDITED.encode(), SCRIPT_V1.encode())
    [edit] = compared.edits
    assert edit.added == ("  git pull --rebase",) and edit.removed == ()
    assert edit.line == 4
    assert compare_two_way(SCRIPT_DRIFT.encode(), SCRIPT_V1.encode()).drift_only


def test_drift_only_file_stays_a_conflict_and_asks_the_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the new release ships the file as it was: every difference is the installer's drift
    gsd = make_gsd(tmp_path, {SCRIPT: (SCRIPT_V1, SCRIPT_DRIFT, SCRIPT_V1)}, pristine=False)
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 4
    [result] = doc["results"]
    assert result["status"] == "conflict"
    assert result["user_edits"] == []
    assert "customise this file on purpose" in result["question"]
    assert "custom content" not in result["reason"]
    # both versions are in the file for the person to decide
    text = gsd.read(SCRIPT)
    assert SCRIPT_DRIFT in text and SCRIPT_V1 in text


def test_real_edits_beside_drift_are_shown_and_the_file_is_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {SCRIPT: (SCRIPT_V1, SCRIPT_EDITED, SCRIPT_V2)}, pristine=False)
    code, doc = reapply_json(capsys, *args(gsd, "--dry-run"))
    assert code == 4
    [result] = doc["results"]
    assert result["status"] == "conflict" and result["question"] is None
    # the drifted lines are not edits; without a baseline the release's new line "Done."
    # cannot be told from a line the user removed, so it is shown too
    assert result["user_edits"] == [
        {"line": 4, "added": ["  git pull --rebase"], "removed": []},
        {"line": 8, "added": [], "removed": ["Done."]},
    ]
    assert cli(*args(gsd, "--dry-run")) == 4
    human = capsys.readouterr().out
    assert "your edit at line 4:" in human and "+   git pull --rebase" in human


# --- git-enhanced two-way ----------------------------------------------------------------------


def test_user_commit_chain_passes_over_the_update_and_stops_at_the_install() -> None:
    history = [
        ("c4", "c3", "chore: gsd:update to 2.0.0"),
        ("c3", "c2", "tighten the planner"),
        ("c2", "c1", "planner uses opus"),
        ("c1", "c0", "GSD update 1.0.0"),
        ("c0", "", "my first commit"),
    ]
    assert user_commit_chain(history) == (
        [("c3", "tighten the planner"), ("c2", "planner uses opus")],
        "c1",
    )
    assert user_commit_chain([("c1", "c0", "gsd-install"), ("c0", "", "x")]) is None


def test_the_history_fallback_stops_at_the_commit_that_added_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The install commit is not the repository's first and its subject names no update:
    the file as that commit added it is the baseline (not the commit before, which has no
    such file)."""
    target = tmp_path / "claude"
    target.mkdir()
    git(target, "init", "-q", "-b", "main")
    write(target, {"notes.md": "my notes\n"})
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "start my dotfiles")
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)}, pristine=False,
                   git_history=True)  # fmt: skip
    assert [line.split(" ", 1)[1] for line in git(target, "log", "--format=%h %s").splitlines()]\
        == ["my changes", "install 1.0.0", "start my dotfiles"]  # fmt: skip
    gsd.set_meta(pristine_hashes={})
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 0, doc
    [planner] = doc["results"]
    assert (planner["status"], planner["baseline"]) == ("merged", "git-commits")
    assert [c["subject"] for c in planner["user_commits"]] == ["my changes"]
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_git_enhanced_two_way_merges_on_the_version_before_the_users_commits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(
        tmp_path,
        {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2), HELP: (HELP_V1, HELP_OURS, HELP_V2)},
        pristine=False,
        git_history=True,
    )
    gsd.set_meta(pristine_hashes={})  # an older installer: no hash to find the baseline by
    git(gsd.target, "commit", "-q", "-am", "gsd:update 2.0.0")  # passed over
    code, doc = reapply_json(capsys, *args(gsd))
    assert code == 0, doc
    by_file = {r["file"]: r for r in doc["results"]}
    planner, help_ = by_file[PLANNER], by_file[HELP]
    assert planner["status"] == "merged" and planner["baseline"] == "git-commits"
    assert [c["subject"] for c in planner["user_commits"]] == ["my changes"]
    assert gsd.read(PLANNER) == PLANNER_MERGED
    # upstream adopted the change, but this baseline is not the recorded pristine version
    assert help_["status"] == "merged" and help_["baseline"] == "git-commits"
    assert gsd.read(HELP) == HELP_V2
