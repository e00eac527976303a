"""``tether reapply``: merge saved local patches back into a freshly installed release.

Some installers (GSD's, for one) do not merge: before wiping their files they copy every file
whose sha256 differs from their install manifest into a patches folder, with a
``backup-meta.json`` naming each file and the sha256 it had as installed (its *pristine hash*),
then install the new release over the top. This flow brings those customisations back:

* per saved file, a **baseline** (the bytes the user started from) is looked for in priority
  order, and only bytes whose sha256 equals the recorded pristine hash count: (a) a pristine
  folder, (b) the git history of the target, (c) the baseline release from a source, (d) none;
* the saved copy (ours) and the installed file (theirs) are merged on that baseline with the
  text-merge engine; with no baseline nothing is guessed: the file becomes a conflict showing
  both versions (a backed-up file is customised by definition);
* every clean merge is written, read back and checked by the preservation verifier; a file
  that fails is restored to the installed version and the run exits 1 with the missing lines.

Crash safety: the run holds the target's lock; the installed version of every file is backed
up (``<patches>/../tether-reapply-backup/<run-id>/installed/<path>``) and journaled before the
file is first written, and a rerun of an interrupted run resumes under the same run id, takes
the installed bytes from that first backup and never writes a second one over it.

``save_patches`` is the installer's backup step done safely: each call writes a new
timestamped folder and never touches an earlier one.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether import git
from tether.engine.patches import unified_patch
from tether.engine.textfmt import eol_style, is_binary
from tether.engine.textmerge import merge3
from tether.engine.verify import VerifyResult, verify_preserved
from tether.errors import TetherError, UsageError
from tether.flows.project import Project, write_ignore_rules
from tether.flows.replay import check_journal_file
from tether.flows.safety import PathGuard, UnsafePath, check_own_paths
from tether.fsio import (
    NOT_REGULAR,
    NotRegularFileError,
    file_mode,
    read_bytes,
    read_regular,
    sha256_bytes,
    sha256_file,
)
from tether.parselimits import json_loads
from tether.pathrules import project_path_problem
from tether.profiles import NATIVE, Profile, detect_profile
from tether.state.journal import (
    STEP_FILE_WRITTEN,
    STEP_RUN_COMPLETE,
    STEP_RUN_STARTED,
    Journal,
    RunRecord,
    is_run_id,
    new_run_id,
)
from tether.state.lock import ProjectLock

MERGED = "merged"
CONFLICT = "conflict"
INCORPORATED = "incorporated"
FAILED = "failed"

META_FILE = "backup-meta.json"
BACKUP_FOLDER = "tether-reapply-backup"  # created next to the patches folder
CONFLICT_STYLES = ("markers", "patch")
_JOURNAL_SUFFIX = ".reapply"  # beside the profile's journal, so update never reads our runs
_PARTIAL_PREFIX = ".partial-"  # a --save folder still being written

REMEDIES = (
    "re-anchor the pristine copy: put the bytes whose sha256 is the recorded pristine hash at "
    "<pristine>/<path> (or give --git / --baseline-source where they can be found)",
    "restore from the patch and merge by hand: your copy is <patches>/<path>",
    "accept the new pristine hash: rerun with --accept-pristine <path> to merge on the "
    "current pristine copy",
)


# --- the saved patches -------------------------------------------------------------------------


@dataclass(frozen=True)
class PatchSet:
    """One saved backup: ``backup-meta.json`` and the user's copies beside it."""

    root: Path
    files: tuple[str, ...]
    pristine_hashes: dict[str, str]
    from_version: str | None
    meta_sha256: str

    def saved(self, rel: str) -> Path:
        return self.root / rel


def find_patch_set(patches: Path) -> Path:
    """The folder holding ``backup-meta.json``: ``patches`` itself, else its newest saved
    subfolder (``--save`` writes one per run, named so that names sort by time)."""
    if (patches / META_FILE).is_file():
        return patches
    if not patches.is_dir():
        raise TetherError(f"{patches}: no such patches folder")
    saved = sorted(
        child
        for child in patches.iterdir()
        if child.is_dir() and not child.name.startswith(".") and (child / META_FILE).is_file()
    )
    if not saved:
        raise TetherError(f"{patches}: no {META_FILE} here or in a saved subfolder")
    return saved[-1]


