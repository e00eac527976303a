"""The audit commands' words, and the JSON documents no report object of theirs carries
(a scope, a clearance and a gate entry have ``to_json`` for their data; why a clearance was
withheld, a gate entry's note and why a sidecar was declined are codes there, worded here;
the shell document is built by ``tether.audit.shell.report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tether.audit.clearance import ClearResult, GateEntry, Withheld
    from tether.audit.digest import ContentDigest
    from tether.audit.roster import Remit
    from tether.audit.scope import BranchScope, Scope
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
    if branch.unavailable is not None:
        lines.append(f"{label}: unavailable ({branch_reason(branch)})")
    else:
        lines += _list_lines(label, branch.files)
        lines += _list_lines(f"{label}, deleted", branch.deleted)
    lines += _list_lines("dirty (working tree differs from HEAD)", scope.dirty)
    return "\n".join(lines)


def branch_reason(branch: BranchScope) -> str:
    """Why the whole branch's list could not be had (``BranchScope.unavailable``)."""
    from tether.audit.scope import NoBranchList

    if branch.unavailable is NoBranchList.NO_DEFAULT_BRANCH:
        return "no default branch (origin/HEAD, main, master)"
    return f"HEAD shares no history with {branch.default_branch}"


def scope_document(scope: Scope, root: Path, remit: Remit) -> Doc:
    """``audit scope --json``: the scope's data, with why the whole branch has no list."""
    document = scope.to_json(root, remit)
    if scope.branch.unavailable is not None:
        document["branch"]["reason"] = branch_reason(scope.branch)
    return document


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


_DECLINED: Final = {
    "ci": "CI run (CI or GITHUB_ACTIONS is set)",
    "empty-base": "audit key unresolved (empty base)",
    "detached-head": "audit key unresolved (detached HEAD)",
}


def _declined(result: SidecarResult) -> str | None:
    return _DECLINED.get(result.declined, result.declined) if result.declined else None


def findings_document(result: SidecarResult, root: Path) -> Doc:
    return {"written": _written(result, root), "count": result.count, "declined": _declined(result)}


def render_findings(result: SidecarResult, root: Path) -> str:
    if result.declined:
        return f"findings-sidecar: declined: {_declined(result)}"
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


def withheld_text(withheld: Withheld) -> str:
    """Why a clearance was withheld, in words (the ``withheld`` of the clear document)."""
    cause = withheld.cause
    if cause == "dirty":
        return (
            "withheld: in-scope files differ from HEAD; commit or discard them and review the "
            "committed bytes"
        )
    if cause == "superseded":
        return (
            f"review scope superseded: the review started on {withheld.started_on}, the "
            f"member's files are now {withheld.now}; run audit scope again and review the "
            "new content"
        )
    if cause == "no-capture":
        return (
            "withheld: no review scope was captured for this member; start the review with "
            "audit scope --member NAME (or pass --scope-digest): a clearance attests the "
            "content its review started on"
        )
    if cause == "no-report":
        return (
            "withheld: no findings sidecar for this digest; write it (audit findings write) "
            "before clearing: a marker without its report reads as a lost report"
        )
    if cause == "unreviewed-report":
        return (
            "withheld: the findings sidecar was written while in-scope files held "
            "uncommitted changes; review the committed bytes again and write a fresh report"
        )
    if cause == "errors":
        return (
            f"withheld: {withheld.count} error findings (Critical) stand in the sidecar; "
            "--acknowledge accepts warnings only: fix them, or record the refusal "
            "(--provenance refused)"
        )
    return (
        f"withheld: {withheld.count} warning findings (Important) stand in the sidecar; "
        "fix them or clear with --acknowledge REASON"
    )


def clear_document(result: ClearResult, root: Path) -> Doc:
    withheld = withheld_text(result.withheld) if result.withheld else None
    return {**result.to_json(root), "withheld": withheld}


def render_clear(result: ClearResult, root: Path) -> str:
    doc = clear_document(result, root)
    if result.withheld:
        lines = [f"{result.member}: {doc['withheld']}"]
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


_GATE_NOTES: Final = {
    "unreadable": "clearance marker unreadable",
    "lost-report": "lost report: the clearance has no findings sidecar for this digest",
    "not-dispatched": "the branch changes nothing in this member's remit or the gate machinery",
}


def gate_document(
    entries: Sequence[GateEntry], root: Path, trailers: Sequence[str] | None = None
) -> Doc:
    """``trailers`` is None unless ``--trailer`` asked for them."""
    from tether.audit.clearance import gate_cleared

    cleared = gate_cleared(list(entries))
    members = [
        {**e.to_json(root), "note": _GATE_NOTES[e.why]} if e.why else e.to_json(root)
        for e in entries
    ]
    document: Doc = {"cleared": cleared, "members": members}
    if trailers is not None:
        document["trailers"] = list(trailers)
    return document


def render_gate(entries: Sequence[GateEntry], trailers: Sequence[str] = ()) -> str:
    lines = []
    for entry in entries:
        note = f" ({_GATE_NOTES[entry.why]})" if entry.why else ""
        lines.append(f"{entry.member}: {entry.status} {entry.digest}{note}")
    lines += trailers
    return "\n".join(lines)
