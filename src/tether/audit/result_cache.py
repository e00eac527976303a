"""A content-addressed cache of analyser results.

shellcheck costs about 0.3 s of CPU per script, more on big ones, so a result is kept
under the hash of everything that determines it (the file's bytes, the analyser's version
and its arguments) and an unchanged file is never checked twice. The key covers the
whole input, so the cache is shared by every checkout and never needs invalidating.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from tether.fsio import atomic_write, read_bytes
from tether.parselimits import json_loads


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tether" / "audit"


def cache_key(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


class ResultCache:
    """JSON values by key; ``directory=None`` disables it. Unreadable entries are misses."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any:
        if self.directory is None:
            return None
        try:
            return json_loads(read_bytes(self._path(key)).decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None

    def put(self, key: str, value: Any) -> None:
        if self.directory is None:
            return
        # A cache that cannot be written only costs time.
        with contextlib.suppress(OSError):
            atomic_write(self._path(key), json.dumps(value).encode())