def load_patch_set(patches: Path) -> PatchSet:
    root = find_patch_set(patches)
    raw = read_bytes(root / META_FILE)
    try:
        meta = json_loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise TetherError(f"{root / META_FILE}: not valid JSON ({error})") from None
    if not isinstance(meta, dict):
        raise TetherError(f"{root / META_FILE}: expected a JSON object")
    files = meta.get("files")
    if not isinstance(files, list) or not all(isinstance(p, str) for p in files):
        raise TetherError(f"{root / META_FILE}: 'files' must be a list of paths")
    hashes = meta.get("pristine_hashes") or {}
    if not isinstance(hashes, dict) or not all(isinstance(v, str) for v in hashes.values()):
        raise TetherError(f"{root / META_FILE}: 'pristine_hashes' must map paths to sha256")
    version = meta.get("from_version")
    return PatchSet(
        root=root,
        files=tuple(dict.fromkeys(files)),
        pristine_hashes={str(k): v.lower() for k, v in hashes.items()},
        from_version=str(version) if version is not None else None,
        meta_sha256=sha256_bytes(raw),
    )


# --- requests and results --------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineOptions:
    pristine: Path | None = None
    git_repo: Path | None = None  # None: the git working tree holding the target, if any
    use_git: bool = True
    source: str | None = None
    version: str | None = None
    accept_pristine: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ReapplyRequest:
    patches: Path
    target: Path
    baseline: BaselineOptions = BaselineOptions()
    conflict_style: str = "markers"
    dry_run: bool = False


@dataclass
class FileResult:
    file: str
    status: str
    reason: str = ""
    baseline: str = "none"  # pristine | git | release | none
    missing: list[tuple[int, str]] = field(default_factory=list)
    readded: list[tuple[int, str]] = field(default_factory=list)
    drifted: bool = False
    artifact: str | None = None  # a conflict patch, when --conflict patch

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "file": self.file,
            "status": self.status,
            "missing": [{"line": n, "text": t} for n, t in self.missing],
            "reason": self.reason,
            "baseline": self.baseline,
            "readded": [{"line": n, "text": t} for n, t in self.readded],
        }
        if self.artifact:
            document["artifact"] = self.artifact
        return document


@dataclass
class ReapplyReport:
    patches: Path
    target: Path
    results: list[FileResult]
    dry_run: bool = False
    run_id: str | None = None
    backup_dir: Path | None = None
    resumed: bool = False

    @property
    def drifted_files(self) -> list[str]:
        return [r.file for r in self.results if r.drifted]

    @property
    def failures(self) -> int:
        return sum(1 for r in self.results if r.status == FAILED)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    def exit_code(self) -> int:
        """1 when a file failed (verification, drift or an error), 4 when conflicts are left."""
        if self.failures:
            return 1
        return 4 if self.count(CONFLICT) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "checked": len(self.results),
            "failures": self.failures,
            "drifted": len(self.drifted_files),
            "drifted_files": self.drifted_files,
            "results": [r.to_json() for r in self.results],
            "patches": str(self.patches),
            "target": str(self.target),
            "dry_run": self.dry_run,
            "run_id": self.run_id,
            "backup": str(self.backup_dir) if self.backup_dir else None,
            "resumed": self.resumed,
            "remedies": list(REMEDIES) if self.drifted_files else [],
        }


# --- finding the baseline --------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """The baseline of one file, or why there is none."""

    data: bytes | None
    origin: str = "none"
    verified: bool = False  # its sha256 equals the recorded pristine hash
    note: str = ""
    drifted: bool = False


