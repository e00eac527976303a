"""Checks that a project path can be read and written without leaving the project."""

from __future__ import annotations

import os
from pathlib import Path


def unsafe_target(root: Path, rel: str) -> str | None:
    """Why tether must not write ``root/rel``, or None when it may.

    Refuses a path whose folders run through a link leading out of the project, a path
    that is itself a link, a folder where a file belongs, and a file where a folder belongs.
    """
    real_root = Path(os.path.realpath(root))
    current = root
    parts = rel.split("/")
    for index, part in enumerate(parts):
        current = current / part
        is_last = index == len(parts) - 1
        if current.is_symlink():
            if is_last:
                return "is a symbolic link; tether does not write through links"
            resolved = Path(os.path.realpath(current))
            if resolved != real_root and real_root not in resolved.parents:
                return f"{'/'.join(parts[: index + 1])} is a link pointing outside the project"
        if not current.exists():
            return None
        if is_last and current.is_dir():
            return "is a directory, but the release ships a file there"
        if not is_last and not current.is_dir():
            return f"{'/'.join(parts[: index + 1])} is a file, but the release needs a folder there"
    return None
