"""Where a unit of work keeps its mirror and worktree, and the lock it holds there.

A unit that sees the campaign folder at the path the settings name (the coordinator's own
machine, or a worker on a shared filesystem) works in it: its mirror and worktree are the
campaign's, and its commit is on the campaign branch there when it returns. A unit that does
not (a Dask worker on another machine) works in a folder of its own under the worker's cache,
laid out like a campaign folder (``$XDG_CACHE_HOME/tether/campaign-work/<campaign>/``); it
fetches from the remote itself and sends its commit back as a bundle (campaign/bundles.py).

Each unit decides for itself when it starts, so one cluster may mix both kinds of worker and
workers that join late need nothing from the coordinator. The mirror's lock is taken with
waiting: a unit cut off from a killed coordinator, or running on a worker the scheduler gave
up on, may still be finishing when its rerun starts, and two units must never work in one
mirror at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from tether import git
from tether.campaign.model import Settings
from tether.campaign.store import CampaignFolder, safe_file_name
from tether.errors import TetherError
from tether.runs.rundir import cache_home
from tether.state.lock import ProjectLock

# How long a unit (or the coordinator taking in a bundle) waits for a mirror's lock before
# it gives up on the repository.
MIRROR_LOCK_WAIT = 30 * 60.0
MIRROR_LOCK_POLL = 0.2


@dataclass(frozen=True)
class Workspace:
    folder: CampaignFolder  # the campaign folder, or this machine's folder for the campaign
    shared: bool  # True: the campaign folder itself; its records are the coordinator's


def workspace_for(settings: Settings) -> Workspace:
    """The campaign folder when this process sees it (and may write there), else the
    folder this machine keeps for the campaign."""
    campaign = CampaignFolder(Path(settings.campaign_dir))
    if campaign.holds(settings):
        return Workspace(campaign, shared=True)
    return Workspace(CampaignFolder(own_folder(settings)), shared=False)


def own_folder(settings: Settings) -> Path:
    """This machine's folder for the campaign. Named after the whole settings, so two
    campaigns of one name (two coordinators, or a campaign started again) never share one."""
    identity = json.dumps(settings.to_json(), sort_keys=True).encode()
    digest = hashlib.sha256(identity).hexdigest()[:12]
    return cache_home() / "tether" / "campaign-work" / f"{safe_file_name(settings.name)}-{digest}"


def checked_mirror(folder: CampaignFolder, url: str) -> Path:
    """The place of ``url``'s mirror in ``folder``; TetherError when something other than
    tether changed the mirror there in a way that could make git run a program or read
    another repository (a link or a file for the mirror, a setting of its config, a hook:
    ``git.foreign_clone_setting``). Checked before any git command runs in it."""
    return git.checked_own_clone(
        folder.mirror_path(url), f"mirror of {url}", "mirror the repository again"
    )


def ensure_mirror(folder: CampaignFolder, url: str) -> Path:
    """The bare mirror of ``url`` in ``folder``, made when missing (nothing fetched), and
    checked when it is there (``checked_mirror``). Made under a temporary name and renamed,
    so a half-made mirror is never mistaken for one."""
    mirror = checked_mirror(folder, url)
    if not mirror.is_dir():
        making = mirror.with_name(mirror.name + ".making")
        shutil.rmtree(making, ignore_errors=True)
        making.parent.mkdir(parents=True, exist_ok=True)
        git.init_bare(making)
        os.replace(making, mirror)
    return mirror


def lock_mirror(folder: CampaignFolder, url: str, holder: str) -> ProjectLock:
    """The lock of ``url``'s mirror in ``folder``, acquired, waiting for it up to
    ``MIRROR_LOCK_WAIT``. TetherError naming the holder when the wait ran out, OSError when
    the lock file cannot be made.

    Once it is held, git's own lock files in the mirror are removed: git works in a mirror
    only for the unit holding its lock, so any left there are from a git killed with its
    unit (a worker killed with its coordinator, a coordinator killed with kill -9), and would
    make every later change of that ref fail with "File exists". So is what a fetch killed
    half way left (its temporary pack, up to the size of everything it had received)."""
    lock = ProjectLock(folder.unit_lock_path(url), holder)
    deadline = time.monotonic() + MIRROR_LOCK_WAIT
    while True:
        try:
            lock.acquire()
            break
        except TetherError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(MIRROR_LOCK_POLL)
    mirror = folder.mirror_path(url)
    if mirror.is_dir() and not mirror.is_symlink():  # never through a link out of the folder
        git.remove_lock_files(mirror)
        git.remove_partial_fetch(mirror)
    return lock