class BaselineFinder:
    """Looks a file's baseline up in priority order; git and the release are opened lazily."""

    def __init__(self, options: BaselineOptions, patch_set: PatchSet, target: Path) -> None:
        self.options = options
        self.patch_set = patch_set
        self.target = target
        self._release_root: Path | None = None
        self._repo: tuple[Path, Path | None] | None = None  # (repository, working-tree top)
        self._repo_opened = False

    def find(self, rel: str) -> Found:
        recorded = self.patch_set.pristine_hashes.get(rel)
        notes: list[str] = []
        pristine, drift = self._pristine(rel, recorded, notes)
        if pristine is not None:
            return pristine
        if recorded is None:
            return self._unrecorded(rel, notes)
        found = self._from_git(rel, recorded) or self._from_release(rel, recorded, notes)
        if found is not None:
            # A verified baseline from elsewhere makes a drifted pristine copy harmless.
            note = "; ".join(part for part in (drift, found.note) if part)
            return Found(found.data, found.origin, True, note)
        if drift:
            return Found(None, note=drift, drifted=True)
        notes.append("no version with the recorded pristine hash was found")
        return Found(None, note="; ".join(notes))

    def _unrecorded(self, rel: str, notes: list[str]) -> Found:
        """No pristine hash to check against: only a release the user named can serve, and
        then never as proof that upstream adopted the change."""
        data = self._release_bytes(rel)
        if data is None:
            notes.append("no pristine hash recorded for this file")
            return Found(None, note="; ".join(notes))
        note = (
            f"no pristine hash recorded: release {self.options.version} used unchecked, "
            "so the change is never claimed as incorporated"
        )
        return Found(data, "release", False, note)

    def _pristine(
        self, rel: str, recorded: str | None, notes: list[str]
    ) -> tuple[Found | None, str]:
        """(a): the pristine copy when its hash matches; else the drift message, if any."""
        if self.options.pristine is None:
            return None, ""
        data = _read_file(self.options.pristine / rel)
        if data is None:
            notes.append(f"no pristine copy at {self.options.pristine / rel}")
            return None, ""
        digest = sha256_bytes(data)
        if recorded is not None and digest == recorded:
            return Found(data, "pristine", True), ""
        if rel in self.options.accept_pristine:
            accepted = Found(data, "pristine", False, f"pristine copy accepted, sha256 {digest}")
            return accepted, ""
        if recorded is None:
            notes.append("the pristine copy cannot be checked: no pristine hash recorded")
            return None, ""
        return None, (
            f"pristine drift: {self.options.pristine / rel} has sha256 {digest}, "
            f"the backup recorded {recorded}"
        )

    def _from_git(self, rel: str, recorded: str) -> Found | None:
        """(b): walk the versions of the file git recorded; take the one with the hash."""
        located = self._git_path(rel)
        if located is None:
            return None
        repo, path = located
        for oid in git.path_blob_ids(repo, path):
            data = git.cat_blob(repo, oid)
            if data is not None and sha256_bytes(data) == recorded:
                return Found(data, "git", True, f"baseline from git blob {oid[:12]}")
        return None

    def _git_path(self, rel: str) -> tuple[Path, str] | None:
        """The repository and the file's path in it; None without a usable repository."""
        if not self._repo_opened:
            self._repo = self._open_repo()
            self._repo_opened = True
        if self._repo is None:
            return None
        repo, top = self._repo
        target = (self.target.resolve() / rel) if top is not None else None
        if top is not None and target is not None and target.is_relative_to(top.resolve()):
            return top, target.relative_to(top.resolve()).as_posix()
        # Otherwise the target is not in this working tree: it mirrors the repository's root.
        return repo, rel

    def _open_repo(self) -> tuple[Path, Path | None] | None:
        """(repository, its working-tree top or None when bare), or None for no repository."""
        if not self.options.use_git:
            return None
        if self.options.git_repo is None:
            top = git.work_tree_top(self.target)
            return (top, top) if top is not None else None
        repo = self.options.git_repo
        top = git.work_tree_top(repo)
        if top is None and not git.is_git_repo(repo):
            raise TetherError(f"--git {repo}: not a git repository")
        return repo, top

    def _from_release(self, rel: str, recorded: str, notes: list[str]) -> Found | None:
        """(c): the baseline release's copy, when it is the bytes that were installed."""
        data = self._release_bytes(rel)
        if data is None:
            return None
        if sha256_bytes(data) == recorded:
            return Found(data, "release", True, f"baseline from release {self.options.version}")
        notes.append(f"release {self.options.version}'s copy does not match the pristine hash")
        return None

    def _release_bytes(self, rel: str) -> bytes | None:
        if self.options.source is None or self.options.version is None:
            return None
        if self._release_root is None:
            from tether.sources import open_source

            cache = Project(self.target, _profile(self.target)).releases_cache
            tree = open_source(self.options.source, cache).fetch(self.options.version)
            self._release_root = tree.root
        return _read_file(self._release_root / rel)


