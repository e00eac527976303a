"""Reading a release that carries no manifest (see ``model/implicit.py``): one walk of its
regular files and its ``.tetherignore``, then the manifest tether writes for it."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import cannot_read, read_regular
from tether.model.implicit import (
    IGNORE_FILE,
    VCS_METADATA,
    ignore_file_patterns,
    implicit_manifest,
    implicit_manifest_bytes,
    upstream_name,
)
from tether.model.manifest import Manifest
from tether.pathrules import ReservedPaths


def regular_files(root: Path) -> list[str]:
    """Relative POSIX paths of the regular files under ``root``, sorted. Links are not
    followed and not listed; version-control folders are not entered."""
    found: list[str] = []
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir)) as entries:
                items = [(e.name, e.stat(follow_symlinks=False).st_mode) for e in entries]
        except OSError as error:
            raise TetherError(cannot_read(os.path.join(root, rel_dir), error, "folder")) from None
        for name, mode in items:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if stat.S_ISDIR(mode):
                if name not in VCS_METADATA:
                    pending.append(rel)
            elif stat.S_ISREG(mode):
                found.append(rel)
    return sorted(found)


def implicit_release_manifest(
    root: Path,
    version: str,
    source: str,
    reserved: ReservedPaths,
    exclude: Sequence[str] = (),
) -> tuple[Manifest, bytes]:
    """The manifest of the release at ``root`` and the bytes tether records for it."""
    ignore = root / IGNORE_FILE
    patterns: list[str] = []
    if os.path.lexists(ignore):
        try:
            patterns = ignore_file_patterns(read_regular(ignore).decode("utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            reason = error if isinstance(error, OSError) else ValueError("not UTF-8 text")
            raise TetherError(
                f"release {version} ({source}): {cannot_read(IGNORE_FILE, reason)}"
            ) from None
    origin = f"release {version} ({source})"
    manifest = implicit_manifest(
        upstream_name(source),
        version,
        regular_files(root),
        patterns,
        exclude,
        reserved,
        origin,
    )
    return manifest, implicit_manifest_bytes(manifest)
