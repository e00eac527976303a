"""The audit commands' words, and the JSON documents no report object of theirs carries
(a scope, a clearance and a gate entry have ``to_json``; the shell document is built by
``tether.audit.shell.report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tether.audit.clearance import ClearResult, GateEntry
    from tether.audit.digest import ContentDigest
    from tether.audit.scope import Scope
    from tether.audit.sidecar import SidecarResult

Doc = dict[str, Any]


def _list_lines(label: str, items: Sequence[str]) -> list[str]:
    return [f"{label}: {len(items)}", *(f"  {item}" for item in items)]


# --- scope -----------------------------------------------------------------------------------


def render_scope(scope: Scope) -> str:
    lines = [f"base {scope.base_ref} (merge base {scope.merge_base[:12]}), head {scope.head[:12]}"]
    if scope.review is not None:
        review = scope.review
        anchor = f", anchor tree {review.anchor_tree[:12]}" if review.anchor_tree else ""
        lines.append(f"review base {review.sha[:12]} ({review.reason}{anchor})")
    if scope.scope_digest:
        lines.append(f"scope digest {scope.scope_digest}")
        if scope.superseded:
            lines.append(
                f"  superseded: the member's files are now {scope.content_digest}; this round "
                "cannot clear (audit clear refuses it and releases the capture)"
            )
    lines += _list_lines("in scope", scope.files)
    lines += _list_lines("deleted", scope.deleted)
    branch = scope.branch
    label = (
        f"whole branch since {branch.default_branch}" if branch.default_branch else "whole branch"
    )
    if branch.reason:
        lines.append(f"{label}: unavailable ({branch.reason})")
    else:
        lines += _list_lines(label, branch.files)
        lines += _list_lines(f"{label}, deleted", branch.deleted)
    lines += _list_lines("dirty (working tree differs from HEAD)", scope.dirty)
    return "\n".join(lines)


# --- shell -----------------------------------------------------------------------------------


_SECTIONS = (
    ("error", "Critical (errors: fix before clearing)"),
    ("warning", "Important (warnings: fix, or acknowledge with a reason)"),
    ("suggestion", "Suggestions"),
)


def _finding_lines(finding: Doc) -> list[str]:
    allowed = f" (allowed: {finding['suppressed']['reason']})" if finding.get("suppressed") else ""
    return [
        f"  {finding['path']}:{finding['line']}: {finding['severity']} "
        f"[{finding['finding_class']}] {finding['title']}{allowed}",
        f"    fix: {finding['suggested_fix']}",
    ]


def render_shell(document: Doc) -> str:
    """Summary, then the findings by severity, the cross-remit ones, what was deleted and
    what no lens reads; each finding with its location, issue and fix."""
    counts = document["counts"]
    files = [entry["path"] for entry in document["files"]]
    verdict = (f"{counts['error']} errors block" if counts["error"] else "no error finding") + (
        f", {counts['warning']} warnings to fix or acknowledge" if counts["warning"] else ""
    )
    lines = [f"Summary: {len(files)} files reviewed; {verdict}", *(f"  {p}" for p in files)]
    for severity, heading in _SECTIONS:
        chosen = [f for f in document["findings"] if f["severity"] == severity]
        if chosen:
            lines.append(f"{heading}: {len(chosen)}")
            lines += [line for f in chosen for line in _finding_lines(f)]
    cross = document.get("cross_remit") or []
    if cross:
        lines.append(f"Cross-remit (outside this remit; never gates it): {len(cross)}")
        lines += [line for f in cross for line in _finding_lines(f)]
    for path, users in (document.get("callers") or {}).items():
        lines.append(f"callers of {path} (read them against its new contract): {', '.join(users)}")
    lines += [f"deleted: {path}" for path in document.get("deleted", [])]
    lines += [f"not analysed (no lens reads it): {p}" for p in document.get("not_analysed", [])]
    tools = document["tools"]
    deleted = f" (and {len(document['deleted'])} deleted)" if document.get("deleted") else ""
    allowed = f", {counts['suppressed']} allowed in the file" if counts.get("suppressed") else ""
    lines.append(
        f"{len(files)} files{deleted}: {counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['suggestion']} suggestions{allowed} "
        f"(shellcheck {tools['shellcheck']['version']}, shfmt {tools['shfmt']['version']})"
    )
    if document.get("dirty"):
        lines.append(
            f"note: {len(document['dirty'])} in-scope files differ from HEAD; "
            "the working-tree bytes were checked"
        )
    return "\n".join(lines)


# --- findings write --------------------------------------------------------------------------


def findings_document(result: SidecarResult, root: Path) -> Doc:
    return {"written": _written(result, root), "count": result.count, "declined": result.declined}


def render_findings(result: SidecarResult, root: Path) -> str:
    if result.declined:
        return f"findings-sidecar: declined: {result.declined}"
    return f"wrote {_written(result, root)} ({result.count} findings)"


def _written(result: SidecarResult, root: Path) -> str | None:
    return result.path.relative_to(root).as_posix() if result.path else None


# --- digest, clear, gate ---------------------------------------------------------------------


def digest_document(found: ContentDigest) -> Doc:
    return {
        "member": found.member,
        "digest": found.digest,
        "head": found.head,
        "files": list(found.paths),
    }


def render_clear(result: ClearResult, root: Path) -> str:
    doc = result.to_json(root)
    if result.withheld:
        lines = [f"{result.member}: {result.withheld}"]
        lines += [f"  dirty: {path}" for path in result.dirty]
    else:
        lines = [
            f"{result.member}: {result.provenance} for {result.digest}: wrote {doc['written']}"
        ]
        if doc["removed"]:
            lines.append(f"  superseded {doc['removed']}")
    for label, key in (("remaining", "remaining"), ("fixed last round", "fixed_last_round")):
        for entry in doc[key]:
            lines.append(f"  {label}: {entry.get('path')}:{entry.get('line')} {entry.get('title')}")
    return "\n".join(lines)


def gate_document(
    entries: Sequence[GateEntry], root: Path, trailers: Sequence[str] | None = None
) -> Doc:
    """``trailers`` is None unless ``--trailer`` asked for them."""
    from tether.audit.clearance import gate_cleared

    cleared = gate_cleared(list(entries))
    document: Doc = {"cleared": cleared, "members": [e.to_json(root) for e in entries]}
    if trailers is not None:
        document["trailers"] = list(trailers)
    return document


def render_gate(entries: Sequence[GateEntry], trailers: Sequence[str] = ()) -> str:
    lines = []
    for entry in entries:
        note = f" ({entry.note})" if entry.note else ""
        lines.append(f"{entry.member}: {entry.status} {entry.digest}{note}")
    lines += trailers
    return "\n".join(lines)
