"""The summary sections ``fleet update`` and ``deps apply`` report the same way, as JSON data.

A failed project names its step, exit code, error, log and the log's last lines; a missing
project its name and folder (``project_dir``); the isolation section what was asked and
where each project's changes are. Each command adds its own fields beside these; the words
are rendered elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tether.runs.rundir import tail
from tether.runs.selection import Member

Doc = dict[str, Any]


def member_json(member: Member) -> Doc:
    return {"name": member.name, "project_dir": str(member.path)}


def path_missing(missing: Sequence[Member]) -> list[Doc]:
    """Registered projects whose folder is gone (skipped, never an abort)."""
    return [member_json(m) for m in missing]


def failure(step: str | None, exit_code: int | None, error: str, log: Path) -> Doc:
    """Where and why one project failed; the log's last lines let a reader start at once."""
    return {
        "step": step,
        "exit_code": exit_code,
        "error": error,
        "log": str(log),
        "log_tail": tail(log),
    }


def isolation(requested: str, used: Iterable[tuple[str, Mapping[str, Any]]]) -> Doc:
    """``used``: each changed project's name and its ``Isolation.to_json()``."""
    return {"requested": requested, "projects": [{"name": n, **where} for n, where in used]}
