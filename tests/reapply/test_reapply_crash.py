"""An interrupted reapply, rerun, ends like an uninterrupted one and never writes over the first
backup of the installed version. Each run is a real process killed at a journal step: reapply
writes through the shared writer (``execute_plan``), so these are the writer's crash points
(run start, backups, intents, writes) as a reapply run passes them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from reapply_builders import (
    EXECUTE,
    Gsd,
    reapply_forked,
    standard,
)
from tether.state import crashpoint
from tether.state.journal import read_records

RUNTIME = (".tether/", "tether-reapply-backup/")


def user_tree(target: Path) -> dict[str, bytes]:
    """What the user sees in the install folder: everything but tether's runtime files."""
    found: dict[str, bytes] = {}
    for path in target.rglob("*"):
        rel = path.relative_to(target).as_posix()
        if path.is_file() and not path.is_symlink() and not rel.startswith(RUNTIME):
            found[rel] = path.read_bytes()
    return found


def command(gsd: Gsd, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target),
            "--pristine", str(gsd.pristine), "--json", *extra]  # fmt: skip


def conflict_patches(stdout: str) -> dict[str, bytes]:
    """The conflict patches a run reports (--conflict patch), by file: their bytes."""
    results = json.loads(stdout)["results"]
    return {r["file"]: Path(r["artifact"]).read_bytes() for r in results if "artifact" in r}


def journal(gsd: Gsd) -> list[dict[str, Any]]:
    return read_records(gsd.target / ".tether/journal.jsonl.reapply")


def without_baseline(tmp: Path) -> Gsd:
    """Every file a conflict with both versions written into it."""
    return standard(tmp, pristine=False)


WRITER_STEPS = {"run-started", "file-backed-up", "file-intent", "file-written", "run-complete"}


