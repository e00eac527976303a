"""The values a campaign is made of: its settings and one record per repository.

Both turn into JSON and back unchanged, so a unit of work can run wherever the coordinator
sends it and the coordinator alone writes them to disk (campaign/store.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

PENDING = "pending"
CLONED = "cloned"
UPDATED = "updated"
CONFLICTS = "conflicts"
UP_TO_DATE = "up-to-date"
FAILED = "failed"
# After a run: the branch on the remote, its pull request, and how that ended
# (campaign/publish.py).
PUSHED = "pushed"
PR_OPEN = "pr-open"
MERGED = "merged"
CLOSED = "closed"
# In the order a repository moves through them. A run stops at updated, conflicts,
# up-to-date or failed; push and pr carry a committed update on from there.
STATES = (PENDING, CLONED, UPDATED, CONFLICTS, UP_TO_DATE, FAILED, PUSHED, PR_OPEN, MERGED, CLOSED)
FINISHED = frozenset({UPDATED, CONFLICTS, UP_TO_DATE, FAILED, PUSHED, PR_OPEN, MERGED, CLOSED})

HOLD, COMMIT = "hold", "commit"  # --on-conflict: record conflicts only, or commit markers
ON_CONFLICT = (HOLD, COMMIT)
DEFAULT_ON_CONFLICT = HOLD

# A campaign's name is a folder name and part of nothing else; keep it plain.
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def campaign_branch(upstream: str, version: str) -> str:
    """``tether/update-<upstream>-<version>``, the upstream made safe for a branch name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", upstream).strip("-.") or "upstream"
    return f"tether/update-{safe}-{version}"


@dataclass(frozen=True)
class Settings:
    name: str
    upstream: str  # the upstream's name as installed (or the source it was installed from)
    to_version: str
    on_conflict: str
    campaign_dir: str  # the campaign folder: records, mirrors, worktrees
    registry: str
    created_at: str
    conflict: str = ""  # the update's conflict style (markers, patch); "": the profile's
    auto: str = ""  # settle every conflict this way (model.plan.AUTO_CHOICES); "": leave them

    @property
    def branch(self) -> str:
        return campaign_branch(self.upstream, self.to_version)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Settings:
        # Campaigns started before a setting existed take its default.
        return cls(**{key: str(data[key]) for key in cls.__dataclass_fields__ if key in data})


@dataclass(frozen=True)
class RepoRecord:
    name: str
    url: str  # what the mirror fetches from: the remote, or the local repository's folder
    default_branch: str | None = None  # None until the remote's HEAD is read
    status: str = PENDING
    reason: str = ""  # one line: why the repository failed
    start_commit: str = ""  # the default branch's commit the update starts from
    commit: str = ""  # the commit on the campaign branch, when one was made
    from_version: str = ""
    to_version: str = ""
    buckets: Mapping[str, int] = field(default_factory=dict)  # non-zero counts only
    conflicts: tuple[str, ...] = ()
    updated_at: str = ""
    # Facts about the remote, kept when a failed record is retried (campaign/publish.py).
    pushed_commit: str = ""  # what tether last pushed to the campaign branch there
    pr_number: int | None = None
    pr_url: str = ""
    pr_opened_at: str = ""  # when tether opened (or first found) the pull request

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def moved(self, status: str, **changes: Any) -> RepoRecord:
        return replace(self, status=status, **changes)

    def failed(self, reason: str) -> RepoRecord:
        """This record, failed for ``reason`` (kept to its first line)."""
        line = reason.strip().splitlines()[0] if reason.strip() else "unknown error"
        return replace(self, status=FAILED, reason=line)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["buckets"] = dict(self.buckets)
        data["conflicts"] = list(self.conflicts)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RepoRecord:
        known = {key: data[key] for key in cls.__dataclass_fields__ if key in data}
        known["buckets"] = {str(k): int(v) for k, v in dict(known.get("buckets", {})).items()}
        known["conflicts"] = tuple(str(p) for p in known.get("conflicts", ()))
        return cls(**known)


@dataclass(frozen=True)
class UnitResult:
    """What a unit of work returns: the repository's next record and, when the unit worked
    outside the campaign folder (campaign/workspace.py) and committed, that commit with its
    history as a git bundle, for the coordinator to take into the campaign's mirror
    (campaign/bundles.py) before it writes the record."""

    record: RepoRecord
    bundle: bytes = b""
