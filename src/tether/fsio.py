"""Filesystem edge: atomic writes, hashing, tree walks. Everything that touches bytes on disk
outside the state folder goes through here so the rules (fsync, mode kept) live in one place."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

CHUNK = 1 << 20
CHUNK_MAX = 1 << 30  # the most one read returns; larger files are read in chunks


def _current_umask(status_file: str = "/proc/self/status") -> int:
    """The process's umask, read without changing it where the kernel shows it (Linux 4.7+):
    os.umask can only be read by setting it, and for that moment another thread of a program
    that imports tether would create its files with mode 0666."""
    if sys.platform == "linux":
        try:
            with open(status_file, "rb") as status:
                for line in status:
                    if line.startswith(b"Umask:"):
                        return int(line.split()[1], 8)
        except (OSError, ValueError, IndexError):
            pass  # no /proc, or a line this reader does not know: the old way below
    mask = os.umask(0)
    os.umask(mask)
    return mask


# A new file gets the mode any other program would give it, not mkstemp's 0600.
NEW_FILE_MODE = 0o666 & ~_current_umask()


# hashlib is imported by the two functions that hash: loading OpenSSL costs ~2 ms, and a
# status whose stat cache vouches for every file, and knows its manifest, hashes nothing.


def sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def sha256_fd(fd: int) -> str:
    """sha256 of what the open descriptor ``fd`` holds from its offset to its end, read in
    chunks straight from the descriptor: no buffered file object (whose making asks the
    file whether it is a terminal and where it stands), which a file read once to hash it
    does not need."""
    import hashlib

    digest = hashlib.sha256()
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


NOT_REGULAR = "is not a regular file (a FIFO, socket or device)"


class NotRegularFileError(OSError):
    """The path is a FIFO, socket or device: reading it could wait forever or never end."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(errno.EINVAL, "not a regular file", os.fspath(path))

    def __str__(self) -> str:
        return "not a regular file"  # callers name the path in their own words


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read descriptor of ``path`` and its ``fstat``; anything but a regular file refused.

    O_NONBLOCK keeps the open itself from waiting for a FIFO's writer when the path was
    swapped after its caller's ``stat``; the ``fstat`` then refuses it unread."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | _NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a socket, or a device without a driver
            raise NotRegularFileError(path) from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """A whole file's bytes from a bare descriptor: a third of the cost of
    ``Path.read_bytes`` for the small files tether reads by the thousand. Raises what
    ``Path.read_bytes`` raises (FileNotFoundError, IsADirectoryError, ...), and
    NotRegularFileError for a FIFO, socket or device, which it never reads."""
    return read_with_stat(path)[0]


def read_with_stat(path: str | os.PathLike[str]) -> tuple[bytes, os.stat_result]:
    """``read_bytes``, and the ``fstat`` of the file it read (links followed, as by
    ``os.stat``): the mode of a file read anyway costs no second look."""
    fd, info = open_regular(path)
    try:
        expected = info.st_size
        data = os.read(fd, min(expected + 1, CHUNK_MAX))
        if len(data) == expected < CHUNK_MAX or not data:
            return data, info  # the size fstat gave, one read: its end (or an empty file)
        # Fewer bytes than the size (a FUSE file system may read short before the end, and
        # POSIX allows it; or the file was cut meanwhile), or more (it grew): on to the
        # read that returns nothing.
        chunks = [data]
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
        return b"".join(chunks), info
    finally:
        os.close(fd)


