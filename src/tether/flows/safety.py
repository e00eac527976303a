"""Checks that a project path can be read and written without leaving the project."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.fsio import NOT_REGULAR


class PathGuard:
    """``unsafe_target`` for many paths of one project: each folder is judged once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self._folders: dict[str, str | None] = {}  # folder -> problem, "" when missing

    def _folder_problem(self, folder: str) -> str | None:
        """None: a real folder inside the project; "": missing; else the problem."""
        if folder in self._folders:
            return self._folders[folder]
        parent, _, _ = folder.rpartition("/")
        problem = self._folder_problem(parent) if parent else None
        if problem is None:
            problem = self._judge_folder(folder)
        self._folders[folder] = problem
        return problem

    def _judge_folder(self, folder: str) -> str | None:
        path = os.path.join(self.root, folder)
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return ""
        if stat.S_ISLNK(info.st_mode):
            resolved = os.path.realpath(path)
            inside = resolved == self.real_root or resolved.startswith(self.real_root + os.sep)
            if not inside:
                return f"{folder} is a link pointing outside the project"
            return (
                None
                if os.path.isdir(resolved)
                else f"{folder} is a file, but the release needs a folder there"
            )
        if not stat.S_ISDIR(info.st_mode):
            return f"{folder} is a file, but the release needs a folder there"
        return None

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
            info = os.lstat(os.path.join(self.root, rel))
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        if stat.S_ISLNK(info.st_mode):
            return "is a symbolic link; tether does not write through links", info
        if stat.S_ISDIR(info.st_mode):
            return "is a directory, but the release ships a file there", info
        if not stat.S_ISREG(info.st_mode):
            # Reading a FIFO would wait forever, a device would never end.
            return NOT_REGULAR, info
        return None, info


def unsafe_target(root: Path, rel: str) -> str | None:
    """Why tether must not write ``root/rel``, or None when it may.

    Refuses a path whose folders run through a link leading out of the project, a path
    that is itself a link, a folder where a file belongs, and a file where a folder belongs.
    """
    return PathGuard(root).problem(rel)
