"""The transactional executor: journal → backup → intent → atomic write → verify.

Every step is journaled (fsync'd) after it happened, so a rerun of the same command
knows what an interrupted run already did: it never backs up a file twice over its
first backup, and it does not redo a write whose bytes are still on disk.

``execute_plan`` is the one crash-safe writer: ``update`` and ``refresh`` run their plans
through it, and so does ``reapply`` (with its own journal and backup folder, given in the
``RunContext``). Backups follow the one rule in ``flows.backups``. What comes after the
writes is elsewhere: ``flows.finalize`` records update's new state, ``flows.restore`` puts
an abandoned run back.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from tether import progress
from tether.errors import TetherError
from tether.flows.backups import (
    BackupFolder,
    back_up,
    record_run_order,
    same_file,
    unshare_backup,
)
from tether.flows.project import Project
from tether.flows.safety import PathGuard, UnsafePath
from tether.flows.update_report import IndexTrouble, IndexTroubleCode
from tether.fsio import (
    flush_to_disk,
    read_bytes,
    remove_stale_temps_beside,
    remove_stale_temps_under,
    sha256_bytes,
    sha256_file,
)
from tether.model.plan import HUNK_CHOICES, Bucket, FileAction, Op, RowWhy, UpdatePlan
from tether.state import crashpoint
from tether.state.journal import (
    STEP_FILE_BACKED_UP,
    STEP_FILE_DELETED,
    STEP_FILE_INTENT,
    STEP_FILE_WRITTEN,
    STEP_INDEX_SAVED,
    Journal,
)
from tether.valueclass import field, replace, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.engine.verify import VerifyResult


@valueclass(frozen=True)
class DoneWrite:
    """A write the journal says this run finished: its target and the bytes' sha256."""

    target: str
    sha256: str
    bucket: str = ""
    decision: str = ""  # how the run settled a conflict (ours, take-theirs, markers…)
    reason: str = ""  # why the action is what it is: its words, or its fact in ``why``
    why: RowWhy | None = None


@valueclass()
class ResumeInfo:
    """What an interrupted run of the same update already did."""

    done: dict[str, list[DoneWrite]] = field(default_factory=dict)  # path -> what was written
    backed_up: dict[str, str] = field(default_factory=dict)  # path -> sha256 of first backup
    index_saved: set[str] = field(default_factory=set)  # paths whose index entries are saved
    # Paths journaled as written (not only intended): git's index got their conflict stages.
    written: set[str] = field(default_factory=set)


# What a file record may name as its bucket: one of the plan's, or none (older records).
_JOURNALED_BUCKETS = frozenset({"", *(bucket.value for bucket in Bucket)})


def resume_info(journal: Journal, run_id: str) -> ResumeInfo:
    info = ResumeInfo()
    for record in journal.records():
        if record.get("run") != run_id:
            continue
        path = str(record.get("path", ""))
        if record["step"] == STEP_FILE_WRITTEN and record.get("target", path) == path:
            info.written.add(path)
        step = record["step"]
        bucket = record.get("bucket", "")
        if step in (STEP_FILE_WRITTEN, STEP_FILE_INTENT, STEP_FILE_BACKED_UP) and not (
            isinstance(record.get("sha256"), str)
            and isinstance(bucket, str)
            and bucket in _JOURNALED_BUCKETS
        ):
            # Not a record tether wrote (a crash tears only the last line, which the reader
            # drops): resuming on a guess could report or redo the wrong write.
            raise TetherError(
                f"{journal.path}: the {step} record of {path!r} (run {run_id}) is damaged; "
                "repair or remove that line"
            )
        if step in (STEP_FILE_WRITTEN, STEP_FILE_INTENT):
            info.done.setdefault(path, []).append(
                DoneWrite(
                    str(record.get("target", path)),
                    str(record["sha256"]),
                    str(bucket),
                    str(record.get("decision", "")),
                    str(record.get("reason", "")),
                    RowWhy.from_json(record.get("why")),
                )
            )
        elif record["step"] == STEP_FILE_BACKED_UP:
            info.backed_up.setdefault(path, str(record["sha256"]))
        elif record["step"] == STEP_INDEX_SAVED:
            info.index_saved.add(path)
    return info


