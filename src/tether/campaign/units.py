"""The two units of work of a campaign, each a function of (record, settings) → result.

``fetch_unit`` brings the repository's mirror up to date and pins the commit the update
starts from (pending → cloned). ``update_unit`` makes tether's own worktree on the campaign
branch, reset to that commit, runs the update there through the library and commits (cloned →
updated | conflicts | up-to-date | failed). Both are idempotent: run again on the same record
they redo the same work from the same start, so a coordinator that died mid-unit simply runs
the unit again. Neither writes the campaign's records; the coordinator does (campaign/commands.py).

Each works where it runs (campaign/workspace.py): in the campaign folder when it sees it,
else in this machine's own folder for the campaign, fetching from the remote itself; then a
commit goes back inside the result as a bundle (campaign/bundles.py). Git and the update
write only there, never in a person's checkout.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tether import git
from tether.campaign.bundles import pack_branch
from tether.campaign.model import (
    CLONED,
    CONFLICTS,
    HOLD,
    UP_TO_DATE,
    UPDATED,
    RepoRecord,
    Settings,
    UnitResult,
)
from tether.campaign.store import CampaignFolder
from tether.campaign.workspace import Workspace, ensure_mirror, lock_mirror, workspace_for
from tether.errors import Exit, TetherError
from tether.flows.baseline import load_baseline
from tether.flows.preflight import GitOptions
from tether.flows.project import open_project
from tether.flows.update import UpdateRequest, run_update
from tether.flows.update_report import UpdateReport, UpdateStatus
from tether.model.plan import Bucket
from tether.report.campaign import commit_message
from tether.report.campaign_run import (
    cannot_fetch,
    cannot_lock,
    internal_error,
    mirror_locked,
    no_branch,
    no_default_branch,
    update_failed,
)
from tether.runs.registry import utc_timestamp
from tether.sources import limits
from tether.sources.gitrepo import bound_words, listing_bound, transfer_bound

Step = Callable[[RepoRecord, Settings, Workspace], UnitResult]


def fetch_unit(record: RepoRecord, settings: Settings) -> UnitResult:
    """pending → cloned: the mirror fetched, the default branch's commit pinned."""
    return _in_workspace(_fetch, record, settings)


def update_unit(record: RepoRecord, settings: Settings) -> UnitResult:
    """cloned → updated | conflicts | up-to-date | failed."""
    return _in_workspace(_update, record, settings)


def _in_workspace(step: Step, record: RepoRecord, settings: Settings) -> UnitResult:
    """``step`` in this process's workspace, holding the repository's mirror lock there."""
    workspace = workspace_for(settings)
    try:
        lock = lock_mirror(workspace.folder, record.url, f"campaign {settings.name}: {record.name}")
    except TetherError as error:
        return _failed(record, mirror_locked(error))
    except OSError as error:
        path = workspace.folder.unit_lock_path(record.url)
        return _failed(record, cannot_lock(path, error.strerror or str(error)))
    try:
        return step(record, settings, workspace)
    finally:
        lock.release()


# --- pending → cloned ------------------------------------------------------------------


def _fetch(record: RepoRecord, settings: Settings, workspace: Workspace) -> UnitResult:
    try:
        mirror = ensure_mirror(workspace.folder, record.url)
        _fetch_heads(mirror, record.url)
        branch = record.default_branch or _remote_head_branch(record.url)
        if branch is None:
            return _failed(record, no_default_branch(record.url))
        start = git.commit_of(mirror, f"refs/remotes/origin/{branch}")
        if start is None:
            return _failed(record, no_branch(record.url, branch))
    except TetherError as error:
        return _failed(record, cannot_fetch(record.url, error))
    except Exception as error:  # one repository's crash must not stop the campaign
        return _failed(record, _internal(error))
    return _done(record.moved(CLONED, default_branch=branch, start_commit=start))


# --- cloned → updated | conflicts | up-to-date | failed ----------------------------------


def _update(record: RepoRecord, settings: Settings, workspace: Workspace) -> UnitResult:
    try:
        mirror = _mirror_with_start(workspace.folder, record)
        work = _fresh_worktree(workspace.folder, record, settings)
        _require_upstream(work, settings.upstream)
        report = run_update(_request(work, settings))
        result = _result(record, settings, work, report)
        # Outside the campaign folder, the commit goes back with the record.
        bundle = b"" if workspace.shared or not result.commit else pack_branch(mirror, settings)
        return _done(result, bundle)
    except TetherError as error:
        return _failed(record, str(error))
    except Exception as error:  # one repository's crash must not stop the campaign
        return _failed(record, _internal(error))


