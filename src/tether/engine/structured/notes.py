"""Human-readable reports of a structured merge: the ``.notes`` file and its summary line
(an update's summary row is ``report/update.field_merge_row``'s). The sides a merge could
not read are facts (``model.plan.SideProblem``) the caller words, with
``report/reasons.side_problems``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tether.engine.structured.model import (
    MISSING,
    REASON_ADDED,
    REASON_REMOVED_THEN_CHANGED,
    REASON_WRITE_UNSAFE,
    Item,
    StructuredMergeResult,
)
from tether.model.plan import SideProblem

# The words of the sides a merge could not read, which the caller passes in.
UnreadWords = Callable[[tuple[SideProblem, ...]], str]


def _unread(result: StructuredMergeResult, unread_words: UnreadWords | None) -> str:
    if unread_words is None:
        raise ValueError(f"{result.path}: sides not read, and no words given for them")
    return unread_words(result.unread)


_ACTIONS = {
    "conflict": "kept your value; upstream changed it too. To take upstream's change, set "
    "it to the latest value by hand.",
    REASON_WRITE_UNSAFE: "not written: tether could not change this value without touching "
    "other lines. Set it to the latest value by hand if you want it.",
    "settled": "upstream changed it and so had you; --auto theirs (or take-theirs) wrote "
    "upstream's value (yours is in the backup).",
    REASON_ADDED: "upstream added this; nothing was written. Add it by hand if you want it.",
    REASON_REMOVED_THEN_CHANGED: "you removed this and upstream changed it; it stays "
    "removed. Re-add it by hand if you want upstream's value.",
}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary_line(
    path: str,
    result: StructuredMergeResult,
    notes_path: str | None = None,
    *,
    unread_words: UnreadWords | None = None,
) -> str:
    """``package.json: 2 applied, 1 conflict, 3 suggestions (see …)``, one row per file;
    a result with sides not read needs ``unread_words``."""
    if result.unread:
        return f"{path}: not merged, {_unread(result, unread_words)}"
    applied, conflicts, suggestions = result.counts
    if not (applied or conflicts or suggestions):
        return f"{path}: no managed-key changes"
    line = (
        f"{path}: {applied} applied, {_plural(conflicts, 'conflict')}, "
        f"{_plural(suggestions, 'suggestion')}"
    )
    if notes_path is not None and (conflicts or suggestions):
        line += f" (see {notes_path})"
    return line


def _value(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def _block(item: Item, action: str) -> list[str]:
    return [
        f"section:  {item.section if item.section is not None else '(top level)'}",
        f"key:      {item.key}",
        f"adopter:  {_value(item.adopter)}",
        f"baseline: {_value(item.baseline)}",
        f"latest:   {_value(item.latest)}",
        f"action:   {action}",
        "",
    ]


def render_notes(
    path: str,
    result: StructuredMergeResult,
    header: str | None = None,
    *,
    unread_words: UnreadWords | None = None,
) -> str:
    """The ``<merge folder>/<file>.notes`` text: every conflict and suggestion, and what
    was applied, each with its values and the recommended action; a result with sides not
    read needs ``unread_words``."""
    lines = [f"# tether structured merge notes for {path}"]
    if header:
        lines.append(f"# {header}")
    lines += [f"# {summary_line(path, result, unread_words=unread_words)}", ""]
    if result.unread:
        lines += [
            f"Not merged: {_unread(result, unread_words)}",
            "The file was left as it was; merge it by hand.",
            "",
        ]
        return "\n".join(lines)
    if result.conflicts:
        lines += ["## Conflicts", ""]
        for item in result.conflicts:
            lines += _block(item, _ACTIONS[item.reason or "conflict"])
    if result.settled:
        lines += ["## Settled toward the release (--auto theirs or take-theirs)", ""]
        for item in result.settled:
            lines += _block(item, _ACTIONS["settled"])
    if result.suggestions:
        lines += ["## Suggestions", ""]
        for item in result.suggestions:
            lines += _block(item, _ACTIONS[item.reason or REASON_ADDED])
    if result.applied:
        lines += ["## Applied", ""]
        for item in result.applied:
            where = f"{item.section} " if item.section is not None else ""
            lines.append(f"{where}{item.key}: {_value(item.baseline)} -> {_value(item.latest)}")
        lines.append("")
    return "\n".join(lines)
