"""The run journal: an append-only JSONL file that says how far a run got.

Each record is one line ``{"run", "step", "seq", "at", ...fields}``, written whole and fsync'd
before the step it describes is treated as done, so after a crash the journal never claims more
than happened. ``seq`` counts a run's records from 1 and continues when a later process resumes
the same run id; ``at`` is the ISO-8601 UTC time of the append.

Fields per step (the typed helpers on :class:`Journal` write exactly these):

===================  ==================================================
run-started          from (None for a first install), to, plan_digest, command, git (the
                     branch the run started on, the branch it created, the start commit;
                     null outside git)
file-backed-up       path, backup, sha256 (of the adopter's bytes backed up)
file-intent          path, target, sha256, bucket (written ahead of the write itself)
file-written         path, sha256 (of the bytes written)
file-deleted         path (removed on the user's explicit choice, after its backup)
file-skipped         path, reason
file-failed          path, error
index-saved          path, repo_path, entries (git's index entries of a path, as
                     [mode, oid, stage], before the run first marked it unmerged)
migration-finished   a migration's result: id, version, when, command, status, exit_code,
                     summary, stderr, reason (words only for a switch that skipped it, and
                     in a journal written before ``why``), label, dry_run, why (a
                     ``flows.lifecycle_plan.ProgramWhy``: code and data, when there is one)
finalize-started     -
state-written        -
run-complete         -
run-abandoned        -
===================  ==================================================

A resumed run should append under its original run id: its seq continues, its backups stay in
one folder, and a repeated run-started simply records the newly computed plan digest.

Rotation happens only when a run starts, and only when the file holds no unfinished run: the
file is renamed to ``<name>.1`` (replacing the previous one). So a run's records always sit in
one file, and the records of an unfinished run are always in the current file, which is the only
one :meth:`Journal.records` reads.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import cannot_read, fsync_dir, read_bytes
from tether.parselimits import json_loads
from tether.state import crashpoint
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import BinaryIO

_FOLDER_HERE = "a folder stands where tether keeps its journal"

STEP_RUN_STARTED = "run-started"
STEP_FILE_BACKED_UP = "file-backed-up"
STEP_FILE_INTENT = "file-intent"  # about to write these bytes there (written ahead)
STEP_FILE_WRITTEN = "file-written"
STEP_FILE_DELETED = "file-deleted"
STEP_FILE_SKIPPED = "file-skipped"
STEP_FILE_FAILED = "file-failed"
STEP_INDEX_SAVED = "index-saved"  # git index entries of a path, before the run changed them
STEP_FINALIZE_STARTED = "finalize-started"
STEP_STATE_WRITTEN = "state-written"
STEP_LIFECYCLE_SNAPSHOT = "lifecycle-snapshot"  # conditions as they were before any write
STEP_MIGRATION_STARTED = "migration-started"
STEP_MIGRATION_FINISHED = "migration-finished"
STEP_POST_UPDATE_WRITTEN = "post-update-written"
# A copier template's migrations and tasks of one stage ("before", "after"): begun, and
# finished (``ok``), so a resumed run never runs a finished stage again.
STEP_TEMPLATE_STAGE_STARTED = "template-stage-started"
STEP_TEMPLATE_STAGE_FINISHED = "template-stage-finished"
STEP_RUN_COMPLETE = "run-complete"
STEP_RUN_ABANDONED = "run-abandoned"
# An abandon's own steps: it began (every check passed), a backup was put back, a file the
# run created was removed. They give an abandon crash points; a killed abandon is run again.
STEP_ABANDON_STARTED = "abandon-started"
STEP_FILE_RESTORED = "file-restored"
STEP_FILE_UNWRITTEN = "file-unwritten"

STEPS = (
    STEP_RUN_STARTED,
    STEP_FILE_BACKED_UP,
    STEP_FILE_WRITTEN,
    STEP_FILE_DELETED,
    STEP_FILE_INTENT,
    STEP_FILE_SKIPPED,
    STEP_FILE_FAILED,
    STEP_INDEX_SAVED,
    STEP_FINALIZE_STARTED,
    STEP_STATE_WRITTEN,
    STEP_LIFECYCLE_SNAPSHOT,
    STEP_MIGRATION_STARTED,
    STEP_MIGRATION_FINISHED,
    STEP_POST_UPDATE_WRITTEN,
    STEP_TEMPLATE_STAGE_STARTED,
    STEP_TEMPLATE_STAGE_FINISHED,
    STEP_RUN_COMPLETE,
    STEP_RUN_ABANDONED,
    STEP_ABANDON_STARTED,
    STEP_FILE_RESTORED,
    STEP_FILE_UNWRITTEN,
)
END_STEPS = frozenset({STEP_RUN_COMPLETE, STEP_RUN_ABANDONED})

ROTATE_BYTES = 1_000_000
RESERVED_KEYS = frozenset({"run", "step", "seq", "at"})
_CHUNK = 1 << 16

Record = dict[str, object]


@valueclass(frozen=True)
class Backup:
    """Where the adopter's bytes of one path were saved, and their hash."""

    backup: str
    sha256: str


