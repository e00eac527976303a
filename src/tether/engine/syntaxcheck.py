"""Whether a JSON, YAML or TOML text still parses after a line merge. Pure.

A line merge can be clean and still wrong for structured text: both sides adding the
same key in different places leaves it twice (git merge-file calls that clean).
"""

from __future__ import annotations

from dataclasses import dataclass

_ROLES = ("installed release's", "your", "new release's")


@dataclass(frozen=True)
class MergeCheck:
    """Why a clean line merge of a structured file is not accepted as it is."""

    problem: str  # one line
    checked: bool = True  # False: a limit stopped the check; the merge may well be fine


@dataclass(frozen=True)
class _Verdict:
    problem: str | None
    limited: bool = False


def _verdict(path: str, data: bytes) -> _Verdict:
    from tether.engine.structured.formats import (
        ParseLimit,
        ParseProblem,
        decode,
        format_for_path,
        parse,
    )

    fmt = format_for_path(path)
    if fmt is None:
        return _Verdict(None)
    try:
        parse(fmt, decode(data).body)
    except ParseLimit as limit:
        return _Verdict(str(limit), limited=True)
    except ParseProblem as problem:
        message = str(problem)
        # A top-level list or scalar is a valid document, just not one with keys.
        return _Verdict(None if message.startswith("the top level is") else message)
    return _Verdict(None)


def merge_breaks_syntax(
    path: str, base: bytes, ours: bytes, theirs: bytes, merged: bytes
) -> MergeCheck | None:
    """Why the merged text cannot be accepted: it does not parse although all three inputs
    did, or a parsing limit stopped the check. None when it parses, or when an input did
    not parse either (a line merge cannot be expected to mend it)."""
    inputs = [_verdict(path, side) for side in (base, ours, theirs)]
    if any(v.problem is not None and not v.limited for v in inputs):
        return None
    for role, verdict in zip(_ROLES, inputs, strict=True):
        if verdict.problem is not None:
            return MergeCheck(f"the {role} file: {verdict.problem}", checked=False)
    result = _verdict(path, merged)
    if result.problem is None:
        return None
    return MergeCheck(result.problem, checked=not result.limited)
