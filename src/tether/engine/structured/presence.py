"""Which path a structured file takes before any parsing: presence of the three sides."""

from __future__ import annotations

from typing import Literal

Presence = Literal["deletion", "add", "removed", "whole-file-conflict", "merge"]


def triage(baseline: bytes | None, latest: bytes | None, current: bytes | None) -> Presence:
    """``None`` means the side is absent.

    - latest absent: upstream dropped the file, it goes to the deletion sweep;
    - adopter and baseline absent: a new file, copy it;
    - adopter absent, baseline present: the adopter deleted it, respect that;
    - baseline absent, adopter present: nothing to diff upstream's change against, so the
      whole file becomes a conflict artifact;
    - all three present: field-aware merge (which may still report a parse error).
    """
    if latest is None:
        return "deletion"
    if current is None:
        return "add" if baseline is None else "removed"
    if baseline is None:
        return "whole-file-conflict"
    return "merge"
