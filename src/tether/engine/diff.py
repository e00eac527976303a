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

Lines are compared as small ints (see :func:`intern_lines`), and the long equal runs that
dominate real files are compared with list slices, which run at C speed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from itertools import compress, count, pairwise, repeat
from operator import not_
from typing import NamedTuple

# git's tuning constants for the search, kept so the alignment matches.
_MAX_COST_MIN = 256  # the search may give up no earlier than this many steps
_HEUR_MIN_COST = 256  # after this many steps a long enough snake is good enough
_SNAKE_CNT = 20  # "long enough"
_K_HEUR = 4
_MAX_EQLIMIT = 1024  # a line seen this often is "multi-match"
_SIMSCAN_WINDOW = 100
_KPDIS_RUN = 4
_LINE_MAX = 1 << 62


class Change(NamedTuple):
    """``a[a_start:a_start + a_count]`` became ``b[b_start:b_start + b_count]``."""

    a_start: int
    a_count: int
    b_start: int
    b_count: int


def intern_lines(*files: Iterable[Hashable]) -> list[list[int]]:
    """Map every line to an int, equal lines to the same int, across all ``files``."""
    table: dict[Hashable, int] = {}
    counter = count()
    # setdefault runs in C; ids need only be equal for equal lines, not dense.
    return [list(map(table.setdefault, lines, counter)) for lines in files]


def diff_lines(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Change]:
    """The hunks turning ``a`` into ``b``, lines compared with ``==``."""
    ids_a, ids_b = intern_lines(a, b)
    return diff_ids(ids_a, ids_b)


def diff_ids(a: list[int], b: list[int]) -> list[Change]:
    """The hunks turning ``a`` into ``b`` (lines already interned), in order."""
    if a == b:
        return []
    n1, n2 = len(a), len(b)
    # One change flag per line plus a trailing 0, which also answers index -1: the sentinel
    # on both sides that lets the sliding loops below run without bounds checks.
    rchg1 = [0] * (n1 + 1)
    rchg2 = [0] * (n2 + 1)
    head = _run_forward(a, b, 0, 0, min(n1, n2))
    tail = _run_backward(a, b, n1, n2, min(n1, n2) - head)
    side1, side2 = _reduce(a, b, head, n1 - tail, n2 - tail, rchg1, rchg2)
    _search(side1, side2, rchg1, rchg2)
    _compact(a, rchg1, n1, rchg2, n2)
    _compact(b, rchg2, n2, rchg1, n1)
    return _script(rchg1, n1, rchg2, n2)


# --- equal runs ------------------------------------------------------------------------------


def _run_forward(a: list[int], b: list[int], i: int, j: int, limit: int) -> int:
    """How many of ``a[i:]`` and ``b[j:]`` agree from the start (at most ``limit``)."""
    k = 0
    step = 8
    while k < limit:
        size = step if step < limit - k else limit - k
        if a[i + k : i + k + size] == b[j + k : j + k + size]:
            k += size
            step <<= 1
        elif size == 1:
            return k
        else:
            step = size >> 1
    return k


def _run_backward(a: list[int], b: list[int], i: int, j: int, limit: int) -> int:
    """How many of ``a[:i]`` and ``b[:j]`` agree from the end (at most ``limit``)."""
    k = 0
    step = 8
    while k < limit:
        size = step if step < limit - k else limit - k
        if a[i - k - size : i - k] == b[j - k - size : j - k]:
            k += size
            step <<= 1
        elif size == 1:
            return k
        else:
            step = size >> 1
    return k


# --- step 2: set aside lines that cannot match -----------------------------------------------


def _bogosqrt(n: int) -> int:
    """git's power-of-two approximation of sqrt(n), used for its limits."""
    root = 1
    while n > 0:
        n >>= 2
        root <<= 1
    return root


class _Side(NamedTuple):
    ids: list[int]  # the lines the search sees
    positions: list[int]  # their positions in the whole file


def _reduce(
    a: list[int], b: list[int], start: int, end1: int, end2: int, rchg1: list[int], rchg2: list[int]
) -> tuple[_Side, _Side]:
    """Classify the middle lines of both files and mark the ones the search may skip."""
    side1 = _reduce_one(a, start, end1, Counter(b), min(_bogosqrt(len(a)), _MAX_EQLIMIT), rchg1)
    side2 = _reduce_one(b, start, end2, Counter(a), min(_bogosqrt(len(b)), _MAX_EQLIMIT), rchg2)
    return side1, side2


def _reduce_one(
    ids: list[int], start: int, end: int, other: Counter[int], limit: int, rchg: list[int]
) -> _Side:
    middle = ids[start:end]
    matches = list(map(other.get, middle, repeat(0)))
    # 0: no match on the other side (changed for sure), 1: keep, 2: matches very often.
    kinds = [0 if m == 0 else 2 if m >= limit else 1 for m in matches]
    keep = [kind == 1 for kind in kinds]
    for k, kind in enumerate(kinds):
        if kind == 2 and not _discard_multimatch(kinds, k):
            keep[k] = True
    index = list(compress(range(start, end), keep))
    for k in compress(range(start, end), map(not_, keep)):
        rchg[k] = 1
    return _Side([ids[i] for i in index], index)


