"""The syntax check of a clean line merge of a JSON, YAML or TOML file, within bounds.

Small files are checked in-process: with the nesting and alias limits of
``tether.parselimits`` their parse is quick. A larger one is checked in a child process
that is stopped after ``SYNTAX_CHECK_SECONDS`` or when it needs more than
``SYNTAX_CHECK_MEMORY_BYTES``; one larger than ``SYNTAX_CHECK_MAX_BYTES`` is not parsed.
A check that a limit stops does not accept the merge: a person decides.
"""

from __future__ import annotations

from tether.parselimits import (
    SYNTAX_CHECK_INLINE_BYTES,
    SYNTAX_CHECK_MAX_BYTES,
    SYNTAX_CHECK_MEMORY_BYTES,
    SYNTAX_CHECK_SECONDS,
)

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.engine.syntaxcheck import MergeCheck


def check_clean_merge(
    path: str, base: bytes, ours: bytes, theirs: bytes, merged: bytes
) -> MergeCheck | None:
    """Why the clean line merge ``merged`` of ``path`` is not accepted; None when it is
    (or the path is not JSON, YAML or TOML)."""
    from tether.engine.structured.formats import format_for_path

    if format_for_path(path) is None:
        return None
    # Loaded for a file of a format it checks only: most updates merge none.
    from tether.engine.syntaxcheck import MergeCheck, merge_breaks_syntax

    sides = (base, ours, theirs, merged)
    largest = max(len(side) for side in sides)
    if largest <= SYNTAX_CHECK_INLINE_BYTES:
        return merge_breaks_syntax(path, *sides)
    if largest > SYNTAX_CHECK_MAX_BYTES:
        limit = SYNTAX_CHECK_MAX_BYTES // (1 << 20)
        return MergeCheck(f"larger than {limit} MiB, the most tether parses", checked=False)
    from tether.syntax_child import check_in_child

    return check_in_child(path, sides, SYNTAX_CHECK_SECONDS, SYNTAX_CHECK_MEMORY_BYTES)
