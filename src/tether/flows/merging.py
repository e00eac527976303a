"""Which engine merges one text file: tether's own line merge within its bounds, ``git
merge-file`` past them (the same bytes: ``tests/test_textmerge.py`` holds the two to each
other), and when git cannot be run, the whole file as one conflict, with a note saying why.
Every three-way text merge of a run goes through :func:`merge_sides`."""

from __future__ import annotations

from tether.engine.patches import whole_file_markers
from tether.engine.textmerge import MergeResult, merge3, within_pure_bounds
from tether.errors import TetherError

DEFAULT_LABELS = ("ours", "base", "theirs")


def merge_sides(
    base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str, str] = DEFAULT_LABELS
) -> tuple[MergeResult, str]:
    """The merge of base→theirs into ours, and a note ("" when there is nothing to say)."""
    if within_pure_bounds(base, ours, theirs):
        return merge3(base, ours, theirs, labels=labels), ""
    from tether import git

    try:
        return merge3(base, ours, theirs, labels=labels, line_merge=git.merge_file), ""
    except TetherError as error:
        note = f"too large for tether's own line merge, and {error}: the whole file is one conflict"
        return MergeResult(whole_file_markers(base, ours, theirs), 1), note
