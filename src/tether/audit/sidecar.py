"""The findings sidecar: a reviewer's findings for one (base, branch, member), on disk.

Everything is validated before anything touches the disk, and the first offending entry
is named (``findings[3]: line must be an integer >= 1``), so a rejected write leaves the
previous sidecar intact. The write itself is atomic.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tether import git
from tether.audit.findings import SEVERITIES, default_area_tags
from tether.audit.vocabulary import classify_findings
from tether.audit.workspace import Layout, audit_dir, branch_slug
from tether.errors import UsageError
from tether.fsio import atomic_write
from tether.parselimits import json_loads
from tether.pathrules import relpath_problem

_TEXT_FIELDS: Final = ("title", "failure_mode", "verified_by", "suggested_fix")
_HEX: Final = re.compile(r"^[0-9a-fA-F]{4,64}$")
_TOKEN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MEMBER_NAME: Final = _TOKEN


@dataclass(frozen=True)
class ReviewBase:
    sha: str
    reason: str
    anchor_tree: str | None = None

    def to_json(self) -> dict[str, str]:
        return {"sha": self.sha, "reason": self.reason, "anchor_tree": self.anchor_tree or ""}


@dataclass(frozen=True)
class SidecarResult:
    path: Path | None
    count: int
    declined: str | None = None  # ci | empty-base | detached-head (report/audit.py words it)


def parse_findings_text(text: str) -> list[dict[str, Any]]:
    try:
        document = json_loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"findings: not valid JSON ({error})") from None
    return validate_findings(document)


def validate_findings(document: object) -> list[dict[str, Any]]:
    """The findings, normalised (``area_tags`` filled in); UsageError at the first problem."""
    if not isinstance(document, list):
        raise UsageError("findings: must be a JSON array of finding objects")
    return [_validated(entry, index) for index, entry in enumerate(document)]


def _validated(entry: object, index: int) -> dict[str, Any]:
    problem = finding_problem(entry)
    if problem:
        raise UsageError(f"findings[{index}]: {problem}")
    assert isinstance(entry, dict)
    normalised = dict(entry)  # keys tether does not know are kept for the reader
    if "area_tags" not in normalised or normalised["area_tags"] is None:
        normalised["area_tags"] = list(default_area_tags(entry["path"]))
    return normalised


def finding_problem(entry: object) -> str | None:
    """Why ``entry`` is not a valid finding, or None."""
    if not isinstance(entry, dict):
        return "must be an object"
    for key in ("finding_class", "path"):
        if not _non_empty(entry.get(key)):
            return f"{key} must be a non-empty string"
    problem = relpath_problem(entry["path"])
    if problem:
        # Readers open <checkout>/<path>: it must name a file of the checkout.
        return f"path {entry['path']!r}: {problem}"
    if entry.get("severity") not in SEVERITIES:
        return f"severity must be one of {', '.join(SEVERITIES)}"
    line = entry.get("line")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        return "line must be an integer >= 1"
    for key in _TEXT_FIELDS:
        if not _non_empty(entry.get(key)):
            return f"{key} must be a non-empty string"
    tags = entry.get("area_tags")
    if tags is not None and (
        not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags)
    ):
        return "area_tags must be an array of strings"
    return None


def _non_empty(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def review_base(sha: str | None, reason: str | None, anchor_tree: str | None) -> ReviewBase | None:
    """The per-member decision record, checked as a whole: all or nothing, well formed."""
    if sha is None:
        if reason is not None or anchor_tree:
            raise UsageError("--base-reason and --anchor-tree need --review-base")
        return None
    if not _HEX.match(sha):
        raise UsageError(f"--review-base {sha!r} is not a commit id")
    if reason is None or not _TOKEN.match(reason):
        raise UsageError("--review-base needs --base-reason TOKEN (letters, digits, . _ -)")
    anchor_tree = anchor_tree or None  # '' is the no-anchor round's empty value
    if anchor_tree is not None and not _HEX.match(anchor_tree):
        raise UsageError(f"--anchor-tree {anchor_tree!r} is not a tree id")
    return ReviewBase(sha, reason, anchor_tree)


def check_member_name(member: str) -> str:
    if not MEMBER_NAME.match(member):
        raise UsageError(f"member name {member!r} must be letters, digits, '.', '_' or '-'")
    return member


def sidecar_path(root: Path, layout: Layout, base: str, branch: str, member: str) -> Path:
    name = f"{base}.{branch_slug(branch)}.{member}.findings.json"
    return root / layout.audit_dir / name


def in_ci() -> bool:
    """True under CI (``CI`` or ``GITHUB_ACTIONS`` set): the sidecar is a local record only."""
    return any(
        os.environ.get(name, "").strip().lower() not in ("", "0", "false")
        for name in ("CI", "GITHUB_ACTIONS")
    )


@dataclass(frozen=True)
class Attestation:
    """What the sidecar speaks for: the member's content digest, and any dirty paths."""

    digest: str | None = None
    dirty: tuple[str, ...] = ()
    vocabulary: str = "tether"


def write_sidecar(
    root: Path,
    layout: Layout,
    *,
    member: str,
    base: str,
    findings: list[dict[str, Any]],
    review: ReviewBase | None = None,
    attestation: Attestation | None = None,
) -> SidecarResult:
    """Publish the sidecar; decline (nothing written) in CI or when the key is unresolved.

    Classes outside the vocabulary become ``holistic/unclassified``. The sidecar records
    the member's content digest (``clear`` and ``gate`` look it up by digest) and, for a
    withheld round, the dirty paths it could not review.
    """
    check_member_name(member)
    attestation = attestation or Attestation()
    if in_ci():
        return SidecarResult(None, len(findings), "ci")
    if not base.strip():
        return SidecarResult(None, len(findings), "empty-base")
    if not _HEX.match(base):
        raise UsageError(f"--base-ref {base!r} is not a commit id")
    branch = git.current_branch(root)
    if branch is None:
        return SidecarResult(None, len(findings), "detached-head")
    findings = classify_findings(findings, attestation.vocabulary, root)
    document: dict[str, Any] = {
        "schema_version": 1,
        "member": member,
        "vocabulary": attestation.vocabulary,
        "digest": attestation.digest,
        "dirty": list(attestation.dirty),
        "findings": findings,
    }
    if review is not None:
        document["review_base"] = review.to_json()
    audit_dir(root, layout)
    path = sidecar_path(root, layout, base, branch, member)
    atomic_write(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return SidecarResult(path, len(findings))


def find_sidecar(
    root: Path, layout: Layout, member: str, digest: str
) -> tuple[Path, dict[str, Any]] | None:
    """The member's sidecar recorded for ``digest`` (newest first), or None."""
    folder = root / layout.audit_dir
    if not folder.is_dir():
        return None
    candidates = sorted(
        folder.glob(f"*.{member}.findings.json"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for path in candidates:
        try:
            document = json_loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if (
            isinstance(document, dict)
            and document.get("member") == member
            and document.get("digest") == digest
        ):
            return path, document
    return None


def sidecar_key(path: Path, member: str) -> str:
    """The ``<base>.<branch>`` key a sidecar's file name carries."""
    return path.name.removesuffix(f".{member}.findings.json")
