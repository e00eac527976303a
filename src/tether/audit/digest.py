"""The content digest a clearance is keyed on: committed bytes, never the working tree.

sha256 over a fixed prefix and, for every remit or machinery file in HEAD's tree in
byte order of its path, the path, its mode, its length and its bytes, each field ended
by NUL. A commit that touches none of those files (an empty commit, a README edit)
leaves the digest as it was; any edit to one of them, its mode or its presence rotates it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tether import git
from tether.audit.roster import Remit
from tether.audit.workspace import require_head

DIGEST_PREFIX: Final = b"tether-audit-digest/v1\0"


@dataclass(frozen=True)
class ContentDigest:
    member: str | None
    head: str
    digest: str
    paths: tuple[str, ...]


def _path_key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def digest_entries(entries: list[tuple[str, str, bytes]]) -> str:
    """sha256 of (path, mode, bytes) records in byte order of path."""
    hasher = hashlib.sha256(DIGEST_PREFIX)
    for path, mode, data in sorted(entries, key=lambda entry: _path_key(entry[0])):
        hasher.update(_path_key(path) + b"\0" + mode.encode() + b"\0")
        hasher.update(str(len(data)).encode() + b"\0" + data)
    return hasher.hexdigest()


def content_digest(root: Path, remit: Remit, head: str | None = None) -> ContentDigest:
    """The member's digest of the commit ``head`` (by default HEAD's)."""
    head = head or require_head(root)
    chosen = [
        (mode, kind, oid, path)
        for mode, kind, oid, path in git.ls_tree_entries(root, head)
        if remit.covers(path) or remit.is_machinery(path)
    ]
    blobs = git.read_blobs(root, sorted({oid for _, kind, oid, _ in chosen if kind == "blob"}))
    # A submodule has no bytes here: its commit id stands for its content.
    entries = [
        (path, mode, blobs[oid] if kind == "blob" else oid.encode())
        for mode, kind, oid, path in chosen
    ]
    return ContentDigest(
        member=remit.member,
        head=head,
        digest=digest_entries(entries),
        paths=tuple(sorted((path for _, _, _, path in chosen), key=_path_key)),
    )
