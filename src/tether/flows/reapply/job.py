"""One reapply job: a patch set merged into a target, and what earlier runs of it did.

A job is known by its digest (the patch set's folder and metadata, and the target). A run
of a job that was interrupted is resumed under its own run id; a finished run of the same
job tells a rerun which files it already merged.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.errors import TetherError
from tether.flows.apply import ResumeInfo, RunContext, resume_info
from tether.flows.backups import BackupFolder
from tether.flows.project import Project
from tether.flows.reapply.baseline import BaselineOptions
from tether.flows.reapply.patches import PatchSet
from tether.flows.reapply.target import backup_root, profile_of
from tether.flows.safety import PathGuard
from tether.fsio import sha256_bytes
from tether.state.journal import (
    STEP_FILE_FAILED,
    STEP_FILE_INTENT,
    STEP_FILE_WRITTEN,
    STEP_RUN_COMPLETE,
    STEP_RUN_STARTED,
    Journal,
    RunRecord,
    is_run_id,
    new_run_id,
)

if TYPE_CHECKING:
    from tether.flows.reapply.resolve import Chooser

INSTALLED = "installed/"  # a run's backups of the installed versions, in its backup folder


@dataclass(frozen=True)
class ReapplyRequest:
    patches: Path | None  # None: look where GSD leaves them (``locate``)
    target: Path | None  # None: the install the patches belong to (the patch folder's parent)
    baseline: BaselineOptions = field(default_factory=BaselineOptions)
    conflict_style: str = "markers"
    dry_run: bool = False
    environ: Mapping[str, str] | None = None  # for the search; None: this process's
    cwd: Path | None = None  # for the search's local-install places; None: this process's
    auto: str | None = None  # settle every conflict this way: one of model.plan.AUTO_CHOICES
    dropped: str | None = None  # settle every file the new release dropped: keep or drop
    chooser: Chooser | None = None  # asks per conflict (a terminal); None: leave them
    remove_backups: bool = False  # remove the patches after a fully verified run

    @property
    def install(self) -> Path:
        """The folder the patches are merged into (set once the patches are found)."""
        assert self.target is not None
        return self.target


@dataclass
class Job:
    """Where a run of this job keeps things, and what earlier runs of it did."""

    request: ReapplyRequest
    patch_set: PatchSet
    journal: Journal
    run_id: str
    digest: str
    unfinished: RunRecord | None  # the interrupted run of this job, resumed by this one
    resume: ResumeInfo = field(default_factory=ResumeInfo)  # what that run did
    earlier: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (sha, status)

    @property
    def backup_dir(self) -> Path:
        return backup_root(self.patch_set.folder) / self.run_id

    @property
    def command(self) -> str:
        patches, target = self.patch_set.root.resolve(), self.request.install.resolve()
        return f"reapply --patches {patches} -C {target}"

    @property
    def home(self) -> str:
        """The user's home folder, for telling path drift from edits."""
        environ = os.environ if self.request.environ is None else self.request.environ
        return environ.get("HOME", "")

    @functools.cached_property
    def guard(self) -> PathGuard:
        """Judges the target's paths while planning (the writer has its own)."""
        return PathGuard(self.request.install)

    def wrote(self, rel: str, current: bytes) -> bool:
        """The interrupted run wrote (or was about to write) exactly these bytes to ``rel``."""
        digest = sha256_bytes(current)
        return any(d.target == rel and d.sha256 == digest for d in self.resume.done.get(rel, []))

    def context(self, resume: ResumeInfo | None = None) -> RunContext:
        """The shared writer's context: reapply's journal, its backups of the installed
        versions beside the patches (``<backup folder>/<run id>/installed/<path>``), and
        what the interrupted run did (``resume``, by default all of it)."""
        target = self.request.install
        backups = BackupFolder(
            PathGuard(self.backup_dir), INSTALLED, self.backup_dir, absolute_labels=True
        )
        return RunContext(
            Project(target, profile_of(target)),
            self.journal,
            self.run_id,
            self.command,
            self.resume if resume is None else resume,
            backup_folder=backups,
            plan_digest=self.digest,
        )


def open_job(request: ReapplyRequest, patch_set: PatchSet, journal: Journal) -> Job:
    """This job, resuming the interrupted run of it under its own run id; another job's
    unfinished run stops it. Writes nothing (the writer journals the run's start)."""
    digest = sha256_bytes(
        f"{patch_set.root.resolve()}\0{patch_set.meta_sha256}\0{request.install.resolve()}".encode()
    )
    records = journal.records()
    unfinished = journal.unfinished_run()
    if unfinished is not None and not is_run_id(unfinished.run_id):
        # The run id names the backup folder: any other text could lead it elsewhere.
        raise TetherError(
            f"{journal.path}: run id {unfinished.run_id!r} is not one tether makes; "
            "not resuming that run"
        )
    if unfinished is not None and unfinished.plan_digest != digest:
        raise TetherError(
            f"an interrupted reapply ({unfinished.command}) is unfinished on {request.install}; "
            f"run that command again to finish it, or remove {journal.path} to start over "
            "(its backups stay where they are)"
        )
    if unfinished is None:
        earlier = _finished_writes(records, digest)
        return Job(request, patch_set, journal, new_run_id(), digest, None, earlier=earlier)
    resume = resume_info(journal, unfinished.run_id)
    return Job(request, patch_set, journal, unfinished.run_id, digest, unfinished, resume)


def _finished_writes(records: list[dict[str, object]], digest: str) -> dict[str, tuple[str, str]]:
    """path -> (sha256, status) last written by a completed run of the same job (a run of an
    earlier version of tether recorded the status, the shared writer records the bucket).

    A write is known by its intent as well: a run resumed after a kill that came between
    the write and its journal record finds the bytes already there and writes (and journals)
    nothing, so its completion is what says the intent was carried out. A file that failed
    after its intent has no entry."""
    digests: dict[str, str] = {}
    complete: set[str] = set()
    for record in records:
        if record["step"] == STEP_RUN_STARTED:
            digests[str(record["run"])] = str(record.get("plan_digest", ""))
        elif record["step"] == STEP_RUN_COMPLETE:
            complete.add(str(record["run"]))
    written: dict[str, tuple[str, str]] = {}
    for record in records:
        run, step = str(record["run"]), record["step"]
        if run not in complete or digests.get(run) != digest:
            continue
        path = str(record.get("path", ""))
        if step in (STEP_FILE_WRITTEN, STEP_FILE_INTENT) and record.get("target", path) == path:
            status = record.get("bucket", record.get("status", ""))
            written[path] = (str(record["sha256"]), str(status))
        elif step == STEP_FILE_FAILED:
            written.pop(path, None)
    return written
