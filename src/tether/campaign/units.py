"""The two units of work of a campaign, each a function of (record, settings) → record.

``fetch_unit`` brings the repository's mirror up to date and pins the commit the update
starts from (pending → cloned). ``update_unit`` makes tether's own worktree on the campaign
branch, reset to that commit, runs the update there through the library and commits (cloned →
updated | conflicts | up-to-date | failed). Both are idempotent: run again on the same record
they redo the same work from the same start, so a coordinator that died mid-unit simply runs
the unit again. Neither writes the campaign's records; the coordinator does (campaign/flow.py).
Git and the update write only inside the campaign folder, never in a person's checkout.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tether import git
from tether.campaign.model import CLONED, CONFLICTS, UP_TO_DATE, UPDATED, RepoRecord, Settings
from tether.campaign.store import CampaignFolder
from tether.errors import Exit, TetherError
from tether.flows.baseline import load_baseline
from tether.flows.preflight import GitOptions
from tether.flows.project import open_project
from tether.flows.update import UpdateReport, UpdateRequest, run_update
from tether.model.plan import Bucket
from tether.report.campaign import commit_message
from tether.runs.registry import utc_timestamp

# --- pending → cloned ------------------------------------------------------------------


def fetch_unit(record: RepoRecord, settings: Settings) -> RepoRecord:
    folder = CampaignFolder(Path(settings.folder))
    try:
        mirror = _fresh_mirror(folder, record.url)
        branch = record.default_branch or git.remote_head_branch(record.url)
        if branch is None:
            return _stamp(record.failed(f"{record.url} names no default branch (empty?)"))
        ref = f"refs/remotes/origin/{branch}"
        if not git.has_ref(mirror, ref):
            return _stamp(record.failed(f"{record.url} has no branch {branch}"))
        start = git.rev_parse(mirror, ref)
    except TetherError as error:
        return _stamp(record.failed(f"cannot fetch {record.url}: {error}"))
    except Exception as error:  # one repository's crash must not stop the campaign
        return _stamp(record.failed(_internal(error)))
    return _stamp(record.moved(CLONED, default_branch=branch, start_commit=start))


def _fresh_mirror(folder: CampaignFolder, url: str) -> Path:
    """The bare mirror of ``url``, fetched now. Made under a temporary name and renamed, so
    a half-made mirror is never mistaken for one."""
    mirror = folder.mirror_path(url)
    if not mirror.is_dir():
        making = mirror.with_name(mirror.name + ".making")
        shutil.rmtree(making, ignore_errors=True)
        making.parent.mkdir(parents=True, exist_ok=True)
        git.init_bare(making)
        os.replace(making, mirror)
    git.fetch_heads(mirror, url)
    return mirror


# --- cloned → updated | conflicts | up-to-date | failed ----------------------------------


def update_unit(record: RepoRecord, settings: Settings) -> RepoRecord:
    folder = CampaignFolder(Path(settings.folder))
    try:
        work = _fresh_worktree(folder, record, settings)
        _require_upstream(work, settings.upstream)
        report = run_update(_request(work, settings))
        return _stamp(_result(record, settings, work, report))
    except TetherError as error:
        return _stamp(record.failed(str(error)))
    except Exception as error:  # one repository's crash must not stop the campaign
        return _stamp(record.failed(_internal(error)))


def _fresh_worktree(folder: CampaignFolder, record: RepoRecord, settings: Settings) -> Path:
    """tether's worktree on the campaign branch at the start commit, whatever an earlier
    (interrupted) run left there."""
    mirror = folder.mirror_path(record.url)
    work = folder.worktree_path(record.name)
    if work.exists():
        shutil.rmtree(work)
    git.worktree_prune(mirror)
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

    return UpdateRequest(
        work,
        to=settings.to,
        options=update_options(work),
        command=f"campaign run {settings.name}",
        # tether made this worktree and its branch for the campaign: stay on it.
        git=GitOptions(no_branch=True, allow_linked_worktree=True),
    )


def _result(record: RepoRecord, settings: Settings, work: Path, report: UpdateReport) -> RepoRecord:
    if report.status == "interrupted":
        # Ctrl-C reached the update, which runs in the coordinator's own process (-j 1; pool
        # and Dask workers get no terminal signals): stop the run as the person asked. The
        # record stays cloned, so the next run redoes this update from its start commit.
        raise KeyboardInterrupt
    if report.status == "up-to-date":
        return record.moved(
            UP_TO_DATE, from_version=report.from_version, to_version=report.to_version
        )
    if report.exit_code() not in (Exit.OK, Exit.CONFLICTS):
        return record.failed(_failure_text(report))
    buckets = {b.value: len(report.bucket(b)) for b in Bucket if report.bucket(b)}
    conflicts = tuple(a.path for a in report.open_conflicts)
    done = record.moved(
        CONFLICTS if conflicts else UPDATED,
        from_version=report.from_version,
        to_version=report.to_version,
        buckets=buckets,
        conflicts=conflicts,
    )
    if conflicts and settings.on_conflict == "hold":
        return done
    message = commit_message(settings.upstream, done.to_json())
    return done.moved(done.state, commit=git.commit_everything(work, message))


def _failure_text(report: UpdateReport) -> str:
    failed = report.bucket(Bucket.FAILED)
    if not failed:
        return f"update {report.status}"
    first = failed[0]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"{len(failed)} file(s) failed: {first.path}: {first.reason}{more}"


def _stamp(record: RepoRecord) -> RepoRecord:
    return record.moved(record.state, updated_at=utc_timestamp())


def _internal(error: Exception) -> str:
    return f"internal error: {type(error).__name__}: {error}"
