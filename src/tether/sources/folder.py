"""A release that is a folder on disk (a shelf's version folder, a recipe folder) obeys the
same member rules as an archive (``members``) before tether reads a byte of it.

An archive is checked while it is unpacked; a folder is used where it lies, so it is
checked by one walk that looks at every entry with ``lstat`` and follows nothing: a link
leading out of the folder, a FIFO or a device (which would block or never end when read)
a file over the size limit and a file whose mode is setuid, setgid or world-writable
refuse the whole release. A hard link on disk is one more name of a file already in the
folder, so it is read as that file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import cannot_read
from tether.pathrules import relpath_problem
from tether.sources.members import (
    FILE,
    FOLDER,
    SYMLINK,
    Member,
    clean_name,
    escape_problem,
    member_problem,
    refusal,
)


def check_release_folder(root: Path, label: str, max_entry_bytes: int) -> None:
    """Refuse (TetherError naming the folder and the member) a release folder with a member
    an archive could not carry. ``root`` itself may be reached through a link."""
    container = f"release folder {label}"
    symlinks: dict[str, str] = {}
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        for member in _members(root, rel_dir, label, max_entry_bytes):
            problem = member_problem(member, max_entry_bytes)
            if problem is not None:
                raise refusal(container, member.name, problem)
            if member.kind == FOLDER:
                pending.append(member.name)
            elif member.kind == SYMLINK:
                symlinks[member.name] = member.link
    for link in sorted(symlinks):
        problem = escape_problem(link, symlinks)
        if problem is not None:
            raise refusal(container, link, problem)


def _members(root: Path, rel_dir: str, label: str, max_entry_bytes: int) -> list[Member]:
    """The entries of one folder of the release, by name, as members (links not followed),
    but for the plain files ``_plain_file`` vouches for: those pass every rule of
    ``member_problem`` and are left out, which spares a release's many files a member each."""
    found: list[Member] = []
    try:
        with os.scandir(os.path.join(root, rel_dir)) as scanner:
            for item in scanner:
                rel = f"{rel_dir}/{item.name}" if rel_dir else item.name
                info = item.stat(follow_symlinks=False)
                if not _plain_file(rel, info, max_entry_bytes):
                    found.append(_member(item.path, rel, info))
    except OSError as error:
        where = os.path.join(label, rel_dir) if rel_dir else label
        raise TetherError(cannot_read(where, error, "the release folder")) from None
    return sorted(found, key=lambda member: member.name)


def _plain_file(rel: str, info: os.stat_result, max_entry_bytes: int) -> bool:
    """A regular file ``member_problem`` finds nothing wrong with, told without making its
    member: a name neither absolute-looking nor unsafe, a size within the limit and a mode
    without the bits ``_mode_problem`` refuses. Anything else is made a member and judged
    by ``member_problem`` itself, so the refusal and its words stay the one rule's."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_size <= max_entry_bytes
        and not info.st_mode & _UNSAFE_MASK
        and not (len(rel) > 1 and rel[1] == ":")
        and clean_name(rel) == rel
        and relpath_problem(rel) is None
    )


def _member(path: str, rel: str, info: os.stat_result) -> Member:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return Member(rel, FILE, info.st_size, mode_problem=_mode_problem(mode))
    if stat.S_ISDIR(mode):
        return Member(rel, FOLDER)
    if stat.S_ISLNK(mode):
        return Member(rel, SYMLINK, link=os.readlink(path))
    return Member(rel, _special_kind(mode))


def _mode_problem(mode: int) -> str | None:
    """Why a file's mode may not be installed as it is: tether installs a release file with
    its mode, so a setuid binary would become one in the project (a setuid-root one when
    tether runs as root), and a world-writable file one any user of the machine may change.
    An archive's members lose these bits when unpacked (``extract``); a folder is read where
    it lies, so it is refused instead, naming the file."""
    bits = stat.S_IMODE(mode)
    found = [name for bit, name in _UNSAFE_BITS if bits & bit]
    if not found:
        return None
    return f"has mode {bits:04o} ({', '.join(found)}), which a release may not carry"


_UNSAFE_BITS = (
    (stat.S_ISUID, "setuid"),
    (stat.S_ISGID, "setgid"),
    (stat.S_IWOTH, "writable by every user"),
)
_UNSAFE_MASK = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH


def _special_kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return f"special entry (mode {stat.S_IFMT(mode):o})"
