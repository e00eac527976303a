"""A commit made outside the campaign folder, carried to the coordinator as a git bundle.

A unit that did not see the campaign folder (campaign/workspace.py) committed on the campaign
branch of a mirror of its own. It sends that branch back inside its result: ``git bundle
create - refs/heads/<branch>``, the branch with its whole history, because the coordinator's
mirror may hold none of it (the fetch, too, ran on a worker) and it needs that history to
push from. The coordinator, the campaign's one writer, takes the bundle into the campaign's
mirror under the mirror's lock and sets the campaign branch there only once it verified that
the bundle holds the commit the record names and that this commit sits right on the record's
start commit. Then ``campaign push`` and ``pr`` work from the mirror as after any run. A
bundle that does not verify fails its repository with a one-line reason; what it held is
dropped with it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tether import git
from tether.campaign.executors import failed_record
from tether.campaign.model import RepoRecord, Settings, UnitResult
from tether.campaign.store import CampaignFolder
from tether.campaign.workspace import ensure_mirror, lock_mirror
from tether.errors import TetherError
from tether.fsio import atomic_write
from tether.report.campaign_run import cannot_take_in, not_verified


def pack_branch(mirror: Path, settings: Settings) -> bytes:
    """The campaign branch of ``mirror`` with its history, as a bundle's bytes."""
    return git.bundle_create(mirror, f"refs/heads/{settings.branch}")


def take_in(
    folder: CampaignFolder, settings: Settings, before: RepoRecord, result: UnitResult
) -> RepoRecord:
    """The record to write for ``result`` of a unit that started from ``before``: the
    unit's record when it sent no bundle, or once its bundle is in the campaign's mirror;
    ``before`` failed with the reason when the bundle cannot be taken in."""
    record = result.record
    if not result.bundle:
        return record
    holder = f"campaign {settings.name}: taking in {record.name}"
    try:
        lock = lock_mirror(folder, record.url, holder)
    except (TetherError, OSError) as error:
        return failed_record(before, cannot_take_in(error))
    try:
        _take(folder, settings.branch, record, result.bundle)
    except TetherError as error:
        return failed_record(before, not_verified(error))
    finally:
        lock.release()
    return record


def _take(folder: CampaignFolder, branch: str, record: RepoRecord, bundle: bytes) -> None:
    ref = f"refs/heads/{branch}"
    if not record.commit:
        raise TetherError("a bundle came with a record that names no commit")
    mirror = ensure_mirror(folder, record.url)
    path = folder.incoming_path(record.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, bundle)
    try:
        sent = git.bundle_heads(mirror, path).get(ref)
        if sent != record.commit:
            found = f"{ref} at {sent}" if sent else f"no {ref}"
            raise TetherError(f"it holds {found}, the record names {record.commit}")
        git.fetch_bundle(mirror, path, ref)
    finally:
        path.unlink(missing_ok=True)
    parent = git.rev_parse(mirror, f"{record.commit}^")
    if parent != record.start_commit:
        raise TetherError(
            f"{record.commit} is not a commit on the start commit {record.start_commit}"
        )
    _drop_worktree(folder, record, mirror)
    git.set_ref(mirror, ref, record.commit)


def _drop_worktree(folder: CampaignFolder, record: RepoRecord, mirror: Path) -> None:
    """An earlier attempt's worktree in the campaign folder is on the branch about to move:
    it would show that attempt's files as changes against the new commit."""
    work = folder.worktree_path(record.name)
    if work.exists():
        shutil.rmtree(work)
    git.worktree_forget(mirror, work)
