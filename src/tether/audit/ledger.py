"""The re-run ledger: per member, which findings stand and which the last round closed.

``<key>.rerun.json`` beside the sidecars (the key is the sidecar's ``<base>.<branch>``, so
every member of one pull request shares the file). Each clearance or refusal rebuilds the
member's ``remaining`` from its sidecar; an entry of the previous ``remaining`` that the
new sidecar no longer names moves to ``fixed_last_round``, stamped with the commit that
closed it (a round that closes nothing keeps the previous list). A finding's identity is
(class, path, title): a line that merely moved is not a fix. The file is removed once no
member has anything remaining. Best-effort: a ledger that cannot be written never
changes a clearance.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tether.fsio import atomic_write, read_bytes
from tether.parselimits import json_loads

Identity = tuple[str, str, str]


def identity(entry: dict[str, Any]) -> Identity:
    return (
        str(entry.get("finding_class")),
        str(entry.get("path")),
        str(entry.get("title")),
    )


def ledger_path(folder: Path, key: str) -> Path:
    return folder / f"{key}.rerun.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        document = json_loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError):
        return {"schema_version": 1, "members": {}}
    if not isinstance(document, dict) or not isinstance(document.get("members"), dict):
        return {"schema_version": 1, "members": {}}
    return document


def record_round(
    path: Path, member: str, findings: list[dict[str, Any]], head: str
) -> dict[str, Any]:
    """Update the member's entry; returns it (``remaining``, ``fixed_last_round``)."""
    document = _load(path)
    previous = document["members"].get(member) or {}
    before = previous.get("remaining") if isinstance(previous, dict) else None
    now = {identity(f) for f in findings}
    fixed = [
        {**entry, "fixed_in": head}
        for entry in (before if isinstance(before, list) else [])
        if isinstance(entry, dict) and identity(entry) not in now
    ]
    earlier = previous.get("fixed_last_round") if isinstance(previous, dict) else None
    if not fixed and isinstance(earlier, list):
        fixed = earlier  # a repeated round closed nothing new: the last fix still stands
    entry = {"remaining": list(findings), "fixed_last_round": fixed}
    document["members"][member] = entry
    # Non-gating: the clearance stands whatever happens to the ledger file.
    with contextlib.suppress(OSError):
        if any(m.get("remaining") for m in document["members"].values() if isinstance(m, dict)):
            atomic_write(path, (json.dumps(document, indent=2) + "\n").encode())
        else:
            path.unlink(missing_ok=True)
    return entry
