"""Review scope: which committed files a branch changed, filtered by a remit.

Committed content only: the diff runs from the merge base to HEAD (git's three-dot form),
so a reviewer and CI agree on the list whatever the working tree holds. Working-tree
edits are reported separately as ``dirty``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from tether import git
from tether.audit.capture import capture, capture_path
from tether.audit.digest import content_digest
from tether.audit.incremental import ReviewAnchor, full_base, review_anchor
from tether.audit.roster import Remit
from tether.audit.workspace import Layout, require_head
from tether.errors import TetherError


class NoBranchList(StrEnum):
    """Why the whole branch's list could not be had, worded by ``report/audit.py``."""

    NO_DEFAULT_BRANCH = "no-default-branch"  # none of origin/HEAD, main, master
    NO_SHARED_HISTORY = "no-shared-history"  # HEAD shares no history with the default branch


@dataclass(frozen=True)
class BranchScope:
    default_branch: str | None
    fork_point: str | None
    files: tuple[str, ...]
    unavailable: NoBranchList | None = None  # why there is no list
    deleted: tuple[str, ...] = ()  # a deletion is a change: it makes the member run

    def to_json(self) -> dict[str, Any]:
        """Its data; ``report/audit.scope_document`` adds the ``reason`` when there is no
        list."""
        return {
            "default_branch": self.default_branch,
            "fork_point": self.fork_point,
            "files": list(self.files),
            "deleted": list(self.deleted),
        }


@dataclass(frozen=True)
class Scope:
    base_ref: str
    merge_base: str
    head: str
    files: tuple[str, ...]  # present at HEAD
    deleted: tuple[str, ...]
    branch: BranchScope
    dirty: tuple[str, ...]
    review: ReviewAnchor | None = None  # how the base was chosen (member scope only)
    key_base: str | None = None
    scope_digest: str | None = None  # captured when the round started (audit/capture.py)
    content_digest: str | None = None  # the member's digest now

    @property
    def superseded(self) -> bool:
        """The content moved since the capture: ``clear`` will refuse this round."""
        return self.scope_digest != self.content_digest

    def to_json(self, root: Path, remit: Remit) -> dict[str, Any]:
        """Its data, without the words ``report/audit.scope_document`` adds."""
        extra: dict[str, Any] = {}
        if self.review is not None:
            extra = {
                "review_base": self.review.to_json(),
                "key_base": self.key_base,
                "scope_digest": self.scope_digest,
                "content_digest": self.content_digest,
                "scope_superseded": self.superseded,
            }
        return {
            "project_dir": str(root),
            "member": remit.member,
            "remit": list(remit.globs),
            "base": self.base_ref,
            "merge_base": self.merge_base,
            "head": self.head,
            "files": list(self.files),
            "deleted": list(self.deleted),
            "branch": self.branch.to_json(),
            "dirty": list(self.dirty),
            **extra,
        }


def resolve_merge_base(root: Path, base_ref: str) -> str:
    """The merge base of ``base_ref`` and HEAD; exit 1 when there is none.

    An unresolvable base must never read as an empty list, which would look like
    "nothing to review" to a gate.
    """
    if not base_ref.strip():
        raise TetherError("--base-ref is empty; name the branch or commit the review is against")
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


def branch_scope(root: Path, remit: Remit, known: tuple[str, str] | None = None) -> BranchScope:
    """Everything the branch changed since it forked from the default branch (``known``:
    that branch and the fork point, when the caller has resolved them already)."""
    if known is None:
        default = git.default_branch(root)
        if default is None:
            return BranchScope(None, None, (), NoBranchList.NO_DEFAULT_BRANCH)
        point = git.fork_point(root, default)
        if point is None:
            return BranchScope(default, None, (), NoBranchList.NO_SHARED_HISTORY)
    else:
        default, point = known
    present, deleted = changed_files(root, point, "HEAD", remit)
    return BranchScope(default, point, tuple(present), deleted=tuple(deleted))


def compute_scope(
    root: Path,
    base_ref: str,
    remit: Remit,
    full: tuple[str, str] | None = None,
    *,
    ancestor: bool = False,
) -> Scope:
    """The scope from ``base_ref``'s merge base to HEAD; ``full`` is the default branch and
    HEAD's fork point from it when the caller has resolved them (``full_base``): git is not
    asked again within one command, whose HEAD does not move. With ``ancestor``,
    ``base_ref`` is a commit git named as one of HEAD's, so it is its own merge base."""
    head = require_head(root)
    base = base_ref if ancestor else resolve_merge_base(root, base_ref)
    present, deleted = changed_files(root, base, head, remit)
    if full is not None and full[1] == base:  # the same two commits: the same list
        branch = BranchScope(full[0], base, tuple(present), deleted=tuple(deleted))
    else:
        branch = branch_scope(root, remit, full)
    return Scope(
        base_ref=base_ref,
        merge_base=base,
        head=head,
        files=tuple(present),
        deleted=tuple(deleted),
        branch=branch,
        dirty=tuple(dirty_files(root, remit)),
    )


def member_scope(root: Path, layout: Layout, remit: Remit, base_ref: str | None) -> Scope:
    """The review scope with its decision record: review base, reason, anchor, key base.

    Without ``base_ref`` the base is found from the member's own last clearance (then a
    trailer), else the fork point. The full base must resolve either way: an empty one
    would make "nothing changed" indistinguishable from "could not tell". A named member's
    digest is captured here, once per round (audit/capture.py).
    """
    explicit = resolve_merge_base(root, base_ref) if base_ref is not None else None
    default, fork = full_base(root)
    if explicit is not None:
        anchor = ReviewAnchor(explicit, "explicit", "")
    else:
        anchor = review_anchor(root, layout, remit.member, fork)
    # The anchor is a commit git found among HEAD's (the merge base of --base-ref, the fork
    # point, an earned clearance's head, a trailer's commit): its own merge base with HEAD.
    scope = compute_scope(root, anchor.sha, remit, (default, fork), ancestor=True)
    scope = replace(scope, base_ref=base_ref or anchor.sha)
    if not remit.member:
        return replace(scope, review=anchor, key_base=fork)
    current = content_digest(root, remit, scope.head)
    path = capture_path(root, layout, fork, remit.member)
    captured = capture(root, layout, path, current.digest, current.head)
    return replace(
        scope,
        review=anchor,
        key_base=fork,
        scope_digest=captured.digest,
        content_digest=current.digest,
    )
