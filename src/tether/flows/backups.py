"""The one backup rule: before tether replaces a file it saves the bytes there, and the first
backup a run made of a file is never written over.

Every writer backs up through :func:`back_up`: the transactional executor (``update``,
``refresh`` and ``reapply`` run through ``flows.apply.execute_plan``) and the regeneration
runner (``flows.regen``). The first backup holds the adopter's original, so a later backup
of different bytes goes beside it as ``<name>.<n>``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tether.errors import TetherError
from tether.flows.safety import PathGuard, open_without_links
from tether.fsio import file_mode, read_bytes, read_with_stat, sha256_bytes, sha256_file
from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.flows.project import Project, Release

KEEP_BACKUP_RUNS = 5  # update keeps the newest backup folders of this many earlier runs
# The order the runs' backups began in, one run id a line, in the project's cache folder (not
# among the backups, where every folder is a run): run ids begin with the clock's time, and a
# clock set back would make the newest run look the oldest to pruning.
RUN_ORDER_FILE = "backup-runs"
_RUN_ORDER_MAX = 1 << 20  # the file is rewritten short at every pruning; past this, garbage


@valueclass(frozen=True)
class BackupFolder:
    """Where one run keeps the bytes it replaces: ``guard`` writes there, the backup of a
    path is ``prefix + path`` under the guard's root, and ``run_dir`` is the folder a person
    is shown. The journal records a backup guard-relative, or as an absolute path when the
    folder may lie outside the project (``absolute_labels``)."""

    guard: PathGuard
    prefix: str
    run_dir: Path
    absolute_labels: bool = False

    def name(self, rel: str) -> str:
        return self.prefix + rel

    def path(self, name: str) -> Path:
        return self.guard.root / name

    def label(self, name: str) -> str:
        return str(self.path(name)) if self.absolute_labels else name


@valueclass(frozen=True)
class Saved:
    """One backup: its name under the guard's root and the sha256 of the bytes it holds."""

    name: str
    sha256: str
    written: bool  # False: a copy an interrupted attempt wrote already held these bytes
    linked: bool = False  # made as a second name for the source's bytes
    # The first backup is still a second name for the source's bytes, which changed since it
    # was recorded: edited in place after a run was killed between its link and its write,
    # so the first backup changed with it and the bytes it recorded are gone.
    first_edited: bool = False


def back_up(
    guard: PathGuard,
    name: str,
    source: Path,
    *,
    first: str | None = None,
    may_link: bool = False,
    durable: bool = True,
) -> Saved | None:
    """Save the bytes at ``source`` as ``name`` under ``guard``'s root, never over the first
    backup. ``first`` is the sha256 of the run's first backup of this file, when its journal
    recorded one. None: nothing to do (the first backup already holds these bytes).

    A regular file already at ``name`` with these bytes, and no first backup recorded, was
    written just before a crash that preceded its record: it is used as it is. Anything else
    at ``name`` is never replaced: the bytes go to the first free ``name.<n>`` (n >= 2).
    ``may_link``: only for a caller that never changes a file in place (see ``link_backup``).
    """
    if may_link and first is None:
        linked = _link_first(guard, name, source)
        if linked is not None:
            return linked
    data = read_bytes(source)
    digest = sha256_bytes(data)
    if first == digest:
        return None
    if first is None and _holds(guard.root / name, digest):
        return Saved(name, digest, written=False)
    # Only where a resumed run finds the file changed since its first backup: never on the
    # common path, which reads each file once.
    first_edited = first is not None and same_file(guard.root / name, source)
    if first is not None or os.path.lexists(guard.root / name):
        name = _free_name(guard.root, name)
    if may_link and link_backup(guard, source, name, digest):
        return Saved(name, digest, written=True, linked=True, first_edited=first_edited)
    guard.write(name, data, mode=file_mode(source), durable=durable)
    return Saved(name, digest, written=True, first_edited=first_edited)


