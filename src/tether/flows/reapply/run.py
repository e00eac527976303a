"""Running a reapply: plan every saved file, carry the plan out through the shared writer
(``flows.apply.execute_plan``), then settle each file's status from what the writer did."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from tether.engine.verify import verify_preserved
from tether.errors import TetherError, UsageError
from tether.flows.apply import ApplyOutcome, execute_plan
from tether.flows.reapply.cleanup import remove_patches
from tether.flows.reapply.decide import Decision
from tether.flows.reapply.job import Job, ReapplyRequest, open_job
from tether.flows.reapply.locate import (
    PATCHES_FOLDER,
    Located,
    default_pristine,
    locate_patches,
)
from tether.flows.reapply.patches import PatchSet, load_patch_set
from tether.flows.reapply.plan import plan_files, writer_plan, writer_resume
from tether.flows.reapply.report import (
    BY_HAND,
    CONFLICT,
    DROPPED_CHOICES,
    FAILED,
    MERGED,
    PATCHES_OPTION,
    RESOLVED,
    ReapplyReport,
    Reason,
    Why,
    record_verification_failure,
)
from tether.flows.reapply.resolve import settle
from tether.flows.reapply.target import (
    JOURNAL_SUFFIX,
    backup_root,
    check_dir,
    installed_version,
    journal_path,
    prepare_runtime,
    profile_of,
)
from tether.flows.replay import check_journal_file
from tether.flows.safety import PathGuard, UnsafePath, check_own_paths
from tether.model.plan import AUTO_CHOICES, CONFLICT_STYLES, HUNK_CHOICES, Bucket, FileAction
from tether.state.journal import Journal
from tether.state.lock import ProjectLock


def reapply(request: ReapplyRequest) -> ReapplyReport:
    """Merge every saved file back into the target; see the package docstring."""
    if request.conflict_style not in CONFLICT_STYLES:
        raise UsageError(f"--conflict must be one of {', '.join(CONFLICT_STYLES)}")
    if request.auto not in (None, *AUTO_CHOICES):
        raise UsageError(f"--auto must be one of {', '.join(AUTO_CHOICES)}")
    if request.dropped not in (None, *DROPPED_CHOICES):
        raise UsageError(f"--dropped must be one of {', '.join(DROPPED_CHOICES)}")
    if request.target is not None:
        check_dir(request.target, "target")
    located = _locate(request)
    if located is not None and located.folder is None:
        return _nothing_found(request, located)
    patches = located.folder if located is not None else request.patches
    assert patches is not None
    patch_set = load_patch_set(patches)
    target = _install_of(request, patch_set, located)
    check_dir(target, "target")
    request = _with_default_pristine(replace(request, patches=patches, target=target))
    profile = profile_of(target)
    journal = Journal(journal_path(target))
    check_own_paths(target, profile, folders=(backup_root(patches),), files=(journal.path,))
    where = _Where(patch_set, located, request.baseline.pristine)
    check_journal_file(target, profile.journal_file + JOURNAL_SUFFIX)
    if request.dry_run:
        job = open_job(request, patch_set, journal)
        decisions = plan_files(job)
        settle(decisions, request.auto, None, request.dropped)
        for decision in decisions:
            _predict_gate(job, decision)
        report = _report(job, decisions, where)
        if request.remove_backups:
            remove_patches(report, patch_set, job.run_id)  # keeps them: a dry run
        return report
    prepare_runtime(target)
    with ProjectLock(target / profile.lock_file, command="reapply"):
        job = open_job(request, patch_set, journal)
        decisions = plan_files(job)
        settle(decisions, request.auto, request.chooser, request.dropped)
        outcome = _carry_out(job, decisions)
        journal.run_complete(job.run_id)
        report = _report(job, decisions, where)
        report.backups_edited = list(outcome.backups_edited)
        if request.remove_backups:
            remove_patches(report, patch_set, job.run_id)
        return report


def _carry_out(job: Job, decisions: list[Decision]) -> ApplyOutcome:
    plan = writer_plan(job, decisions)
    ctx = job.context(writer_resume(job, plan))
    outcome = execute_plan(ctx, plan)
    for decision, action in zip(decisions, outcome.actions, strict=True):
        _settle(job, decision, action, outcome)
    for decision in decisions:
        if decision.artifact is not None:
            _write_conflict_patch(job, ctx.backups.guard, decision, decision.artifact)
    return outcome


def _settle(job: Job, decision: Decision, action: FileAction, outcome: ApplyOutcome) -> None:
    """A file the writer could not carry out fails: a merge that lost the user's lines (the
    writer put the installed version back), or a write the disk refused."""
    result = decision.result
    if action.bucket is not Bucket.FAILED or result.status == FAILED:
        return
    verdict = outcome.unverified.get(result.file)
    if verdict is not None:
        record_verification_failure(result, verdict, job.patch_set.saved(result.file))
    else:
        result.status = FAILED
        result.restate(Reason(Why.NOT_WRITTEN, text=action.reason))


def _write_conflict_patch(job: Job, backups: PathGuard, decision: Decision, patch: bytes) -> None:
    """``--conflict patch``: the patch goes into the run's backup folder; a folder on the
    way that became a link since the run began fails that file, not the run."""
    result = decision.result
    try:
        written = backups.write(f"conflicts/{result.file}.patch", patch)
    except UnsafePath as error:
        result.status = FAILED
        result.restate(Reason(Why.UNSAFE_PATH, text=str(error)))
        job.journal.file_failed(job.run_id, result.file, result.record_reason)
        return
    result.artifact = str(written)


def _predict_gate(job: Job, decision: Decision) -> None:
    """A dry run checks the merge result itself: the gate a real run applies to the disk."""
    if not decision.gate:
        return
    kept = decision.kept_side
    assert decision.base is not None and kept is not None and decision.write is not None
    verdict = verify_preserved(decision.base, kept, decision.write)
    if not verdict.preserved:
        record_verification_failure(
            decision.result, verdict, job.patch_set.saved(decision.result.file)
        )


class _Where:
    """Which patches and pristine folder a run used, and how the patches were found."""

    def __init__(self, patch_set: PatchSet, located: Located | None, pristine: Path | None):
        self.patches = patch_set.root
        self.source = located.source if located is not None else PATCHES_OPTION
        self.searched = [str(p.folder) for p in located.searched] if located else []
        self.pristine = pristine
        self.from_version = patch_set.from_version


def _locate(request: ReapplyRequest) -> Located | None:
    """None when ``--patches`` names the folder; else the search where GSD leaves them."""
    if request.patches is not None:
        return None
    environ = os.environ if request.environ is None else request.environ
    return locate_patches(environ, request.cwd or Path.cwd())


def _install_of(request: ReapplyRequest, patch_set: PatchSet, located: Located | None) -> Path:
    """The install the patches are merged into. GSD's patch folder belongs to the install
    (config folder) that holds it: that is the default, and patches found by the search
    are never merged into another install the user did not name them for."""
    named = [f for f in (patch_set.root, patch_set.folder) if f.absolute().name == PATCHES_FOLDER]
    home = named[0].absolute().parent if named else None
    if request.target is None:
        if home is None:
            raise UsageError(
                f"{patch_set.root} is not an install's {PATCHES_FOLDER} folder: "
                "give -C DIR, the folder the new release was installed into"
            )
        return home
    if located is not None and home is not None and not _same_folder(home, request.target):
        raise TetherError(
            f"the patches found at {patch_set.root} belong to the install at {home}, not to "
            f"{request.target}; leave out -C to reapply them there, or name them with "
            f"--patches {patch_set.root} to merge them into {request.target}"
        )
    return request.target


def _same_folder(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve() or one.samefile(other)
    except OSError:
        return False


def _with_default_pristine(request: ReapplyRequest) -> ReapplyRequest:
    """``gsd-pristine/`` beside the patches folder when no pristine folder was named."""
    if request.baseline.pristine is not None or request.patches is None:
        return request
    pristine = default_pristine(request.patches)
    if pristine is None:
        return request
    return replace(request, baseline=replace(request.baseline, pristine=pristine))


def _nothing_found(request: ReapplyRequest, located: Located) -> ReapplyReport:
    searched = [str(place.folder) for place in located.searched]
    return ReapplyReport(None, request.target, [], request.dry_run, searched=searched)


def _fill_hunk_tables(decisions: list[Decision]) -> None:
    """Each file merged on a baseline gets its table, checked against the bytes it ends
    with: the merge when it is kept, else the installed version (conflicts have none)."""
    from tether.engine.hunktable import hunk_table

    for decision in decisions:
        result = decision.result
        kept = decision.kept_side
        favored = result.status == RESOLVED and result.resolution in HUNK_CHOICES
        if decision.base is None or kept is None or result.status == CONFLICT:
            continue
        if result.status == RESOLVED and not favored:
            continue
        final = decision.write if result.status in (MERGED, RESOLVED) else None
        final = final if final is not None else decision.theirs
        if final is not None:
            result.hunks = hunk_table(decision.base, kept, final)


# Settled so that the file the run leaves holds none of the user's change (or one they made
# by hand, which is theirs to describe).
NOTHING_OF_YOURS = ("take-theirs", "drop", BY_HAND)


def _fill_preserved(decisions: list[Decision]) -> None:
    """Each file's changes of the user's that the file the run leaves holds (the seed's
    "User Changes Preserved"), deletions included: all of them for a verified merge, an
    incorporated file, a saved copy kept whole or ``ours``; those that did not clash for
    ``theirs``; none for a file taken whole, a conflict left or a failure. Unknown (None)
    without a baseline to tell them by."""
    from tether.engine.hunktable import user_changes

    for decision in decisions:
        result = decision.result
        kept = decision.kept_side
        if result.status in (CONFLICT, FAILED) or result.resolution in NOTHING_OF_YOURS:
            result.preserved = []
        elif decision.base is not None and kept is not None:
            result.preserved = user_changes(decision.base, kept)


def _report(job: Job, decisions: list[Decision], where: _Where) -> ReapplyReport:
    _fill_hunk_tables(decisions)
    _fill_preserved(decisions)
    dry_run = job.request.dry_run
    return ReapplyReport(
        patches=where.patches,
        patches_source=where.source,
        searched=where.searched,
        pristine=where.pristine,
        from_version=where.from_version,
        installed_version=installed_version(job.request.install),
        target=job.request.install,
        results=[decision.result for decision in decisions],
        dry_run=dry_run,
        run_id=None if dry_run else job.run_id,
        backup_dir=None if dry_run else job.backup_dir,
        resumed=job.unfinished is not None,
        updated=sum(
            1 for d in decisions if d.write is not None and d.result.status in (MERGED, RESOLVED)
        ),
    )
