"""reapply carries its plan out through the shared crash-safe writer (``execute_plan``): its
decisions become ``FileAction``s, the writer backs up, journals, writes and verifies, and a
rerun resumes an interrupted run, including one an earlier version of tether started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reapply_builders import (
    EXECUTE,
    EXECUTE_V2,
    HELP,
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    make_gsd,
    reapply_forked,
    sha,
    standard,
)
from tether.flows.apply import execute_plan
from tether.flows.reapply import BaselineOptions, ReapplyRequest, load_patch_set
from tether.flows.reapply.job import open_job
from tether.flows.reapply.plan import plan_files, writer_plan
from tether.model.plan import Bucket, Op
from tether.state import crashpoint
from tether.state.journal import Journal, new_run_id, read_records


def command(gsd: Any, *extra: str) -> list[str]:
    return ["--patches", str(gsd.patches), "-C", str(gsd.target),
            "--pristine", str(gsd.pristine), "--json", *extra]  # fmt: skip


def journal_of(gsd: Any) -> Path:
    return gsd.target / ".tether/journal.jsonl.reapply"


def test_statuses_map_onto_the_shared_buckets(tmp_path: Path) -> None:
    gsd = standard(tmp_path)
    request = ReapplyRequest(gsd.patches, gsd.target, BaselineOptions(pristine=gsd.pristine))
    job = open_job(request, load_patch_set(gsd.patches), Journal(journal_of(gsd)))
    plan = writer_plan(job, plan_files(job))
    actions = {a.path: (a.bucket, a.op) for a in plan.actions}
    assert actions == {
        PLANNER: (Bucket.MERGED, Op.WRITE),
        EXECUTE: (Bucket.CONFLICT, Op.MARKERS),
        HELP: (Bucket.SKIP, Op.NONE),  # incorporated: nothing to write
    }
    merged = plan.actions[0]
    assert merged.sides == (PLANNER_V1.encode(), PLANNER_OURS.encode(), PLANNER_V2.encode())
    assert merged.restore == PLANNER_V2.encode()  # what a failed verification puts back


def test_a_merge_that_loses_a_line_is_put_back_to_the_installed_version(tmp_path: Path) -> None:
    """The writer's verifier reads the written file back; the installed version (not the
    saved copy) is what the target held, so that is what it restores."""
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    request = ReapplyRequest(gsd.patches, gsd.target, BaselineOptions(pristine=gsd.pristine))
    job = open_job(request, load_patch_set(gsd.patches), Journal(journal_of(gsd)))
    [decision] = plan_files(job)
    decision.write = PLANNER_MERGED.replace("model: opus\n", "").encode()  # a faulty merge
    outcome = execute_plan(job.context(), writer_plan(job, [decision]))
    [action] = outcome.actions
    assert action.bucket is Bucket.FAILED
    assert outcome.unverified[PLANNER].missing == [(4, "model: opus")]
    assert gsd.read(PLANNER) == PLANNER_V2
    assert (job.backup_dir / "installed" / PLANNER).read_text() == PLANNER_V2
    steps = [r["step"] for r in read_records(journal_of(gsd))]
    assert steps[:4] == ["run-started", "file-backed-up", "file-intent", "file-failed"]


def test_a_resume_with_another_conflict_style_puts_the_installed_version_back(
    tmp_path: Path,
) -> None:
    """Interrupted after writing conflict markers, rerun asking for a patch instead: the
    markers go and the installed version is back. The first backup stays as it was; the
    markers, backed up before they are replaced, go beside it."""
    gsd = standard(tmp_path)
    crashed = reapply_forked(*command(gsd), crash="file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    assert "<<<<<<<" in gsd.read(EXECUTE)
    rerun = reapply_forked(*command(gsd, "--conflict", "patch"))
    assert rerun.returncode == 4, rerun.stderr
    doc = json.loads(rerun.stdout)
    results = {r["file"]: r for r in doc["results"]}
    assert doc["resumed"] is True
    assert results[EXECUTE]["status"] == "conflict" and "artifact" in results[EXECUTE]
    assert gsd.read(EXECUTE) == EXECUTE_V2
    assert gsd.read(PLANNER) == PLANNER_MERGED
    installed = gsd.backups / doc["run_id"] / "installed"
    backups = sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*.md*"))
    assert backups == sorted([PLANNER, EXECUTE, EXECUTE + ".2"])
    assert (installed / EXECUTE).read_text() == EXECUTE_V2
    assert "<<<<<<<" in (installed / (EXECUTE + ".2")).read_text()


def test_an_unfinished_run_of_the_previous_writer_is_resumed(tmp_path: Path) -> None:
    """Before reapply shared the writer it journaled ``file-written`` with a ``status`` and
    no intents; such a journal, left by a crash after the planner's merge, still resumes to
    the end state of an uninterrupted run."""
    reference = standard(tmp_path / "reference")
    done = reapply_forked(*command(reference))
    gsd = standard(tmp_path / "resumed")
    patch_set = load_patch_set(gsd.patches)
    digest = sha(f"{patch_set.root.resolve()}\0{patch_set.meta_sha256}\0{gsd.target.resolve()}")
    run = new_run_id()
    backup = gsd.backups / run / "installed" / PLANNER
    backup.parent.mkdir(parents=True)
    backup.write_text(PLANNER_V2)
    (gsd.target / PLANNER).write_text(PLANNER_MERGED)
    command_text = f"reapply --patches {gsd.patches} -C {gsd.target}"
    records = [
        {"step": "run-started", "from_version": "1.0.0", "to_version": "", "plan_digest": digest,
         "command": command_text, "git": None},
        {"step": "file-backed-up", "path": PLANNER, "backup": str(backup),
         "sha256": sha(PLANNER_V2)},
        {"step": "file-written", "path": PLANNER, "sha256": sha(PLANNER_MERGED),
         "status": "merged"},
    ]  # fmt: skip
    lines = [json.dumps({"run": run, "seq": n, "at": "x", **r}) for n, r in enumerate(records, 1)]
    journal_of(gsd).parent.mkdir(exist_ok=True)
    journal_of(gsd).write_text("\n".join(lines) + "\n")
    rerun = reapply_forked(*command(gsd))
    assert rerun.returncode == done.returncode == 4, rerun.stderr
    doc = json.loads(rerun.stdout)
    assert doc["resumed"] is True and doc["run_id"] == run
    statuses = {r["file"]: r["status"] for r in doc["results"]}
    assert statuses == {PLANNER: "merged", EXECUTE: "conflict", HELP: "incorporated"}
    for rel in (PLANNER, EXECUTE, HELP):
        assert gsd.read(rel) == reference.read(rel), rel
    assert backup.read_text() == PLANNER_V2
    assert not backup.with_name(backup.name + ".2").exists()
    assert read_records(journal_of(gsd))[-1]["step"] == "run-complete"