# --- deciding one file -----------------------------------------------------------------------


@dataclass
class Plan:
    """What reapply does for one file: the result, the bytes the target should end with
    (None: leave the installed version), and what the verification gate needs."""

    result: FileResult
    theirs: bytes | None = None  # the installed version
    write: bytes | None = None
    base: bytes | None = None
    ours: bytes | None = None
    gate: bool = False  # a clean merge the verifier must pass
    artifact: bytes | None = None


def decide(
    rel: str, ours: bytes, theirs: bytes | None, found: Found, style: str, patch: Path
) -> Plan:
    """The outcome for one saved file, computed without touching the disk."""
    origin = found.origin
    if theirs is None:
        reason = f"the installed release no longer has this file; your copy stays at {patch}"
        return Plan(FileResult(rel, CONFLICT, reason, origin))
    if ours == theirs:
        reason = "your copy is identical to the installed file"
        return Plan(FileResult(rel, INCORPORATED, reason, origin), theirs)
    if found.drifted:
        return Plan(FileResult(rel, FAILED, found.note, drifted=True), theirs)
    if found.data is None:
        return _no_baseline(rel, ours, theirs, found.note, style, patch)
    return _merge(rel, found.data, ours, theirs, found, style, patch)


def _no_baseline(rel: str, ours: bytes, theirs: bytes, note: str, style: str, patch: Path) -> Plan:
    """Without a baseline no line can be attributed to either side: show both, decide nothing."""
    why = "no baseline" + (f" ({note})" if note else "")
    if is_binary(ours) or is_binary(theirs):
        reason = f"{why}; binary file left as installed, your copy is {patch}"
        return Plan(FileResult(rel, CONFLICT, reason), theirs)
    if style == "patch":
        plan = Plan(
            FileResult(rel, CONFLICT, f"{why}; the patch turns the installed file into your copy"),
            theirs,
        )
        plan.artifact = unified_patch(rel, theirs, ours)
        return plan
    reason = f"{why}; both versions written into the file"
    return Plan(FileResult(rel, CONFLICT, reason), theirs, write=both_versions(ours, theirs))


def both_versions(ours: bytes, theirs: bytes) -> bytes:
    """The whole file as one conflict without a base section (there is none to show)."""
    eol = b"\r\n" if eol_style(theirs) == "crlf" else b"\n"

    def block(data: bytes) -> bytes:
        return data if not data or data.endswith(b"\n") else data + eol

    return (
        b"<<<<<<< yours (saved copy)"
        + eol
        + block(ours)
        + b"======="
        + eol
        + block(theirs)
        + b">>>>>>> installed"
        + eol
    )


def _merge(
    rel: str, base: bytes, ours: bytes, theirs: bytes, found: Found, style: str, patch: Path
) -> Plan:
    origin = found.origin
    if ours == base:
        # sha256(ours) is then the pristine hash: the backup step should never have saved it.
        reason = "your saved copy equals its baseline: the backup is inconsistent, nothing merged"
        return Plan(FileResult(rel, FAILED, reason, origin), theirs)
    labels = ("yours (saved copy)", f"baseline ({origin})", "installed")
    merged = merge3(base, ours, theirs, labels=labels)
    note = f"; {found.note}" if found.note else ""
    if merged.conflicts == 0 and merged.merged == theirs:
        if found.verified:
            reason = "your change is already in the installed release" + note
            return Plan(FileResult(rel, INCORPORATED, reason, origin), theirs)
        reason = "nothing to write: the merge equals the installed file" + note
        return Plan(FileResult(rel, MERGED, reason, origin), theirs)
    if merged.conflicts == 0:
        result = FileResult(rel, MERGED, found.note, origin)
        return Plan(result, theirs, merged.merged, base, ours, gate=True)
    if merged.binary:
        reason = f"binary file changed on both sides: left as installed, your copy is {patch}"
        return Plan(FileResult(rel, CONFLICT, reason + note, origin), theirs)
    if style == "patch":
        reason = f"{merged.conflicts} conflicting hunk(s); the patch is your change to the baseline"
        plan = Plan(FileResult(rel, CONFLICT, reason + note, origin), theirs)
        plan.artifact = unified_patch(rel, base, ours)
        return plan
    reason = f"{merged.conflicts} conflicting hunk(s) marked in the file"
    return Plan(FileResult(rel, CONFLICT, reason + note, origin), theirs, merged.merged)


