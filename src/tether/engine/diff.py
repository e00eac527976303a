"""Line diff with the same alignment as git's default (Myers) diff.

A three-way merge is only as good as the two diffs under it: where a diff places an inserted
line decides whether two edits touch, and so whether the merge is clean. To give the same
clean/conflict answers and the same merged bytes as ``git merge-file``, this module follows
the observable behaviour of git's diff step by step (written from a study of that behaviour,
not copied):

1. trim the common head and tail of the two files;
2. set aside lines that cannot match (they occur nowhere in the other file), and lines that
   occur very often when they sit in a run of such lines, so the core search sees less;
3. Myers' O(ND) divide-and-conquer search for a middle snake, with git's cut-offs for
   expensive boxes (a good-enough snake after 256 steps, the furthest path after ~sqrt(N));
4. slide each run of changed lines up and down over equal neighbours, settling where it lines
   up with a change in the other file, else as low as it goes;
5. read off the hunks.

Any hashable lines work; callers that care about speed pass lines interned to ints (equal
lines the same int object), so most comparisons are decided by identity. The long equal runs
that dominate real files are compared with list slices, which run at C speed. Every step is
checked against git by the differential tests in ``tests/engine/test_textmerge.py``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import repeat

# git's tuning constants for the search, kept so the alignment matches.
_MAX_COST_MIN = 256  # the search may give up no earlier than this many steps
_HEUR_MIN_COST = 256  # after this many steps a long enough snake is good enough
_SNAKE_CNT = 20  # "long enough"
_K_HEUR = 4
_MAX_EQLIMIT = 1024  # a line seen this often is "multi-match"
_SIMSCAN_WINDOW = 100
_KPDIS_RUN = 4
_LINE_MAX = 1 << 62


# typing (NamedTuple, Generic) costs ~2 ms of start-up, which every update pays: the records
# below are classes with slots, as quick to make and to read as named tuples.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    Line = TypeVar("Line", bound=Hashable)


class Change:
    """``a[a_start:a_start + a_count]`` became ``b[b_start:b_start + b_count]``."""

    __slots__ = ("a_count", "a_start", "b_count", "b_start")

    def __init__(self, a_start: int, a_count: int, b_start: int, b_count: int) -> None:
        self.a_start = a_start
        self.a_count = a_count
        self.b_start = b_start
        self.b_count = b_count

    def _key(self) -> tuple[int, int, int, int]:
        return (self.a_start, self.a_count, self.b_start, self.b_count)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Change) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "Change(a_start={}, a_count={}, b_start={}, b_count={})".format(*self._key())


def diff_lines(
    a: Sequence[Line],
    b: Sequence[Line],
    *,
    a_counts: Counter[Line] | None = None,
    b_counts: Counter[Line] | None = None,
) -> list[Change]:
    """The hunks turning ``a`` into ``b``, in order; lines are compared with ``==``.

    ``a_counts``/``b_counts`` (``Counter(a)``, ``Counter(b)``) may be passed when the caller
    already has them, e.g. the base of a three-way merge, diffed twice.
    """
    a = a if isinstance(a, list) else list(a)
    b = b if isinstance(b, list) else list(b)
    if a == b:
        return []
    n1, n2 = len(a), len(b)
    # One change flag per line plus a trailing 0, which also answers index -1: the sentinel
    # on both sides that lets the sliding loops below run without bounds checks. A bytearray,
    # so finding the next changed or unchanged line is a memchr.
    rchg1 = bytearray(n1 + 1)
    rchg2 = bytearray(n2 + 1)
    head = _run_forward(a, b, 0, 0, min(n1, n2))
    tail = _run_backward(a, b, n1, n2, min(n1, n2) - head)
    limit1 = min(_bogosqrt(n1), _MAX_EQLIMIT)
    limit2 = min(_bogosqrt(n2), _MAX_EQLIMIT)
    b_counts = Counter(b) if b_counts is None else b_counts
    a_counts = Counter(a) if a_counts is None else a_counts
    side1 = _reduce(a, head, n1 - tail, b_counts, limit1, rchg1)
    side2 = _reduce(b, head, n2 - tail, a_counts, limit2, rchg2)
    _search(side1, side2, rchg1, rchg2)
    _compact(a, rchg1, n1, rchg2, n2)
    _compact(b, rchg2, n2, rchg1, n1)
    return _script(rchg1, n1, rchg2, n2)


# --- equal runs ------------------------------------------------------------------------------


def _run_forward(a: list[Line], b: list[Line], i: int, j: int, limit: int) -> int:
    """How many of ``a[i:]`` and ``b[j:]`` agree from the start (at most ``limit``)."""
    # Slices compare in C: grow the compared window until it differs, then halve it.
    k, step = 0, 16
    while k + step < limit and a[i + k : i + k + step] == b[j + k : j + k + step]:
        k += step
        step <<= 1
    if k + step >= limit:
        if a[i + k : i + limit] == b[j + k : j + limit]:
            return limit
        step = limit - k
    while step > 8:
        half = step >> 1
        if a[i + k : i + k + half] == b[j + k : j + k + half]:
            k += half
            step -= half
        else:
            step = half
    while a[i + k] == b[j + k]:  # a mismatch lies within the next ``step`` lines
        k += 1
    return k


def _run_backward(a: list[Line], b: list[Line], i: int, j: int, limit: int) -> int:
    """How many of ``a[:i]`` and ``b[:j]`` agree from the end (at most ``limit``)."""
    k, step = 0, 16
    while k + step < limit and a[i - k - step : i - k] == b[j - k - step : j - k]:
        k += step
        step <<= 1
    if k + step >= limit:
        if a[i - limit : i - k] == b[j - limit : j - k]:
            return limit
        step = limit - k
    while step > 8:
        half = step >> 1
        if a[i - k - half : i - k] == b[j - k - half : j - k]:
            k += half
            step -= half
        else:
            step = half
    while a[i - k - 1] == b[j - k - 1]:
        k += 1
    return k


# --- step 2: set aside lines that cannot match -----------------------------------------------


def _bogosqrt(n: int) -> int:
    """git's power-of-two approximation of sqrt(n), used for its limits."""
    root = 1
    while n > 0:
        n >>= 2
        root <<= 1
    return root


