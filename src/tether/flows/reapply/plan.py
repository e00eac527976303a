"""Planning a reapply: each saved file checked against the target and an interrupted run,
decided on its baseline, and turned into the ``FileAction`` the shared writer carries out."""

from __future__ import annotations

import re
from pathlib import Path

from tether.errors import TetherError
from tether.flows.apply import ResumeInfo
from tether.flows.backups import same_file
from tether.flows.conflicts import has_conflict_markers
from tether.flows.reapply.baseline import BaselineFinder
from tether.flows.reapply.decide import Decision, decide_saved_file
from tether.flows.reapply.job import INSTALLED, Job
from tether.flows.reapply.report import (
    BY_HAND,
    CONFLICT,
    FAILED,
    MERGED,
    RESOLVED,
    STATUS_BUCKETS,
    FileResult,
    Reason,
    Why,
    release_baseline_option,
)
from tether.flows.reapply.target import profile_of, read_file
from tether.fsio import sha256_bytes
from tether.model.plan import Bucket, FileAction, Op, UpdatePlan
from tether.pathrules import project_path_problem

RESTORED = "the installed version is put back"


def plan_files(job: Job) -> list[Decision]:
    """A decision per saved file, in the order ``backup-meta.json`` lists them."""
    request = job.request
    finder = BaselineFinder(request.baseline, job.patch_set, request.install)
    seen: dict[tuple[int, int], str] = {}  # (device, inode) -> the first path naming it
    return [plan_file(job, finder, rel, seen) for rel in job.patch_set.files]


def plan_file(
    job: Job, finder: BaselineFinder, rel: str, seen: dict[tuple[int, int], str]
) -> Decision:
    reserved = profile_of(job.request.install).reserved_paths()
    problem = project_path_problem(rel) or reserved.problem(rel) or job.guard.problem(rel)
    if problem:
        return Decision(FileResult(rel, FAILED, Reason(Why.UNSAFE_PATH, text=problem)))
    patch = job.patch_set.saved(rel)
    twin = _same_file(job.request.install / rel, rel, seen)
    if twin is not None:
        # Two merges written to one file: the second would undo the first.
        reason = Reason(Why.SAME_FILE, str(patch), other=twin)
        return Decision(FileResult(rel, FAILED, reason))
    ours = read_file(patch)
    if ours is None:
        return Decision(FileResult(rel, FAILED, Reason(Why.SAVED_MISSING, str(patch))))
    current = read_file(job.request.install / rel)
    earlier = _earlier_outcome(job, rel, current)
    if earlier is not None:
        return earlier
    try:
        theirs = _installed_version(job, rel, current)
    except TetherError as error:
        return Decision(FileResult(rel, FAILED, Reason(Why.ERROR, text=str(error))))
    style = job.request.conflict_style
    found = finder.find(rel)
    hint = release_baseline_option(job.patch_set.from_version)
    decision = decide_saved_file(
        rel, ours, theirs, found, style, patch, home=job.home, release_hint=hint
    )
    decision = _check_current(job, rel, decision, current)
    decision.saved, decision.on_disk = ours, current
    mark_restore(decision)
    return decision


def mark_restore(decision: Decision) -> None:
    """An interrupted run may have written bytes this decision does not keep."""
    decision.restore = decision.write is None and decision.theirs not in (None, decision.on_disk)


def _same_file(path: Path, rel: str, seen: dict[tuple[int, int], str]) -> str | None:
    """The listed path that already names this file on disk, else None (and remember it)."""
    try:
        info = path.stat()
    except OSError:
        return None
    key = (info.st_dev, info.st_ino)
    if key in seen:
        return seen[key]
    seen[key] = rel
    return None


def _earlier_outcome(job: Job, rel: str, current: bytes | None) -> Decision | None:
    """A finished run of this same job already wrote this file: do not merge it again. Its
    merge, or a conflict a person resolved by hand since, would merge as if upstream had
    adopted the change and be claimed as incorporated; what the earlier run (or the person)
    left stays as it is."""
    if job.unfinished is not None or current is None or rel not in job.earlier:
        return None
    sha, status = job.earlier[rel]
    if status not in (MERGED, CONFLICT):
        return None
    if sha256_bytes(current) == sha:
        same = Why.EARLIER_REAPPLIED if status == MERGED else Why.EARLIER_UNRESOLVED
        return Decision(FileResult(rel, status, Reason(same)))
    if status == MERGED:
        return Decision(FileResult(rel, MERGED, Reason(Why.EARLIER_EDITED)))
    if has_conflict_markers(current):
        return Decision(FileResult(rel, CONFLICT, Reason(Why.EARLIER_MARKERS_EDITED)))
    result = FileResult(rel, RESOLVED, Reason(Why.BY_HAND))
    result.resolution = BY_HAND
    return Decision(result)