@valueclass(frozen=True)
class RunRecord:
    """What an unfinished run set out to do and how far it got."""

    run_id: str
    from_version: str | None
    to_version: str
    plan_digest: str
    command: str
    started: str
    # The FIRST backup of each path: it holds the adopter's bytes, a later one might not.
    backed_up: dict[str, Backup] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # path -> sha256 last written
    deleted: frozenset[str] = frozenset()
    skipped: dict[str, str] = field(default_factory=dict)  # path -> reason
    failed: dict[str, str] = field(default_factory=dict)  # path -> error, unless written later
    # path -> (path from the top of the git work tree, its index entries before the run)
    index_saved: dict[str, tuple[str, list[tuple[int, str, int]]]] = field(default_factory=dict)
    git: dict[str, str | None] = field(default_factory=dict)  # the first run-started's context
    finalize_started: bool = False
    state_written: bool = False
    abandon_started: bool = False  # an abandon began putting the run back (and was stopped)
    last_seq: int = 0


class Journal:
    """The append-only journal at ``path``. Only the holder of the project lock writes it."""

    def __init__(self, path: Path, rotate_bytes: int = ROTATE_BYTES) -> None:
        self.path = path
        self.rotate_bytes = rotate_bytes
        self._seq: dict[str, int] = {}

    @property
    def rotated_path(self) -> Path:
        return self.path.with_name(self.path.name + ".1")

    def append(self, run_id: str, step: str, **fields: object) -> None:
        """Write one record durably, then honour the crash point (see ``crashpoint``)."""
        self._append(run_id, step, fields, durable=True)

    def _append(self, run_id: str, step: str, fields: dict[str, object], durable: bool) -> None:
        """``durable=False``: a record nothing relies on before the next durable append,
        which makes it durable too (every reader finds it in the file meanwhile)."""
        _check_record(step, fields)
        if step == STEP_RUN_STARTED:
            self._rotate_if_due()
        seq = self._next_seq(run_id)
        record: Record = {"run": run_id, "step": step, "seq": seq, "at": _utc_now(), **fields}
        self._write_line(_encode(record), durable)
        self._seq[run_id] = seq
        crashpoint.after_append(step)

    def append_many(self, run_id: str, entries: list[tuple[str, dict[str, object]]]) -> None:
        """Write several records with one fsync (a group commit), then honour the crash
        point for each in turn. Everything they describe must already be durable."""
        if not entries:
            return
        lines = []
        seq = self._next_seq(run_id) - 1
        for step, fields in entries:
            _check_record(step, fields)
            seq += 1
            record: Record = {"run": run_id, "step": step, "seq": seq, "at": _utc_now(), **fields}
            lines.append(_encode(record))
        self._write_line(b"".join(lines))
        self._seq[run_id] = seq
        for step, _ in entries:
            crashpoint.after_append(step)

    def records(self) -> list[Record]:
        return read_records(self.path)

    def unfinished_run(self) -> RunRecord | None:
        return unfinished_run(self.records())

    # Typed helpers: they fix the field names unfinished_run() reads back.

    def run_started(
        self,
        run_id: str,
        *,
        from_version: str | None,
        to_version: str,
        plan_digest: str,
        command: str,
        git: Mapping[str, str | None] | None = None,
    ) -> None:
        fields = {
            "from_version": from_version,
            "to_version": to_version,
            "plan_digest": plan_digest,
        }
        self.append(run_id, STEP_RUN_STARTED, **fields, command=command, git=git)

    def file_backed_up(self, run_id: str, path: str, backup: str, sha256: str) -> None:
        self.append(run_id, STEP_FILE_BACKED_UP, path=path, backup=backup, sha256=sha256)

    def file_written(self, run_id: str, path: str, sha256: str) -> None:
        self.append(run_id, STEP_FILE_WRITTEN, path=path, sha256=sha256)

    def file_deleted(self, run_id: str, path: str) -> None:
        self.append(run_id, STEP_FILE_DELETED, path=path)

    def file_skipped(self, run_id: str, path: str, reason: str) -> None:
        self.append(run_id, STEP_FILE_SKIPPED, path=path, reason=reason)

    def file_failed(self, run_id: str, path: str, error: str) -> None:
        self.append(run_id, STEP_FILE_FAILED, path=path, error=error)

    def finalize_started(self, run_id: str) -> None:
        # Only a marker for readers (no resume decision rests on it): durable with the
        # state-written record that follows the state's own fsync.
        self._append(run_id, STEP_FINALIZE_STARTED, {}, durable=False)

    def state_written(self, run_id: str) -> None:
        self.append(run_id, STEP_STATE_WRITTEN)

    def run_complete(self, run_id: str) -> None:
        self.append(run_id, STEP_RUN_COMPLETE)

    def run_abandoned(self, run_id: str) -> None:
        self.append(run_id, STEP_RUN_ABANDONED)

    def _next_seq(self, run_id: str) -> int:
        if run_id not in self._seq:
            # First append for this run in this process: continue a resumed run's numbering.
            seqs = [int(str(r["seq"])) for r in self.records() if r["run"] == run_id]
            self._seq[run_id] = max(seqs, default=0)
        return self._seq[run_id] + 1

    def _rotate_if_due(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size <= self.rotate_bytes or self.unfinished_run() is not None:
            return
        os.replace(self.path, self.rotated_path)
        fsync_dir(self.path.parent)
        self._seq.clear()

    def _write_line(self, line: bytes, durable: bool = True) -> None:
        try:
            self._append_line(line, durable)
        except IsADirectoryError:
            raise TetherError(f"{self.path}: {_FOLDER_HERE}") from None
        except OSError as error:  # a run that cannot be recorded must not go on
            raise TetherError(f"{self.path}: cannot write the journal ({error.strerror})") from None

    def _append_line(self, line: bytes, durable: bool = True) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab+") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size:
                _drop_torn_tail(handle, size)
            handle.write(line)
            handle.flush()
            if durable or size == 0:
                os.fsync(handle.fileno())
        if size == 0:
            fsync_dir(self.path.parent)  # make the new file's directory entry durable too


def read_records(path: Path) -> list[Record]:
    """The journal's records in order; a final line without its newline is a torn write and
    is ignored (the append that wrote it never returned, so nothing relied on it)."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        raise TetherError(f"{path}: {_FOLDER_HERE}") from None
    except OSError as error:
        raise TetherError(cannot_read(path, error, "the journal")) from None
    lines = data.split(b"\n")[:-1]  # what follows the last newline is empty or torn
    return [_decode(path, number, raw) for number, raw in enumerate(lines, 1)]


def unfinished_run(records: Iterable[Mapping[str, object]]) -> RunRecord | None:
    """The most recently started run that has neither run-complete nor run-abandoned.

    Records of a run whose run-started is not among ``records`` are ignored.
    """
    runs: dict[str, list[Mapping[str, object]]] = {}
    for record in records:
        run_id = str(record["run"])
        if record["step"] == STEP_RUN_STARTED:
            runs.setdefault(run_id, [])
        if run_id in runs:
            runs[run_id].append(record)
    for run_id in reversed(runs):
        group = runs[run_id]
        if not any(record["step"] in END_STEPS for record in group):
            return _fold(run_id, group)
    return None


# What new_run_id() makes, and so the only run ids tether replays: a run id names a backup
# folder, so any other text could lead it out of the backup root.
RUN_ID_SHAPE = re.compile(r"[0-9]{8}T[0-9]{12}Z-[0-9a-f]{6}")


def is_run_id(text: str) -> bool:
    return RUN_ID_SHAPE.fullmatch(text) is not None


def new_run_id() -> str:
    """``20240501T120000123456Z-a1b2c3``: sorts by start time, safe as a folder name."""
    seconds, micro = _utc_clock()
    return time.strftime("%Y%m%dT%H%M%S", seconds) + f"{micro:06d}Z-{os.urandom(3).hex()}"


def _fold(run_id: str, group: list[Mapping[str, object]]) -> RunRecord:
    start = group[0]
    backed_up: dict[str, Backup] = {}
    written: dict[str, str] = {}
    deleted: set[str] = set()
    skipped: dict[str, str] = {}
    failed: dict[str, str] = {}
    index_saved: dict[str, tuple[str, list[tuple[int, str, int]]]] = {}
    git: dict[str, str | None] = {}
    steps: set[str] = set()
    plan_digest = _text(start, "plan_digest")
    for record in group:
        step = str(record["step"])
        steps.add(step)
        path = _text(record, "path")
        if step == STEP_RUN_STARTED:
            plan_digest = _text(record, "plan_digest")  # a resume may have replanned
            if not git:  # the first run's context: a resume starts on the update branch
                git = _git_context(record.get("git"))
        elif step == STEP_INDEX_SAVED:
            if path not in index_saved:  # the first save holds the pre-run entries
                index_saved[path] = (_text(record, "repo_path"), _index_entries(record))
        elif step == STEP_FILE_BACKED_UP:
            backed_up.setdefault(path, Backup(_text(record, "backup"), _text(record, "sha256")))
        elif step == STEP_FILE_WRITTEN:
            written[path] = _text(record, "sha256")
            failed.pop(path, None)
        elif step == STEP_FILE_DELETED:
            deleted.add(path)
            failed.pop(path, None)
        elif step == STEP_FILE_SKIPPED:
            skipped[path] = _text(record, "reason")
        elif step == STEP_FILE_FAILED:
            failed[path] = _text(record, "error")
    source = start.get("from_version")
    return RunRecord(
        run_id=run_id,
        from_version=None if source is None else str(source),
        to_version=_text(start, "to_version"),
        plan_digest=plan_digest,
        command=_text(start, "command"),
        started=_text(start, "at"),
        backed_up=backed_up,
        written=written,
        deleted=frozenset(deleted),
        skipped=skipped,
        failed=failed,
        index_saved=index_saved,
        git=git,
        finalize_started=STEP_FINALIZE_STARTED in steps,
        state_written=STEP_STATE_WRITTEN in steps,
        abandon_started=STEP_ABANDON_STARTED in steps,
        last_seq=max(int(str(record["seq"])) for record in group),
    )


def _check_record(step: str, fields: Mapping[str, object]) -> None:
    # A misspelt step would silently escape resume and the crash-point enumeration.
    if step not in STEPS:
        raise ValueError(f"unknown journal step {step!r}")
    clash = RESERVED_KEYS.intersection(fields)
    if clash:
        raise ValueError(f"journal fields may not override {sorted(clash)}")


def _encode(record: Record) -> bytes:
    # ensure_ascii keeps undecodable file names (surrogate escapes) representable: they
    # round-trip as \udcxx escapes instead of failing to encode as UTF-8.
    return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


def _decode(path: Path, number: int, raw: bytes) -> Record:
    try:
        record = json_loads(raw)
    except ValueError:
        record = None
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("run"), str)
        or not isinstance(record.get("step"), str)
        or not isinstance(record.get("seq"), int)
    ):
        # Appends repair a torn tail before writing, so damage here was not a crash of ours;
        # guessing past it could lose the record of a backup.
        raise TetherError(f"{path}: line {number} is damaged; repair or remove that line")
    return record


def _drop_torn_tail(handle: BinaryIO, size: int) -> None:
    """Cut a torn final line (a crash mid-append) so the next record starts on its own line."""
    handle.seek(size - 1)
    if handle.read(1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        handle.seek(start)
        newline = handle.read(end - start).rfind(b"\n")
        if newline >= 0:
            handle.truncate(start + newline + 1)
            return
        end = start
    handle.truncate(0)


def _git_context(value: object) -> dict[str, str | None]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v if isinstance(v, str) else None for k, v in value.items()}


def _index_entries(record: Mapping[str, object]) -> list[tuple[int, str, int]]:
    entries = record.get("entries")
    if not isinstance(entries, list):
        return []
    found = []
    for entry in entries:
        if (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], int)
            and isinstance(entry[1], str)
            and isinstance(entry[2], int)
        ):
            found.append((entry[0], entry[1], entry[2]))
    return found


def _text(record: Mapping[str, object], key: str) -> str:
    value = record.get(key)
    return "" if value is None else str(value)


def _utc_now() -> str:
    """``2024-05-01T12:00:00.123456Z``, as ``datetime``'s ``isoformat`` writes it in UTC."""
    seconds, micro = _utc_clock()
    return time.strftime("%Y-%m-%dT%H:%M:%S", seconds) + f".{micro:06d}Z"


def _utc_clock() -> tuple[time.struct_time, int]:
    """Now in UTC: the whole seconds and the microseconds (``datetime`` costs ~1 ms of an
    update's start-up to import; docs/performance.md, "Small projects")."""
    whole, nanos = divmod(time.time_ns(), 1_000_000_000)
    return time.gmtime(whole), nanos // 1000
