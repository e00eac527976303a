"""How much tether takes in from the outside in one go: the bounds of a network read and of
an unpacked release, and how long a program tether starts may run. Each has a documented
default (docs/security.md, "Bounded inputs"; docs/cli.md) and an environment variable that
changes it for one run; nothing a release or a project holds can. Values are read when a
bound is applied, so one process can run with several."""

from __future__ import annotations

import os
import re

from tether.errors import TetherError
from tether.valueclass import valueclass

# The total time of one network read (connecting, the answer's headers and its body): an
# answer that trickles in must end, not only one that stops.
NETWORK_SECONDS = "TETHER_LIMIT_NETWORK_SECONDS"
DEFAULT_NETWORK_SECONDS = 600.0
# The bytes a release download may hold (streamed to disk, checked as it grows).
DOWNLOAD_BYTES = "TETHER_LIMIT_DOWNLOAD_BYTES"
DEFAULT_DOWNLOAD_BYTES = 1 << 30
# The bytes a registry answer may hold (read into memory, then parsed as JSON).
ANSWER_BYTES = "TETHER_LIMIT_ANSWER_BYTES"
DEFAULT_ANSWER_BYTES = 128 << 20
# The bytes every file of an archive together may unpack to, and the entries it may hold
# (a small compressed archive can expand to gigabytes, or to millions of empty files).
RELEASE_BYTES = "TETHER_LIMIT_RELEASE_BYTES"
DEFAULT_RELEASE_BYTES = 1 << 30
RELEASE_ENTRIES = "TETHER_LIMIT_RELEASE_ENTRIES"
DEFAULT_RELEASE_ENTRIES = 200_000
# The bytes one file of a release may hold, unpacked or in a release folder (a parameter of
# every source, which tests lower; no variable changes it).
DEFAULT_MAX_ENTRY_BYTES = 512 << 20


@valueclass(frozen=True)
class TimeLimit:
    """How long one run of a kind of program may take before its process group is stopped
    (``tether.process``): ``default`` seconds unless ``variable`` says otherwise."""

    variable: str
    default: float

    def seconds(self) -> float:
        """TetherError naming the variable when it holds no number of seconds above 0."""
        return seconds_limit(self.variable, self.default)


# Each install or lock command ``deps apply`` runs (npm/pnpm/yarn/bun install, uv/poetry/pdm
# lock): a cold install of a large monorepo takes minutes, a hung one forever.
INSTALL_TIME = TimeLimit("TETHER_LIMIT_INSTALL_SECONDS", 1800.0)
# Each override command ``deps apply`` runs for a project.
OVERRIDE_TIME = TimeLimit("TETHER_LIMIT_OVERRIDE_SECONDS", 600.0)
# Each region's regeneration program (update, refresh).
REGEN_TIME = TimeLimit("TETHER_LIMIT_REGEN_SECONDS", 120.0)
# Each migration a release declares: it moves data, it may take a while.
MIGRATION_TIME = TimeLimit("TETHER_LIMIT_MIGRATION_SECONDS", 600.0)
# shellcheck on one file, and shfmt parsing one file (audit).
SHELLCHECK_TIME = TimeLimit("TETHER_LIMIT_SHELLCHECK_SECONDS", 300.0)
SHFMT_TIME = TimeLimit("TETHER_LIMIT_SHFMT_SECONDS", 120.0)

# Compiled by re (and kept in its cache) only when a size variable is set.
_SIZE = r"(\d+)\s*([KMG]i?B?|B)?"
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_limit(name: str, default: int) -> int:
    """The size the variable ``name`` sets (``1048576``, ``512K``, ``64M``, ``2G``: powers of
    1024), else ``default``; TetherError naming the variable for anything else."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    match = re.fullmatch(_SIZE, text, re.IGNORECASE)
    if match is None or int(match.group(1)) == 0:
        raise TetherError(
            f"{name}={text!r}: not a size (a whole number of bytes above 0, or with K, M or G)"
        )
    unit = (match.group(2) or "")[:1].lower()
    return int(match.group(1)) * _UNITS[unit]


def count_limit(name: str, default: int) -> int:
    """The whole number above 0 the variable ``name`` sets, else ``default``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) == 0:
        raise TetherError(f"{name}={text!r}: not a whole number above 0")
    return int(text)


def seconds_limit(name: str, default: float) -> float:
    """The seconds the variable ``name`` sets (``30``, ``0.5``), else ``default``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise TetherError(f"{name}={text!r}: not a number of seconds above 0")
    return value


def shown_bytes(count: int) -> str:
    """``count`` bytes in words: exact, with a round figure beside it when there is one."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count:,} bytes ({count // size} {unit})"
    return f"{count:,} bytes"
