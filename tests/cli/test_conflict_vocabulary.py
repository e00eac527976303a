"""One vocabulary for settling conflicts, on every command that settles them (docs/cli.md,
"Settling conflicts"): ``ours``/``theirs`` settle only the clashing hunks, as git's
``merge-file --ours/--theirs`` (``merge -X ours/theirs``), every other change of both sides
merged; ``keep-mine``/``take-theirs`` decide for the whole file. ``git merge-file`` is the
reference for the hunk-level results; the adopter's settings file is a real conflict: both
sides changed ``retries``, upstream also changed ``level`` and the adopter ``colour``."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from builders import call, make_release, run_tether
from reapply_builders import make_gsd
from tether.cli.interact import ConflictQuestion, choose_each
from tether.cli.main import build_full_parser
from tether.engine.verify import verify_preserved
from tether.flows.merging import favored_must_keep
from tether.model.plan import AUTO_CHOICES

DOCS = Path(__file__).parents[2] / "docs"
GIT = shutil.which("git")

BASE = "# acme settings\nlevel: info\ntheme: light\ncolour: blue\nsize: 10\nretries: 3\n"
MINE = BASE.replace("colour: blue", "colour: red").replace("retries: 3", "retries: 10")
LATEST = BASE.replace("level: info", "level: warn").replace("retries: 3", "retries: 5")
# What each choice leaves: the hunk-level ones keep both sides' other changes.
EXPECTED = {
    "ours": MINE.replace("level: info", "level: warn"),
    "theirs": LATEST.replace("colour: blue", "colour: red"),
    "keep-mine": MINE,
    "take-theirs": LATEST,
}
SETTINGS = "config/settings.yml"


def git_merge_file(base: str, mine: str, latest: str, favor: str, tmp: Path) -> str:
    """The reference: ``git merge-file --ours|--theirs -p`` on the same three versions."""
    assert GIT is not None
    tmp.mkdir(parents=True, exist_ok=True)
    for name, text in (("base", base), ("mine", mine), ("latest", latest)):
        (tmp / name).write_text(text)
    done = subprocess.run(
        [GIT, "merge-file", f"--{favor}", "-p", "mine", "base", "latest"],
        cwd=tmp,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def settings_project(tmp_path: Path) -> Path:
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {SETTINGS: BASE})
    make_release(shelf, "2.0.0", {SETTINGS: LATEST})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / SETTINGS).write_text(MINE)
    return project


def update(project: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = run_tether("update", "--yes", "--json", "-C", str(project), *args)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


# --- update ------------------------------------------------------------------------------


@pytest.mark.skipif(GIT is None, reason="git merge-file is the reference")
@pytest.mark.parametrize("choice", ["ours", "theirs"])
def test_update_auto_ours_and_theirs_are_git_merge_file_ours_and_theirs(
    tmp_path: Path, choice: str
) -> None:
    """Only the clashing hunk takes the named side: upstream's ``level: warn`` and the
    adopter's ``colour: red`` are both kept, byte for byte as git merge-file does it; the
    conflict counts as settled (exit 0, nothing left open) and the adopter's file is in the
    backup."""
    project = settings_project(tmp_path)
    code, doc = update(project, "--auto", choice)
    assert code == 0, doc
    expected = git_merge_file(BASE, MINE, LATEST, choice, tmp_path / "git")
    assert expected == EXPECTED[choice]
    assert (project / SETTINGS).read_text() == expected
    [row] = doc["buckets"]["conflict"]  # type: ignore[index]
    assert row["decision"] == choice and "1 clashing hunk took" in row["reason"]
    assert (project / str(doc["backup_dir"]) / SETTINGS).read_text() == MINE
    assert call("check", "-C", str(project)) == 0  # nothing open, nothing to finish


@pytest.mark.parametrize("choice", ["keep-mine", "take-theirs"])
def test_update_keep_mine_and_take_theirs_stay_whole_file_decisions(
    tmp_path: Path, choice: str
) -> None:
    project = settings_project(tmp_path)
    code, doc = update(project, "--auto", choice)
    assert code == 0, doc
    assert (project / SETTINGS).read_text() == EXPECTED[choice]
    if choice == "keep-mine":  # the release's copy beside it, as before
        assert (project / f".tether/merge/{SETTINGS}.theirs").read_text() == LATEST


def test_keep_mine_drops_what_ours_keeps(tmp_path: Path) -> None:
    """The case the choice exists for: a whole file kept loses upstream's change to another
    line (``level: warn``); ``ours`` keeps it."""
    assert "level: warn" not in EXPECTED["keep-mine"] and "level: warn" in EXPECTED["ours"]
    project = settings_project(tmp_path)
    assert update(project, "--auto", "ours")[0] == 0
    assert "level: warn\n" in (project / SETTINGS).read_text()


def test_a_binary_file_is_one_clashing_hunk_settled_whole(tmp_path: Path) -> None:
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"logo.png": b"\x89PNG\x00base"})
    make_release(shelf, "2.0.0", {"logo.png": b"\x89PNG\x00theirs"})
    for choice, kept in (("ours", b"mine"), ("theirs", b"theirs"), ("keep-mine", b"mine")):
        project = tmp_path / choice
        assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
        (project / "logo.png").write_bytes(b"\x89PNG\x00mine")
        code, doc = update(project, "--auto", choice)
        assert code == 0, doc  # settled, not left open (keep-mine on a binary was left open)
        assert (project / "logo.png").read_bytes() == b"\x89PNG\x00" + kept
        [row] = doc["buckets"]["conflict"]  # type: ignore[index]
        assert row["decision"] in ("keep-mine", "take-theirs")


def test_conflict_markers_never_open_a_file_with_front_matter(tmp_path: Path) -> None:
    """Both sides put different front matter on a page: markers at line 1 would hide it
    from whatever reads it, so the page stays as the adopter has it and the clash goes to
    a patch."""
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"agents/a.md": "Plan the work.\n"})
    make_release(shelf, "2.0.0", {"agents/a.md": "---\nname: a\n---\nPlan the work.\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    mine = "---\nname: a\nmodel: opus\n---\nPlan the work.\n"
    (project / "agents/a.md").write_text(mine)
    code, doc = update(project, "--conflict", "markers")
    assert code == 4, doc
    [row] = doc["buckets"]["conflict"]  # type: ignore[index]
    assert row["decision"] == "patch" and "front matter" in row["reason"]
    assert (project / "agents/a.md").read_text() == mine
    assert (project / str(row["artifact"])).read_text().startswith("--- a/agents/a.md")


# --- reapply ------------------------------------------------------------------------------

AGENT = "agents/gsd-settings.md"


def reapply(gsd_patches: Path, target: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = run_tether("reapply", "--json", "--patches", str(gsd_patches), "-C", str(target), *args)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("choice", ["ours", "theirs", "keep-mine", "take-theirs"])
def test_reapply_speaks_the_same_vocabulary(tmp_path: Path, choice: str) -> None:
    """On a pristine baseline the same three versions settle as they do in update; a
    ``theirs`` that dropped a clashing hunk of yours keeps the patches, as take-theirs does."""
    gsd = make_gsd(tmp_path, {AGENT: (BASE, MINE, LATEST)})
    code, doc = reapply(gsd.patches, gsd.target, "--pristine", str(gsd.pristine), "--auto", choice)
    assert code == 0, doc
    [result] = doc["results"]  # type: ignore[index]
    assert result["status"] == "resolved" and result["resolution"] == choice
    assert gsd.read(AGENT) == EXPECTED[choice]
    if choice in ("ours", "theirs"):
        assert "1 clashing hunk took" in result["reason"]
        # the adopter's hunks kept are in the table, verified on the written file
        assert [row["verified"] for row in result["hunks"]] == [True] * len(result["hunks"])
        assert result["hunks"], result


def test_reapply_theirs_keeps_the_patches_it_would_lose(tmp_path: Path) -> None:
    gsd = make_gsd(tmp_path, {AGENT: (BASE, MINE, LATEST)})
    pristine = ("--pristine", str(gsd.pristine))
    code, doc = reapply(gsd.patches, gsd.target, *pristine, "--auto", "theirs", "--remove-backups")
    assert code == 0
    assert "theirs" in str(doc["backups_kept_because"]) and gsd.patches.is_dir()
    again = make_gsd(tmp_path / "ours", {AGENT: (BASE, MINE, LATEST)})
    pristine = ("--pristine", str(again.pristine))
    code, doc = reapply(
        again.patches, again.target, *pristine, "--auto", "ours", "--remove-backups"
    )
    assert code == 0 and doc["backups_removed"] and not again.patches.exists()


def test_reapply_hunk_choices_need_a_baseline(tmp_path: Path) -> None:
    """Without a baseline the clashing lines are not known: ``--auto ours`` leaves the
    conflict, saying which choices settle it."""
    gsd = make_gsd(tmp_path, {AGENT: (BASE, MINE, LATEST)}, pristine=False)
    code, doc = reapply(gsd.patches, gsd.target, "--auto", "ours")
    assert code == 4
    [result] = doc["results"]  # type: ignore[index]
    assert result["status"] == "conflict" and "keep-mine or take-theirs" in result["reason"]


def test_reapply_without_a_baseline_never_puts_markers_over_front_matter(tmp_path: Path) -> None:
    text = "---\nname: gsd-x\n---\nbody\n"
    gsd = make_gsd(
        tmp_path,
        {AGENT: (text, text.replace("body", "my body"), text.replace("name:", "name: v2"))},
        pristine=False,
    )
    code, doc = reapply(gsd.patches, gsd.target, "--conflict", "markers")
    assert code == 4
    [result] = doc["results"]  # type: ignore[index]
    assert "front matter" in result["reason"] and result["artifact"].endswith(".patch")
    assert gsd.read(AGENT) == text.replace("name:", "name: v2")  # the installed file, whole


# --- refresh ------------------------------------------------------------------------------


@pytest.mark.parametrize("choice", ["ours", "theirs", "keep-mine", "take-theirs"])
def test_refresh_auto_speaks_the_same_vocabulary(tmp_path: Path, choice: str) -> None:
    from tests.refresh.test_gbrain_refresh import ROOT, recipe

    rec = recipe(tmp_path / "recipe", {"settings.md": (BASE, "0644")})
    host = tmp_path / "host"
    host.mkdir()
    assert call("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host)) == 0
    (rec / "src/settings.md").write_text(LATEST)
    (host / ROOT / "settings.md").write_text(MINE)
    done = run_tether("refresh", "--yes", "--json", "--auto", choice, "-C", str(host))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (host / ROOT / "settings.md").read_text() == EXPECTED[choice]
    log = (host / ROOT / ".gbrain-source.refresh.log").read_text().splitlines()
    assert json.loads(log[-1])["decision"] == choice


# --- the prompt -----------------------------------------------------------------------------


def test_the_prompt_offers_both_levels_and_a_capital_answers_for_the_rest() -> None:
    questions = [
        ConflictQuestion("a", "both changed.", lambda: "diff a"),
        ConflictQuestion("b", "both changed.", lambda: "diff b"),
        ConflictQuestion("c", "no baseline.", lambda: "diff c", hunk_level=False),
        ConflictQuestion("d", "both changed.", lambda: "diff d"),
    ]
    asked: list[str] = []
    answers = iter(["x", "o", "T", "k"])

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(answers) + "\n"

    chosen = choose_each(questions, ask, lambda text: None)
    # "x" is no answer; T (theirs for the rest) cannot settle c, which has no clashing lines
    # known, so c is asked (k: keep my whole file); d takes T without a question.
    assert chosen == {"a": "ours", "b": "theirs", "c": "keep-mine", "d": "theirs"}
    assert [p.split(":")[0] for p in asked] == ["a", "a", "b", "c"]
    assert "[o] my side of the clashing lines" in asked[0]
    assert "[k]eep my whole file" in asked[0]
    assert "clashing lines" not in asked[3] and "[k]eep my whole file" in asked[3]


# --- the verification gate of a favored merge ---------------------------------------------


def test_a_theirs_merge_is_held_to_every_change_of_yours_that_did_not_clash() -> None:
    base, mine, latest = (s.encode() for s in (BASE, MINE, LATEST))
    kept = favored_must_keep(base, mine, latest, "theirs")
    assert verify_preserved(base, kept, EXPECTED["theirs"].encode()).preserved
    # A result that lost the adopter's colour (not a clash) fails the gate.
    lost = verify_preserved(base, kept, LATEST.encode())
    assert not lost.preserved and [t for _, t in lost.missing] == ["colour: red"]
    # ours keeps everything of yours
    assert favored_must_keep(base, mine, latest, "ours") == mine


# --- one table, used everywhere -------------------------------------------------------------


def _auto_options(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.Action]:
    found = {}
    for action in parser._actions:
        if "--auto" in action.option_strings:
            found[path] = action
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_auto_options(sub, f"{path} {name}".strip()))
    return found


def test_every_command_that_settles_conflicts_takes_the_one_vocabulary() -> None:
    options = _auto_options(build_full_parser())
    assert {"update", "reapply", "refresh", "campaign start"} <= set(options)
    for path, action in options.items():
        assert set(AUTO_CHOICES) <= set(action.choices or ()), path
        assert "ours/theirs" in (action.help or ""), path
        assert "docs/cli.md, 'Settling conflicts'" in (action.help or ""), path


def test_one_table_in_cli_md_and_every_commands_page_points_to_it() -> None:
    text = (DOCS / "cli.md").read_text()
    section = text.split("## Settling conflicts", 1)[1].split("\n## ", 1)[0]
    for choice in AUTO_CHOICES:
        assert re.search(rf"^\| `{choice}` \|", section, re.M), choice
    assert "[o] my side of the clashing lines" in section and "[k]eep my whole file" in section
    for page in ("update.md", "reapply.md", "refresh.md", "campaigns.md"):
        assert "cli.md#settling-conflicts" in (DOCS / page).read_text(), page


def test_the_demo_shows_the_hunk_level_choice(tmp_path: Path) -> None:
    done = run_tether("demo", "--json", "-C", str(tmp_path / "demo"))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    shown = doc["hunk_level"]
    assert shown["command"] == "update --yes --auto ours"
    assert "level: warn\n" in shown["text"] and "retries: 10\n" in shown["text"]
    [row] = shown["update"]["buckets"]["conflict"]
    assert row["path"] == shown["file"] and row["decision"] == "ours"
    # the main walk-through still leaves the conflict for a person
    assert doc["update"]["buckets"]["conflict"][0]["decision"] == "markers"
    human = run_tether("demo", "-C", str(tmp_path / "again")).stdout
    assert "=== tether update --yes --auto ours" in human