def unshare_backup(
    folder: BackupFolder, name: str, *, data: bytes | None = None, durable: bool = True
) -> Path | None:
    """A backup still sharing its bytes with another name (a link the write did not rename
    over) gets its own copy (``data``: its bytes, when the caller read them already), so a
    later edit in place of that name cannot reach it. Where it was copied, else None (not
    shared, gone, or not writable)."""
    target = folder.path(name)
    try:
        info = os.lstat(target)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            folder.guard.write(name, read_bytes(target) if data is None else data, durable=durable)
            return target
    except OSError:
        pass
    return None


def same_file(one: Path, other: Path) -> bool:
    """Two names of one file's bytes (never through a link)."""
    try:
        a, b = os.lstat(one), os.lstat(other)
    except OSError:
        return False
    return stat.S_ISREG(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _link_first(guard: PathGuard, name: str, source: Path) -> Saved | None:
    """The usual backup of a run's first write of a file: nothing stands at ``name`` yet, so
    the backup is a second name for the file's bytes, and the one read that hashes them goes
    through that name, after the link: the digest is of the bytes the backup holds, read
    once (``link_backup`` reads before the link and again after it). None: anything else
    (something at ``name``, a file with other names, a link, another filesystem, a file
    swapped while being linked), which ``back_up`` handles as before."""
    linked_at = _link_plain_file(guard, source, name)
    if linked_at is None:
        return None
    target, info = linked_at
    try:
        data, linked = read_with_stat(target)
        if (linked.st_dev, linked.st_ino) == (info.st_dev, info.st_ino):
            return Saved(name, sha256_bytes(data), written=True, linked=True)
    except OSError:
        pass
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)  # not the file looked at: back it up as before
    return None


def _link_plain_file(
    guard: PathGuard, source: Path, name: str
) -> tuple[str, os.stat_result] | None:
    """``name`` made a second name of ``source``'s bytes, when ``source`` is a plain file
    with no other name and nothing stands at ``name``: where the link is, and ``source`` as
    it was looked at before the link. None: not linked (anything else, another filesystem,
    links not allowed, a name already there)."""
    try:
        info = os.lstat(source)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return None
        target, existing = guard.ready(name)
        if existing is not None:
            return None
        os.link(source, target, follow_symlinks=False)
    except OSError:
        return None
    return target, info


def _free_name(root: Path, name: str) -> str:
    n = 2
    while os.path.lexists(root / f"{name}.{n}"):
        n += 1
    return f"{name}.{n}"