def holds_run_writes(project: Project, resume: ResumeInfo) -> set[str]:
    """Paths whose bytes are exactly what the interrupted run wrote (or was about to write)
    there: tether's own work, not the adopter's uncommitted changes."""
    return {path for path in resume.done if _holds_write(project, resume, path, path)}


@valueclass()
class RunContext:
    """One run of the crash-safe writer: the project, its journal, the run's id and where
    its backups go."""

    project: Project
    journal: Journal
    run_id: str
    command: str
    resume: ResumeInfo = field(default_factory=ResumeInfo)
    # Where the run stands in git (branch it started on, branch it made, start commit),
    # journaled so an abandon can put it back.
    git_context: dict[str, str | None] | None = None
    _git_top: Path | bool | None = False  # False: not looked up yet
    # Where backups go when not <backup root>/<run id>/<path> in the project (reapply keeps
    # them beside its patches).
    backup_folder: BackupFolder | None = None
    # Journaled as the run's plan digest instead of the plan's own: what identifies the job
    # when a resumed run plans differently (reapply: its patches and its target).
    plan_digest: str | None = None
    # Told each batch's carried-out actions once their writes are durable and journaled (an
    # ecosystem's per-file run log: gbrain's refresh log). A resumed run tells them again.
    after_writes: Callable[[list[FileAction]], None] | None = None

    @property
    def git_top(self) -> Path | None:
        if self._git_top is False:
            from tether import git

            self._git_top = git.work_tree_top(self.project.root)
        return self._git_top if isinstance(self._git_top, Path) else None

    @property
    def backup_dir(self) -> Path:
        return self.backups.run_dir

    @functools.cached_property
    def backups(self) -> BackupFolder:
        """Where this run's backups go; in the project they are judged by the run's guard."""
        if self.backup_folder is not None:
            return self.backup_folder
        rel = f"{self.project.profile.backup_root}/{self.run_id}"
        record_run_order(self.project, self.run_id)  # pruning's order, whatever the clock says
        return BackupFolder(self.guard, rel + "/", self.project.root / rel)

    @functools.cached_property
    def guard(self) -> PathGuard:
        """Every write and removal of this run goes through it; folders are judged once."""
        return PathGuard(self.project.root)


@valueclass()
class ApplyOutcome:
    """What the writer did with a plan: the actions carried out, backed up and left undone."""

    actions: list[FileAction]
    backed_up: list[str] = field(default_factory=list)
    # Files whose first backup changed with them: edited in place after an interrupted run
    # linked the backup and before it wrote (flows.backups.Saved.first_edited).
    backups_edited: list[str] = field(default_factory=list)
    state_written: bool = False
    interrupted: bool = False
    # Conflicts git's index could not be told of (report/update.py words them).
    index_trouble: list[IndexTrouble] = field(default_factory=list)
    not_done: list[FileAction] = field(default_factory=list)  # planned, not carried out
    # path -> what the verifier found, for each write it put back (the action is FAILED)
    unverified: dict[str, VerifyResult] = field(default_factory=dict)

    @property
    def failed(self) -> list[FileAction]:
        return [a for a in self.actions if a.bucket is Bucket.FAILED]


def _target_done(ctx: RunContext, path: str, target: str) -> bool:
    """An interrupted run of this update already wrote these bytes to ``target``."""
    return _holds_write(ctx.project, ctx.resume, path, target)


def _holds_write(project: Project, resume: ResumeInfo, path: str, target: str) -> bool:
    for done in resume.done.get(path, []):
        if done.target != target:
            continue
        try:
            if sha256_file(project.path(target)) == done.sha256:
                return True
        except OSError:
            pass
    return False


class VerificationFailed(Exception):
    """The written file lost lines the adopter wrote; what the path held was put back."""

    def __init__(self, message: str, verdict: VerifyResult) -> None:
        super().__init__(message)
        self.verdict = verdict


def check_written(
    guard: PathGuard, rel: str, base: bytes, ours: bytes, before: bytes
) -> VerifyResult:
    """The verification gate for one written file (``rel`` under the guard's root): the
    bytes now on disk must keep every line the adopter added to ``base`` in ``ours`` and none
    they deleted; when they do not, ``before`` (what the path held) is put back. Reads the
    disk, not the merge result, so anything that changed the file after the write is caught
    too."""
    from tether.engine.verify import verify_preserved

    verdict = verify_preserved(base, ours, read_bytes(guard.root / rel))
    if not verdict.preserved:
        guard.write(rel, before)
    return verdict