# --- the run ---------------------------------------------------------------------------------


@dataclass
class _Run:
    """Where this run keeps things, and what an interrupted run of the same job did."""

    request: ReapplyRequest
    patch_set: PatchSet
    journal: Journal
    run_id: str
    digest: str
    resumed: RunRecord | None
    earlier: dict[str, tuple[str, str]]  # path -> (sha256, status) a finished run wrote

    @property
    def backup_dir(self) -> Path:
        return backup_root(self.request.patches) / self.run_id

    @functools.cached_property
    def guard(self) -> PathGuard:
        """Every write into the target goes through it."""
        return PathGuard(self.request.target)

    @functools.cached_property
    def backups(self) -> PathGuard:
        """Every write into this run's backup folder goes through it."""
        return PathGuard(self.backup_dir)


def backup_root(patches: Path) -> Path:
    """``<patches>/../tether-reapply-backup``: beside the patches, outside the installed tree."""
    return patches.absolute().parent / BACKUP_FOLDER


def reapply(request: ReapplyRequest) -> ReapplyReport:
    """Merge every saved file back into the target; see the module docstring."""
    if request.conflict_style not in CONFLICT_STYLES:
        raise UsageError(f"--conflict must be one of {', '.join(CONFLICT_STYLES)}")
    _check_dir(request.target, "target")
    patch_set = load_patch_set(request.patches)
    profile = _profile(request.target)
    journal = Journal(request.target / (profile.journal_file + _JOURNAL_SUFFIX))
    check_own_paths(
        request.target, profile, folders=(backup_root(request.patches),), files=(journal.path,)
    )
    check_journal_file(request.target, profile.journal_file + _JOURNAL_SUFFIX)
    if request.dry_run:
        run = _open_run(request, patch_set, journal, write=False)
        return _execute(run, request, patch_set)
    _prepare_runtime(request.target)
    with ProjectLock(request.target / profile.lock_file, command="reapply"):
        run = _open_run(request, patch_set, journal, write=True)
        report = _execute(run, request, patch_set)
        journal.run_complete(run.run_id)
        return report


def _execute(run: _Run, request: ReapplyRequest, patch_set: PatchSet) -> ReapplyReport:
    finder = BaselineFinder(request.baseline, patch_set, request.target)
    seen: dict[tuple[int, int], str] = {}  # (device, inode) -> the first path naming it
    plans = [_plan_file(run, finder, rel, seen) for rel in patch_set.files]
    if not request.dry_run:
        for plan in plans:
            _carry_out_guarded(run, plan)
    for plan in plans:
        if plan.gate:
            _gate(run, plan, request.dry_run)
    return ReapplyReport(
        patches=patch_set.root,
        target=request.target,
        results=[plan.result for plan in plans],
        dry_run=request.dry_run,
        run_id=None if request.dry_run else run.run_id,
        backup_dir=None if request.dry_run else run.backup_dir,
        resumed=run.resumed is not None,
    )


def _open_run(request: ReapplyRequest, patch_set: PatchSet, journal: Journal, write: bool) -> _Run:
    """Start a run, or resume the interrupted run of the same job under its own run id."""
    digest = sha256_bytes(
        f"{patch_set.root.resolve()}\0{patch_set.meta_sha256}\0{request.target.resolve()}".encode()
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
            f"an interrupted reapply ({unfinished.command}) is unfinished on {request.target}; "
            f"run that command again to finish it, or remove {journal.path} to start over "
            "(its backups stay where they are)"
        )
    run_id = unfinished.run_id if unfinished is not None else new_run_id()
    if write:
        command = (
            f"reapply --patches {patch_set.root.resolve()} --target {request.target.resolve()}"
        )
        journal.run_started(
            run_id,
            from_version=patch_set.from_version,
            to_version="",
            plan_digest=digest,
            command=command,
        )
    return _Run(
        request, patch_set, journal, run_id, digest, unfinished, _finished_writes(records, digest)
    )