class _Side:
    """The lines the search sees, and where they sit in the whole file."""

    __slots__ = ("gaps", "lines", "start")

    def __init__(self, lines: list[Any], start: int, gaps: list[int]) -> None:
        self.lines = lines  # the lines of one call to diff_lines (its Line)
        self.start = start  # lines[0] is at this position in the file when nothing was set aside
        self.gaps = gaps  # gaps[i]: lines kept before the i-th line set aside (sorted)

    def position(self, k: int) -> int:
        return self.start + k + bisect_right(self.gaps, k)


def _reduce(
    lines: list[Line], start: int, end: int, other: Counter[Line], limit: int, rchg: bytearray
) -> _Side:
    """Keep for the search the middle lines that occur on the other side (see _discard_common).

    Lines that cannot match are marked changed at once. The passes over every line run in C
    (map, list.index, slices); Python only visits the few lines without a match.
    """
    middle = lines[start:end]
    matches = list(map(other.get, middle, repeat(0)))
    unmatched = _positions_of(matches, 0)
    if not unmatched:
        return _Side(middle, start, [])
    dropped = sorted(_discard_common(matches, limit, unmatched).union(unmatched))
    kept: list[Line] = []
    previous = 0
    for k in dropped:
        rchg[start + k] = 1
        kept += middle[previous:k]
        previous = k + 1
    kept += middle[previous:]
    return _Side(kept, start, [k - rank for rank, k in enumerate(dropped)])


def _positions_of(values: Sequence[int], value: int) -> list[int]:
    """Where ``value`` occurs in ``values`` (quick when it is rare: list.index runs in C)."""
    found = []
    at = 0
    try:
        while True:
            at = values.index(value, at)
            found.append(at)
            at += 1
    except ValueError:
        return found


def _discard_common(matches: list[int], limit: int, unmatched: list[int]) -> set[int]:
    """The very common lines (``limit`` or more matches) to set aside.

    Such a line goes only when, within 100 lines, the runs of unmatched-or-common lines on
    both sides of it hold unmatched lines and are mostly (over 3/4) unmatched. So only the
    common lines in a run of unmatched-or-common lines around an unmatched one can go.
    """
    candidates: list[int] = []
    walked = -1  # lines up to here belong to a run already collected
    size = len(matches)
    for zero in unmatched:
        if zero <= walked:
            continue
        j = zero - 1
        while j > walked:
            m = matches[j]
            if 0 < m < limit:
                break
            if m:
                candidates.append(j)
            j -= 1
        j = zero + 1
        while j < size:
            m = matches[j]
            if 0 < m < limit:
                break
            if m:
                candidates.append(j)
            j += 1
        walked = j
    return {k for k in candidates if _discard_multimatch(matches, limit, k)}