def _verify_written(ctx: RunContext, action: FileAction) -> None:
    """Prove, on the bytes now on disk, that every line the adopter added or changed is
    still there and every line they deleted stays deleted; else put their file back."""
    if action.sides is None or action.decision == "take-theirs":
        return
    base, ours, theirs = action.sides
    before = ours if action.restore is None else action.restore
    kept = ours
    if action.decision in HUNK_CHOICES and action.bucket is Bucket.CONFLICT:
        from tether.flows.merging import favored_must_keep

        # Clashing hunks settled toward a side: the adopter's other changes must be there.
        kept = favored_must_keep(base, ours, theirs, action.decision)
    result = check_written(ctx.guard, action.path, base, kept, before)
    if result.preserved:
        return
    lost = [f"line {n}: {text.rstrip()!r}" for n, text in result.missing[:5]]
    back = [f"deleted line {n} came back: {text.rstrip()!r}" for n, text in result.readded[:5]]
    raise VerificationFailed(
        "the merge would drop your edits (" + "; ".join(lost + back) + "); your file was restored",
        result,
    )


def _record_unmerged(batch: _Batch) -> None:
    """Markers in a git checkout: also stage base/ours/theirs so git and IDEs see a conflict.
    Every file the batch wrote markers into is recorded at once (one git call for the
    blobs, one for the index), after the writes and before the journal says they happened."""
    ctx, actions = batch.ctx, batch.unmerged
    batch.unmerged = []
    top = ctx.git_top
    if top is None or not actions:
        return
    from tether import git

    conflicts: list[tuple[str, git.Stages]] = []
    for action in actions:
        if action.sides is None:
            continue
        mode = 0o100755 if (action.mode or 0) & 0o111 else 0o100644
        base, ours, theirs = action.sides
        stages = [(1, base or None, mode), (2, ours, mode), (3, theirs, mode)]
        conflicts.append((_repo_path(ctx, top, action.path), stages))
    if not conflicts:
        return
    crashpoint.reached(STEP_CONFLICTS_WRITTEN)
    try:
        git.record_unmerged_paths(top, conflicts)
    except TetherError as error:
        batch.outcome.index_trouble += [
            IndexTrouble(IndexTroubleCode.NOT_RECORDED, action.path, str(error))
            for action in actions
            if action.sides is not None
        ]


def _save_index_entries(batch: _Batch) -> None:
    """Before a path is first marked unmerged, journal its index entries, so an abandon
    can put git's index back as it was."""
    ctx = batch.ctx
    top = ctx.git_top
    pending = [
        a
        for a in batch.actions
        if a.op is Op.MARKERS
        and a.sides is not None  # what _record_unmerged marks
        and a.bucket is not Bucket.FAILED
        and a.path not in ctx.resume.index_saved
    ]
    if top is None or not pending:
        return
    from tether import git

    names = {a.path: _repo_path(ctx, top, a.path) for a in pending}
    try:
        entries = git.index_entries(top, list(names.values()))
    except TetherError as error:
        batch.outcome.index_trouble.append(
            IndexTrouble(IndexTroubleCode.NOT_READ, error=str(error))
        )
        return
    for rel, repo_rel in names.items():
        saved = [list(entry) for entry in entries.get(repo_rel, [])]
        fields: dict[str, object] = {"path": rel, "repo_path": repo_rel, "entries": saved}
        batch.records.append((STEP_INDEX_SAVED, fields))
        ctx.resume.index_saved.add(rel)


def _repo_path(ctx: RunContext, top: Path, rel: str) -> str:
    return os.path.relpath(ctx.project.path(rel).resolve(), top.resolve())


def _has_artifact(action: FileAction) -> bool:
    return (
        bool(action.artifact)
        and action.artifact != action.path
        and (action.artifact_content is not None)
    )


BATCH_SIZE = 512
# The moment a batch's conflict markers are on disk and git's index does not yet hold their
# stages (a crash point, not a journal record): a resumed run records them.
STEP_CONFLICTS_WRITTEN = "conflicts-written"


