"""The preservation verifier: proof that a merge kept what the adopter wrote.

All comparisons are of whole lines, after BOM and CRLF normalisation (a line-ending or BOM
change is not a loss), with no length threshold. The adopter's work is the diff base → ours:
lines added or changed, and base lines deleted, each hunk at a place in ours.

1. **The proof.** A three-way merge keeps each adopter hunk verbatim, and the line just before
   and just after it too: an upstream change touching them would have been a conflict. So the
   result is accepted when every hunk, with those two context lines (or the file's start or
   end), appears in it as one contiguous block, in order. Inside a block a deleted line cannot
   have come back, and no added line can be missing. Conflict blocks count with their ours
   side (markers and the base and theirs sides are nobody's decision yet).
2. **The report.** When a block is not found, a diff ours → result says what went wrong: an
   adopter line the diff drops, with no equal line inserted in that same hunk (a diff may
   pair equal lines either way), is *missing*; a deleted base line that the diff inserts at
   the adopter's place is *re-added*. A line equal to one elsewhere in ours is not an
   insertion, so it raises nothing.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence
from itertools import count

from tether.engine.diff import Change, diff_lines
from tether.engine.textfmt import eol_style, split_bom, to_lf
from tether.valueclass import valueclass

# A line as merge3 compares it: its text, or (text,) for a last line without newline.
_Line = bytes | tuple[bytes]
TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import TypeVar

    _L = TypeVar("_L", bound=_Line)


@valueclass(frozen=True)
class VerifyResult:
    """Whether a merge kept every line the adopter added, changed or deleted, and which not."""

    preserved: bool
    # (line number in ours, text) of adopter-added/changed lines absent from the result
    missing: list[tuple[int, str]]
    # (line number in base, text) of lines the adopter deleted that reappear in the result
    readded: list[tuple[int, str]]


def verify_preserved(base: bytes, ours: bytes, result: bytes) -> VerifyResult:
    """Check that ``result`` keeps every line the adopter added or changed in ``ours``
    relative to ``base``, in order, and brings back none of the lines they deleted."""
    if _proved(*_merge_view(base, ours, result)):
        return VerifyResult(True, [], [])
    base_lines, ours_lines = _lines(base), _lines(ours)
    result_lines = _resolve_conflicts(_lines(result))
    if _proved(base_lines, ours_lines, result_lines):
        return VerifyResult(True, [], [])
    base_ids, ours_ids, result_ids = _ids(base_lines, ours_lines, result_lines)
    adopter = diff_lines(base_ids, ours_ids)
    merge = diff_lines(ours_ids, result_ids)
    missing = _missing(adopter, merge, ours_ids, result_ids)
    readded = _readded(adopter, merge, base_ids, result_ids)
    return VerifyResult(
        not missing and not readded,
        [(i + 1, _text(ours_lines[i])) for i in missing],
        [(i + 1, _text(base_lines[i])) for i in readded],
    )


def _proved(base: Sequence[Hashable], ours: Sequence[Hashable], result: Sequence[Hashable]) -> bool:
    base_ids, ours_ids, result_ids = _ids(base, ours, result)
    if ours_ids == result_ids:
        return True
    return _blocks_kept(diff_lines(base_ids, ours_ids), ours_ids, result_ids)


def _ids(*files: Sequence[Hashable]) -> list[list[int]]:
    """Equal lines as the same int (the diff's fast path; see tether.engine.diff)."""
    table: dict[Hashable, int] = {}
    counter = count()
    return [list(map(table.setdefault, lines, counter)) for lines in files]


def _merge_view(base: bytes, ours: bytes, result: bytes) -> list[list[_Line]]:
    """The lines as merge3 compared them (line endings normalised only when ours's style is
    uniform; a last line without newline differs from the same line with one), so the proof
    sees the same hunks the merge saw."""
    bodies = [split_bom(data)[1] for data in (base, ours, result)]
    if eol_style(bodies[1]) in ("lf", "crlf"):
        bodies = [to_lf(body) for body in bodies]
    views: list[list[_Line]] = []
    for body in bodies:
        parts = body.split(b"\n")
        last = parts.pop()
        lines: list[_Line] = list(parts)
        if last:
            lines.append((last,))
        views.append(lines)
    views[2] = _resolve_conflicts(views[2])
    ours_last, result_last = views[1][-1:], views[2][-1:]
    if (
        ours_last
        and result_last
        and isinstance(ours_last[0], tuple)
        and result_last[0] == ours_last[0][0]
        and _marker(bodies[2].rstrip(b"\n").rpartition(b"\n")[2], b">")
    ):
        # merge3 ends every side of a conflict with a newline; the ours side of a conflict
        # at the very end stands for ours's last line, which had none.
        views[2][-1] = ours_last[0]
    return views


def _blocks_kept(adopter: list[Change], ours: list[int], result: list[int]) -> bool:
    """Does every adopter hunk, with one line of context each side, appear in order?

    A hunk at the start (end) of ours has no line before (after) it: its block must then
    start (end) the result, as an upstream change there would have touched it. Blocks are
    placed as early as they fit, which never prevents a later block from fitting.
    """
    at = 0  # where the next block may start in the result
    shared = -1  # ours index of the previous block's last line
    for hunk in adopter:
        end = hunk.b_start + hunk.b_count
        first, last = max(hunk.b_start - 1, 0), min(end + 1, len(ours))
        block = ours[first:last]
        if first == shared:  # two hunks one line apart share that line
            at -= 1
        if hunk.b_start == 0:
            fits = result == block if end == len(ours) else result[: len(block)] == block
            found = 0 if at == 0 and fits else -1
        elif end == len(ours):
            found = len(result) - len(block)
            found = found if found >= at and result[found:] == block else -1
        else:
            found = _find_block(result, block, at)
        if found < 0:
            return False
        at, shared = found + len(block), last - 1
    return True


def _find_block(lines: list[int], block: list[int], start: int) -> int:
    """The first index >= ``start`` where ``block`` occurs in ``lines``, or -1."""
    if not block:
        return start
    head, size = block[0], len(block)
    try:
        while True:
            start = lines.index(head, start)
            if lines[start : start + size] == block:
                return start
            start += 1
    except ValueError:
        return -1


def _lines(data: bytes) -> list[bytes]:
    """Whole lines without their ending; a missing final newline does not make a difference."""
    text = to_lf(split_bom(data)[1])
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")


def _missing(
    adopter: list[Change], merge: list[Change], ours: list[int], result: list[int]
) -> list[int]:
    """Indexes in ours of adopter lines the result lost, in order."""
    added = {i for hunk in adopter for i in range(hunk.b_start, hunk.b_start + hunk.b_count)}
    lost: list[int] = []
    for hunk in merge:
        dropped = [i for i in range(hunk.a_start, hunk.a_start + hunk.a_count) if i in added]
        if dropped:
            inserted = list(range(hunk.b_start, hunk.b_start + hunk.b_count))
            found = _match_in_order(dropped, ours, inserted, result)
            lost.extend(i for i in dropped if i not in found)
    return lost


def _readded(
    adopter: list[Change], merge: list[Change], base: list[int], result: list[int]
) -> list[int]:
    """Indexes in base of lines the adopter deleted that the merge put back at their place."""
    starts = [hunk.a_start for hunk in merge]
    back: list[int] = []
    for hunk in adopter:
        if not hunk.a_count:
            continue
        place_start, place_end = hunk.b_start, hunk.b_start + hunk.b_count
        inserted: list[int] = []
        # Merge hunks whose span in ours, ends included, meets the adopter's place.
        k = max(0, bisect_left(starts, place_start) - 1)
        while k < len(merge) and merge[k].a_start <= place_end:
            near = merge[k]
            if near.a_start + near.a_count >= place_start:
                inserted.extend(range(near.b_start, near.b_start + near.b_count))
            k += 1
        deleted = list(range(hunk.a_start, hunk.a_start + hunk.a_count))
        back.extend(sorted(_match_in_order(deleted, base, inserted, result)))
    return back


def _match_in_order(
    wanted: list[int], wanted_ids: list[int], offered: list[int], offered_ids: list[int]
) -> set[int]:
    """The ``wanted`` lines found, in order, among the ``offered`` lines (greedy)."""
    found: set[int] = set()
    at = 0
    for i in wanted:
        for j in range(at, len(offered)):
            if offered_ids[offered[j]] == wanted_ids[i]:
                found.add(i)
                at = j + 1
                break
    return found


# --- conflict blocks -------------------------------------------------------------------------


def _marker(line: _Line, char: bytes) -> bool:
    """A conflict marker of git's default size: 7 ``char`` alone or followed by a space."""
    if isinstance(line, tuple):  # merge3 ends every marker with a newline
        return False
    run = char * 7
    return line == run or (line.startswith(run) and line[7:8] == b" ")


def _any_marker(line: _Line) -> bool:
    return line == b"=======" or any(_marker(line, char) for char in (b"<", b"|", b">"))


def _resolve_conflicts(lines: list[_L]) -> list[_L]:
    """The lines with each well-formed conflict block replaced by its ours side."""
    resolved: list[_L] = []
    i = 0
    while i < len(lines):
        block = _conflict_at(lines, i) if _marker(lines[i], b"<") else None
        if block is None:
            resolved.append(lines[i])
            i += 1
            continue
        ours_end, block_end = block
        resolved.extend(lines[i + 1 : ours_end])
        i = block_end
    return resolved


def _conflict_at(lines: Sequence[_Line], start: int) -> tuple[int, int] | None:
    """(index ending the ours side, index after the closing marker) of the block at ``start``.

    Expects ``<<<<<<<``, optionally ``|||||||``, then ``=======`` and ``>>>>>>>``, in that order
    and with no other marker between; anything else is left as ordinary text.
    """
    ours_end = _next_marker(lines, start + 1)
    if ours_end is None:
        return None
    separator = ours_end
    if _marker(lines[ours_end], b"|"):
        found = _next_marker(lines, ours_end + 1)
        if found is None:
            return None
        separator = found
    if lines[separator] != b"=======":
        return None
    closing = _next_marker(lines, separator + 1)
    if closing is None or not _marker(lines[closing], b">"):
        return None
    return ours_end, closing + 1


def _next_marker(lines: Sequence[_Line], start: int) -> int | None:
    for i in range(start, len(lines)):
        if _any_marker(lines[i]):
            return i
    return None