def _installed_version(job: Job, rel: str, current: bytes | None) -> bytes | None:
    """The installed bytes: the target's, or the first backup when a run was interrupted
    after it may have written the file."""
    first = job.unfinished.backed_up.get(rel) if job.unfinished is not None else None
    if first is None:
        if job.unfinished is not None and current is not None and job.wrote(rel, current):
            # Written by the interrupted run with nothing backed up first: nothing was
            # installed there (a file the new release dropped, kept as the user's own).
            return None
        return current
    if not _in_backup_folder(job, rel, first.backup):
        raise TetherError(
            f"{job.journal.path}: the backup of {rel} is recorded at {first.backup}, not in "
            f"this run's backup folder {job.backup_dir}; not reading it"
        )
    data = read_file(Path(first.backup))
    digest = sha256_bytes(data) if data is not None else None
    if digest != first.sha256 and same_file(Path(first.backup), job.request.install / rel):
        # Still the installed file's second name (the run was killed between the link and
        # the write) and edited in place since: the installed bytes are gone and the edited
        # ones stand for them, the edit kept in the merge. The writer says so, backs them up
        # beside the first backup before a write and unshares it without one.
        return data
    if data is None or digest != first.sha256:
        raise TetherError(
            f"the backup {first.backup} of the installed version is missing or "
            "damaged; restore it, or reinstall the release"
        )
    return data


def _in_backup_folder(job: Job, rel: str, backup: str) -> bool:
    """``backup`` is where this run backs ``rel`` up: ``installed/<rel>`` or ``<rel>.<n>``
    in its own backup folder (compared after resolving links, as a resume may spell the
    patches folder differently)."""
    folder = (job.backup_dir / INSTALLED).resolve()
    try:
        inside = Path(backup).resolve().relative_to(folder).as_posix()
    except (ValueError, OSError):
        return False
    return inside == rel or re.fullmatch(re.escape(rel) + r"\.[0-9]+", inside) is not None


def _check_current(job: Job, rel: str, decision: Decision, current: bytes | None) -> Decision:
    """On a resume, the target must hold bytes this run accounts for; anything else was
    edited since the interruption and is not overwritten."""
    if job.unfinished is None or current is None or current in (decision.theirs, decision.write):
        return decision
    if job.wrote(rel, current):
        return decision
    reason = Reason(Why.CHANGED_SINCE)
    return Decision(FileResult(rel, FAILED, reason, decision.result.baseline))


# --- what the shared writer does -------------------------------------------------------------


def file_action(decision: Decision) -> FileAction:
    """The shared writer's action for one decision. A merge or conflict markers are written
    over the installed version (backed up first; a clean merge is verified, and on a failure
    the installed version is put back); a restore puts the installed version back over what
    an interrupted run wrote; anything else writes nothing, in its status's bucket."""
    result = decision.result
    rel, bucket = result.file, STATUS_BUCKETS[result.status]
    if decision.write is not None:
        op = Op.MARKERS if result.status == CONFLICT else Op.WRITE
        sides = None
        if decision.gate:
            kept = decision.kept_side
            assert decision.base is not None and kept is not None
            assert decision.theirs is not None
            sides = (decision.base, kept, decision.theirs)
        # Conflict markers carry no sides: reapply neither verifies nor stages them in git.
        write = decision.write
        return FileAction(
            rel,
            None,
            bucket,
            op,
            write,
            reason=result.record_reason,
            sides=sides,
            restore=decision.theirs,
        )
    if decision.restore:
        return FileAction(rel, None, Bucket.UPDATE, Op.WRITE, decision.theirs, reason=RESTORED)
    if decision.remove:
        return FileAction(rel, None, Bucket.DELETED, Op.REMOVE, reason=result.record_reason)
    return FileAction(rel, None, bucket, reason=result.record_reason)


def writer_plan(job: Job, decisions: list[Decision]) -> UpdatePlan:
    actions = [file_action(decision) for decision in decisions]
    return UpdatePlan("reapply", job.patch_set.from_version or "", "", actions)


def writer_resume(job: Job, plan: UpdatePlan) -> ResumeInfo:
    """What the interrupted run did, as the writer is to count it. Reapply plans from the
    installed bytes (the first backups), not from what the interrupted run left, so one of
    its writes is done only when it is the very bytes this plan writes there."""
    wanted = {a.path: sha256_bytes(a.content) for a in plan.actions if a.content is not None}
    done = {
        path: kept
        for path, writes in job.resume.done.items()
        if (kept := [d for d in writes if d.target == path and d.sha256 == wanted.get(path)])
    }
    return ResumeInfo(done, dict(job.resume.backed_up), set(job.resume.index_saved))
