"""The durable steps of one ``deps apply`` run, one JSON line each in its run folder.

``steps.jsonl`` says how far the run got with each project: the lock taken, the isolation
set up, the install noted as owed, each manifest written, the install finished, the owed
note cleared, the lock given back. Each line is written whole and fsync'd before the step is
treated as done, then ``crashpoint.after_append`` is called: the crash-safety tests read the
steps of an uninterrupted run and kill a rerun right after each one (``TETHER_CRASH_AFTER``),
so every boundary the run knows about is exercised, none kept by hand. The log is for people
and those tests; what a rerun needs to finish is on disk elsewhere (the manifests, the owed
installs, the isolation's branch or worktree).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from tether.runs.rundir import RunFolder
from tether.state import crashpoint

STEPS_FILE = "steps.jsonl"

LOCKED = "project-locked"
ISOLATED = "project-isolated"
OWED_NOTED = "install-owed"
FILE_WRITTEN = "manifest-written"
INSTALL_FINISHED = "install-finished"
OWED_SETTLED = "install-settled"
RELEASED = "project-released"


class StepLog:
    def __init__(self, folder: RunFolder) -> None:
        self.path = folder.root / STEPS_FILE

    def append(self, step: str, project: str, **fields: Any) -> None:
        record = {"step": step, "project": project, **fields, "at": _now()}
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        with open(self.path, "ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        crashpoint.after_append(step)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
