"""Where tether may write: the one path guard every writer goes through.

``PathGuard(root)`` judges paths relative to one root (the project, or one of tether's own
folders): a path whose folders run through a link leading out of the root, a path that is
itself a link, a folder where a file belongs and anything that is not a regular file are
refused. Its ``write``/``remove`` check, make the missing folders one at a time (never
``mkdir -p``, which would follow a link that appeared on the way) and only then touch the
disk; every writer calls them instead of ``atomic_write`` on a project path.

``check_own_paths`` refuses to run at all when tether's own folders (backups, merge
artifacts, cache, logs, journal, lock) are links or not folders.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import NEW_FILE_MODE, NOT_REGULAR, atomic_write
from tether.pathrules import relpath_problem
from tether.profiles import Profile

LINK_TARGET = "is a symbolic link; tether does not write through links"
OUTSIDE_LINK = "is a link pointing outside the project"


class UnsafePath(OSError):
    """tether refuses to write or remove this path; raised before anything was created.
    An ``OSError``, so every writer's handling of a failed write covers it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(errno.EPERM, problem, path)
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _file_problem(info: os.stat_result) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return LINK_TARGET
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, but the release ships a file there"
    if not stat.S_ISREG(info.st_mode):
        # Reading a FIFO would wait forever, a device would never end.
        return NOT_REGULAR
    return None