def _discard_multimatch(kinds: list[int], i: int) -> bool:
    """A very common line is set aside only when it sits inside a run of unmatched lines.

    Looks at most 100 lines either way; the run must contain unmatched lines on both sides
    and be mostly (more than 3/4) unmatched lines.
    """
    first = max(0, i - _SIMSCAN_WINDOW)
    last = min(len(kinds) - 1, i + _SIMSCAN_WINDOW)
    unmatched_before, common_before = _scan_run(kinds, range(i - 1, first - 1, -1))
    if unmatched_before == 0:
        return False
    unmatched_after, common_after = _scan_run(kinds, range(i + 1, last + 1))
    if unmatched_after == 0:
        return False
    unmatched = unmatched_before + unmatched_after
    common = common_before + common_after
    return common * _KPDIS_RUN < common + unmatched


def _scan_run(kinds: list[int], positions: range) -> tuple[int, int]:
    """(unmatched, common + 1) lines before the first ordinary line along ``positions``."""
    unmatched, common = 0, 1
    for k in positions:
        kind = kinds[k]
        if kind == 0:
            unmatched += 1
        elif kind == 2:
            common += 1
        else:
            break
    return unmatched, common


# --- step 3: Myers' search -------------------------------------------------------------------


class _Split(NamedTuple):
    i1: int
    i2: int
    minimal_low: bool  # must the box before the split point be solved exactly?
    minimal_high: bool


def _search(side1: _Side, side2: _Side, rchg1: list[int], rchg2: list[int]) -> None:
    """Mark every line outside a longest (or, past git's cut-offs, long) common subsequence."""
    ha1, ha2 = side1.ids, side2.ids
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
            for k in side2.positions[off2:lim2]:
                rchg2[k] = 1
        elif off2 == lim2:
            for k in side1.positions[off1:lim1]:
                rchg1[k] = 1
        else:
            split = _split(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, need_min, max_cost)
            boxes.append((split.i1, lim1, split.i2, lim2, split.minimal_high))
            boxes.append((off1, split.i1, off2, split.i2, split.minimal_low))


def _split(
    ha1: list[int],
    off1: int,
    lim1: int,
    ha2: list[int],
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
                run = 1 + _run_forward(ha1, ha2, i1 + 1, i2 + 1, min(lim1 - i1, lim2 - i2) - 1)
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
                run = 1 + _run_backward(ha1, ha2, i1 - 1, i2 - 1, min(i1 - off1, i2 - off2) - 1)
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
    ha1: list[int],
    off1: int,
    lim1: int,
    ha2: list[int],
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    fmin: int,
    fmax: int,
    cost: int,
) -> _Split | None:
    """A forward path that went far, close to the middle diagonal, and ends a long snake."""
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
    ha1: list[int],
    off1: int,
    lim1: int,
    ha2: list[int],
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


def _compact(ids: list[int], rchg: list[int], n: int, rchg_o: list[int], n_o: int) -> None:
    """Slide each run of changed lines in one file to a canonical place.

    Group j of a file is the (possibly empty) run of changed lines after its j-th unchanged
    line; group j of one file pairs with group j of the other. Each non-empty group is slid
    up, then down as far as it goes (swallowing groups it bumps into), then back up to the
    last place where it faced a non-empty group of the other file, if there was one.
    """
    # The other file does not change during this pass: which of its groups are non-empty.
    unchanged_o = [-1, *compress(range(n_o), map(not_, rchg_o[:n_o])), n_o]
    facing = [high - low > 1 for low, high in pairwise(unchanged_o)]
    try:
        start = rchg.index(1, 0, n)
    except ValueError:
        return
    end = rchg.index(0, start)
    group = start  # index of this group = unchanged lines above it
    while True:
        start, end, group = _settle(ids, rchg, n, facing, start, end, group)
        if end == n:
            return
        try:
            following = rchg.index(1, end + 1, n)
        except ValueError:
            return
        group += following - end  # every unchanged line passed is one (empty) group
        start = following
        end = rchg.index(0, following)


def _settle(
    ids: list[int],
    rchg: list[int],
    n: int,
    facing: list[bool],
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
        if facing[group]:
            matching_end = end
        while end < n and ids[start] == ids[end]:
            rchg[start] = 0
            rchg[end] = 1
            start += 1
            end += 1
            while rchg[end]:
                end += 1
            group += 1
            if facing[group]:
                matching_end = end
        if size == end - start:
            break
    if end != earliest_end and matching_end != -1:
        while not facing[group]:
            start, end = _slide_up(rchg, start, end)
            group -= 1
    return start, end, group


def _slide_up(rchg: list[int], start: int, end: int) -> tuple[int, int]:
    start -= 1
    end -= 1
    rchg[start] = 1
    rchg[end] = 0
    while rchg[start - 1]:
        start -= 1
    return start, end


# --- step 5: hunks ---------------------------------------------------------------------------


def _runs(rchg: list[int], n: int) -> list[tuple[int, int, int]]:
    """(group index, start, length) of every run of changed lines."""
    runs: list[tuple[int, int, int]] = []
    pos = changed = 0
    while True:
        try:
            start = rchg.index(1, pos, n)
        except ValueError:
            return runs
        end = rchg.index(0, start)
        runs.append((start - changed, start, end - start))
        changed += end - start
        pos = end


def _script(rchg1: list[int], n1: int, rchg2: list[int], n2: int) -> list[Change]:
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
