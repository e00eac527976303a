"""Three-way line merge with diff3 semantics, byte-compatible with ``git merge-file --diff3``.

Changes both sides made to different lines are combined, a change both sides made identically
is taken once, and changes that overlap or touch (an edit directly next to the other side's
edit, or two insertions at the same place) become one conflict hunk with diff3 markers. The
merged bytes equal ``git merge-file --diff3 -p`` on the same LF text (the test-suite checks
this on generated and hand-written cases); on top of that:

* a file changed on one side only never reaches the line merge;
* binary input (a NUL byte in the first 8,000 bytes of any side) is never merged as text;
* line endings are compared LF-normalised, and the result is written in the adopter's style,
  so a CRLF checkout merges cleanly against LF releases;
* the adopter's UTF-8 BOM state is kept;
* text that is not UTF-8 is merged as bytes (lines end at ``\\n``), so it is never re-encoded.
"""

from __future__ import annotations

from collections import Counter
from itertools import count

from tether.engine.diff import Change, diff_lines
from tether.engine.textfmt import (
    UTF8_BOM,
    eol_style,
    from_lf,
    is_binary,
    split_bom,
    to_lf,
)
from tether.valueclass import valueclass

_MARKER_SIZE = 7

# The sides a clashing hunk may be settled toward, as git's ``merge-file --ours/--theirs``
# (``merge -X ours/theirs``): every change that does not clash is merged from both sides, and
# only the hunks that would be conflicts take the named side's lines.
FAVORS = ("ours", "theirs")


TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import Protocol

    class LineMerge(Protocol):
        """The line merge proper: (base, ours, theirs as LF text, labels, favor) -> (merged,
        clashing hunks). With ``favor`` the clashing hunks take that side's lines (no markers)
        and the count says how many did. The default is this module's ``merge_lines``; a caller
        may hand in another one that gives the same bytes (``git merge-file``, for inputs past
        the bounds below)."""

        def __call__(
            self,
            base: bytes,
            ours: bytes,
            theirs: bytes,
            labels: tuple[str, str, str],
            favor: str | None = None,
        ) -> tuple[bytes, int]: ...


# Past these bounds the pure line merge is no longer within 2x of ``git merge-file`` on
# repetitive text, and its memory is a large multiple of the inputs': callers hand such
# merges to git (see docs/performance.md, "Pathological merges", for the measurements).
PURE_MERGE_MAX_LINES = 2_000  # lines of the longest side
PURE_MERGE_MAX_BYTES = 1 << 20  # the three sides together

# ``git merge-file`` holds every line of the three sides in records of about this many bytes
# besides the text itself (measured, docs/performance.md). A merge whose estimate passes 4x
# the inputs' size (and a floor every small merge stays under) is not line-merged at all.
GIT_MERGE_BYTES_PER_LINE = 120
MERGE_MEMORY_FACTOR = 4
MERGE_MEMORY_FLOOR = 64 << 20


# The largest version of a file tether merges as text at all (docs/security.md, "Bounded
# inputs"). A line merge and the verification after it hold several times the inputs in
# memory (a 200 MB merge peaked at 2.8 GB); past this a file is not merged: the caller keeps
# the adopter's bytes and sets the new release's beside them, as for a binary file.
TEXT_MERGE_MAX_BYTES = 32 << 20


def merge_size_problem(*sides: bytes) -> str | None:
    """Why these versions of a file are too large to merge as text, else None."""
    largest = max((len(side) for side in sides), default=0)
    if largest <= TEXT_MERGE_MAX_BYTES:
        return None
    return (
        f"too large to merge as text (a version is {largest:,} bytes; tether merges at most "
        f"{TEXT_MERGE_MAX_BYTES:,} bytes, {TEXT_MERGE_MAX_BYTES >> 20} MiB, a version)"
    )


def _lines(side: bytes) -> int:
    return side.count(b"\n") + (1 if side and not side.endswith(b"\n") else 0)