@valueclass()
class _Batch:
    """One group commit: backups, then intents, then writes, each phase made durable once."""

    ctx: RunContext
    outcome: ApplyOutcome
    actions: list[FileAction]
    flushed: list[Path] = field(default_factory=list)
    untouched: set[int] = field(default_factory=set)  # ids of actions a stop left alone
    records: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)  # backups made as links this batch
    unmerged: list[FileAction] = field(default_factory=list)  # markers written: git's index

    def commit(self, journal: bool = True) -> None:
        """Make the phase's files durable, then journal what they did with one fsync
        (``journal=False``: the records wait for the next phase's, which comes before
        anything that relies on them)."""
        flush_to_disk(self.flushed)
        self.flushed = []
        if journal:
            self.ctx.journal.append_many(self.ctx.run_id, self.records)
            self.records = []


def _targets(ctx: RunContext, action: FileAction) -> list[tuple[str, bytes]]:
    """(project path, bytes) this action still has to write; done ones are left out."""
    targets: list[tuple[str, bytes]] = []
    if action.op in (Op.WRITE, Op.MARKERS) and action.content is not None:
        targets.append((action.path, action.content))
    if _has_artifact(action) and action.artifact and action.artifact_content is not None:
        targets.append((action.artifact, action.artifact_content))
    targets = [(t, data) for t, data in targets if not _target_done(ctx, action.path, t)]
    return targets


def _needs_backup(ctx: RunContext, action: FileAction) -> bool:
    if not ctx.project.path(action.path).exists():
        return False
    if action.op is Op.REMOVE:
        return True
    writes_path = any(target == action.path for target, _ in _targets(ctx, action))
    return action.backs_up and writes_path


def _backup(batch: _Batch, rel: str) -> None:
    ctx = batch.ctx
    folder = ctx.backups
    saved = back_up(
        folder.guard,
        folder.name(rel),
        ctx.project.path(rel),
        first=ctx.resume.backed_up.get(rel),
        may_link=True,  # the write that follows renames new bytes over the path
        durable=False,  # made durable with the batch, before the journal says so
    )
    if saved is None:
        return
    if saved.first_edited:
        # Said, never trusted: the first backup holds the edited bytes now. It still shares
        # them with the file: unshared like this batch's links if the write does not happen.
        batch.outcome.backups_edited.append(rel)
        batch.linked.append(folder.name(rel))
    if saved.written:
        if saved.linked:
            batch.linked.append(saved.name)
        batch.flushed.append(folder.path(saved.name))
        batch.outcome.backed_up.append(rel)
    fields: dict[str, object] = {
        "path": rel,
        "backup": folder.label(saved.name),
        "sha256": saved.sha256,
    }
    batch.records.append((STEP_FILE_BACKED_UP, fields))
    ctx.resume.backed_up.setdefault(rel, saved.sha256)


def _unshare_backups(batch: _Batch) -> None:
    """A backed-up file the batch did not replace (a failure, a stop) still shares its bytes
    with its backup; give the backup its own copy so a later edit in place cannot reach it."""
    folder = batch.ctx.backups
    for backup in batch.linked:
        copied = unshare_backup(folder, backup, durable=False)
        if copied is not None:
            batch.flushed.append(copied)
    batch.linked = []


def _intent(batch: _Batch, action: FileAction) -> None:
    """Written ahead: a rerun that finds these bytes at the target knows the write happened."""
    for target, data in _targets(batch.ctx, action):
        batch.records.append((STEP_FILE_INTENT, _file_record(action, target, data)))


def _file_record(action: FileAction, target: str, data: bytes) -> dict[str, object]:
    """The journal's fields for ``data`` going to ``target`` for ``action`` (an intent
    before the write, the same fields once written)."""
    fields: dict[str, object] = {
        "path": action.path,
        "target": target,
        "sha256": sha256_bytes(data),
        "bucket": action.bucket.value,
    }
    if action.decision:
        fields["decision"] = action.decision
    if action.reason:
        fields["reason"] = action.reason
    if action.why is not None:
        fields["why"] = action.why.to_json()
    return fields


