"""What reapply tells about each file's changes (the seed's "User Changes Preserved", for
every file: deletion-only and resolved ones too), and a file the new release dropped, which
is settled (kept as the user's own file, or dropped) instead of staying a conflict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders import run_tether
from reapply_builders import (
    EXECUTE,
    EXECUTE_OURS,
    EXECUTE_V1,
    EXECUTE_V2,
    HELP,
    HELP_OURS,
    HELP_V1,
    HELP_V2,
    PLANNER,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    Gsd,
    make_gsd,
    reapply_forked,
)
from tests.reapply.test_reapply_crash import journal, user_tree
from tests.reapply.test_reapply_resolve import run_on_terminal
from tether.state import crashpoint

DELETED = "commands/gsd/trim.md"
TRIM_V1 = "# Trim\n\n1. Read.\n2. Explain at length.\n3. Write.\n4. Check.\n"
TRIM_OURS = TRIM_V1.replace("2. Explain at length.\n", "")  # a deletion only
TRIM_V2 = TRIM_V1.replace("4. Check.", "4. Check twice.")
GONE = "agents/gsd-retired.md"
GONE_V1 = "# Retired agent\n\nDo things.\n"
GONE_OURS = GONE_V1 + "Do my own things too.\n"


def files() -> dict[str, tuple[str, str, str]]:
    return {
        PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2),
        EXECUTE: (EXECUTE_V1, EXECUTE_OURS, EXECUTE_V2),
        HELP: (HELP_V1, HELP_OURS, HELP_V2),
        DELETED: (TRIM_V1, TRIM_OURS, TRIM_V2),
    }


def with_dropped(tmp: Path) -> Gsd:
    """An install whose new release no longer ships GONE (the installer wiped it)."""
    gsd = make_gsd(tmp, {**files(), GONE: (GONE_V1, GONE_OURS, GONE_V1)})
    (gsd.target / GONE).unlink()
    return gsd


def reapply(gsd: Gsd, *extra: str) -> tuple[int, dict[str, object], str]:
    argv = ["--patches", str(gsd.patches), "-C", str(gsd.target), "--pristine", str(gsd.pristine)]
    human = run_tether("reapply", "--dry-run", *argv, *extra)
    done = run_tether("reapply", "--json", *argv, *extra)
    assert "Traceback" not in done.stderr + human.stderr, done.stderr + human.stderr
    return done.returncode, json.loads(done.stdout), human.stdout


def results(doc: dict[str, object]) -> dict[str, dict[str, object]]:
    return {r["file"]: r for r in doc["results"]}  # type: ignore[attr-defined,index]


def table_row(human: str, file: str) -> str:
    table = human.split("your changes, file by file", 1)[1]
    [row] = [line for line in table.splitlines() if f"  {file}  " in line]
    return row


@pytest.mark.parametrize(
    ("choice", "words"),
    [
        ("keep-mine", 'your whole saved copy: changed "2. Run tests with coverage."'),
        ("ours", 'changed "2. Run tests with coverage." (1 clashing hunk took your side)'),
        ("theirs", "none of yours (1 clashing hunk took the installed side)"),
        ("take-theirs", "none in the file: you took the installed file"),
    ],
)
def test_every_file_says_which_changes_of_yours_it_keeps(
    tmp_path: Path, choice: str, words: str
) -> None:
    """One row per file, whatever its result: a merge names what it added and deleted, a
    deletion-only merge its deletion, an incorporated file that it is upstream's now, a
    resolved conflict what the choice kept."""
    gsd = make_gsd(tmp_path, files())
    code, doc, human = reapply(gsd, "--auto", choice)
    assert code == 0, doc
    found = results(doc)
    assert found[PLANNER]["preserved"] == [
        {"kind": "added", "text": "model: opus", "added": 1, "removed": 0},
        {"kind": "deleted", "text": "color: green", "added": 0, "removed": 1},
    ]
    assert found[DELETED]["status"] == "merged" and found[DELETED]["hunks"] == []
    assert found[DELETED]["preserved"] == [
        {"kind": "deleted", "text": "2. Explain at length.", "added": 0, "removed": 1}
    ]
    assert found[HELP]["status"] == "incorporated"
    assert found[EXECUTE]["resolution"] == choice
    assert table_row(human, PLANNER).endswith('added "model: opus"; deleted "color: green"')
    assert table_row(human, DELETED).endswith(
        'merged                       deleted "2. Explain at length."'
    )
    assert 'already in the installed release: added "- /gsd:progress"' in table_row(human, HELP)
    assert words in table_row(human, EXECUTE)
    assert f"conflict resolved ({choice})" in table_row(human, EXECUTE)


def test_a_conflict_left_and_a_failure_keep_nothing_yet(tmp_path: Path) -> None:
    gsd = make_gsd(tmp_path, files())
    code, doc, human = reapply(gsd)
    assert code == 4
    assert results(doc)[EXECUTE]["preserved"] == []
    assert "none yet: the conflict is yours to settle" in table_row(human, EXECUTE)


# --- a file the new release dropped ----------------------------------------------------------


def test_a_dropped_file_kept_as_your_own(tmp_path: Path) -> None:
    gsd = with_dropped(tmp_path)
    code, doc, human = reapply(gsd, "--auto", "keep-mine", "--dropped", "keep")
    assert code == 0, doc
    gone = results(doc)[GONE]
    assert gone["status"] == "resolved" and gone["resolution"] == "keep"
    assert gsd.read(GONE) == GONE_OURS
    assert "your whole saved copy, now a file of your own" in table_row(human, GONE)


def test_a_dropped_file_dropped_writes_nothing_and_keeps_the_patches(tmp_path: Path) -> None:
    gsd = with_dropped(tmp_path)
    code, doc, _ = reapply(gsd, "--auto", "ours", "--dropped", "drop", "--remove-backups")
    assert code == 0, doc
    gone = results(doc)[GONE]
    assert gone["status"] == "resolved" and gone["resolution"] == "drop"
    assert not (gsd.target / GONE).exists()
    assert gsd.patches.is_dir() and (gsd.patches / GONE).read_text() == GONE_OURS
    assert f"{GONE}: drop" in str(doc["backups_kept_because"])


def test_without_a_choice_a_dropped_file_stays_a_conflict_off_a_terminal(tmp_path: Path) -> None:
    gsd = with_dropped(tmp_path)
    code, doc, _ = reapply(gsd, "--auto", "keep-mine")  # --auto has nothing to merge it with
    assert code == 4
    assert results(doc)[GONE]["status"] == "conflict"
    assert not (gsd.target / GONE).exists()


def test_a_dropped_file_is_asked_at_the_prompt(tmp_path: Path) -> None:
    """On a terminal --auto settles the conflicts and the dropped file is still asked."""
    gsd = with_dropped(tmp_path)
    argv = ["--patches", str(gsd.patches), "-C", str(gsd.target), "--auto", "keep-mine"]
    done = run_on_terminal([*argv, "--pristine", str(gsd.pristine)], "k\n")
    assert done.returncode == 0, done.stderr
    assert f"{GONE}: the new release no longer ships this file" in done.stderr
    assert "[k]eep it as my own file, [x] drop it" in done.stderr
    assert gsd.read(GONE) == GONE_OURS


def test_a_dropped_file_kept_resumes_after_a_kill_at_every_step(tmp_path: Path) -> None:
    extra = ("--auto", "keep-mine", "--dropped", "keep", "--json")
    template = with_dropped(tmp_path / "template")
    reference = with_dropped(tmp_path / "reference")

    def command(gsd: Gsd, *more: str) -> list[str]:
        return ["--patches", str(gsd.patches), "-C", str(gsd.target),
                "--pristine", str(gsd.pristine), *more]  # fmt: skip

    done = reapply_forked(*command(reference, *extra))
    assert done.returncode == 0, done.stdout
    expected = user_tree(reference.target)
    points = crashpoint.points(journal(reference))
    assert points
    kept_before_the_kill = []
    for n, point in enumerate(points):
        gsd = Gsd(tmp_path / f"crash{n}", template.v1, template.ours, template.v2)
        shutil.copytree(template.root, gsd.root, symlinks=True)
        assert reapply_forked(*command(gsd, *extra), crash=point).returncode == crashpoint.EXIT_CODE
        if (gsd.target / GONE).exists() and not point.startswith("run-complete"):
            kept_before_the_kill.append(point)
        rerun = reapply_forked(*command(gsd, *extra))
        assert rerun.returncode == 0, (point, rerun.stdout)
        assert user_tree(gsd.target) == expected, point
        assert results(json.loads(rerun.stdout))[GONE]["resolution"] in ("keep", None), point
    assert kept_before_the_kill
    for n, point in enumerate(kept_before_the_kill):
        # The interrupted run kept it; the rerun drops it: the copy that run wrote goes.
        gsd = Gsd(tmp_path / f"drop{n}", template.v1, template.ours, template.v2)
        shutil.copytree(template.root, gsd.root, symlinks=True)
        assert reapply_forked(*command(gsd, *extra), crash=point).returncode == crashpoint.EXIT_CODE
        rerun = reapply_forked(*command(gsd, "--auto", "keep-mine", "--dropped", "drop"))
        assert rerun.returncode == 0, (point, rerun.stdout)
        assert not (gsd.target / GONE).exists(), point
        assert (gsd.patches / GONE).read_text() == GONE_OURS
