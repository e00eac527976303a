"""``tether init``: install a release into a project and record the baseline."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether import progress
from tether.errors import TetherError
from tether.flows.fetch import fetch_release
from tether.flows.project import (
    Project,
    Release,
    absolute_source,
    profile_for_new_install,
    recorded_source,
    utc_now,
    write_ignore_rules,
)
from tether.flows.safety import PathGuard, check_own_paths
from tether.flows.version_markers import write_version_markers
from tether.fsio import (
    NOT_REGULAR,
    NotRegularFileError,
    atomic_write,
    cannot_read,
    file_mode,
    flush_to_disk,
    read_bytes,
    sha256_bytes,
)
from tether.state.config import CONFIG_FILE, render_own
from tether.state.lock import ProjectLock
from tether.state.statcache import StatCache, stat_key
from tether.state.store import ConflictRecord, FileRecord, State, save_state

if TYPE_CHECKING:
    from tether.flows.gbrain_record import RecordedInstall
    from tether.flows.notes import Note


@dataclass
class InitReport:
    profile: str
    upstream: str
    source: str
    version: str
    added: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    customised: list[str] = field(default_factory=list)
    sentinels_seeded: list[str] = field(default_factory=list)
    # What the source said (which tag was used), how a template was rendered.
    notes: list[Note] = field(default_factory=list)
    # Shipped files an existing project does not have (it deleted them, as far as tether
    # can tell): not written, recorded as the adopter's (taken over), unless restored.
    left_deleted: list[str] = field(default_factory=list)
    config: str | None = None  # where ``left_deleted`` was recorded, when it was

    def to_json(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "upstream": self.upstream,
            "source": self.source,
            "version": self.version,
            "added": self.added,
            "identical": self.identical,
            "customised": self.customised,
            "sentinels_seeded": self.sentinels_seeded,
            "left_deleted": self.left_deleted,
            "config": self.config,
            "notes": [],  # facts, worded by report/ into the document
        }


def _existing_install(project: Project) -> str | None:
    if project.state_path.exists():
        return str(project.state_path)
    marker = project.profile.version_file
    if marker and project.path(marker).exists():
        return str(project.path(marker))
    return None


@dataclass(frozen=True)
class _Found:
    """What stands at a managed path before the install: its bytes and its ``lstat``."""

    data: bytes
    info: os.stat_result
    read_from_ns: int  # when the read began: what the stat cache may vouch for


def _classify_targets(
    project: Project, release: Release, guard: PathGuard
) -> dict[str, _Found | None]:
    """What the adopter has at every managed path (None: nothing); refuses unusable paths
    (and a sentinel whose folder runs out of the project) up front so a failed init writes
    nothing."""
    current: dict[str, _Found | None] = {}
    root = str(project.root)
    for rel in progress.tracked("reading the project", release.manifest.managed_paths()):
        target = os.path.join(root, rel)
        problem, info = guard.inspect(rel)
        if problem:
            raise TetherError(f"{target}: {problem}; nothing was installed")
        try:
            began = time.time_ns()
            current[rel] = None if info is None else _Found(read_bytes(target), info, began)
        except NotRegularFileError:  # swapped for a FIFO or device since the guard looked
            raise TetherError(f"{target}: {NOT_REGULAR}; nothing was installed") from None
        except OSError as error:
            raise TetherError(cannot_read(target, error)) from None
    for rel in release.manifest.sentinels:
        problem, info = guard.inspect(rel)
        if problem and info is None:  # a folder on the way; a sentinel present stays as it is
            raise TetherError(f"{project.path(rel)}: {problem}; nothing was installed")
    return current


def _first_missing_ancestor(path: Path) -> Path | None:
    missing = None
    while not os.path.lexists(path):
        missing = path
        path = path.parent
    return missing


@dataclass
class _Undo:
    """What a failed init takes back: the entries it created (the topmost new one of each
    path it writes) and the bytes of the bookkeeping files it rewrites. Noted before the
    writes, so nothing that was there before is ever removed."""

    created: list[Path] = field(default_factory=list)
    saved: dict[Path, bytes] = field(default_factory=dict)
    _noted: set[str] = field(default_factory=set)  # ``created`` as a set: 50,000 paths
    _new_folders: dict[str, bool] = field(default_factory=dict)  # folder -> taken back whole

    def creates(self, path: str | Path) -> None:
        if self._is_new(os.path.dirname(path)):
            return  # under a folder this init makes: taken back whole
        if not os.path.lexists(path):
            self.made(Path(path))

    def _is_new(self, folder: str) -> bool:
        """Whether ``folder`` is taken back whole: it, or a folder above it, is new. Judged
        once per folder (top down), not once per file in it."""
        known = self._new_folders.get(folder)
        if known is None:
            parent = os.path.dirname(folder)
            known = folder in self._noted or (parent != folder and self._is_new(parent))
            if not known and not os.path.lexists(folder):
                self.made(Path(folder))
                known = True
            self._new_folders[folder] = known
        return known

    def made(self, path: Path) -> None:
        """``path`` did not exist before this init: a failure removes it."""
        key = str(path)
        if key not in self._noted:
            self._noted.add(key)
            self.created.append(path)

    def rewrites(self, path: Path) -> None:
        if path.is_file() and not path.is_symlink():
            self.saved[path] = read_bytes(path)
        else:
            self.creates(path)

    def undo(self) -> None:
        # Best effort: the error that stopped init is the one the user must see.
        for path in reversed(self.created):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
        for path, data in self.saved.items():
            with contextlib.suppress(OSError):
                atomic_write(path, data)


def _new_project_dir(root: Path) -> bool:
    """Whether init must create the project folder; refuses a folder it may not create:
    only the project folder itself is made, never a missing parent."""
    if os.path.lexists(root):
        if not root.is_dir():
            raise TetherError(f"{root}: not a directory")
        return False
    parent = root.parent
    if not parent.is_dir():
        problem = "not a directory" if os.path.lexists(parent) else "no such directory"
        raise TetherError(
            f"{parent}: {problem}; tether init creates the project folder, not its parents"
        )
    return True


def _note_install_writes(
    undo: _Undo,
    project: Project,
    release: Release,
    current: dict[str, _Found | None],
    left_alone: list[str],
) -> None:
    profile = project.profile
    root = str(project.root)
    skipped = set(left_alone)
    missing = [rel for rel, found in current.items() if found is None and rel not in skipped]
    if left_alone:
        undo.rewrites(project.path(CONFIG_FILE))
    for rel in (*missing, *release.manifest.sentinels):
        undo.creates(os.path.join(root, rel))
    from tether.flows.gbrain_record import record_path

    records: tuple[str | None, ...] = (
        profile.state_file,
        profile.ignore_file,
        profile.manifest_copy,
        profile.version_file,
        record_path(project, release.manifest),
    )
    for record in records:
        if record:
            undo.rewrites(project.path(record))
    undo.rewrites(project.stat_cache().path)


# Asked on a terminal: restore these shipped files the existing project does not have?
RestoreQuestion = Callable[[list[str]], bool]


def install_release(
    root: Path,
    source: str,
    version: str | None,
    profile_name: str | None = None,
    force: bool = False,
    exclude: tuple[str, ...] = (),
    *,
    restore_missing: bool = False,
    ask_restore: RestoreQuestion | None = None,
) -> InitReport:
    """Install a release into ``root``. A failed init leaves the filesystem as it found it.
    ``exclude``: paths left out of a release that carries no manifest (and of every later
    one: the patterns are recorded in the manifest tether writes for it). ``version`` None:
    the newest the source offers, as ``update`` picks it.

    Into an existing project (one that already has some of the release's files), the
    shipped files it lacks are taken as deleted by the project: written only with
    ``restore_missing`` or when ``ask_restore`` (a person at a terminal) says so, else left
    absent and recorded as taken over (docs/init.md, "Files an existing project lacks")."""
    root = Path(os.path.abspath(root))
    create_root = _new_project_dir(root)
    project = Project(root, profile_for_new_install(root, profile_name))
    check_own_paths(project.root, project.profile)
    _refuse_existing(project, force)
    source_as_recorded = recorded_source(root, source)
    source = absolute_source(source)
    undo = _Undo()
    lock = ProjectLock(project.path(project.profile.lock_file), command="init")
    try:
        if create_root:
            undo.creates(root)
            _make_project_dir(root)
        lock_path = project.path(project.profile.lock_file)
        made_for_lock = _first_missing_ancestor(lock_path)
        # The project's one writer from here on: a concurrent update (or a second init)
        # is refused instead of interleaving its writes with these. Taken back on failure
        # only once held: a refused init must not remove the holder's folder.
        lock.acquire()
        if made_for_lock is not None:
            undo.made(made_for_lock)
        _refuse_existing(project, force)  # another init may have finished before the lock
        undo.creates(project.root / project.profile.cache_dir)
        if version is None and not project.profile.source_is_tree:
            version = _newest_version(project, source)
        release = fetch_release(project, source, version or "", exclude)
        _refuse_exclude_with_manifest(release, exclude)
        guard = PathGuard(project.root)
        current = _classify_targets(project, release, guard)
        left_alone = _left_deleted(project, current, restore_missing, ask_restore)
        still_open = _open_conflicts(project) if force else {}
        recorded = _recorded_install(project, release, force)
        if recorded is not None:
            _note_adopt_writes(undo, project)
            return _adopt_recorded_install(project, release, recorded, guard, source_as_recorded)
        _note_install_writes(undo, project, release, current, left_alone)
        return _write_install(
            project, release, current, guard, still_open, source_as_recorded, left_alone
        )
    except OSError as error:
        undo.undo()
        where = error.filename2 or error.filename or project.root
        raise TetherError(f"{where}: {error.strerror}; nothing was installed") from None
    except BaseException:
        undo.undo()
        raise
    finally:
        lock.release()


def _newest_version(project: Project, source: str) -> str:
    """The newest release the source offers (prereleases left out), as ``update`` picks."""
    from tether.sources import open_source

    versions = open_source(source, project.releases_cache).available_versions()
    if not versions:
        raise TetherError(f"source {source} offers no versions; name one with --to")
    return versions[-1]


def _left_deleted(
    project: Project,
    current: dict[str, _Found | None],
    restore_missing: bool,
    ask_restore: RestoreQuestion | None,
) -> list[str]:
    """The shipped files init leaves absent: those the adopter took over already, and in an
    existing project (it has some of the release's files) those it lacks, unless they are
    to be restored."""
    yours = project.yours
    missing = sorted(rel for rel, found in current.items() if found is None)
    taken = [rel for rel in missing if rel in yours]
    lacking = [rel for rel in missing if rel not in yours]
    existing = any(found is not None for found in current.values())
    if not existing or not lacking or restore_missing:
        return taken
    if ask_restore is not None and ask_restore(lacking):
        return taken
    return sorted(taken + lacking)


def _refuse_existing(project: Project, force: bool) -> None:
    existing = _existing_install(project)
    if existing and not force:
        raise TetherError(
            f"{existing}: a release is already installed here; use 'tether update', "
            "or --force to reinstall"
        )


def _refuse_exclude_with_manifest(release: Release, exclude: tuple[str, ...]) -> None:
    """--exclude shapes a release without a manifest; a publisher's manifest already says
    which paths it ships, and a pattern silently ignored would mislead."""
    from tether.model.implicit import IMPLICIT_KEY

    if exclude and not release.manifest.extra.get(IMPLICIT_KEY):
        raise TetherError(
            f"release {release.version} ({release.source}) has a manifest, which names the "
            "files it ships: --exclude applies only to a release without one"
        )


def _make_project_dir(root: Path) -> None:
    try:
        root.mkdir()
    except OSError as error:
        raise TetherError(f"{root}: cannot create the project folder ({error.strerror})") from None


def _open_conflicts(project: Project) -> dict[str, ConflictRecord]:
    """The conflict records of the install being replaced whose markers or patch files are
    still there: a reinstall keeps them, so ``check`` goes on reporting the conflict until a
    person resolves it. A state that cannot be read has none to keep (``--force`` is also
    how a broken install is replaced)."""
    from tether.flows.conflicts import conflict_is_unresolved

    try:
        state = project.load_state()
    except TetherError:
        return {}
    if state is None:
        return {}
    return {
        path: record
        for path, record in state.conflicts.items()
        if conflict_is_unresolved(project, path, record)
    }


def _write_install(
    project: Project,
    release: Release,
    current: dict[str, _Found | None],
    guard: PathGuard,
    open_conflicts: dict[str, ConflictRecord],
    source_as_recorded: str,
    left_alone: list[str],
) -> InitReport:
    manifest = release.manifest
    report = InitReport(project.profile.name, manifest.name, release.source, release.version)
    report.notes = list(release.notes)
    report.left_deleted = [rel for rel in left_alone if rel not in project.yours]
    skipped = set(left_alone)
    files: dict[str, FileRecord] = {}
    written: list[str | Path] = []
    stats = project.stat_cache()
    with project.pristine.pack_writer() as pristine:
        for rel, found in progress.tracked("installing", current.items()):
            theirs, digest = release.verified(rel)  # hashed once: check, pack and record
            mode = release.mode_of(rel)
            pristine.add(theirs, digest)
            files[rel] = FileRecord(manifest.files[rel], digest, mode)
            if rel in skipped:
                continue  # recorded as installed, left absent: the adopter's
            if found is None:
                # Made durable all at once below, as update's group commit does: one sync
                # for the phase instead of an fsync of every file and folder.
                target = guard.put(rel, theirs, mode=mode, durable=False)
                written.append(target)
                _remember_written(stats, rel, target, len(theirs), digest)
                report.added.append(rel)
            else:
                mine = sha256_bytes(found.data)
                kept = report.identical if mine == digest else report.customised
                kept.append(rel)
                _remember_read(stats, rel, project.path(rel), found, mine)
        pristine.add(release.manifest_bytes)
    written += _seed_sentinels(project, release, report, guard)
    written += write_version_markers(project, release, durable=False)
    written += write_ignore_rules(project, durable=False)
    if report.left_deleted:
        written.append(_record_left_deleted(project, report.left_deleted))
        report.config = CONFIG_FILE
    # Everything the state will vouch for is on disk before the state says it is installed.
    flush_to_disk(written)
    stats.save()
    now = utc_now()
    state = State(
        profile=project.profile.name,
        upstream=manifest.name,
        source=source_as_recorded,
        version=release.version,
        manifest_sha256=release.manifest_sha256,
        files=files,
        sentinels=list(manifest.sentinels),
        customised_at_install=list(report.customised),
        conflicts=open_conflicts,
        installed_at=now,
        updated_at=now,
    )
    save_state(project.state_path, state)
    return report


def _recorded_install(project: Project, release: Release, force: bool) -> RecordedInstall | None:
    """gbrain's own record of an install it made without tether, when the host has one
    (a reinstall with --force starts from the recipe instead)."""
    if not project.profile.source_record or force:
        return None
    from tether.flows.gbrain_record import read_recorded_install

    return read_recorded_install(project, release.manifest)


def _note_adopt_writes(undo: _Undo, project: Project) -> None:
    """Adopting gbrain's record writes only tether's own files."""
    for record in (project.profile.state_file, project.profile.ignore_file):
        if record:
            undo.rewrites(project.path(record))
    undo.rewrites(project.stat_cache().path)


def _adopt_recorded_install(
    project: Project,
    release: Release,
    recorded: RecordedInstall,
    guard: PathGuard,
    source_as_recorded: str,
) -> InitReport:
    """A host gbrain installed without tether: its record is the baseline. Each file it
    lists is recorded with the hash and mode gbrain recorded (the bytes it copied); nothing
    is copied and gbrain's record is left as it is, so the next refresh classifies every
    file as gbrain's own refresh would. Where the recipe still has the recorded bytes they
    go into the pristine cache; the others are known by their hash only (a host edit of
    such a file cannot be line-merged: the refresh leaves it for keep-mine or take-theirs)."""
    from tether.model.manifest import FileClass

    manifest = release.manifest
    version = recorded.version or release.version
    report = InitReport(project.profile.name, manifest.name, release.source, version)
    from tether.flows.notes import GbrainRecordAdopted

    report.notes = [
        *release.notes,
        GbrainRecordAdopted(recorded.path, version, len(recorded.files)),
    ]
    files: dict[str, FileRecord] = {}
    with project.pristine.pack_writer() as pristine:
        for rel, (digest, mode) in sorted(recorded.files.items()):
            files[rel] = FileRecord(manifest.files.get(rel, FileClass.SHARED), digest, mode)
            if rel in manifest.files:
                theirs, latest = release.verified(rel)
                if latest == digest:
                    pristine.add(theirs, digest)
            problem, info = guard.inspect(rel)
            if problem or info is None:
                continue
            try:
                mine = sha256_bytes(read_bytes(project.path(rel)))
            except OSError:
                continue
            (report.identical if mine == digest else report.customised).append(rel)
        pristine.add(release.manifest_bytes)
    flush_to_disk(write_ignore_rules(project, durable=False))
    now = utc_now()
    state = State(
        profile=project.profile.name,
        upstream=manifest.name,
        source=source_as_recorded,
        version=version,
        manifest_sha256=release.manifest_sha256,
        files=files,
        customised_at_install=list(report.customised),
        installed_at=now,
        updated_at=now,
    )
    save_state(project.state_path, state)
    return report


def _record_left_deleted(project: Project, paths: list[str]) -> Path:
    """The shipped files the project lacks, recorded as the adopter's (``tether own``): no
    update re-creates them and no status reports them as drift."""
    target = project.path(CONFIG_FILE)
    try:
        existing: bytes | None = read_bytes(target)
    except FileNotFoundError:
        existing = None
    try:
        data = render_own(existing, sorted({*project.yours, *paths}))
    except ValueError as error:
        raise TetherError(f"{target}: not valid TOML ({error}); nothing was installed") from None
    return PathGuard(project.root).write(CONFIG_FILE, data, durable=False)


def _remember_written(stats: StatCache, rel: str, target: str, size: int, digest: str) -> None:
    """A file init just wrote goes into the stat cache for the next status, from its
    ``lstat`` taken right after the write (the bytes are the ones just hashed): a file
    another program changed meanwhile no longer has the size written, or is not a file."""
    try:
        info = os.lstat(target)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_size == size:
        stats.record(rel, info, digest)


def _remember_read(stats: StatCache, rel: str, target: Path, found: _Found, digest: str) -> None:
    """A file init left as it found it goes into the stat cache with the hash of the bytes
    read, when it is still the file that was read (same size, times and inode), as of the
    moment the read began (init may record it long after)."""
    try:
        info = os.lstat(target)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and stat_key(info) == stat_key(found.info):
        stats.record(rel, info, digest, found.read_from_ns)


def _profile_records(project: Project) -> set[str]:
    records = {project.profile.manifest_copy or project.profile.manifest_path}
    if project.profile.version_file:
        records.add(project.profile.version_file)
    return records


def _seed_sentinels(
    project: Project, release: Release, report: InitReport, guard: PathGuard
) -> list[Path]:
    """A sentinel is the adopter's from the first day: seeded when absent, never rewritten.
    Written without a sync of its own; returns the files written, for the caller's."""
    written: list[Path] = []
    for rel in release.manifest.sentinels:
        if rel in _profile_records(project):
            continue
        source = release.file_path(rel)
        problem, info = guard.inspect(rel)
        if source.is_file() and problem is None and info is None:
            data = read_bytes(source)
            written.append(guard.write(rel, data, mode=file_mode(source), durable=False))
            report.sentinels_seeded.append(rel)
    return written
