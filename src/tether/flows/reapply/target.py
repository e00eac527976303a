"""The folder reapply works on: its profile, its runtime files, and reading what is there."""

from __future__ import annotations

from pathlib import Path

from tether.errors import TetherError
from tether.flows.project import Project, write_ignore_rules
from tether.fsio import NOT_REGULAR, NotRegularFileError, read_regular
from tether.profiles import NATIVE, Profile, detect_profile

BACKUP_FOLDER = "tether-reapply-backup"  # created next to the patches folder
JOURNAL_SUFFIX = ".reapply"  # beside the profile's journal, so update never reads our runs


def profile_of(target: Path) -> Profile:
    return detect_profile(target) or NATIVE


def journal_path(target: Path) -> Path:
    return target / (profile_of(target).journal_file + JOURNAL_SUFFIX)


def backup_root(patches: Path) -> Path:
    """``<patches>/../tether-reapply-backup``: beside the patches, outside the installed tree."""
    return patches.absolute().parent / BACKUP_FOLDER


def prepare_runtime(target: Path) -> None:
    """The lock and journal live in the target's tether folder; keep them out of git."""
    if detect_profile(target) is None:
        write_ignore_rules(Project(target, NATIVE))


def check_dir(path: Path, role: str) -> None:
    if not path.is_dir():
        raise TetherError(f"{path}: the {role} is not a directory")


# Where GSD's installer writes the installed release's version, first found wins.
VERSION_FILES = ("get-shit-done/VERSION", "VERSION")


def installed_version(target: Path) -> str | None:
    """The installed release's version from its VERSION file; None without one."""
    for rel in VERSION_FILES:
        data = read_file(target / rel)
        if data is not None:
            return data.decode("utf-8", errors="replace").strip() or None
    return None


def read_file(path: Path) -> bytes | None:
    """The file's bytes; None when there is none. A FIFO, socket or device is an error."""
    try:
        return read_regular(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except NotRegularFileError:
        raise TetherError(f"{path}: {NOT_REGULAR}") from None