def _mirror_with_start(folder: CampaignFolder, record: RepoRecord) -> Path:
    """The mirror holding the start commit: a mirror elsewhere may have pinned it (the
    fetch ran on another machine), so fetch when this one lacks it."""
    mirror = ensure_mirror(folder, record.url)
    if git.has_commit(mirror, record.start_commit):
        return mirror
    try:
        _fetch_heads(mirror, record.url)
    except TetherError as error:
        raise TetherError(f"cannot fetch {record.url}: {error}") from None
    if not git.has_commit(mirror, record.start_commit):
        raise TetherError(f"{record.url} no longer has the start commit {record.start_commit}")
    return mirror


def _fetch_heads(mirror: Path, url: str) -> None:
    """The remote's branches into the mirror, bounded as a release source's fetch is (a
    download: ``TETHER_LIMIT_NETWORK_SECONDS``, ``TETHER_LIMIT_DOWNLOAD_BYTES``)."""
    try:
        git.fetch_heads(mirror, url, transfer_bound())
    except git.TransferBoundExceeded as error:
        raise TetherError(bound_words(error, limits.DOWNLOAD_BYTES)) from None


def _remote_head_branch(url: str) -> str | None:
    """The remote's default branch, asked as a release source's tags are (an answer:
    ``TETHER_LIMIT_NETWORK_SECONDS``, ``TETHER_LIMIT_ANSWER_BYTES``)."""
    try:
        return git.remote_head_branch(url, listing_bound())
    except git.TransferBoundExceeded as error:
        raise TetherError(bound_words(error, limits.ANSWER_BYTES)) from None


def _fresh_worktree(folder: CampaignFolder, record: RepoRecord, settings: Settings) -> Path:
    """tether's worktree on the campaign branch at the start commit, whatever an earlier
    (interrupted) run left there."""
    mirror = folder.mirror_path(record.url)
    work = folder.worktree_path(record.name)
    if work.exists():
        shutil.rmtree(work)
    git.worktree_forget(mirror, work)
    work.parent.mkdir(parents=True, exist_ok=True)
    git.worktree_reset(mirror, work, settings.branch, record.start_commit)
    return work


def _require_upstream(work: Path, upstream: str) -> None:
    """The campaign's upstream must be the one installed here (by name or by source)."""
    try:
        baseline = load_baseline(open_project(work))
    except TetherError as error:
        raise TetherError(f"{upstream} is not installed here: {error}") from None
    if upstream not in (baseline.upstream, baseline.source):
        raise TetherError(
            f"{upstream} is not installed here (this repository follows {baseline.upstream})"
        )


def _request(work: Path, settings: Settings) -> UpdateRequest:
    from tether.fleet.units import update_options
    from tether.valueclass import replace

    options = update_options(work)
    if settings.conflict:
        options = replace(options, conflict_style=settings.conflict)
    if settings.auto:
        options = replace(options, auto=settings.auto)
    return UpdateRequest(
        work,
        to=settings.to_version,
        options=options,
        command=f"campaign run {settings.name}",
        # tether made this worktree and its branch for the campaign: stay on it.
        git=GitOptions(no_branch=True, allow_linked_worktree=True),
    )


def _result(record: RepoRecord, settings: Settings, work: Path, report: UpdateReport) -> RepoRecord:
    if report.status == UpdateStatus.INTERRUPTED:
        # Ctrl-C reached the update, which runs in the coordinator's own process (-j 1; pool
        # and Dask workers get no terminal signals): stop the run as the person asked. The
        # record stays cloned, so the next run redoes this update from its start commit.
        raise KeyboardInterrupt
    if report.status == UpdateStatus.UP_TO_DATE:
        return record.moved(
            UP_TO_DATE, from_version=report.from_version, to_version=report.to_version
        )
    if report.exit_code() not in (Exit.OK, Exit.CONFLICTS):
        failed = [(a.path, a.reason) for a in report.bucket(Bucket.FAILED)]
        return record.failed(update_failed(str(report.status), failed))
    buckets = {b.value: len(report.bucket(b)) for b in Bucket if report.bucket(b)}
    conflicts = tuple(a.path for a in report.open_conflicts)
    done = record.moved(
        CONFLICTS if conflicts else UPDATED,
        from_version=report.from_version,
        to_version=report.to_version,
        buckets=buckets,
        conflicts=conflicts,
    )
    if conflicts and settings.on_conflict == HOLD:
        return done
    message = commit_message(settings.upstream, done.to_json())
    return done.moved(done.status, commit=git.commit_everything(work, message))


def _done(record: RepoRecord, bundle: bytes = b"") -> UnitResult:
    return UnitResult(record.moved(record.status, updated_at=utc_timestamp()), bundle)


def _failed(record: RepoRecord, reason: str) -> UnitResult:
    return _done(record.failed(reason))


def _internal(error: Exception) -> str:
    return internal_error(f"{type(error).__name__}: {error}")
