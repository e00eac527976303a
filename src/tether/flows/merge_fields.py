"""``tether merge-fields``: the field-aware merge of one file, for scripts and agents; with
``write`` the applied items land in the current file in place."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tether.errors import Exit, TetherError
from tether.fsio import atomic_write, read_named_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from tether.engine.structured.model import StructuredMergeResult
    from tether.model.plan import SideProblem

ROLES = ("baseline", "latest", "current")


@dataclass(frozen=True)
class FieldsReport:
    """The merge of ``current`` and whether it was written (``write_asked``: --write given)."""

    current: str
    result: StructuredMergeResult
    written: bool
    write_asked: bool

    def exit_code(self) -> int:
        """4 while conflicts are left for a person (with or without ``--write``), as every
        command that leaves conflicts ends; 0 otherwise."""
        return Exit.CONFLICTS if self.result.conflicts else Exit.OK


def _read(role: str, path: str) -> bytes:
    return read_named_file(path, f"the {role} file")


def merge_fields(
    preset: str,
    baseline: str,
    latest: str,
    current: str,
    *,
    unread_words: Callable[[tuple[SideProblem, ...]], str],
    write: bool = False,
) -> FieldsReport:
    """Merge the three files with ``preset``; a file missing or not parsing is an error
    naming its role (the sides not read worded by ``unread_words``, from ``report/``)."""
    from tether.engine.structured import merge_structured, rules_for

    paths = {"baseline": baseline, "latest": latest, "current": current}
    sides = {role: _read(role, paths[role]) for role in ROLES}
    try:
        rules = rules_for(current, {"preset": preset})
    except ValueError as error:
        raise TetherError(str(error)) from None
    result = merge_structured(current, rules, sides["baseline"], sides["latest"], sides["current"])
    if result.unread:
        raise TetherError(unread_words(result.unread))
    written = write and result.new_text != sides["current"]
    if written:
        atomic_write(Path(current), result.new_text)
    return FieldsReport(current, result, written, write)