def _discard_multimatch(matches: list[int], limit: int, i: int) -> bool:
    """git's test for one common line: unmatched lines on both sides, and few common ones."""
    last = min(len(matches) - 1, i + _SIMSCAN_WINDOW)
    first = max(0, i - _SIMSCAN_WINDOW)
    unmatched_before, common_before = _scan_run(matches, limit, range(i - 1, first - 1, -1))
    if unmatched_before == 0:
        return False
    unmatched_after, common_after = _scan_run(matches, limit, range(i + 1, last + 1))
    if unmatched_after == 0:
        return False
    unmatched = unmatched_before + unmatched_after
    common = common_before + common_after
    return common * _KPDIS_RUN < common + unmatched


def _scan_run(matches: list[int], limit: int, positions: range) -> tuple[int, int]:
    """(unmatched, common + 1) lines before the first ordinary line along ``positions``."""
    unmatched, common = 0, 1
    for k in positions:
        m = matches[k]
        if m == 0:
            unmatched += 1
        elif m >= limit:
            common += 1
        else:
            break
    return unmatched, common


# --- step 3: Myers' search -------------------------------------------------------------------


class _Split:
    __slots__ = ("i1", "i2", "minimal_high", "minimal_low")

    def __init__(self, i1: int, i2: int, minimal_low: bool, minimal_high: bool) -> None:
        self.i1 = i1
        self.i2 = i2
        self.minimal_low = minimal_low  # must the box before the split point be solved exactly?
        self.minimal_high = minimal_high


def _search(side1: _Side, side2: _Side, rchg1: bytearray, rchg2: bytearray) -> None:
    """Mark every line outside a longest (or, past git's cut-offs, long) common subsequence."""
    ha1, ha2 = side1.lines, side2.lines
    ndiags = len(ha1) + len(ha2) + 3
    # Diagonal k lives at index k; negative k uses Python's negative indexing, and the list
    # is long enough that both ends never meet.
    kvdf = [0] * ndiags
    kvdb = [0] * ndiags
    max_cost = max(_bogosqrt(ndiags), _MAX_COST_MIN)
    boxes = [(0, len(ha1), 0, len(ha2), False)]
    while boxes:
        off1, lim1, off2, lim2, need_min = boxes.pop()
        run = _run_forward(ha1, ha2, off1, off2, min(lim1 - off1, lim2 - off2))
        off1 += run
        off2 += run
        run = _run_backward(ha1, ha2, lim1, lim2, min(lim1 - off1, lim2 - off2))
        lim1 -= run
        lim2 -= run
        if off1 == lim1:
            for k in range(off2, lim2):
                rchg2[side2.position(k)] = 1
        elif off2 == lim2:
            for k in range(off1, lim1):
                rchg1[side1.position(k)] = 1
        else:
            split = _split(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, need_min, max_cost)
            boxes.append((split.i1, lim1, split.i2, lim2, split.minimal_high))
            boxes.append((off1, split.i1, off2, split.i2, split.minimal_low))


