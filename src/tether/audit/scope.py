"""Review scope: which committed files a branch changed, filtered by a remit.

Committed content only: the diff runs from the merge base to HEAD (git's three-dot form),
so a reviewer and CI agree on the list whatever the working tree holds. Working-tree
edits are reported separately as ``dirty``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import git
from tether.audit.roster import Remit
from tether.errors import TetherError


@dataclass(frozen=True)
class BranchScope:
    default_branch: str | None
    fork_point: str | None
    files: tuple[str, ...]
    reason: str | None = None  # why there is no list

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "default_branch": self.default_branch,
            "fork_point": self.fork_point,
            "files": list(self.files),
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True)
class Scope:
    base_ref: str
    merge_base: str
    head: str
    files: tuple[str, ...]  # present at HEAD
    deleted: tuple[str, ...]
    branch: BranchScope
    dirty: tuple[str, ...]

    def to_json(self, root: Path, remit: Remit) -> dict[str, Any]:
        return {
            "root": str(root),
            "member": remit.member,
            "remit": list(remit.globs),
            "base": self.base_ref,
            "merge_base": self.merge_base,
            "head": self.head,
            "files": list(self.files),
            "deleted": list(self.deleted),
            "branch": self.branch.to_json(),
            "dirty": list(self.dirty),
        }


def require_head(root: Path) -> str:
    head = git.head_commit(root)
    if head is None:
        raise TetherError(f"{root} has no commits yet; nothing to review")
    return head


def resolve_merge_base(root: Path, base_ref: str) -> str:
    """The merge base of ``base_ref`` and HEAD; exit 1 when there is none.

    An unresolvable base must never read as an empty list, which would look like
    "nothing to review" to a gate.
    """
    if not base_ref.strip():
        raise TetherError("--base is empty; name the branch or commit the review is against")
    if not git.has_ref(root, base_ref):
        raise TetherError(
            f"base {base_ref!r} does not name a commit in {root}; fetch it "
            f"(git fetch origin {base_ref}) or pass a commit id"
        )
    found = git.merge_base(root, base_ref)
    if found is None:
        raise TetherError(f"base {base_ref!r} and HEAD have no common ancestor")
    return found


def changed_files(root: Path, old: str, new: str, remit: Remit) -> tuple[list[str], list[str]]:
    """(present, deleted) in-remit paths that differ between two commits."""
    present: list[str] = []
    deleted: list[str] = []
    for status, path in git.diff_name_status(root, old, new):
        if remit.covers(path):
            (deleted if status == "D" else present).append(path)
    return present, deleted


def dirty_files(root: Path, remit: Remit, *, with_machinery: bool = False) -> list[str]:
    """In-remit paths whose working tree (or index) differs from HEAD, untracked included."""
    return sorted(
        path
        for path in git.status_changed_paths(root)
        if remit.covers(path) or (with_machinery and remit.is_machinery(path))
    )


def branch_scope(root: Path, remit: Remit) -> BranchScope:
    """Everything the branch changed since it forked from the default branch."""
    default = git.default_branch(root)
    if default is None:
        return BranchScope(None, None, (), reason="no default branch (origin/HEAD, main, master)")
    point = git.fork_point(root, default)
    if point is None:
        return BranchScope(default, None, (), reason=f"HEAD shares no history with {default}")
    present, _ = changed_files(root, point, "HEAD", remit)
    return BranchScope(default, point, tuple(present))


def compute_scope(root: Path, base_ref: str, remit: Remit) -> Scope:
    head = require_head(root)
    base = resolve_merge_base(root, base_ref)
    present, deleted = changed_files(root, base, head, remit)
    return Scope(
        base_ref=base_ref,
        merge_base=base,
        head=head,
        files=tuple(present),
        deleted=tuple(deleted),
        branch=branch_scope(root, remit),
        dirty=tuple(dirty_files(root, remit)),
    )


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_FILE = re.compile(r"^\+\+\+ (?:b/(.*)|/dev/null)$", re.MULTILINE)


def touched_lines(root: Path, old: str, new: str, paths: list[str]) -> dict[str, set[int]]:
    """For each path, the line numbers (in ``new``) that the diff adds or changes."""
    touched: dict[str, set[int]] = {path: set() for path in paths}
    current: str | None = None
    text = git.diff_unified_zero(root, old, new, paths)
    for line in text.splitlines():
        file_match = _FILE.match(line)
        if file_match:
            current = file_match.group(1)
            continue
        hunk = _HUNK.match(line)
        if hunk and current is not None:
            start, count = int(hunk.group(1)), int(hunk.group(2) or "1")
            touched.setdefault(current, set()).update(range(start, start + count))
    return touched
