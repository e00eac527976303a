"""The words of ``campaign push|pr|close|retry`` and ``status --refresh``: the pull request's
body, the comment it is closed with, the ``step`` part of their JSON document and its text.
Pure functions of plain documents and the notes' facts (report/campaign.py words the rest
of the document)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tether.flows.pullrequest import CONFLICTS_LISTED
from tether.report.campaign import TRAILER, render_campaign


def cannot_push(error: Exception) -> str:
    """The ``reason`` a repository's record keeps when its push target is unknown."""
    return f"cannot push: {error}"


def branch_moved(branch: str, target: str, there: str) -> str:
    """The campaign's branch at the target holds a commit tether did not push."""
    return f"{branch} on {target} is at {there[:12]}, which tether did not push; left as it is"


def push_refused(target: str, why: str) -> str:
    return f"cannot push to {target}: {why}"


if TYPE_CHECKING:
    from tether.campaign.publish import RepoNote

Doc = Mapping[str, Any]


def pull_request_body(settings: Doc, record: Doc) -> str:
    """The update summary (its buckets) and the files left with conflict markers."""
    old, new = record["from_version"], record["to_version"]
    lines = [
        f"Updates {settings['upstream']} from {old} to {new}.",
        "",
        "tether merged the release into this repository and kept its own changes where they "
        "did not collide; review the diff before merging.",
    ]
    if record["buckets"]:
        lines += ["", "Files by outcome:"]
        lines += [f"- {bucket}: {count}" for bucket, count in record["buckets"].items()]
    conflicts = record["conflicts"]
    if conflicts:
        lines += ["", f"Conflict markers are committed in {len(conflicts)} file(s):"]
        lines += [f"- {path}" for path in conflicts[:CONFLICTS_LISTED]]
        if len(conflicts) > CONFLICTS_LISTED:
            lines.append(f"- … and {len(conflicts) - CONFLICTS_LISTED} more")
        lines.append("Resolve them on this branch before merging.")
    lines += ["", f"Campaign {settings['name']}. {TRAILER}: {old} -> {new}"]
    return "\n".join(lines) + "\n"


def close_comment(campaign: str) -> str:
    return f"Closed by `tether campaign close {campaign}`: the campaign has ended."


def stop_message(stopped: Doc) -> str:
    """Why pull requests stopped being opened, and when to run again."""
    if stopped["limit"] == "max_open_prs":
        return (
            f"{stopped['reached']} of the campaign's pull requests are open "
            f"(--max-open-prs {stopped['value']}): run again when some are merged or closed"
        )
    return (
        f"{stopped['reached']} pull requests were opened in the last hour "
        f"(--prs-per-hour {stopped['value']}): run again after {stopped['resume_at']}"
    )


def step_document(
    action: str,
    changed: Sequence[str],
    stopped: Doc | None,
    pacing: Doc | None,
    notes: Sequence[RepoNote],
) -> dict[str, Any]:
    """What one command did: the repositories whose record changed, why it stopped early
    (pacing), the pacing it ran with and the notes it has for a person."""
    return {
        "action": action,
        "changed": list(changed),
        "stopped": {**stopped, "message": stop_message(stopped)} if stopped else None,
        "pacing": dict(pacing) if pacing is not None else None,
        "notes": [repo_note(note) for note in notes],
    }


def repo_note(note: RepoNote) -> str:
    if note.kept_branch:
        return (
            f"{note.name}: kept {note.kept_branch} on {note.target}: it holds commits tether "
            "did not push"
        )
    return f"{note.name}: {note.error}"


def render_step(document: Doc) -> str:
    step = document["step"]
    lines = [render_campaign(document)]
    changed = ", ".join(step["changed"]) or "none"
    lines.append(f"{step['action']}: changed {changed}")
    lines += [f"note: {note}" for note in step["notes"]]
    if step["stopped"]:
        lines.append(f"stopped: {step['stopped']['message']}")
    return "\n".join(lines)