def _split(
    ha1: list[Line],
    off1: int,
    lim1: int,
    ha2: list[Line],
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    need_min: bool,
    max_cost: int,
) -> _Split:
    """Find where a shortest edit path crosses the middle of the box (Myers' middle snake).

    Forward paths start at (off1, off2), backward paths at (lim1, lim2); diagonal d holds the
    furthest i1 reached. Unless ``need_min``, the search stops early as git's does.
    """
    dmin, dmax = off1 - lim2, lim1 - off2
    fmid, bmid = off1 - off2, lim1 - lim2
    odd = (fmid - bmid) & 1
    fmin = fmax = fmid
    bmin = bmax = bmid
    kvdf[fmid] = off1
    kvdb[bmid] = lim1
    run_forward, run_backward = _run_forward, _run_backward
    cost = 0
    while True:
        cost += 1
        got_snake = False
        # Widen the forward diagonal range by one each side, or pull it in at the box edge.
        if fmin > dmin:
            fmin -= 1
            kvdf[fmin - 1] = -1
        else:
            fmin += 1
        if fmax < dmax:
            fmax += 1
            kvdf[fmax + 1] = -1
        else:
            fmax -= 1
        for d in range(fmax, fmin - 1, -2):
            low, high = kvdf[d - 1], kvdf[d + 1]
            i1 = low + 1 if low >= high else high
            i2 = i1 - d
            if i1 < lim1 and i2 < lim2 and ha1[i1] == ha2[i2]:
                room = lim1 - i1 if lim1 - i1 < lim2 - i2 else lim2 - i2
                run = 1 + run_forward(ha1, ha2, i1 + 1, i2 + 1, room - 1)
                if run > _SNAKE_CNT:
                    got_snake = True
                i1 += run
                i2 += run
            kvdf[d] = i1
            if odd and bmin <= d <= bmax and kvdb[d] <= i1:
                return _Split(i1, i2, True, True)

        if bmin > dmin:
            bmin -= 1
            kvdb[bmin - 1] = _LINE_MAX
        else:
            bmin += 1
        if bmax < dmax:
            bmax += 1
            kvdb[bmax + 1] = _LINE_MAX
        else:
            bmax -= 1
        for d in range(bmax, bmin - 1, -2):
            low, high = kvdb[d - 1], kvdb[d + 1]
            i1 = low if low < high else high - 1
            i2 = i1 - d
            if i1 > off1 and i2 > off2 and ha1[i1 - 1] == ha2[i2 - 1]:
                room = i1 - off1 if i1 - off1 < i2 - off2 else i2 - off2
                run = 1 + run_backward(ha1, ha2, i1 - 1, i2 - 1, room - 1)
                if run > _SNAKE_CNT:
                    got_snake = True
                i1 -= run
                i2 -= run
            kvdb[d] = i1
            if not odd and fmin <= d <= fmax and i1 <= kvdf[d]:
                return _Split(i1, i2, True, True)

        if need_min:
            continue
        if got_snake and cost > _HEUR_MIN_COST:
            found = _good_snake(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, fmin, fmax, cost)
            if found is None:
                found = _good_snake_back(ha1, off1, lim1, ha2, off2, lim2, kvdb, bmin, bmax, cost)
            if found is not None:
                return found
        if cost >= max_cost:
            return _furthest(off1, lim1, off2, lim2, kvdf, kvdb, fmin, fmax, bmin, bmax)


def _good_snake(
    ha1: list[Line],
    off1: int,
    lim1: int,
    ha2: list[Line],
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    fmin: int,
    fmax: int,
    cost: int,
) -> _Split | None:
    """A forward path that went far, close to the middle diagonal, and ends a long snake."""
    # This and _good_snake_back (as the other forward/backward pairs here) are kept as mirror
    # images rather than one function over a direction: each half reads against git's own
    # xdiff line by line, which is how the byte-for-byte agreement with git is kept.
    fmid = off1 - off2
    best = 0
    found: _Split | None = None
    for d in range(fmax, fmin - 1, -2):
        i1 = kvdf[d]
        i2 = i1 - d
        value = (i1 - off1) + (i2 - off2) - abs(d - fmid)
        if (
            value > _K_HEUR * cost
            and value > best
            and off1 + _SNAKE_CNT <= i1 < lim1
            and off2 + _SNAKE_CNT <= i2 < lim2
            and ha1[i1 - _SNAKE_CNT : i1] == ha2[i2 - _SNAKE_CNT : i2]
        ):
            best = value
            found = _Split(i1, i2, True, False)
    return found


def _good_snake_back(
    ha1: list[Line],
    off1: int,
    lim1: int,
    ha2: list[Line],
    off2: int,
    lim2: int,
    kvdb: list[int],
    bmin: int,
    bmax: int,
    cost: int,
) -> _Split | None:
    """The backward twin of :func:`_good_snake`."""
    bmid = lim1 - lim2
    best = 0
    found: _Split | None = None
    for d in range(bmax, bmin - 1, -2):
        i1 = kvdb[d]
        i2 = i1 - d
        value = (lim1 - i1) + (lim2 - i2) - abs(d - bmid)
        if (
            value > _K_HEUR * cost
            and value > best
            and off1 < i1 <= lim1 - _SNAKE_CNT
            and off2 < i2 <= lim2 - _SNAKE_CNT
            and ha1[i1 : i1 + _SNAKE_CNT] == ha2[i2 : i2 + _SNAKE_CNT]
        ):
            best = value
            found = _Split(i1, i2, False, True)
    return found


