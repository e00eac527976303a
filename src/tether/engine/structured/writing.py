"""Carry out planned edits on the adopter's text, one at a time, each one proven.

An edit is kept only when the new text parses to exactly the expected data and differs from
the old text only inside the edited value's lines. Anything else is refused, the file stays
as it was for that edit, and its items are reported as conflicts: a broken or reformatted
file is worse than a manual step.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from tether.engine.structured.formats import ParseProblem, parse
from tether.engine.structured.model import MISSING, Format, Op, PlannedEdit
from tether.engine.structured.textspan import Rewrite, changed_lines_ok
from tether.engine.structured.values import apply_op, same

# Writer modules by format, imported when a file of that format is first written.
_WRITERS: dict[Format, str] = {"json": "jsonwrite", "yaml": "yamlwrite", "toml": "tomlwrite"}


def _rewrites(fmt: Format, body: str, op: Op) -> list[Rewrite]:
    module = importlib.import_module(f"tether.engine.structured.{_WRITERS[fmt]}")
    candidates: list[Rewrite] = module.rewrites(body, op)
    return candidates


def write_edits(
    fmt: Format, body: str, data: dict[str, Any], edits: Sequence[PlannedEdit]
) -> tuple[str, list[PlannedEdit]]:
    """The new body and the edits that could not be written safely."""
    refused: list[PlannedEdit] = []
    for edit in edits:
        expected = apply_op(data, edit.op)
        written = None if expected is MISSING else _first_verified(fmt, body, edit.op, expected)
        if written is None:
            refused.append(edit)
            continue
        body, data = written, expected
    return body, refused


def _first_verified(fmt: Format, body: str, op: Op, expected: Any) -> str | None:
    try:
        candidates = _rewrites(fmt, body, op)
    except Exception:
        # A writer meeting a construct it does not handle must not stop the update: the
        # edit is refused and surfaces as a conflict for a person instead.
        return None
    for candidate in candidates:
        if _verified(fmt, body, candidate, expected):
            return candidate.text
    return None


def _verified(fmt: Format, old: str, candidate: Rewrite, expected: Any) -> bool:
    if not changed_lines_ok(old, candidate.text, candidate):
        return False
    try:
        reparsed = parse(fmt, candidate.text)
    except ParseProblem:
        return False
    return same(reparsed, expected)
