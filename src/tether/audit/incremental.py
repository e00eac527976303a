"""The incremental review base: where this member's review of the branch starts.

Three bases, each with one job:

- the full base: where HEAD forked from the default branch. It decides whether a member
  runs at all (its changed list is the whole pull request); when it cannot be found (no
  default branch, no shared history) the scope is an error, never an empty list;
- the review base: the newest ancestor of HEAD this member already cleared. Found, in
  order, from the member's own earned clearance (its marker records the commit and tree
  it reviewed), then a commit trailer ``<member>-Audit:`` (or the team's
  ``GAIA-Audit:``); else the full base. ``base_reason`` says which (``member-clearance``,
  ``trailer``, ``no-anchor``, ``explicit`` for ``--base-ref``) and ``anchor_tree`` is the
  anchoring clearance's tree, empty on a no-anchor round;
- the key base: the full base, shared by every member of a round, so the findings
  sidecars and the re-run ledger of one pull request sit under one key.

Commit statuses are not read: they live on a forge, and tether speaks only to git here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tether import git
from tether.audit.workspace import Layout
from tether.errors import TetherError
from tether.fsio import read_bytes
from tether.parselimits import json_loads


@dataclass(frozen=True)
class ReviewAnchor:
    sha: str
    reason: str
    anchor_tree: str  # "" when nothing anchors the round

    def to_json(self) -> dict[str, str]:
        return {"sha": self.sha, "reason": self.reason, "anchor_tree": self.anchor_tree}


def full_base(root: Path) -> tuple[str, str]:
    """(default branch, fork point of HEAD from it); exit 1 when either is unresolvable."""
    default = git.default_branch(root)
    if default is None:
        raise TetherError(
            "cannot resolve the full base: no default branch (origin/HEAD, "
            "init.defaultBranch, main, master); fetch it or name it with --base-ref"
        )
    point = git.fork_point(root, default)
    if point is None:
        raise TetherError(f"cannot resolve the full base: HEAD shares no history with {default}")
    return default, point


def trailer_key(member: str) -> str:
    return f"{member}-Audit"


FRAMEWORK_VERSION: Final = ".gaia/VERSION"
_OID: Final = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _earned_anchors(root: Path, layout: Layout, member: str) -> list[tuple[str, str]]:
    """(commit, tree) of each earned clearance of the member that recorded them and was
    earned under the framework version HEAD carries.

    A framework update (``.gaia/VERSION`` changed since the clearance) can change what
    every file means to the gate, so a clearance from before it anchors nothing.
    """
    folder = root / layout.audit_dir
    recorded = []
    for marker in sorted(folder.glob(f"*.{member}.ok")) if folder.is_dir() else []:
        record = _read_record(marker)
        head, tree = record.get("head"), record.get("tree")
        if record.get("member") != member or not isinstance(head, str) or not _OID.match(head):
            continue
        if isinstance(tree, str):
            recorded.append((head, tree))
    if not recorded:
        return []  # no clearance to compare: git is not started for the version
    with git.BlobReader(root) as reader:
        version_now = reader.read(f"HEAD:{FRAMEWORK_VERSION}")
        return [
            (head, tree)
            for head, tree in recorded
            if reader.read(f"{head}:{FRAMEWORK_VERSION}") == version_now
        ]


def _read_record(path: Path) -> dict[str, Any]:
    try:
        record = json_loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _newest(root: Path, candidates: list[tuple[str, str]], fork: str) -> tuple[str, str] | None:
    """The candidate closest to HEAD among those between the fork point and HEAD."""
    usable = [
        c for c in candidates if git.is_ancestor(root, c[0]) and git.is_ancestor(root, fork, c[0])
    ]
    return min(usable, key=lambda c: git.commits_ahead(root, c[0]), default=None)


def _trailer_anchor(root: Path, member: str, fork: str) -> tuple[str, str] | None:
    pattern = re.compile(
        rf"^(?:{re.escape(trailer_key(member))}|GAIA-Audit):[ \t]*\S", re.MULTILINE | re.IGNORECASE
    )
    for sha, message in git.commit_messages(root, fork):
        if pattern.search(message):
            return sha, git.tree_of(root, sha) or ""
    return None


def review_anchor(root: Path, layout: Layout, member: str | None, fork: str) -> ReviewAnchor:
    if member:
        earned = _newest(root, _earned_anchors(root, layout, member), fork)
        if earned is not None:
            return ReviewAnchor(earned[0], "member-clearance", earned[1])
        trailer = _trailer_anchor(root, member, fork)
        if trailer is not None:
            return ReviewAnchor(trailer[0], "trailer", trailer[1])
    return ReviewAnchor(fork, "no-anchor", "")