def _write_action(batch: _Batch, action: FileAction) -> None:
    ctx = batch.ctx
    if action.op is Op.REMOVE:
        if ctx.guard.remove(action.path):
            batch.flushed.append(ctx.project.path(action.path))
            batch.records.append((STEP_FILE_DELETED, {"path": action.path}))
        return
    wrote_path = False
    for target_rel, data in _targets(ctx, action):
        new_mode = action.mode if target_rel == action.path else 0o644
        target = ctx.guard.write(target_rel, data, new_mode=new_mode, durable=False)
        batch.flushed.append(target)
        batch.records.append((STEP_FILE_WRITTEN, _file_record(action, target_rel, data)))
        if target_rel == action.path:
            wrote_path = True
            _verify_written(ctx, action)
            if action.op is Op.MARKERS:
                batch.unmerged.append(action)
    if not wrote_path and _holds_content(ctx, action):
        # An interrupted run wrote exactly these bytes, possibly without checking them. (A
        # replan that wants other bytes there keeps what the run wrote, unchecked again.)
        _verify_written(ctx, action)
    if not wrote_path:
        _unmerged_left_out(batch, action)


def _unmerged_left_out(batch: _Batch, action: FileAction) -> None:
    """The interrupted run wrote this path's markers but may have been killed before git's
    index got its stages (they are recorded once per batch, after the writes, before the
    journal says written): record them now, as the uninterrupted run would have. Recording
    the same stages again is harmless. The replan read the markers as the adopter's side,
    so that side comes from the run's first backup of the path, the bytes it held before."""
    ctx = batch.ctx
    rel = action.path
    if (
        action.op is not Op.MARKERS
        or action.sides is None
        or rel in ctx.resume.written
        or not _target_done(ctx, rel, rel)
    ):
        return
    first = ctx.resume.backed_up.get(rel)
    try:
        ours = read_bytes(ctx.backups.path(ctx.backups.name(rel))) if first else None
    except OSError:
        ours = None
    if ours is None or sha256_bytes(ours) != first:
        batch.outcome.index_trouble.append(IndexTrouble(IndexTroubleCode.BACKUP_MISSING, rel))
        return
    base, _markers, theirs = action.sides
    batch.unmerged.append(replace(action, sides=(base, ours, theirs)))


def _holds_content(ctx: RunContext, action: FileAction) -> bool:
    if action.op not in (Op.WRITE, Op.MARKERS) or action.content is None:
        return False
    try:
        return sha256_file(ctx.project.path(action.path)) == sha256_bytes(action.content)
    except OSError:
        return False


def _failed(ctx: RunContext, action: FileAction, error: Exception) -> FileAction:
    if isinstance(error, UnsafePath):
        reason = error.problem  # the problem names the path's folder; the action its path
    elif isinstance(error, OSError):
        reason = f"{error.strerror or error}" + (f": {error.filename}" if error.filename else "")
    else:
        reason = str(error)
    ctx.journal.file_failed(ctx.run_id, action.path, reason)
    return FileAction(action.path, action.cls, Bucket.FAILED, reason=reason)


def _run_phase(
    batch: _Batch,
    step: Callable[[FileAction], None],
    should_stop: Callable[[], bool] | None = None,
    *,
    journal: bool = True,
) -> None:
    """Run one phase over the batch's live actions (a failing one drops out), then commit."""
    for index, action in enumerate(batch.actions):
        if action.bucket is Bucket.FAILED or id(action) in batch.untouched:
            continue
        if should_stop is not None and should_stop():
            batch.outcome.interrupted = True
            batch.untouched.update(id(a) for a in batch.actions[index:])
            break
        try:
            step(action)
        except (OSError, VerificationFailed) as error:
            if isinstance(error, VerificationFailed):
                batch.outcome.unverified[action.path] = error.verdict
            batch.actions[index] = _failed(batch.ctx, action, error)
    _record_unmerged(batch)
    batch.commit(journal)


def _apply_batch(
    ctx: RunContext, actions: list[FileAction], outcome: ApplyOutcome, stop: Callable[[], bool]
) -> list[FileAction]:
    batch = _Batch(ctx, outcome, list(actions))

    def back_up(action: FileAction) -> None:
        if _needs_backup(ctx, action):
            _backup(batch, action.path)

    # The backups are made durable, then journaled in one fsync with the index entries and
    # the intents: a backup is on disk before any record names it, and all three before
    # the first write.
    _run_phase(batch, back_up, journal=False)
    _save_index_entries(batch)
    _run_phase(batch, lambda action: _intent(batch, action))
    _run_phase(batch, lambda action: _write_action(batch, action), stop)
    if batch.linked:
        _unshare_backups(batch)
        flush_to_disk(batch.flushed)
    outcome.not_done += [a for a in actions if id(a) in batch.untouched]
    if ctx.after_writes is not None:
        ctx.after_writes([a for a in batch.actions if id(a) not in batch.untouched])
    return batch.actions


