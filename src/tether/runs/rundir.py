"""The run folder of a multi-project run (fleet update, deps apply): one log per project and
the full summary.

``$XDG_STATE_HOME/tether/runs/<run-id>/`` (else ``~/.local/state/tether/runs/<run-id>/``).
What a person or a conversation reads is a bounded digest; the whole story stays here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tether.fsio import atomic_write, read_bytes
from tether.state.journal import new_run_id

TAIL_LINES = 40
# The project-name part of a run-folder file name: with the number in front and ".json" or
# ".log" behind, well under the 255 bytes a file name may have.
NAME_PART = 80


def state_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path.home() / ".local" / "state"


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME`` (when absolute), else ``~/.cache``: what may be thrown away."""
    env = os.environ if env is None else env
    configured = env.get("XDG_CACHE_HOME", "")
    if configured and os.path.isabs(configured):
        return Path(configured)
    return Path.home() / ".cache"


class RunFolder:
    def __init__(self, root: Path, run_id: str) -> None:
        self.root = root
        self.run_id = run_id

    @classmethod
    def create(cls, env: Mapping[str, str] | None = None) -> RunFolder:
        folder = cls.deferred(env)
        folder.root.mkdir(parents=True)
        return folder

    @classmethod
    def deferred(cls, env: Mapping[str, str] | None = None) -> RunFolder:
        """A run folder named now and made on its first write: a run that turns out to have
        nothing to do leaves no folder behind."""
        run_id = new_run_id()
        return cls(state_home(env) / "tether" / "runs" / run_id, run_id)

    def log_path(self, index: int, count: int, name: str) -> Path:
        """``03-name.log``: numbered in registry order, the name made safe for a file and
        short enough for any file system (a long name keeps its start and a digest of the
        whole, so two long names never share a log)."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "project"
        if len(safe) > NAME_PART:
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
            safe = f"{safe[: NAME_PART - 13]}-{digest}"
        return self.root / f"{index + 1:0{len(str(count))}d}-{safe}.log"

    def write(self, path: Path, lines: Sequence[str]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8", errors="replace"))

    def keep_summary(self, document: Mapping[str, Any], text: str) -> None:
        """The whole summary stays here, the same document ``--json`` prints (version
        first); what is printed as text is the bounded digest."""
        from tether.report.documents import versioned

        self.write(self.root / "summary.json", [json.dumps(versioned(document), indent=2)])
        self.write(self.root / "summary.md", [text])

    def to_json(self) -> dict[str, str]:
        return {"run_id": self.run_id, "run_dir": str(self.root)}


def tail(path: Path, count: int = TAIL_LINES) -> list[str]:
    try:
        text = read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[-count:]