def _furthest(
    off1: int,
    lim1: int,
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    fmin: int,
    fmax: int,
    bmin: int,
    bmax: int,
) -> _Split:
    """Give up on the optimum: split at whichever path, forward or back, got furthest."""
    fbest = fbest1 = -1
    for d in range(fmax, fmin - 1, -2):
        i1 = min(kvdf[d], lim1)
        i2 = i1 - d
        if lim2 < i2:
            i1, i2 = lim2 + d, lim2
        if fbest < i1 + i2:
            fbest, fbest1 = i1 + i2, i1
    bbest = bbest1 = _LINE_MAX
    for d in range(bmax, bmin - 1, -2):
        i1 = max(off1, kvdb[d])
        i2 = i1 - d
        if i2 < off2:
            i1, i2 = off2 + d, off2
        if i1 + i2 < bbest:
            bbest, bbest1 = i1 + i2, i1
    if (lim1 + lim2) - bbest < fbest - (off1 + off2):
        return _Split(fbest1, fbest - fbest1, True, False)
    return _Split(bbest1, bbest - bbest1, False, True)


# --- step 4: slide runs of changed lines -----------------------------------------------------


def _compact(ids: list[Line], rchg: bytearray, n: int, rchg_o: bytearray, n_o: int) -> None:
    """Slide each run of changed lines in one file to a canonical place.

    Group j of a file is the (possibly empty) run of changed lines after its j-th unchanged
    line; group j of one file pairs with group j of the other. Each non-empty group is slid
    up, then down as far as it goes (swallowing groups it bumps into), then back up to the
    last place where it faced a non-empty group of the other file, if there was one.
    """
    # The other file does not change during this pass: its non-empty groups.
    facing = {run[0] for run in _runs(rchg_o, n_o)}
    start = rchg.find(1, 0, n)
    if start < 0:
        return
    end = rchg.find(0, start)
    group = start  # index of this group = unchanged lines above it
    while True:
        start, end, group = _settle(ids, rchg, n, facing, start, end, group)
        if end == n:
            return
        following = rchg.find(1, end + 1, n)
        if following < 0:
            return
        group += following - end  # every unchanged line passed is one (empty) group
        start = following
        end = rchg.find(0, following)


def _settle(
    ids: list[Line],
    rchg: bytearray,
    n: int,
    facing: set[int],
    start: int,
    end: int,
    group: int,
) -> tuple[int, int, int]:
    while True:
        size = end - start
        matching_end = -1
        while start > 0 and ids[start - 1] == ids[end - 1]:
            start, end = _slide_up(rchg, start, end)
            group -= 1
        earliest_end = end
        if group in facing:
            matching_end = end
        while end < n and ids[start] == ids[end]:
            rchg[start] = 0
            rchg[end] = 1
            start += 1
            end += 1
            while rchg[end]:
                end += 1
            group += 1
            if group in facing:
                matching_end = end
        if size == end - start:
            break
    if end != earliest_end and matching_end != -1:
        while group not in facing:
            start, end = _slide_up(rchg, start, end)
            group -= 1
    return start, end, group


def _slide_up(rchg: bytearray, start: int, end: int) -> tuple[int, int]:
    start -= 1
    end -= 1
    rchg[start] = 1
    rchg[end] = 0
    while rchg[start - 1]:
        start -= 1
    return start, end


# --- step 5: hunks ---------------------------------------------------------------------------


def _runs(rchg: bytearray, n: int) -> list[tuple[int, int, int]]:
    """(group index, start, length) of every run of changed lines."""
    runs: list[tuple[int, int, int]] = []
    pos = changed = 0
    while True:
        start = rchg.find(1, pos, n)
        if start < 0:
            return runs
        end = rchg.find(0, start)
        runs.append((start - changed, start, end - start))
        changed += end - start
        pos = end


def _script(rchg1: bytearray, n1: int, rchg2: bytearray, n2: int) -> list[Change]:
    """Pair up the runs of both files by group index: one hunk per non-empty pair."""
    runs1, runs2 = _runs(rchg1, n1), _runs(rchg2, n2)
    hunks = []
    k1 = k2 = changed1 = changed2 = 0
    none = (_LINE_MAX, 0, 0)
    while k1 < len(runs1) or k2 < len(runs2):
        group1, start1, count1 = runs1[k1] if k1 < len(runs1) else none
        group2, start2, count2 = runs2[k2] if k2 < len(runs2) else none
        group = min(group1, group2)
        if group1 == group:
            k1 += 1
        else:
            start1, count1 = group + changed1, 0
        if group2 == group:
            k2 += 1
        else:
            start2, count2 = group + changed2, 0
        changed1 += count1
        changed2 += count2
        hunks.append(Change(start1, count1, start2, count2))
    return hunks
