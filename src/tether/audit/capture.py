"""The scope capture: the content digest a member's review started on.

``audit scope --member M`` captures the member's digest once per round, in
``<key base>.<branch>.<member>.scope.json`` beside the sidecars; running it again returns
the first capture instead of adopting whatever the files hold now. ``audit clear``
compares the capture with the digest at clearing time, so a review that read one content
can never clear another. The capture is released when the round ends: a marker or a
refusal was written, or ``clear`` refused with "review scope superseded".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from tether import git
from tether.audit.sidecar import check_member_name
from tether.audit.workspace import Layout, audit_dir, branch_slug
from tether.errors import TetherError
from tether.fsio import atomic_write, cannot_read, read_bytes
from tether.parselimits import json_loads

# git refuses a branch named HEAD, so a detached checkout's key cannot be a branch's.
DETACHED: Final = "HEAD"


@dataclass(frozen=True)
class Capture:
    digest: str
    head: str  # the commit the review started on
    captured_at: str
    path: Path


def capture_path(root: Path, layout: Layout, key_base: str, member: str) -> Path:
    branch = git.current_branch(root) or DETACHED
    name = f"{key_base}.{branch_slug(branch)}.{check_member_name(member)}.scope.json"
    return root / layout.audit_dir / name


def read_capture(path: Path) -> Capture | None:
    """The capture at ``path``; None when there is none. An unreadable one is an error:
    reading it as absent would let the next ``scope`` adopt content nobody reviewed."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(path, error, "the review scope capture")) from None
    try:
        record = json_loads(data.decode("utf-8"))
        return Capture(str(record["digest"]), str(record["head"]), str(record["captured_at"]), path)
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise TetherError(
            f"{path}: cannot read the review scope capture; remove it to start a new review"
        ) from None


def capture(root: Path, layout: Layout, path: Path, digest: str, head: str) -> Capture:
    """The round's capture: the one already taken, else ``digest`` recorded now."""
    found = read_capture(path)
    if found is not None:
        return found
    captured_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    record = {"schema_version": 1, "digest": digest, "head": head, "captured_at": captured_at}
    audit_dir(root, layout)
    atomic_write(path, (json.dumps(record, indent=2) + "\n").encode())
    return Capture(digest, head, captured_at, path)


def release(path: Path) -> None:
    """End the round: the next ``scope`` captures afresh."""
    path.unlink(missing_ok=True)
