"""The structured merge of one file: parse three sides, judge, write, report."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tether.engine.structured.formats import ParseProblem, Text, decode, format_for_path, parse
from tether.engine.structured.model import (
    REASON_WRITE_UNSAFE,
    Format,
    Item,
    Role,
    RuleSet,
    StructuredMergeResult,
)
from tether.engine.structured.verdict import compute
from tether.engine.structured.writing import write_edits
from tether.model.plan import SideFault, SideProblem

_ROLES: tuple[Role, ...] = ("baseline", "latest", "current")


def merge_structured(
    path: str,
    rules: RuleSet,
    baseline: bytes,
    latest: bytes,
    current: bytes,
    settle: str | None = None,
) -> StructuredMergeResult:
    """Apply upstream's changes to managed keys of ``current``; never raises on bad input.
    ``settle="latest"`` also writes each conflicting key's latest value (``settled``).

    A side that does not parse (or is too large) gives a result with ``unread`` set and
    ``new_text`` equal to ``current``: an unparsable file is never rewritten.
    """
    fmt = rules.format or format_for_path(path)
    if fmt is None:
        raise ValueError(f"{path}: cannot tell the format of a structured file")
    too_large = oversized(baseline, latest, current)
    if too_large is not None:
        return StructuredMergeResult(path, (), (), (), current, (too_large,))
    loaded: dict[Role, tuple[Text, dict[str, Any]]] = {}
    problems: list[SideProblem] = []
    for role, data in zip(_ROLES, (baseline, latest, current), strict=True):
        try:
            text = decode(data)
            loaded[role] = (text, parse(fmt, text.body))
        except ParseProblem as problem:
            problems.append(SideProblem(role, SideFault.NOT_PARSED, str(problem)))
    if problems:
        return StructuredMergeResult(path, (), (), (), current, tuple(problems))
    return _merge_parsed(path, fmt, rules, loaded, current, settle)


def oversized(baseline: bytes, latest: bytes, current: bytes) -> SideProblem | None:
    """The first side too large for a field-aware merge; None when none is.
    Parsing, judging and verifying every edit cost several passes of a pure-Python parser,
    so the size is bounded before any of it starts."""
    from tether.parselimits import STRUCTURED_MERGE_MAX_BYTES

    for role, data in zip(_ROLES, (baseline, latest, current), strict=True):
        if len(data) > STRUCTURED_MERGE_MAX_BYTES:
            limit = STRUCTURED_MERGE_MAX_BYTES // 1024
            return SideProblem(role, SideFault.TOO_LARGE, limit_kib=limit)
    return None


def _merge_parsed(
    path: str,
    fmt: Format,
    rules: RuleSet,
    loaded: dict[Role, tuple[Text, dict[str, Any]]],
    current: bytes,
    settle: str | None = None,
) -> StructuredMergeResult:
    current_text, current_data = loaded["current"]
    verdicts = compute(rules, loaded["baseline"][1], loaded["latest"][1], current_data, settle)
    applied, conflicts = list(verdicts.applied), list(verdicts.conflicts)
    settled = list(verdicts.settled)
    new_bytes = current
    if verdicts.edits:
        body, refused = write_edits(fmt, current_text.body, current_data, verdicts.edits)
        unwritten = [item for edit in refused for item in edit.items]
        unwritten_ids = {id(item) for item in unwritten}
        applied = [item for item in applied if id(item) not in unwritten_ids]
        settled = [item for item in settled if id(item) not in unwritten_ids]
        conflicts += [replace(item, reason=REASON_WRITE_UNSAFE) for item in unwritten]
        if body != current_text.body:
            new_bytes = current_text.encode(body)
    return StructuredMergeResult(
        path=path,
        applied=_sorted(applied),
        conflicts=_sorted(conflicts),
        suggestions=_sorted(verdicts.suggestions),
        new_text=new_bytes,
        settled=_sorted(settled),
    )


def _sorted(items: list[Item]) -> tuple[Item, ...]:
    return tuple(sorted(items, key=Item.sort_key))