def read_head(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit`` bytes from the start of a regular file (a FIFO, socket or device
    is refused unread, as by ``read_bytes``)."""
    fd, _ = open_regular(path)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """``read_bytes`` for a path nothing has looked at yet: a FIFO, socket or device is
    refused (NotRegularFileError) from its ``stat``, without being opened."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise NotRegularFileError(path)
    return read_bytes(path)


def cannot_read(path: str | os.PathLike[str], error: BaseException, what: str = "") -> str:
    """The one wording of a file or folder that could not be read, for an error message:
    ``PATH: cannot read [WHAT] (REASON)``."""
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return f"{os.fspath(path)}: cannot read{' ' + what if what else ''} ({reason})"


def read_named_file(
    path: str | os.PathLike[str], what: str, max_bytes: int | None = None, purpose: str = ""
) -> bytes:
    """A file a person named (a command's file argument: ``verify --baseline``, the merge
    driver's ``%O``...), read by the one rule of ``read_bytes``: a FIFO, socket or device is
    refused unread, never waited on. Any failure is a TetherError in the words of
    ``cannot_read`` (``PATH: cannot read WHAT (REASON)``). A file larger than ``max_bytes``
    is refused before it is read, naming ``purpose`` (what the bound is for)."""
    from tether.errors import TetherError

    try:
        fd, info = open_regular(path)
    except OSError as error:
        raise TetherError(cannot_read(path, error, what)) from None
    try:
        if max_bytes is not None and info.st_size > max_bytes:
            raise TetherError(
                f"{os.fspath(path)}: {what} is {info.st_size:,} bytes, over the "
                f"{max_bytes:,} bytes {purpose}"
            )
        chunks = []
        while chunk := os.read(fd, CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as error:
        raise TetherError(cannot_read(path, error, what)) from None
    finally:
        os.close(fd)


def is_special_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (links followed) is a FIFO, socket or device; False when absent."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def sha256_file(path: str | os.PathLike[str]) -> str:
    fd, _ = open_regular(path)
    try:
        return sha256_fd(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the open file ``fd`` (one ``os.write`` may take only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def atomic_write(
    path: str | os.PathLike[str], data: bytes, mode: int | None = None, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` so a crash leaves either the old or the new bytes.

    The temp file lives in the same directory (same filesystem, so rename is atomic),
    is fsync'd before the rename, and the directory is fsync'd after it. The mode of
    an existing file is kept unless ``mode`` is given. ``durable=False`` skips the fsyncs
    (still atomic): for files that can be rebuilt, such as cache entries, and for writes
    whose caller makes a whole batch durable at once (``flush_to_disk``).
    """
    path = os.fspath(path)
    parent, name = os.path.split(path)
    parent = parent or os.curdir
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = NEW_FILE_MODE
    tmp_name = os.path.join(parent, f".{name}.{os.urandom(4).hex()}{TEMP_SUFFIX}")
    try:
        fd = os.open(tmp_name, _TEMP_FLAGS, 0o600)
    except (FileNotFoundError, NotADirectoryError):
        # The folder is made only when missing: no look before every write of a batch.
        # A file standing where it belongs fails here as before (FileExistsError).
        os.makedirs(parent, exist_ok=True)
        fd = os.open(tmp_name, _TEMP_FLAGS, 0o600)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, path)
    except BaseException:
        try:  # noqa: SIM105  (contextlib costs a status ~0.7 ms to import)
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    if durable:
        fsync_dir(parent)


TEMP_SUFFIX = ".tether-tmp"


def remove_stale_temps(path: Path) -> None:
    """Remove temp files an interrupted ``atomic_write`` to ``path`` left behind."""
    remove_stale_temps_beside([path])


def remove_stale_temps_beside(paths: Iterable[Path]) -> None:
    """Remove the temp files interrupted ``atomic_write`` calls to any of ``paths`` left
    behind (``.<name>.<anything>.tether-tmp`` beside each). Each folder is listed once,
    however many of the paths it holds: a resumed run of thousands of files in one folder
    would otherwise list it, and match every name in it, once per file."""
    names_in: dict[Path, set[str]] = {}
    for path in paths:
        names_in.setdefault(path.parent, set()).add(path.name)
    for folder, names in names_in.items():
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.startswith(".") and entry.endswith(TEMP_SUFFIX) and _temp_of(entry, names):
                try:  # noqa: SIM105  (one that cannot go stays, as the rest still go)
                    os.unlink(folder / entry)
                except OSError:
                    pass


def _temp_of(entry: str, names: set[str]) -> bool:
    """Whether ``entry`` is ``.<name>.<anything>.tether-tmp`` for one of ``names``: the name
    ends at one of the dots between the leading one and the suffix."""
    inner = entry[1 : -len(TEMP_SUFFIX)]
    dot = inner.find(".")
    while dot != -1:
        if inner[:dot] in names:
            return True
        dot = inner.find(".", dot + 1)
    return False


def remove_stale_temps_under(root: Path) -> None:
    for leftover in root.rglob(f"*{TEMP_SUFFIX}"):
        leftover.unlink(missing_ok=True)


def file_mode(path: str | os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def walk_files(root: Path) -> Iterator[str]:
    """Relative POSIX paths of the regular files and links under ``root``, sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            found.append(rel.replace(os.sep, "/"))
    yield from sorted(found)


def flush_to_disk(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Make files written with ``durable=False`` (and their renames) durable at once.

    On Linux one ``syncfs`` per file system holding them waits for everything written there,
    far cheaper than an fsync per file and folder, and (unlike ``sync``) never for what other
    programs are writing to other disks; elsewhere each file and each distinct folder is
    fsync'd.

    An error the sync reports (a failed writeback: EIO, ENOSPC) is raised, as an fsync of
    each file raised it: the caller must not record as written what never reached the disk.
    """
    if not paths:
        return
    if sys.platform.startswith("linux"):
        if not _sync_file_systems({os.path.dirname(os.fspath(p)) or "." for p in paths}):
            os.sync()
        return
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # gone: a removed path's entry is made durable by its folder's fsync
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for folder in {os.path.dirname(p) for p in paths}:
        fsync_dir(folder)


# What syncfs answers where it is not available to this process (an old kernel, a seccomp
# filter): the caller falls back to sync. Any other failure is the writeback's own.
_SYNCFS_UNAVAILABLE = frozenset({errno.ENOSYS, errno.EPERM})


def _sync_file_systems(folders: set[str]) -> bool:
    """``syncfs`` once for each file system one of ``folders`` lies on; False when the call
    is not available, so the caller falls back to ``sync``. A failed writeback it reports is
    raised (``sync`` would hide it)."""
    import ctypes

    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    one_folder_per_device: dict[int, str] = {}
    for folder in folders:
        try:  # noqa: SIM105  (contextlib costs a status ~0.7 ms to import)
            one_folder_per_device.setdefault(os.stat(folder).st_dev, folder)
        except OSError:
            pass
    for folder in one_folder_per_device.values():
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return False
        try:
            if syncfs(fd) != 0:
                failure = ctypes.get_errno()
                if failure in _SYNCFS_UNAVAILABLE or not failure:
                    return False
                raise OSError(failure, os.strerror(failure), folder)
        finally:
            os.close(fd)
    return bool(one_folder_per_device)