@pytest.mark.parametrize(
    ("build", "extra"),
    [
        (standard, ()),
        (without_baseline, ()),
        (standard, ("--conflict", "patch")),
        (without_baseline, ("--auto", "keep-mine")),
        (standard, ("--auto", "keep-mine", "--remove-backups")),
    ],
    ids=["merge", "no-baseline", "conflict-patch", "auto-keep-mine", "remove-backups"],
)
def test_crash_at_every_journal_step_then_rerun(
    tmp_path: Path, build: Any, extra: tuple[str, ...]
) -> None:
    template = build(tmp_path / "template")
    installed = user_tree(template.target)
    reference = build(tmp_path / "reference")
    done = reapply_forked(*command(reference, *extra))
    expected_code, expected_tree = done.returncode, user_tree(reference.target)
    expected_patches = conflict_patches(done.stdout)
    # --auto settles every conflict: the run is done; otherwise conflicts are left
    assert expected_code == 0 if "--auto" in extra else expected_code in (1, 4), done.stderr
    if "--remove-backups" in extra:
        assert expected_code == 0 and not reference.patches.exists(), done.stdout
    # Without a baseline, a file with front matter gets a patch instead of markers at line 1.
    front_matter = build is without_baseline and "--auto" not in extra
    assert bool(expected_patches) == ("patch" in extra or front_matter)
    points = crashpoint.points(journal(reference))
    assert {p.split(":")[0] for p in points} == WRITER_STEPS
    print(f"crash points exercised: {len(points)}")
    for n, point in enumerate(points):
        gsd = Gsd(tmp_path / f"crash{n}", template.v1, template.ours, template.v2)
        shutil.copytree(template.root, gsd.root, symlinks=True)
        crashed = reapply_forked(*command(gsd, *extra), crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        rerun = reapply_forked(*command(gsd, *extra))
        assert rerun.returncode == expected_code, (point, rerun.stderr)
        assert user_tree(gsd.target) == expected_tree, point
        assert conflict_patches(rerun.stdout) == expected_patches, point
        first_run = str(journal(gsd)[0]["run"])
        backups = gsd.backups / first_run / "installed"
        for path in backups.rglob("*") if backups.exists() else []:
            if path.is_file():
                rel = path.relative_to(backups).as_posix()
                # the first backup holds the installed bytes, never a merge written later
                assert path.read_bytes() == installed[rel], point
                assert not rel.endswith(".2"), point
        if not point.startswith("run-complete"):
            assert json.loads(rerun.stdout)["resumed"] is True, point
            assert [p.name for p in gsd.backups.iterdir()] == [first_run], point


def test_rerun_does_not_write_over_a_file_edited_after_the_interruption(tmp_path: Path) -> None:
    gsd = standard(tmp_path)
    crashed = reapply_forked(*command(gsd), crash="file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE
    # The writer journals a batch's writes with one group commit: both files were written.
    written, _ = [r for r in journal(gsd) if r["step"] == "file-written"]
    edited = gsd.target / str(written["path"])
    edited.write_text("edited by hand after the crash\n")
    rerun = reapply_forked(*command(gsd))
    assert rerun.returncode == 1
    doc = json.loads(rerun.stdout)
    [failed] = [r for r in doc["results"] if r["status"] == "failed"]
    assert failed["file"] == written["path"] and "changed since" in failed["reason"]
    assert edited.read_text() == "edited by hand after the crash\n"
    assert doc["resumed"] is True


def test_another_job_is_refused_while_one_is_unfinished(tmp_path: Path) -> None:
    gsd = standard(tmp_path)
    assert reapply_forked(*command(gsd), crash="file-written:1").returncode == crashpoint.EXIT_CODE
    other = tmp_path / "other-patches"
    shutil.copytree(gsd.patches, other)
    meta = json.loads((other / "backup-meta.json").read_text())
    meta["files"] = [EXECUTE]
    (other / "backup-meta.json").write_text(json.dumps(meta))
    refused = reapply_forked("--patches", str(other), "-C", str(gsd.target))
    assert refused.returncode == 1
    assert "unfinished" in refused.stderr and str(gsd.patches) in refused.stderr


@pytest.mark.parametrize("landed", ["one", "all"])
@pytest.mark.parametrize("build", [standard, without_baseline], ids=["merge", "no-baseline"])
def test_killed_mid_write_resumed_then_run_again_changes_nothing(
    tmp_path: Path, build: Any, landed: str
) -> None:
    """Killed after writing files whose writes the journal never recorded (the kill came
    before the batch's group commit): the resumed run ends as the uninterrupted one, and a
    run after it changes nothing, never nesting conflict markers in a file it wrote."""
    template = build(tmp_path / "template")
    reference = build(tmp_path / "reference")
    done = reapply_forked(*command(reference))
    expected_code, expected_tree = done.returncode, user_tree(reference.target)
    intents = [p for p in crashpoint.points(journal(reference)) if p.startswith("file-intent")]
    gsd = Gsd(tmp_path / "trial", template.v1, template.ours, template.v2)
    shutil.copytree(template.root, gsd.root, symlinks=True)
    crashed = reapply_forked(*command(gsd), crash=intents[-1])
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    written = [r["path"] for r in journal(gsd) if r["step"] == "file-intent"]
    for rel in written[:1] if landed == "one" else written:
        # The write landed as tether writes (new bytes renamed over the path, the backup a
        # second name of the old ones), but the journal never recorded it.
        fresh = gsd.target / f"{rel}.new"
        fresh.write_bytes(expected_tree[str(rel)])
        os.replace(fresh, gsd.target / str(rel))
    resumed = reapply_forked(*command(gsd))
    assert resumed.returncode == expected_code, resumed.stderr
    assert user_tree(gsd.target) == expected_tree
    again = reapply_forked(*command(gsd))
    assert again.returncode == expected_code, again.stderr
    assert user_tree(gsd.target) == expected_tree  # nothing changed, no nested markers
    first, second = json.loads(resumed.stdout), json.loads(again.stdout)
    assert [r["status"] for r in second["results"]] == [r["status"] for r in first["results"]]