class PathGuard:
    """``unsafe_target`` for many paths under one root: each folder is judged once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._base = os.fspath(root)  # joined with every path judged: no Path on the way
        self.real_root = os.path.realpath(root)
        self._folders: dict[str, str | None] = {}  # folder -> problem, "" when missing
        self._root_ready = False

    def _folder_problem(self, folder: str) -> str | None:
        """None: a real folder inside the root; "": missing; else the problem."""
        if folder in self._folders:
            return self._folders[folder]
        parent, _, _ = folder.rpartition("/")
        problem = self._folder_problem(parent) if parent else None
        if problem is None:
            problem = self._judge_folder(folder)
        self._folders[folder] = problem
        return problem

    def _judge_folder(self, folder: str) -> str | None:
        path = os.path.join(self._base, folder)
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return ""
        if stat.S_ISLNK(info.st_mode):
            resolved = os.path.realpath(path)
            inside = resolved == self.real_root or resolved.startswith(self.real_root + os.sep)
            if not inside:
                return f"{folder} {OUTSIDE_LINK}"
            return (
                None
                if os.path.isdir(resolved)
                else f"{folder} is a file, but the release needs a folder there"
            )
        if not stat.S_ISDIR(info.st_mode):
            return f"{folder} is a file, but the release needs a folder there"
        return None

    def forget(self) -> None:
        """Judge every folder again from the next call on: after a program ran (a migration,
        a region program), a folder judged before may have become a link."""
        self._folders.clear()
        self._root_ready = False

    def problem(self, rel: str) -> str | None:
        return self.inspect(rel)[0]

    def inspect(self, rel: str) -> tuple[str | None, os.stat_result | None]:
        """(the problem, None when there is none; the path's ``lstat``, None when absent).
        For a plain file the ``lstat`` is its ``stat``: callers need not ask twice."""
        folder, _, _ = rel.rpartition("/")
        if folder:
            problem = self._folder_problem(folder)
            if problem == "":
                return None, None  # the folder does not exist yet: nothing in the way
            if problem:
                return problem, None
        try:
            info = os.lstat(os.path.join(self._base, rel))
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        return _file_problem(info), info

    def inspect_for_reading(self, rel: str) -> tuple[str | None, os.stat_result | None]:
        """For readers (status, check, diff): (why ``rel`` must not be read, None when it
        may be; its ``lstat``, None when absent). A file standing where a folder on the way
        belongs means the path is simply absent, and a folder at the path is no problem to a
        reader (it is not a file); a link, at the path or on the way out of the project, is
        never followed."""
        problem, info = self.inspect(rel)
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                return "is a symbolic link; tether does not read through links", info
            if stat.S_ISDIR(info.st_mode):
                return None, info  # nothing to read there, and nothing that could hang
            return problem, info
        if problem is not None and problem.endswith(OUTSIDE_LINK):
            return problem, None
        return None, None

    # --- writing ---------------------------------------------------------------------------

    def ready(self, rel: str, *, replace_link: bool = False) -> tuple[str, os.stat_result | None]:
        """Check ``rel`` for a write and make its missing folders: (its absolute path, the
        ``lstat`` of what stands there now, None when nothing does). Raises ``UnsafePath``
        before anything is created. ``replace_link``: a link at ``rel`` itself is removed
        (never followed), for putting back a file a program replaced with a link."""
        path = os.path.join(self._base, rel)
        problem = relpath_problem(rel)
        if not problem:
            folder, _, _ = rel.rpartition("/")
            problem = self._make_folder(folder) if folder else self._make_root()
        if problem:
            raise UnsafePath(path, problem)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return path, None
        if replace_link and stat.S_ISLNK(info.st_mode):
            os.unlink(path)
            return path, None
        problem = _file_problem(info)
        if problem:
            raise UnsafePath(path, problem)
        return path, info

    def write(
        self,
        rel: str,
        data: bytes,
        mode: int | None = None,
        *,
        new_mode: int | None = None,
        durable: bool = True,
        replace_link: bool = False,
    ) -> Path:
        """``atomic_write`` of ``root/rel`` once the guard allows it; the written path.
        ``mode`` None keeps an existing file's mode (a new file gets ``new_mode``, else the
        usual mode of a new file)."""
        return Path(
            self.put(rel, data, mode, new_mode=new_mode, durable=durable, replace_link=replace_link)
        )

    def put(
        self,
        rel: str,
        data: bytes,
        mode: int | None = None,
        *,
        new_mode: int | None = None,
        durable: bool = True,
        replace_link: bool = False,
    ) -> str:
        """``write``, returning the written path as a string: building a ``Path`` costs a
        loop over a release's files as much as the guard's checks do."""
        path, info = self.ready(rel, replace_link=replace_link)
        if mode is None:
            mode = stat.S_IMODE(info.st_mode) if info is not None else new_mode
        atomic_write(path, data, NEW_FILE_MODE if mode is None else mode, durable)
        return path

    def remove(self, rel: str) -> bool:
        """Remove the file at ``rel`` (a link there is removed itself, never what it points
        to); False when there is none. Raises ``UnsafePath`` for a path the guard refuses."""
        problem, info = self.inspect(rel)
        if info is not None and stat.S_ISLNK(info.st_mode):
            problem = None  # unlinking a link removes the name, never its target
        problem = relpath_problem(rel) or problem
        if problem:
            raise UnsafePath(os.path.join(self._base, rel), problem)
        if info is None:
            return False
        os.unlink(os.path.join(self._base, rel))
        return True

    def _make_root(self) -> str | None:
        if not self._root_ready:
            # The root is the project or a folder of tether's own, vouched for by the caller
            # (``check_own_paths``); only a root that does not exist yet is made.
            if not os.path.isdir(self.root):
                os.makedirs(self.root, exist_ok=True)
            self._root_ready = True
        return None

    def _make_folder(self, folder: str) -> str | None:
        """Make ``folder`` (and its missing parents) one level at a time; the problem that
        stops it, else None."""
        problem = self._folder_problem(folder)
        if problem != "":
            return problem
        parent, _, _ = folder.rpartition("/")
        problem = self._make_folder(parent) if parent else self._make_root()
        if problem:
            return problem
        try:
            os.mkdir(os.path.join(self._base, folder))
        except FileExistsError:
            # Something appeared since the folder was judged missing: judge what it is.
            problem = self._judge_folder(folder)
            if problem == "":
                problem = f"{folder} changed while tether was making it"
            self._folders[folder] = problem
            return problem
        self._folders[folder] = None
        return None


def open_without_links(root: Path, rel: str, flags: int, mode: int = NEW_FILE_MODE) -> int:
    """A file descriptor for ``root/rel``, opened without following a link anywhere on the
    way: each folder is opened relative to the one before it with ``O_NOFOLLOW`` (made
    when missing), and so is the file itself. For tether's own files (a run's logs) in
    folders a program may have replaced with a link moments earlier, even between a check
    and the open. Raises ``UnsafePath`` for a link, a file where a folder belongs, or
    anything but a regular file at ``rel``."""
    parts = rel.split("/")
    where = os.path.join(os.fspath(root), rel)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for depth, name in enumerate(parts[:-1]):
            folder_flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW
            try:
                inner = os.open(name, folder_flags, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(name, dir_fd=fd)
                inner = os.open(name, folder_flags, dir_fd=fd)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                folder = "/".join(parts[: depth + 1])
                raise UnsafePath(
                    where, f"{folder} is a symbolic link or not a folder; not written through it"
                ) from None
            os.close(fd)
            fd = inner
        try:
            opened = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=fd)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            problem = LINK_TARGET if error.errno == errno.ELOOP else NOT_REGULAR
            raise UnsafePath(where, problem) from None
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(opened).st_mode):
        os.close(opened)
        raise UnsafePath(where, NOT_REGULAR)
    return opened


def unsafe_target(root: Path, rel: str) -> str | None:
    """Why tether must not write ``root/rel``, or None when it may.

    Refuses a path whose folders run through a link leading out of the project, a path
    that is itself a link, a folder where a file belongs, and a file where a folder belongs.
    """
    return PathGuard(root).problem(rel)


# --- tether's own folders -----------------------------------------------------------------


def own_folders(profile: Profile) -> list[str]:
    """The folders tether keeps its records, backups and artifacts in, with their parents
    inside the project, parents first."""
    named = [
        profile.backup_root,
        profile.merge_dir,
        profile.cache_dir,
        profile.log_dir,
        *(os.path.dirname(f) for f in own_files(profile)),
    ]
    folders: list[str] = []
    for folder in named:
        parts = folder.split("/") if folder else []
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            if prefix not in folders:
                folders.append(prefix)
    return folders


def own_files(profile: Profile) -> list[str]:
    """The files tether writes for itself (its records and the ecosystem's markers)."""
    named = (
        profile.state_file,
        profile.lock_file,
        profile.journal_file,
        profile.ignore_file,
        profile.manifest_copy,
        profile.version_file,
        profile.source_record,
    )
    return [f for f in dict.fromkeys(named) if f]


def own_path_problem(path: Path, folder: bool) -> str | None:
    """Why tether cannot keep its own folder (or record) at ``path``: a link, or for a
    folder anything but a folder. None when it is fine or absent. (A record of the wrong
    kind is left to the code that reads it, which says so.)"""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(info.st_mode) and folder:
        return "is a symbolic link; tether keeps its own files only in plain folders"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link; tether does not write its own records through links"
    if folder and not stat.S_ISDIR(info.st_mode):
        return "is not a folder; tether keeps its own files there"
    return None


def check_own_paths(
    root: Path, profile: Profile, folders: tuple[Path, ...] = (), files: tuple[Path, ...] = ()
) -> None:
    """Refuse, before anything is written, a project whose tether folders are links or not
    folders (or whose tether records are links): one line naming the first.
    ``folders``/``files`` add places a command keeps its own things elsewhere."""
    found = _own_paths_problem(root, profile, folders, files)
    if found:
        raise TetherError(f"{found[0]}: {found[1]}; nothing was written")


def check_own_paths_after(root: Path, profile: Profile, program: str) -> None:
    """The same check after a program the release ships ran (a migration, a region
    program): one it made a link of, or replaced, stops the run there, before tether
    writes anything more; the run stays unfinished, to finish or abandon once fixed."""
    found = _own_paths_problem(root, profile)
    if found:
        raise TetherError(
            f"{found[0]}: {found[1]}, after the release's program {program} ran; the update "
            "stopped before writing anything more there (remove it, then run 'tether update' "
            "again to finish, or 'tether update --abandon')"
        )


def _own_paths_problem(
    root: Path, profile: Profile, folders: tuple[Path, ...] = (), files: tuple[Path, ...] = ()
) -> tuple[Path, str] | None:
    checks = [(root / rel, True) for rel in own_folders(profile)]
    checks += [(path, True) for path in folders]
    checks += [(root / rel, False) for rel in own_files(profile)]
    checks += [(path, False) for path in files]
    for path, is_folder in checks:
        problem = own_path_problem(path, is_folder)
        if problem:
            return path, problem
    return None