def _needs_disk(action: FileAction) -> bool:
    return action.bucket is not Bucket.FAILED and (
        action.op is not Op.NONE or _has_artifact(action)
    )


def execute_plan(
    ctx: RunContext, plan: UpdatePlan, should_stop: Callable[[], bool] = lambda: False
) -> ApplyOutcome:
    """Apply in batches. Each batch backs up, records its intents, then writes; each
    phase is made durable before the journal says it happened (one sync per phase)."""
    outcome = ApplyOutcome(actions=[])
    ctx.journal.run_started(
        ctx.run_id,
        from_version=plan.from_version,
        to_version=plan.to_version,
        plan_digest=ctx.plan_digest or plan.digest(),
        command=ctx.command,
        git=ctx.git_context,
    )
    resumed = bool(ctx.resume.done or ctx.resume.backed_up)
    if resumed and ctx.backup_dir.is_dir():
        remove_stale_temps_under(ctx.backup_dir)
    interrupted_backups = dict(ctx.resume.backed_up)  # this run adds its own as it goes
    if resumed:
        _sweep_temps(ctx, plan.actions)
    pending: list[FileAction] = []
    for action in plan.actions:
        if action.bucket is Bucket.FAILED:
            ctx.journal.file_failed(ctx.run_id, action.path, action.reason)
        elif _needs_disk(action):
            pending.append(action)
    applied: dict[int, FileAction] = {}
    with progress.phase("applying", len(pending)) as step:
        for start in range(0, len(pending), BATCH_SIZE):
            if should_stop():
                outcome.interrupted = True
            if outcome.interrupted:
                outcome.not_done += pending[start:]
                break
            chunk = pending[start : start + BATCH_SIZE]
            results = _apply_batch(ctx, chunk, outcome, should_stop)
            for original, result in zip(chunk, results, strict=True):
                applied[id(original)] = result
            step.advance(len(chunk))
    outcome.actions = [applied.get(id(a), a) for a in plan.actions]
    if interrupted_backups:
        _unshare_interrupted_backups(ctx, plan, interrupted_backups, outcome)
    return outcome


def _unshare_interrupted_backups(
    ctx: RunContext, plan: UpdatePlan, first: dict[str, str], outcome: ApplyOutcome
) -> None:
    """On a resume, once the writes are done: a file the interrupted run backed up as a
    link and this run did not replace (its plan no longer writes it: a conflict left as a
    patch, a kept file, a failed write) still shares its bytes with that first backup. The
    backup gets its own copy, and when those bytes are not the ones the interrupted run
    backed up (edited in place in between) the run says so, as a backup made before a write
    does (``Saved.first_edited``). Two ``lstat`` calls a file the interrupted run backed up;
    a read only for a backup still shared."""
    folder = ctx.backups
    for action in plan.actions:
        rel = action.path
        recorded = first.get(rel)
        if recorded is None or rel in outcome.backups_edited:
            continue
        name = folder.name(rel)
        if not same_file(folder.path(name), ctx.project.path(rel)):
            continue  # written over since, or a copy from the start
        try:
            data = read_bytes(folder.path(name))
        except OSError:
            continue
        if sha256_bytes(data) != recorded:
            outcome.backups_edited.append(rel)
        unshare_backup(folder, name, data=data)


def _sweep_temps(ctx: RunContext, actions: Sequence[FileAction]) -> None:
    """A killed write leaves its temp file beside the target; a resumed run removes those
    of every target and artifact, each folder listed once."""
    paths = [
        ctx.project.path(rel)
        for action in actions
        for rel in (action.path, action.artifact)
        if rel and ctx.guard.problem(rel) is None  # never sweeps a folder outside
    ]
    with contextlib.suppress(OSError):
        remove_stale_temps_beside(paths)