def within_pure_bounds(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether the pure line merge is the right engine for these sides (see the bounds)."""
    if len(base) + len(ours) + len(theirs) > PURE_MERGE_MAX_BYTES:
        return False
    return max(_lines(side) for side in (base, ours, theirs)) <= PURE_MERGE_MAX_LINES


def within_memory_bounds(base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether a line merge of these sides (by git, past the pure bounds) stays within
    ``MERGE_MEMORY_FACTOR`` times the inputs' size."""
    size = len(base) + len(ours) + len(theirs)
    lines = _lines(base) + _lines(ours) + _lines(theirs)
    estimate = size + lines * GIT_MERGE_BYTES_PER_LINE
    return estimate <= max(MERGE_MEMORY_FACTOR * size, MERGE_MEMORY_FLOOR)


# A record as the diff compares it: its text, or (text,) for a last line without newline.
_Key = bytes | tuple[bytes]


@valueclass(frozen=True)
class MergeResult:
    """A three-way line merge: the merged bytes and how many hunks conflict."""

    merged: bytes  # the merged file (with diff3 conflict markers when conflicts > 0)
    conflicts: int  # number of conflict hunks, 0 = clean
    # True when the sides were not merged as text: a side is binary (or, from
    # ``flows.merging.merge_sides``, past ``TEXT_MERGE_MAX_BYTES``); merged == ours then.
    binary: bool = False
    # With a favored side: the clashing hunks that took its lines (conflicts is then 0).
    settled: int = 0


def merge3(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    *,
    labels: tuple[str, str, str] = ("ours", "base", "theirs"),
    line_merge: LineMerge | None = None,
    favor: str | None = None,
) -> MergeResult:
    """Merge the change base→theirs into ours. ``labels`` name (ours, base, theirs) in markers.
    ``line_merge`` replaces the line merge proper (default ``merge_lines``); everything
    around it (one-sided changes, binary input, line endings, BOM) stays as it is here.
    ``favor`` (one of ``FAVORS``) settles every clashing hunk toward that side, as
    ``git merge-file --ours/--theirs`` does: the result has no markers and ``settled``
    counts the hunks that took the side.

    A binary file that changed on one side only still resolves (it is not merged, just
    taken); changed on both sides it is one conflict and ``merged`` is ours unchanged (a
    binary file has no lines to favor: the caller decides for the whole file).
    """
    if favor not in (None, *FAVORS):
        raise ValueError(f"favor must be one of {FAVORS}, not {favor!r}")
    binary = is_binary(base) or is_binary(ours) or is_binary(theirs)
    taken = _one_sided(base, ours, theirs)
    if taken is not None:
        return MergeResult(taken, 0, binary)
    if binary:
        return MergeResult(ours, 1, True)
    return _merge_text(base, ours, theirs, labels, line_merge or merge_lines, favor)


def _one_sided(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The result when at most one side changed, else None."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def _merge_text(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    labels: tuple[str, str, str],
    line_merge: LineMerge,
    favor: str | None,
) -> MergeResult:
    ours_bom, ours_body = split_bom(ours)
    base_body = split_bom(base)[1]
    theirs_body = split_bom(theirs)[1]
    style = eol_style(ours_body)
    # Only a uniform style can be restored exactly; a mixed (or line-less) file is merged
    # byte for byte as git would.
    if style in ("lf", "crlf"):
        base_body, ours_body, theirs_body = to_lf(base_body), to_lf(ours_body), to_lf(theirs_body)
    if ours_body == theirs_body or theirs_body == base_body:
        # Upstream's change is already in ours, or it changed only line endings or the BOM:
        # the adopter's bytes stand.
        return MergeResult(ours, 0)
    if ours_body == base_body:
        merged, conflicts = theirs_body, 0  # the adopter changed only line endings or the BOM
    else:
        merged, conflicts = line_merge(base_body, ours_body, theirs_body, labels, favor)
    merged = from_lf(merged, style)
    if ours_bom:
        merged = UTF8_BOM + merged
    if favor is not None:
        return MergeResult(merged, 0, settled=conflicts)
    return MergeResult(merged, conflicts)


# --- the line merge proper -------------------------------------------------------------------


class _Text:
    """A file as git sees it: records ending in ``\\n`` except perhaps the last."""

    __slots__ = ("count", "ends_eol", "lines")

    def __init__(self, data: bytes) -> None:
        lines = data.split(b"\n")
        self.ends_eol = lines[-1] == b""
        if self.ends_eol:
            lines.pop()
        self.lines = lines  # without their "\n"
        self.count = len(lines)

    def keys(self) -> list[_Key]:
        """What makes two records equal: the text, and whether it ends in a newline."""
        keys: list[_Key] = list(self.lines)
        if not self.ends_eol:
            keys[-1] = (self.lines[-1],)  # "x" at the very end differs from "x\n"
        return keys

    def chunk(self, start: int, stop: int, *, close: bytes = b"") -> bytes:
        """Records ``[start, stop)``; ``close`` is appended when the last one has no newline."""
        if stop <= start:
            return b""
        text = b"\n".join(self.lines[start:stop])
        if stop < self.count or self.ends_eol:
            return text + b"\n"
        return text + close

    def ends_crlf(self, i: int) -> int:
        """1 if record i ends in CRLF, 0 if in LF, -1 if it cannot tell (git's rule).

        A last record without newline takes the previous record's ending.
        """
        if self.count == 0:
            return -1
        if i < self.count - 1 or self.ends_eol:
            return int(self.lines[i].endswith(b"\r"))
        if i == 0:
            return -1
        return int(self.lines[i - 1].endswith(b"\r"))


@valueclass()
class _Hunk:
    """A merged region: base[i0:i0+n0] is ours[i1:i1+n1] and theirs[i2:i2+n2].

    mode 0 = conflict, 1 = take ours, 2 = take theirs.
    """

    mode: int
    i0: int
    n0: int
    i1: int
    n1: int
    i2: int
    n2: int


def merge_lines(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    labels: tuple[str, str, str] = ("ours", "base", "theirs"),
    favor: str | None = None,
) -> tuple[bytes, int]:
    """diff3 merge of three byte strings split at ``\\n``: (merged bytes, conflict hunks).
    With ``favor`` each conflict hunk is that side's lines instead of markers (git's
    ``XDL_MERGE_FAVOR_OURS/THEIRS``), and the count is of the hunks settled so."""
    hunks, texts = _merge_hunks(base, ours, theirs)
    merged = _render(hunks, texts, labels, _FAVOR_MODE.get(favor or "", 0))
    return merged, sum(1 for hunk in hunks if hunk.mode == 0)


def ours_without_clashes(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """``base`` with only the changes of ``ours`` that do not clash with ``theirs``: what a
    merge favoring theirs keeps of ours, and so what the verifier holds such a merge to.
    Lines are compared as ``merge3`` compares them (BOM aside, LF-normalised when ours's
    line endings are uniform) and the result is in ours's style."""
    ours_bom, ours_body = split_bom(ours)
    base_body, theirs_body = split_bom(base)[1], split_bom(theirs)[1]
    style = eol_style(ours_body)
    if style in ("lf", "crlf"):
        base_body, ours_body, theirs_body = to_lf(base_body), to_lf(ours_body), to_lf(theirs_body)
    hunks, (base_text, ours_text, _) = _merge_hunks(base_body, ours_body, theirs_body)
    out: list[bytes] = []
    done = 0  # ours records written so far (equal to base's between hunks)
    for hunk in hunks:
        out.append(ours_text.chunk(done, hunk.i1))
        if hunk.mode == 1:
            out.append(ours_text.chunk(hunk.i1, hunk.i1 + hunk.n1))
        else:
            out.append(base_text.chunk(hunk.i0, hunk.i0 + hunk.n0))
        done = hunk.i1 + hunk.n1
    out.append(ours_text.chunk(done, ours_text.count))
    kept = from_lf(b"".join(out), style)
    return UTF8_BOM + kept if ours_bom else kept


def _merge_hunks(
    base: bytes, ours: bytes, theirs: bytes
) -> tuple[list[_Hunk], tuple[_Text, _Text, _Text]]:
    """The merged regions of the three sides, as git's xdl_do_merge finds them."""
    texts = _Text(base), _Text(ours), _Text(theirs)
    # Lines as ints, equal lines equal ints: the diff then compares small objects, mostly by
    # identity (measured: clearly quicker on 50,000-line files than comparing the bytes).
    table: dict[_Key, int] = {}
    counter = count()
    base_ids, ours_ids, theirs_ids = (
        list(map(table.setdefault, text.keys(), counter)) for text in texts
    )
    base_counts = Counter(base_ids)
    changes1 = diff_lines(base_ids, ours_ids, a_counts=base_counts)
    changes2 = diff_lines(base_ids, theirs_ids, a_counts=base_counts)
    return _combine(changes1, changes2, texts, ours_ids, theirs_ids), texts


def _combine(
    changes1: list[Change],
    changes2: list[Change],
    texts: tuple[_Text, _Text, _Text],
    ours_ids: list[int],
    theirs_ids: list[int],
) -> list[_Hunk]:
    """Walk both change lists in base order, as git does.

    A change ending before the other side's next change starts (at least one base line
    apart) is taken alone; anything else (overlapping, or merely touching) is a conflict
    unless both sides made exactly the same change.
    """
    hunks: list[_Hunk] = []
    k1 = k2 = 0
    while k1 < len(changes1) and k2 < len(changes2):
        c1, c2 = changes1[k1], changes2[k2]
        if c1.a_start + c1.a_count < c2.a_start:
            _take_alone(hunks, 1, c1, c2.b_start - c2.a_start)
            k1 += 1
            continue
        if c2.a_start + c2.a_count < c1.a_start:
            _take_alone(hunks, 2, c2, c1.b_start - c1.a_start)
            k2 += 1
            continue
        if not _same_change(c1, c2, ours_ids, theirs_ids):
            _append(hunks, 0, *_conflict_span(c1, c2))
        end1, end2 = c1.a_start + c1.a_count, c2.a_start + c2.a_count
        # The change reaching further stays to be compared with the other side's next one.
        if end1 >= end2:
            k2 += 1
        if end2 >= end1:
            k1 += 1
    for c1 in changes1[k1:]:
        _take_alone(hunks, 1, c1, texts[2].count - texts[0].count)
    for c2 in changes2[k2:]:
        _take_alone(hunks, 2, c2, texts[1].count - texts[0].count)
    return hunks


def _take_alone(hunks: list[_Hunk], side: int, change: Change, shift: int) -> None:
    """A change of one side (1 ours, 2 theirs) with nothing of the other's at its base lines:
    its own lines, and the other side's copy of those base lines (``shift`` lines away)."""
    own = (change.b_start, change.b_count)
    other = (change.a_start + shift, change.a_count)
    ours, theirs = (own, other) if side == 1 else (other, own)
    _append(hunks, side, change.a_start, change.a_count, *ours, *theirs)


def _same_change(
    c1: Change,
    c2: Change,
    ours_ids: list[int],
    theirs_ids: list[int],
) -> bool:
    return (
        c1.a_start == c2.a_start
        and c1.a_count == c2.a_count
        and c1.b_count == c2.b_count
        and ours_ids[c1.b_start : c1.b_start + c1.b_count]
        == theirs_ids[c2.b_start : c2.b_start + c2.b_count]
    )


def _conflict_span(c1: Change, c2: Change) -> tuple[int, int, int, int, int, int]:
    """The base/ours/theirs ranges covering two overlapping changes."""
    off = c1.a_start - c2.a_start
    ffo = off + c1.a_count - c2.a_count
    i0, i1, i2 = c1.a_start, c1.b_start, c2.b_start
    if off > 0:
        i0 -= off
        i1 -= off
    else:
        i2 += off
    n0 = c1.a_start + c1.a_count - i0
    n1 = c1.b_start + c1.b_count - i1
    n2 = c2.b_start + c2.b_count - i2
    if ffo < 0:
        n0 -= ffo
        n1 -= ffo
    else:
        n2 += ffo
    return i0, n0, i1, n1, i2, n2


def _append(
    hunks: list[_Hunk], mode: int, i0: int, n0: int, i1: int, n1: int, i2: int, n2: int
) -> None:
    """Add a region, folding it into the previous one when the two touch on either side."""
    if hunks:
        last = hunks[-1]
        if i1 <= last.i1 + last.n1 or i2 <= last.i2 + last.n2:
            if mode != last.mode:
                last.mode = 0
            last.n0 = i0 + n0 - last.i0
            last.n1 = i1 + n1 - last.i1
            last.n2 = i2 + n2 - last.i2
            return
    hunks.append(_Hunk(mode, i0, n0, i1, n1, i2, n2))


# A favored side as a hunk mode: a conflict hunk (mode 0) is rendered as that side's lines.
_FAVOR_MODE = {"ours": 1, "theirs": 2}


def _render(
    hunks: list[_Hunk],
    texts: tuple[_Text, _Text, _Text],
    labels: tuple[str, str, str],
    favor: int = 0,
) -> bytes:
    _, ours, theirs = texts
    out: list[bytes] = []
    done = 0  # ours records written so far
    for hunk in hunks:
        out.append(ours.chunk(done, hunk.i1))
        mode = hunk.mode or favor
        if mode == 1:
            out.append(ours.chunk(hunk.i1, hunk.i1 + hunk.n1))
        elif mode == 2:
            out.append(theirs.chunk(hunk.i2, hunk.i2 + hunk.n2))
        else:
            out.append(_conflict(hunk, texts, labels))
        done = hunk.i1 + hunk.n1
    out.append(ours.chunk(done, ours.count))
    return b"".join(out)


def _conflict(
    hunk: _Hunk, texts: tuple[_Text, _Text, _Text], labels: tuple[str, str, str]
) -> bytes:
    base, ours, theirs = texts
    eol = b"\r\n" if _needs_cr(hunk, texts) else b"\n"
    ours_label, base_label, theirs_label = (label.encode("utf-8") for label in labels)
    return b"".join(
        (
            b"<" * _MARKER_SIZE + b" " + ours_label + eol,
            ours.chunk(hunk.i1, hunk.i1 + hunk.n1, close=eol),
            b"|" * _MARKER_SIZE + b" " + base_label + eol,
            base.chunk(hunk.i0, hunk.i0 + hunk.n0, close=eol),
            b"=" * _MARKER_SIZE + eol,
            theirs.chunk(hunk.i2, hunk.i2 + hunk.n2, close=eol),
            b">" * _MARKER_SIZE + b" " + theirs_label + eol,
        )
    )


def _needs_cr(hunk: _Hunk, texts: tuple[_Text, _Text, _Text]) -> bool:
    """Markers end in CRLF when the lines around the conflict do (only for unnormalised input)."""
    base, ours, theirs = texts
    crlf = ours.ends_crlf(hunk.i1 - 1 if hunk.i1 else 0)
    if crlf:
        crlf = theirs.ends_crlf(hunk.i2 - 1 if hunk.i2 else 0)
    if crlf:
        crlf = base.ends_crlf(0)
    return crlf > 0
