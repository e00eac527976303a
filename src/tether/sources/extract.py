"""Safe tar extraction: the only way a release archive (tarball or git tag) reaches disk.

Every member is checked before a single byte is written, and the tree is built in a
temporary sibling of ``dest`` that is renamed into place only when complete, so a refused
or failed archive leaves nothing behind. We write members ourselves instead of trusting
``tarfile``'s extraction filters: the rules below are ours and tested as ours.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from tether import progress
from tether.errors import TetherError
from tether.fsio import cannot_read, write_all
from tether.pathrules import relpath_problem
from tether.sources import limits
from tether.sources.limits import DEFAULT_MAX_ENTRY_BYTES
from tether.sources.members import (
    FILE,
    FOLDER,
    HARDLINK,
    SYMLINK,
    Member,
    clean_name,
    escape_problem,
    member_problem,
    refusal,
)

_CHUNK = 1 << 20
# O_EXCL|O_NOFOLLOW: never write through something already at that path.
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class _Planned:
    """One member to write and the tree-relative path it goes to."""

    member: tarfile.TarInfo
    path: str
    link_target: str = ""  # tree-relative path of a hardlink's target


def extract_tar_safely(
    archive: Path | BinaryIO,
    dest: Path,
    max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
    *,
    strip_single_top: bool = True,
    label: str | None = None,
) -> None:
    """Extract the tar ``archive`` (a path or a seekable binary file) into ``dest``.

    ``dest`` must not exist. With ``strip_single_top`` an archive whose members all sit in
    one top-level folder is extracted from inside that folder. ``label`` names the archive
    in error messages. Refuses (TetherError naming archive and member, nothing written):
    absolute names, ``..``, unsafe names, members inside a symlink, symlinks or hardlinks
    reaching outside the tree, devices, fifos and other special entries, duplicate names,
    entries larger than ``max_entry_bytes``, and an archive whose files together would
    unpack past the release bound (or that holds more entries than it allows; both in
    ``limits``, read now).
    """
    name = label or (str(archive) if isinstance(archive, Path) else "archive")
    if dest.exists() or dest.is_symlink():
        raise FileExistsError(f"extraction target already exists: {dest}")
    whole = _WholeBound.now()
    with _open_tar(archive, name) as tar:
        members, names = _read_members(tar, name, max_entry_bytes, whole)
        plan = _plan(members, names, name, strip_single_top)
        dest.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        # Plain strings, not Path objects, from here: a release may hold many thousands
        # of members, and building a Path per member cost more than writing a small file.
        root = str(work)
        made = {root}  # folders known to exist: one mkdir per folder, not per member
        try:
            for planned in progress.tracked("extracting", plan, unit="entries"):
                _write(tar, planned, root, name, max_entry_bytes, made)
            os.chmod(work, 0o755)
            os.rename(work, dest)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def _open_tar(archive: Path | BinaryIO, name: str) -> tarfile.TarFile:
    try:
        if isinstance(archive, Path):
            return tarfile.open(archive, mode="r:*")
        return tarfile.open(fileobj=archive, mode="r:*")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise TetherError(cannot_read(name, error, "the archive")) from None


@dataclass(frozen=True)
class _WholeBound:
    """What the whole archive may unpack to: bytes of every file together (a hard link
    counts as the copy it becomes) and entries."""

    max_bytes: int
    max_entries: int

    @classmethod
    def now(cls) -> _WholeBound:
        return cls(
            limits.byte_limit(limits.RELEASE_BYTES, limits.DEFAULT_RELEASE_BYTES),
            limits.count_limit(limits.RELEASE_ENTRIES, limits.DEFAULT_RELEASE_ENTRIES),
        )


def _read_members(
    tar: tarfile.TarFile, name: str, max_entry_bytes: int, whole: _WholeBound
) -> tuple[list[tarfile.TarInfo], list[str]]:
    """Every member's header and clean name, in order, each checked on its own as it is
    read (``_check_member``). The sizes are added up as the headers are read, so an archive
    that would unpack past the bound is refused while it is being listed: before anything is
    written, and before a listing of millions of headers fills the memory."""
    members: list[tarfile.TarInfo] = []
    names: list[str] = []
    sizes: dict[str, int] = {}
    total = 0
    try:
        while (member := tar.next()) is not None:
            names.append(_check_member(member, name, max_entry_bytes))
            members.append(member)
            if len(members) > whole.max_entries:
                raise TetherError(
                    f"refusing archive {name}: it holds more than {whole.max_entries:,} "
                    f"entries ({limits.RELEASE_ENTRIES} sets it)"
                )
            if member.isreg():
                sizes[member.name] = member.size
                total += member.size
            elif member.islnk():
                total += sizes.get(member.linkname, 0)
            if total > whole.max_bytes:
                raise TetherError(
                    f"refusing archive {name}: its files unpack to more than "
                    f"{limits.shown_bytes(whole.max_bytes)} ({limits.RELEASE_BYTES} sets it)"
                )
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise TetherError(cannot_read(name, error, "the archive")) from None
    return members, names


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _refuse(archive: str, member: str, why: str) -> TetherError:
    return refusal(f"archive {archive}", member, why)


def _plan(
    members: list[tarfile.TarInfo], names: list[str], archive: str, strip: bool
) -> list[_Planned]:
    """Check the members against each other and decide where each goes; raise on the first
    refused one."""
    prefix = _single_top(members, names) if strip else ""
    kinds: dict[str, str] = {}  # tree path -> "dir" | "file" | "symlink"
    symlinks: dict[str, str] = {}  # tree path -> link target
    plan: list[_Planned] = []
    for member, full in zip(members, names, strict=True):
        if full == "." or full == prefix.rstrip("/"):
            continue  # the root folder itself (or the stripped top folder)
        path = full.removeprefix(prefix)
        previous = kinds.get(path)
        if previous is not None and not (previous == "dir" and member.isdir()):
            raise _refuse(archive, member.name, "appears more than once")
        link_target = ""
        if member.issym():
            symlinks[path] = member.linkname
        elif member.islnk():
            # Order matters here: tar can only link to a file it has already written.
            link_target = _check_hardlink(member, prefix, kinds, archive)
        kinds[path] = "dir" if member.isdir() else "symlink" if member.issym() else "file"
        plan.append(_Planned(member, path, link_target))
    for planned in plan:
        _check_ancestors(planned, kinds, archive)
        escape = escape_problem(planned.path, symlinks) if planned.path in symlinks else None
        if escape is not None:
            raise _refuse(archive, planned.member.name, escape)
    return plan


def _check_member(member: tarfile.TarInfo, archive: str, max_entry_bytes: int) -> str:
    """The rules that hold for a member on its own (``members``); returns its clean name."""
    link = member.linkname if member.issym() else ""
    problem = member_problem(Member(member.name, _kind(member), member.size, link), max_entry_bytes)
    if problem is not None:
        raise _refuse(archive, member.name, problem)
    return clean_name(member.name)


def _kind(member: tarfile.TarInfo) -> str:
    if member.isreg():
        return FILE
    if member.isdir():
        return FOLDER
    if member.issym():
        return SYMLINK
    if member.islnk():
        return HARDLINK
    if member.ischr():
        return "character device"
    if member.isblk():
        return "block device"
    if member.isfifo():
        return "fifo"
    return f"special entry (type {member.type!r})"


def _single_top(members: list[tarfile.TarInfo], names: list[str]) -> str:
    """``"top/"`` when every member lives in the one folder ``top``, else ``""``."""
    tops = {name.split("/", 1)[0] for name in names if name != "."}
    if len(tops) != 1:
        return ""
    top = tops.pop()
    nested = any(name.startswith(top + "/") for name in names)
    # A lone top-level file or link is content, not a wrapper folder.
    top_is_dir = all(m.isdir() for m, name in zip(members, names, strict=True) if name == top)
    return top + "/" if nested and top_is_dir else ""


def _check_ancestors(planned: _Planned, kinds: dict[str, str], archive: str) -> None:
    """Refuse writing through a symlink (it could lead anywhere) or below a file."""
    parts = planned.path.split("/")
    for depth in range(1, len(parts)):
        ancestor = "/".join(parts[:depth])
        kind = kinds.get(ancestor, "dir")
        if kind != "dir":
            raise _refuse(archive, planned.member.name, f"lies inside the {kind} {ancestor!r}")


def _check_hardlink(
    member: tarfile.TarInfo, prefix: str, kinds: dict[str, str], archive: str
) -> str:
    """A hardlink must name a regular file that came earlier in the same tree."""
    raw = member.linkname
    target = clean_name(raw)
    if raw.startswith("/") or relpath_problem(target) is not None:
        raise _refuse(archive, member.name, f"is a hardlink pointing outside the tree ({raw!r})")
    if prefix and not target.startswith(prefix):
        raise _refuse(archive, member.name, f"is a hardlink pointing outside the tree ({raw!r})")
    target = target.removeprefix(prefix)
    if kinds.get(target) != "file":
        raise _refuse(archive, member.name, f"is a hardlink to {raw!r}, not an earlier file")
    return target


def _write(
    tar: tarfile.TarFile,
    planned: _Planned,
    root: str,
    archive: str,
    max_entry_bytes: int,
    made: set[str],
) -> None:
    member, target = planned.member, os.path.join(root, planned.path)
    try:
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        if member.isdir():
            os.makedirs(target, exist_ok=True)
            os.chmod(target, 0o755)
            made.add(target)
        elif member.issym():
            os.symlink(member.linkname, target)
        elif member.islnk():
            # A copy, not a link: editing one cached file must never change another.
            copied = os.path.join(root, planned.link_target)
            shutil.copy2(copied, target, follow_symlinks=False)
        else:
            _write_file(tar, member, target, archive, max_entry_bytes)
    except (OSError, tarfile.TarError, EOFError, zlib.error) as error:
        raise TetherError(
            f"cannot extract {member.name!r} from {archive}: {_reason(error)}"
        ) from None


def _write_file(
    tar: tarfile.TarFile, member: tarfile.TarInfo, target: str, archive: str, limit: int
) -> None:
    if member.size <= min(_CHUNK, limit) and not member.issparse() and tar.fileobj is not None:
        _write_small_file(tar.fileobj, member, target)
        return
    source = tar.extractfile(member)
    if source is None:
        raise _refuse(archive, member.name, "has no readable content")
    written = 0
    descriptor = os.open(target, _NEW_FILE, 0o600)
    try:
        with source:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > limit:
                    raise _refuse(archive, member.name, f"is over the limit of {limit} bytes")
                write_all(descriptor, chunk)
        os.fchmod(descriptor, _installed_mode(member))
    finally:
        os.close(descriptor)


class _ArchiveBytes(Protocol):
    """What a tar file reads its members' bytes from (``TarFile.fileobj``)."""

    def seek(self, offset: int, /) -> object: ...
    def read(self, size: int, /) -> bytes: ...


def _write_small_file(archive: _ArchiveBytes, member: tarfile.TarInfo, target: str) -> None:
    """A file of at most one chunk, read in one piece from where its data starts in the
    archive: what ``extractfile`` would read, without building a reader per member (most
    members of a release are small, and that reader cost as much as writing the file)."""
    archive.seek(member.offset_data)
    data = archive.read(member.size)
    if len(data) != member.size:
        raise tarfile.ReadError("unexpected end of data")  # tarfile's words for it
    descriptor = os.open(target, _NEW_FILE, 0o600)
    try:
        write_all(descriptor, data)
        os.fchmod(descriptor, _installed_mode(member))
    finally:
        os.close(descriptor)


def _installed_mode(member: tarfile.TarInfo) -> int:
    """Keep only the executable bit: no setuid, no world-writable files in a release tree."""
    return 0o755 if member.mode & 0o111 else 0o644