def _finished_writes(records: list[dict[str, object]], digest: str) -> dict[str, tuple[str, str]]:
    """path -> (sha256, status) last written by a completed run of the same job."""
    digests: dict[str, str] = {}
    complete: set[str] = set()
    for record in records:
        if record["step"] == STEP_RUN_STARTED:
            digests[str(record["run"])] = str(record.get("plan_digest", ""))
        elif record["step"] == STEP_RUN_COMPLETE:
            complete.add(str(record["run"]))
    written: dict[str, tuple[str, str]] = {}
    for record in records:
        run = str(record["run"])
        if record["step"] == STEP_FILE_WRITTEN and run in complete and digests.get(run) == digest:
            written[str(record["path"])] = (str(record["sha256"]), str(record.get("status", "")))
    return written


def _plan_file(
    run: _Run, finder: BaselineFinder, rel: str, seen: dict[tuple[int, int], str]
) -> Plan:
    reserved = _profile(run.request.target).reserved_paths()
    problem = project_path_problem(rel) or reserved.problem(rel) or run.guard.problem(rel)
    if problem:
        return Plan(FileResult(rel, FAILED, f"unsafe path: {problem}"))
    patch = run.patch_set.saved(rel)
    twin = _same_file(run.request.target / rel, rel, seen)
    if twin is not None:
        # Two merges written to one file: the second would undo the first.
        reason = f"the same file on disk as {twin} (through a link); merge it by hand from {patch}"
        return Plan(FileResult(rel, FAILED, reason))
    ours = _read_file(patch)
    if ours is None:
        return Plan(FileResult(rel, FAILED, f"the saved copy {patch} is missing"))
    current = _read_file(run.request.target / rel)
    earlier = _earlier_outcome(run, rel, current)
    if earlier is not None:
        return earlier
    try:
        theirs = _installed_version(run, rel, current)
    except TetherError as error:
        return Plan(FileResult(rel, FAILED, str(error)))
    plan = decide(rel, ours, theirs, finder.find(rel), run.request.conflict_style, patch)
    return _check_current(run, rel, plan, current)


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


def _earlier_outcome(run: _Run, rel: str, current: bytes | None) -> Plan | None:
    """A finished run of this same job already left these bytes: do not merge them again
    (the result would look like an upstream adoption and be claimed as incorporated)."""
    if run.resumed is not None or current is None or rel not in run.earlier:
        return None
    sha, status = run.earlier[rel]
    if sha256_bytes(current) != sha or status not in (MERGED, CONFLICT):
        return None
    reason = (
        "already reapplied by an earlier run"
        if status == MERGED
        else "conflict markers from an earlier run are still unresolved"
    )
    return Plan(FileResult(rel, status, reason))


def _installed_version(run: _Run, rel: str, current: bytes | None) -> bytes | None:
    """The installed bytes: the target's, or the first backup when a run was interrupted
    after it may have written the file."""
    first = run.resumed.backed_up.get(rel) if run.resumed is not None else None
    if first is None:
        return current
    if not _in_backup_folder(run, rel, first.backup):
        raise TetherError(
            f"{run.journal.path}: the backup of {rel} is recorded at {first.backup}, not in "
            f"this run's backup folder {run.backup_dir}; not reading it"
        )
    data = _read_file(Path(first.backup))
    if data is None or sha256_bytes(data) != first.sha256:
        raise TetherError(
            f"the backup {first.backup} of the installed version is missing or "
            "damaged; restore it, or reinstall the release"
        )
    return data


def _in_backup_folder(run: _Run, rel: str, backup: str) -> bool:
    """``backup`` is where this run backs ``rel`` up: ``installed/<rel>`` or ``<rel>.<n>``
    in its own backup folder (compared after resolving links, as a resume may spell the
    patches folder differently)."""
    folder = (run.backup_dir / "installed").resolve()
    try:
        inside = Path(backup).resolve().relative_to(folder).as_posix()
    except (ValueError, OSError):
        return False
    return inside == rel or re.fullmatch(re.escape(rel) + r"\.[0-9]+", inside) is not None


