"""Clearance markers keyed on the content digest, and the gate that reads them.

``<digest>.<member>.ok`` records an earned clearance, ``<digest>.<member>.refused`` a
refusal. A marker speaks only for the digest in its name, so any edit to the member's
files or the gate machinery makes both stale without anyone deleting them. The gate
checks refusals first: a refusal beside a clearance for the same digest still refuses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from tether import __version__, git
from tether.audit.capture import capture_path, read_capture, release
from tether.audit.digest import ContentDigest, content_digest
from tether.audit.incremental import full_base, trailer_key
from tether.audit.ledger import ledger_path, record_round
from tether.audit.roster import Remit
from tether.audit.scope import dirty_files
from tether.audit.sidecar import check_member_name, find_sidecar, sidecar_key
from tether.audit.workspace import Layout, audit_dir
from tether.errors import TetherError, UsageError
from tether.fsio import atomic_write, read_bytes
from tether.parselimits import json_loads

PROVENANCES: Final = ("earned", "refused")
_SUFFIX: Final = {"earned": "ok", "refused": "refused"}


@dataclass(frozen=True)
class Withheld:
    """Why ``clear`` wrote nothing (report/audit.py words it): ``cause`` is one of
    ``dirty`` (in-scope files differ from HEAD), ``superseded`` (the content moved since
    the review started on ``started_on``), ``no-capture`` (nothing says which content the
    review started on), ``no-report`` (no findings sidecar for the digest),
    ``unreviewed-report`` (the sidecar was written over uncommitted bytes), ``errors`` and
    ``warnings`` (``count`` of them stand in the sidecar)."""

    cause: str
    count: int = 0
    started_on: str | None = None
    now: str | None = None


@dataclass(frozen=True)
class ClearResult:
    member: str
    digest: str
    provenance: str
    written: Path | None = None
    removed: Path | None = None
    withheld: Withheld | None = None
    dirty: tuple[str, ...] = ()
    ledger: dict[str, Any] | None = None  # this member's remaining / fixed_last_round

    def to_json(self, root: Path) -> dict[str, Any]:
        return {
            "member": self.member,
            "digest": self.digest,
            "provenance": self.provenance,
            "written": _rel(root, self.written),
            "removed": _rel(root, self.removed),
            "dirty": list(self.dirty),
            "remaining": (self.ledger or {}).get("remaining", []),
            "fixed_last_round": (self.ledger or {}).get("fixed_last_round", []),
        }


@dataclass(frozen=True)
class GateEntry:
    member: str
    digest: str
    status: str  # refused | cleared | pending | not-dispatched
    marker: Path | None
    why: str | None = None  # unreadable | lost-report | not-dispatched (report/audit.py words it)

    def to_json(self, root: Path) -> dict[str, Any]:
        return {
            "member": self.member,
            "digest": self.digest,
            "status": self.status,
            "marker": _rel(root, self.marker),
        }


def _rel(root: Path, path: Path | None) -> str | None:
    return path.relative_to(root).as_posix() if path is not None else None


def marker_path(root: Path, layout: Layout, digest: str, member: str, provenance: str) -> Path:
    return root / layout.audit_dir / f"{digest}.{member}.{_SUFFIX[provenance]}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _marker_bytes(
    current: ContentDigest,
    member: str,
    provenance: str,
    tree: str | None,
    supersedes: Any = None,
    acknowledged: Any = None,
) -> bytes:
    # head and tree record what was reviewed: the next round's incremental base.
    document: dict[str, Any] = {
        "schema_version": 1,
        "digest": current.digest,
        "member": member,
        "provenance": provenance,
        "head": current.head,
        "tree": tree,
        "written_at": _now(),
    }
    if supersedes is not None:
        document["supersedes"] = supersedes
    if acknowledged is not None:
        document["acknowledged"] = acknowledged
    return (json.dumps(document, indent=2) + "\n").encode()


def _read_json(path: Path) -> Any:
    try:
        return json_loads(read_bytes(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def clear(
    root: Path,
    layout: Layout,
    remit: Remit,
    *,
    provenance: str,
    scope_digest: str | None = None,
    supersede_reason: str | None = None,
    acknowledge: str | None = None,
) -> ClearResult:
    """Record a verdict for the member's current digest, or withhold it and say why.

    Order matters: a dirty in-scope file or a superseded review scope writes nothing at
    all, and superseding a refusal writes the clearance before removing the refusal, so a
    crash in between leaves both and the gate still refuses.
    """
    member = check_member_name(remit.member or "")
    if supersede_reason is not None and (provenance != "earned" or not supersede_reason.strip()):
        raise UsageError("--supersede-refusal needs a non-blank REASON and --provenance earned")
    current = content_digest(root, remit)
    dirty = dirty_files(root, remit, with_machinery=True)
    if dirty:
        return ClearResult(
            member,
            current.digest,
            provenance,
            withheld=Withheld("dirty"),
            dirty=tuple(dirty),
        )
    capture_file = _capture_file(root, layout, member)
    captured = read_capture(capture_file) if capture_file is not None else None
    reviewed = [d for d in (scope_digest, captured.digest if captured else None) if d]
    moved = next((d for d in reviewed if d != current.digest), None)
    if moved is not None:
        if capture_file is not None:
            release(capture_file)  # the round is over: the next scope captures afresh
        return ClearResult(
            member,
            current.digest,
            provenance,
            withheld=Withheld("superseded", started_on=moved, now=current.digest),
        )
    if provenance == "earned" and not reviewed:
        return ClearResult(member, current.digest, provenance, withheld=Withheld("no-capture"))
    found = find_sidecar(root, layout, member, current.digest)
    if found is None:
        return ClearResult(member, current.digest, provenance, withheld=Withheld("no-report"))
    sidecar_file, report = found
    unreviewed = [p for p in report.get("dirty") or [] if isinstance(p, str)]
    if unreviewed:
        # That round read working-tree bytes; after a commit or a revert they are not
        # what HEAD holds, so its report speaks for nothing a clearance could attest.
        return ClearResult(
            member,
            current.digest,
            provenance,
            withheld=Withheld("unreviewed-report"),
            dirty=tuple(unreviewed),
        )
    findings = [f for f in report.get("findings") or [] if isinstance(f, dict)]
    # A finding on a file outside the member's remit and the gate machinery is
    # cross-remit: recorded for its owner, never gating this member's marker.
    gating = [f for f in findings if _in_domain(remit, f.get("path"))]
    ledger = record_round(
        ledger_path(sidecar_file.parent, sidecar_key(sidecar_file, member)),
        member,
        findings,
        current.head,
    )
    if provenance == "refused":
        result = _write(root, layout, current, member, provenance)
        _end_round(capture_file)
        return replace(result, ledger=ledger)
    errors = [f for f in gating if f.get("severity") == "error"]
    if errors:
        return ClearResult(
            member,
            current.digest,
            provenance,
            withheld=Withheld("errors", count=len(errors)),
            ledger=ledger,
        )
    warnings = [f for f in gating if f.get("severity") == "warning"]
    if warnings and not (acknowledge and acknowledge.strip()):
        return ClearResult(
            member,
            current.digest,
            provenance,
            withheld=Withheld("warnings", count=len(warnings)),
            ledger=ledger,
        )
    ack = (
        {"reason": acknowledge.strip(), "findings": warnings} if warnings and acknowledge else None
    )
    result = _earn(root, layout, current, member, supersede_reason, ack)
    _end_round(capture_file)
    return replace(result, ledger=ledger)


def _in_domain(remit: Remit, path: object) -> bool:
    if not remit.globs or not isinstance(path, str):
        return True
    return remit.covers(path) or remit.is_machinery(path)


def _capture_file(root: Path, layout: Layout, member: str) -> Path | None:
    """Where the member's capture for this branch lives; None when the key base (the fork
    point from the default branch) cannot be resolved, so no capture can exist."""
    try:
        _, fork = full_base(root)
    except TetherError:
        return None
    return capture_path(root, layout, fork, member)


def _end_round(capture_file: Path | None) -> None:
    if capture_file is not None:
        release(capture_file)


def _write(
    root: Path,
    layout: Layout,
    current: ContentDigest,
    member: str,
    provenance: str,
    supersedes: Any = None,
    acknowledged: Any = None,
) -> ClearResult:
    audit_dir(root, layout)
    path = marker_path(root, layout, current.digest, member, provenance)
    tree = git.tree_of(root, current.head)
    data = _marker_bytes(current, member, provenance, tree, supersedes, acknowledged)
    atomic_write(path, data)
    return ClearResult(member, current.digest, provenance, written=path)


def _earn(
    root: Path,
    layout: Layout,
    current: ContentDigest,
    member: str,
    reason: str | None,
    acknowledged: Any = None,
) -> ClearResult:
    refusal = marker_path(root, layout, current.digest, member, "refused")
    if not refusal.exists():
        return _write(root, layout, current, member, "earned", acknowledged=acknowledged)
    if reason is None:
        raise TetherError(
            f"{refusal.relative_to(root).as_posix()} refuses this digest; an earned clearance "
            "replaces it only with --supersede-refusal REASON"
        )
    supersedes = {"refusal": refusal.name, "record": _read_json(refusal), "reason": reason.strip()}
    result = _write(root, layout, current, member, "earned", supersedes, acknowledged)
    _remove_refusal(refusal)
    return ClearResult(member, current.digest, "earned", written=result.written, removed=refusal)


def _remove_refusal(path: Path) -> None:
    path.unlink(missing_ok=True)


def gate(root: Path, layout: Layout, remits: list[Remit]) -> list[GateEntry]:
    return [gate_member(root, layout, remit) for remit in remits]


def gate_member(root: Path, layout: Layout, remit: Remit) -> GateEntry:
    member = check_member_name(remit.member or "")
    current = content_digest(root, remit)
    refusal = marker_path(root, layout, current.digest, member, "refused")
    # A refusal counts even when unreadable: failing closed is the point of the gate.
    if refusal.exists():
        return GateEntry(member, current.digest, "refused", refusal)
    ok = marker_path(root, layout, current.digest, member, "earned")
    if not ok.exists():
        return GateEntry(member, current.digest, "pending", None)
    record = _read_json(ok)
    if not isinstance(record, dict) or (record.get("digest"), record.get("member")) != (
        current.digest,
        member,
    ):
        return GateEntry(member, current.digest, "pending", ok, why="unreadable")
    if find_sidecar(root, layout, member, current.digest) is None:
        return GateEntry(member, current.digest, "pending", ok, why="lost-report")
    return GateEntry(member, current.digest, "cleared", ok)


def trailer_lines(root: Path, entries: list[GateEntry]) -> list[str]:
    """``<member>-Audit: <version> <digest>`` per member, once every member is cleared.

    The caller puts them in a commit message; tether never commits or pushes. The version
    is the project's ``.gaia/VERSION`` when it has one, else tether's own.
    """
    if not entries or not gate_cleared(entries):
        return []
    try:
        version = read_bytes(root / ".gaia" / "VERSION").decode("utf-8").strip() or __version__
    except (OSError, UnicodeDecodeError):
        version = __version__
    return [
        f"{trailer_key(e.member)}: {version} {e.digest}" for e in entries if e.status == "cleared"
    ]


def gate_cleared(entries: list[GateEntry]) -> bool:
    """Every awaited member is cleared; a member the branch does not dispatch is not
    awaited (a refusal, though, always counts)."""
    return all(entry.status in ("cleared", "not-dispatched") for entry in entries)
