"""Which engine merges one text file: tether's own line merge within its bounds, ``git
merge-file`` past them (the same bytes: ``tests/engine/test_textmerge.py`` holds the two to each
other), and the whole file as one conflict, with a note saying why, when even git's merge
would take more than 4x the inputs' memory or git cannot do it; not at all (the adopter's
bytes kept, as for a binary file, with a note saying why) past the size tether merges as
text (``TEXT_MERGE_MAX_BYTES``). Every three-way text merge of a run goes through
:func:`merge_sides`."""

from __future__ import annotations

from tether.engine.patches import whole_file_markers
from tether.engine.textmerge import (
    MergeResult,
    merge3,
    merge_size_problem,
    ours_without_clashes,
    within_memory_bounds,
    within_pure_bounds,
)
from tether.errors import TetherError
from tether.model.plan import MergeNote, MergeNoteCode

DEFAULT_LABELS = ("ours", "base", "theirs")


def merge_sides(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    labels: tuple[str, str, str] = DEFAULT_LABELS,
    favor: str | None = None,
) -> tuple[MergeResult, MergeNote | None]:
    """The merge of base→theirs into ours, and a note (None when there is nothing to say).
    ``favor`` (``ours``/``theirs``) settles each clashing hunk toward that side, as
    ``git merge-file --ours/--theirs``; a merge too large to go line by line is then one
    clashing hunk, the whole file that side's."""
    if within_pure_bounds(base, ours, theirs):
        return merge3(base, ours, theirs, labels=labels, favor=favor), None
    from tether import git

    def whole_file(code: MergeNoteCode, detail: str = "") -> tuple[MergeResult, MergeNote]:
        note = MergeNote(code, detail, favor or "")
        if favor is not None:
            return MergeResult(ours if favor == "ours" else theirs, 0, settled=1), note
        return MergeResult(whole_file_markers(base, ours, theirs), 1), note

    def bounded_git(
        base: bytes,
        ours: bytes,
        theirs: bytes,
        labels: tuple[str, str, str],
        favor: str | None = None,
    ) -> tuple[bytes, int]:
        # Judged on the sides merge3 hands over (a one-sided change never gets here).
        too_large = merge_size_problem(base, ours, theirs)
        if too_large is not None:
            raise _NotMerged(too_large)
        if not within_memory_bounds(base, ours, theirs):
            raise _TooBig
        return git.merge_file(base, ours, theirs, labels, favor)

    try:
        merged = merge3(base, ours, theirs, labels=labels, line_merge=bounded_git, favor=favor)
        return merged, None
    except _NotMerged as stop:
        # Neither merged nor marked (a whole-file conflict would write the three versions
        # into one file, and be verified): the adopter's bytes stay, as for a binary file.
        return MergeResult(ours, 1, binary=True), MergeNote(MergeNoteCode.PAST_TEXT_SIZE, str(stop))
    except _TooBig:
        return whole_file(MergeNoteCode.MEMORY_BOUND)
    except TetherError as error:
        return whole_file(MergeNoteCode.GIT_FAILED, str(error))


def favored_must_keep(base: bytes, ours: bytes, theirs: bytes, favor: str) -> bytes:
    """What the verifier holds a merge favoring ``favor`` to, as the "ours" of its check
    (every line added to ``base`` in it is there, every line deleted stays deleted):
    ``ours`` itself when ours won the clashes; for ``theirs``, ours without the hunks that
    clashed (the person chose to drop those), and past the pure merge's bounds, where that
    is not worked out, ``theirs`` (every upstream change is in such a merge)."""
    if favor == "ours":
        return ours
    if within_pure_bounds(base, ours, theirs):
        return ours_without_clashes(base, ours, theirs)
    return theirs


class _TooBig(Exception):
    """The line merge of these sides would pass the memory bound."""


class _NotMerged(Exception):
    """The sides are past the size tether merges as text at all; the message says why."""