def _check_current(run: _Run, rel: str, plan: Plan, current: bytes | None) -> Plan:
    """On a resume, the target must hold bytes this run accounts for; anything else was
    edited since the interruption and is not overwritten."""
    if run.resumed is None or current is None or current in (plan.theirs, plan.write):
        return plan
    if sha256_bytes(current) == run.resumed.written.get(rel):
        return plan
    reason = "the file changed since the interrupted run; left as it is"
    return Plan(FileResult(rel, FAILED, reason, plan.result.baseline))


def _carry_out_guarded(run: _Run, plan: Plan) -> None:
    """``_carry_out``; a path the guard refuses at write time (checked when planned, so only
    when something changed since) fails that file, not the run."""
    try:
        _carry_out(run, plan)
    except UnsafePath as error:
        reason = f"unsafe path: {error}"
        run.journal.file_failed(run.run_id, plan.result.file, reason)
        plan.result.status, plan.result.reason, plan.gate = FAILED, reason, False


def _carry_out(run: _Run, plan: Plan) -> None:
    rel = plan.result.file
    if plan.artifact is not None:
        artifact = run.backups.write(f"conflicts/{rel}.patch", plan.artifact)
        plan.result.artifact = str(artifact)
    if plan.theirs is None:
        return
    target = run.request.target / rel
    wanted = plan.write if plan.write is not None else plan.theirs
    if _read_file(target) == wanted:
        return  # also what an interrupted run of this job already wrote
    _backup(run, rel, plan.theirs, target)
    run.guard.write(rel, wanted)
    status = plan.result.status if plan.write is not None else "restored"
    run.journal.append(
        run.run_id, STEP_FILE_WRITTEN, path=rel, sha256=sha256_bytes(wanted), status=status
    )


def _backup(run: _Run, rel: str, installed: bytes, target: Path) -> None:
    """Save the installed version once per run; the first backup is never written over."""
    if run.resumed is not None and rel in run.resumed.backed_up:
        return
    digest = sha256_bytes(installed)
    name = f"installed/{rel}"
    path = run.backup_dir / name
    if path.is_file() and sha256_file(path) != digest:
        n = 2
        while (run.backup_dir / f"{name}.{n}").exists():
            n += 1
        name = f"{name}.{n}"
        path = run.backup_dir / name
    if not path.is_file():  # else: written just before a crash that preceded its record
        run.backups.write(name, installed, mode=file_mode(target))
    run.journal.file_backed_up(run.run_id, rel, str(path), digest)


def _gate(run: _Run, plan: Plan, dry_run: bool) -> None:
    """The verification gate over a clean merge (see ``check_written``)."""
    assert plan.base is not None and plan.ours is not None and plan.write is not None
    rel = plan.result.file
    if dry_run:
        verdict = verify_preserved(plan.base, plan.ours, plan.write)
    else:
        assert plan.theirs is not None
        verdict = check_written(run.guard, rel, plan.base, plan.ours, plan.theirs)
    if verdict.preserved:
        return
    if not dry_run:
        run.journal.append(
            run.run_id,
            STEP_FILE_WRITTEN,
            path=rel,
            sha256=sha256_bytes(plan.theirs or b""),
            status="restored",
        )
        run.journal.file_failed(run.run_id, rel, "verification failed")
    record_verification_failure(plan.result, verdict, run.patch_set.saved(rel))


def check_written(
    guard: PathGuard, rel: str, base: bytes, ours: bytes, installed: bytes
) -> VerifyResult:
    """The gate for one written file (``rel`` under the guard's root): the bytes now on disk
    must keep every line the user added to ``base`` in ``ours`` and none they deleted; when
    they do not, the installed version is put back (the saved copy is never touched). Reads
    the disk, not the merge result, so anything that changed the file after the write is
    caught too."""
    verdict = verify_preserved(base, ours, _read_file(guard.root / rel) or b"")
    if not verdict.preserved:
        guard.write(rel, installed)
    return verdict