def _holds(path: Path, digest: str) -> bool:
    """A regular file (never a link) holding bytes with ``digest``."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode) and sha256_file(path) == digest
    except OSError:
        return False


def link_backup(guard: PathGuard, source: Path, backup: str, digest: str) -> bool:
    """Back up a file as a second name for its bytes, a directory entry instead of a copy.

    Safe because tether never changes a file in place: the write that follows renames new
    bytes over the path, and the backup keeps the old ones. Only a plain file that has no
    other name is linked (a link elsewhere could be edited in place later), and only when
    the linked bytes still hash as read. False: the caller copies instead."""
    linked_at = _link_plain_file(guard, source, backup)
    if linked_at is None:
        return False
    target = linked_at[0]
    try:
        if sha256_file(Path(target)) == digest:
            return True
    except OSError:
        pass
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)  # changed between the read and the link: copy the read
    return False


def _run_order_rel(project: Project) -> str:
    return f"{project.profile.cache_dir}/{RUN_ORDER_FILE}"


def record_run_order(project: Project, run_id: str) -> None:
    """Note that ``run_id``'s backups begin now, after those of every run noted before it.
    One append, never through a link; a run noted twice (a resumed run) keeps its first
    place. Housekeeping: a failure here never stops a run (its folder then counts as older
    than every noted one)."""
    try:
        fd = open_without_links(
            project.root, _run_order_rel(project), os.O_WRONLY | os.O_APPEND | os.O_CREAT
        )
    except OSError:
        return
    try:
        os.write(fd, f"{run_id}\n".encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def _recorded_order(project: Project) -> list[str]:
    """The run ids noted by ``record_run_order``, each once, first place kept."""
    try:
        fd = open_without_links(project.root, _run_order_rel(project), os.O_RDONLY)
    except OSError:
        return []
    try:
        data = os.read(fd, _RUN_ORDER_MAX)
    except OSError:
        return []
    finally:
        os.close(fd)
    return list(dict.fromkeys(data.decode("ascii", "replace").split()))


def _oldest_first(names: list[str], recorded: list[str]) -> list[str]:
    """Run folders oldest first: those no run noted (made before the order was kept, or
    whose note was lost) by name, which is their start time, then the noted ones in the
    order they began, whatever the clock said then."""
    place = {run_id: index for index, run_id in enumerate(recorded)}
    return sorted(names, key=lambda name: (name in place, place.get(name, 0), name))


def prune_backups(project: Project, keep: int = KEEP_BACKUP_RUNS, current: str = "") -> None:
    """Remove all but the newest ``keep`` run folders, newest in the order the runs began
    (``record_run_order``), not by their names' time. Never follows a link: a backup root
    that is one is left alone, and a run folder that is one is not a run."""
    root = project.backup_root
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return
        with os.scandir(root) as entries:
            names = [
                entry.name
                for entry in entries
                if entry.is_dir(follow_symlinks=False) and entry.name != current
            ]
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise TetherError(
            f"{project.profile.backup_root}: cannot list the backups ({error.strerror})"
        ) from None
    if len(names) <= keep:
        return  # the order file is read only with runs to remove: most updates have none
    recorded = _recorded_order(project)
    runs = _oldest_first(names, recorded)
    stale = runs[: len(runs) - keep]
    import shutil  # only with runs to remove: most updates have none (docs/performance.md)

    for old in stale:
        shutil.rmtree(root / old, ignore_errors=True)  # removes links inside, never follows them
    kept = set(runs[len(runs) - keep :]) | {current}
    _rewrite_run_order(project, [run_id for run_id in recorded if run_id in kept])


def _rewrite_run_order(project: Project, run_ids: list[str]) -> None:
    """Keep the order file to the runs whose folders are left (never through a link)."""
    data = "".join(f"{run_id}\n" for run_id in run_ids).encode()
    with contextlib.suppress(OSError):
        PathGuard(project.root).write(_run_order_rel(project), data, durable=False)


def remove_empty_merge_folder(project: Project) -> None:
    """GAIA Step 4b: once an update is confirmed, a merge folder left empty (every artifact
    of an earlier run resolved and deleted) is removed; one holding anything is kept (its
    artifacts get a heads-up), and a link is never followed or removed."""
    folder = project.merge_dir
    try:
        if stat.S_ISDIR(os.lstat(folder).st_mode):
            os.rmdir(folder)  # only succeeds when empty
    except OSError:
        return


def prune_cached_releases(project: Project, latest: Release, installed: str) -> None:
    """GAIA Step 4b: once an update is confirmed, the release trees cached for its source
    other than the installed release and the one being installed are removed (they are
    fetched again when needed; the installed release's bytes are in the pristine cache
    anyway). Only trees tether fetched into its own release cache: a folder source is never
    touched, nor another source's trees, nor a link (never followed)."""
    cache = project.releases_cache
    base = latest.root.parent
    try:
        if base.parent.resolve() != cache.resolve() or base.is_symlink():
            return
        import shutil

        from tether.sources.release_cache import NOTE

        keep = {latest.version, installed}
        with os.scandir(base) as entries:
            for entry in entries:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith(".") and name not in keep:
                        shutil.rmtree(entry.path, ignore_errors=True)
                    continue
                note_of = name[1 : -len(NOTE)] if name.startswith(".") else ""
                if name.endswith(NOTE) and note_of and note_of not in keep:
                    os.unlink(entry.path)
    except OSError:
        return  # pruning is housekeeping: it never stops an update
