"""Shared helpers for the lifecycle tests: folders built once per test process and copied."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

# Folders already built in this test process, by what they hold, each kept untouched under
# the folder the area's conftest.py names (None: build every one).
_kept_under: Path | None = None
_built: dict[str, Path] = {}


def built_once(key: str, dest: Path, build: Callable[[Path], None]) -> Path:
    """``dest`` as ``build(dest)`` makes it: built the first time ``key`` is asked for in
    this process, copied from that first build afterwards. ``build`` must make the same
    folder whenever it runs, and nothing in it may name where it lies."""
    kept = _built.get(key)
    if kept is not None:
        shutil.copytree(kept, dest, symlinks=True)
        return dest
    build(dest)
    if _kept_under is not None:
        kept = _built[key] = _kept_under / str(len(_built))
        shutil.copytree(dest, kept, symlinks=True)
    return dest


def keep_builds(folder: Path | None) -> None:
    """Keep what ``built_once`` builds under ``folder`` from now on (None: stop, and forget
    those kept)."""
    global _kept_under
    _kept_under = folder
    _built.clear()