def record_verification_failure(result: FileResult, verdict: VerifyResult, patch: Path) -> None:
    result.status = FAILED
    result.missing = list(verdict.missing)
    result.readded = list(verdict.readded)
    parts = []
    if verdict.missing:
        parts.append(f"{len(verdict.missing)} of your line(s) missing")
    if verdict.readded:
        parts.append(f"{len(verdict.readded)} line(s) you deleted came back")
    result.reason = (
        f"verification failed ({', '.join(parts)}): the installed version is back, "
        f"your copy stays at {patch}"
    )


# --- saving patches --------------------------------------------------------------------------


@dataclass
class SaveReport:
    folder: Path | None  # None when nothing differed from the manifest
    files: list[str]
    absent: list[str]  # listed in the manifest, gone from the target: nothing to save
    checked: int

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": str(self.folder) if self.folder else None,
            "files": self.files,
            "absent": self.absent,
            "checked": self.checked,
        }


def save_patches(target: Path, manifest: Path, patches: Path) -> SaveReport:
    """Copy every file whose sha256 differs from the install manifest into a NEW folder
    ``<patches>/<timestamp>/`` with ``backup-meta.json``; earlier folders are never touched.

    The folder is filled under a dot-name and renamed when complete, so an interrupted save
    never looks like a backup to ``reapply``.
    """
    _check_dir(target, "target")
    installed = _read_manifest(manifest)
    check_own_paths(target, _profile(target))
    _prepare_runtime(target)
    with ProjectLock(target / _profile(target).lock_file, command="reapply --save"):
        changed, absent = _customised(target, installed["files"])
        if not changed:
            return SaveReport(None, [], absent, len(installed["files"]))
        folder = _write_save(target, patches, installed, changed)
    return SaveReport(folder, changed, absent, len(installed["files"]))


def _read_manifest(manifest: Path) -> dict[str, Any]:
    try:
        data = json_loads(read_bytes(manifest))
    except OSError as error:
        raise TetherError(f"cannot read the manifest {manifest}: {error.strerror}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise TetherError(f"{manifest}: not valid JSON ({error})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise TetherError(f"{manifest}: expected {{'files': {{path: sha256}}}}")
    for rel in files:
        problem = project_path_problem(rel)
        if problem:
            raise TetherError(f"{manifest}: {rel!r}: {problem}")
    assert isinstance(data, dict)
    return data


def _customised(target: Path, files: Mapping[str, str]) -> tuple[list[str], list[str]]:
    changed: list[str] = []
    absent: list[str] = []
    for rel in sorted(files):
        path = target / rel
        if not path.is_file():
            absent.append(rel)
        elif sha256_file(path) != files[rel].lower():
            changed.append(rel)
    return changed, absent


def _write_save(target: Path, patches: Path, installed: dict[str, Any], changed: list[str]) -> Path:
    name = new_run_id()
    folder = patches / name
    staging = patches / f"{_PARTIAL_PREFIX}{name}"
    saved = PathGuard(staging)
    for rel in changed:
        source = target / rel
        saved.write(rel, read_bytes(source), mode=file_mode(source))
    meta = {
        "backed_up_at": _iso_now(),
        "from_version": installed.get("version"),
        "from_manifest_timestamp": installed.get("timestamp"),
        "files": changed,
        "pristine_hashes": {rel: installed["files"][rel].lower() for rel in changed},
    }
    saved.write(META_FILE, (json.dumps(meta, indent=2) + "\n").encode())
    if folder.exists():  # new_run_id() carries random bits; this is only a last guard
        raise TetherError(f"{folder} already exists; not writing over an earlier backup")
    os.rename(staging, folder)
    return folder


# --- small helpers ---------------------------------------------------------------------------


def _profile(target: Path) -> Profile:
    return detect_profile(target) or NATIVE


def _prepare_runtime(target: Path) -> None:
    """The lock and journal live in the target's tether folder; keep them out of git."""
    if detect_profile(target) is None:
        write_ignore_rules(Project(target, NATIVE))


def _check_dir(path: Path, role: str) -> None:
    if not path.is_dir():
        raise TetherError(f"{path}: the {role} is not a directory")


def _read_file(path: Path) -> bytes | None:
    try:
        return read_regular(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except NotRegularFileError:
        raise TetherError(f"{path}: {NOT_REGULAR}") from None


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
