"""Renames between B and L: declared in L's manifest, or detected by content similarity,
so the adopter's edits at the old path follow the file to its new path."""

from __future__ import annotations

from collections import Counter

from tether.flows.baseline import Baseline
from tether.flows.project import Project, Release
from tether.fsio import read_bytes
from tether.model.plan import Bucket, FileAction, Op
from tether.valueclass import replace

SIMILARITY = 0.6
MAX_PAIRS = 1_000_000  # dropped × new paths bounded at most; beyond that only declared renames
MAX_BYTES = 1 << 20


def find_renames(baseline: Baseline, latest: Release) -> list[tuple[str, str]]:
    """(old, new) pairs: the manifest's ``renames`` first, then the most similar new path
    (at least 60% alike) for each path B shipped and L dropped."""
    latest_paths = set(latest.manifest.managed_paths())
    dropped = [
        p
        for p in sorted(baseline.files)
        if p not in latest_paths
        and p not in baseline.sentinels
        and p not in latest.manifest.sentinels
    ]
    new = [p for p in sorted(latest_paths) if p not in baseline.files]
    pairs: list[tuple[str, str]] = []
    for rename in latest.manifest.renames:
        if rename.source in dropped and rename.target in new:
            pairs.append((rename.source, rename.target))
    taken = {p for pair in pairs for p in pair}
    dropped = [p for p in dropped if p not in taken]
    new = [p for p in new if p not in taken]
    if not dropped or not new or len(dropped) * len(new) > MAX_PAIRS:
        return pairs
    candidates = _Candidates(latest, new)
    for old in dropped:
        best = candidates.most_similar(baseline.read(old) or b"")
        if best is not None:
            pairs.append((old, best))
            candidates.take(best)
    return pairs


class _Candidates:
    """New paths of L, each read and split once, with a cheap exact upper bound on
    similarity (shared lines as a multiset) so most pairs never reach the matcher."""

    def __init__(self, latest: Release, paths: list[str]) -> None:
        self.lines: dict[str, list[bytes]] = {}
        self.counts: dict[str, Counter[bytes]] = {}
        for path in paths:
            data = latest.read(path) or b""
            if len(data) <= MAX_BYTES:
                self.lines[path] = data.splitlines()
                self.counts[path] = Counter(self.lines[path])

    def take(self, path: str) -> None:
        self.lines.pop(path, None)
        self.counts.pop(path, None)

    def most_similar(self, old: bytes) -> str | None:
        if not old or len(old) > MAX_BYTES:
            return None
        import difflib  # only where a dropped and an added file are compared (~1 ms to load)

        old_lines = old.splitlines()
        old_counts = Counter(old_lines)
        matcher: difflib.SequenceMatcher[bytes] = difflib.SequenceMatcher(
            None, [], [], autojunk=False
        )
        matcher.set_seq2(old_lines)
        best, best_score = None, SIMILARITY
        for path in sorted(self.lines):
            lines = self.lines[path]
            total = len(lines) + len(old_lines)
            if not total or 2 * min(len(lines), len(old_lines)) / total < best_score:
                continue  # too different in length to be alike enough
            if 2 * shared_lines(self.counts[path], old_counts) / total < best_score:
                continue
            matcher.set_seq1(lines)
            score = matcher.ratio()
            if score >= best_score and (best is None or score > best_score):
                best, best_score = path, score
        return best


def shared_lines(a: Counter[bytes], b: Counter[bytes]) -> int:
    """Lines two files have in common, as a multiset: an exact upper bound on the lines a
    matcher can pair. The distinct lines are intersected first (in C), then only the shared
    ones are counted."""
    return sum(min(a[line], b[line]) for line in a.keys() & b.keys())


def carry_rename(
    project: Project,
    baseline: Baseline,
    old: str,
    new_action: FileAction,
    merge: object,
) -> FileAction:
    """The action for the new path when the adopter edited the old one: a three-way merge
    of (B[old], A[old], L[new]) written to the new path."""
    from tether.flows.safety import unsafe_target

    if new_action.bucket is not Bucket.ADD or unsafe_target(project.root, old):
        return new_action
    try:
        ours = read_bytes(project.path(old))
    except OSError:
        return new_action
    base = baseline.read(old) or b""
    if ours == base or new_action.content is None:
        return replace(new_action, rename_from=old)
    assert callable(merge)
    merged: FileAction = merge(base, ours, new_action.content)
    if merged.op is Op.NONE and merged.bucket is Bucket.CONFLICT and merged.artifact is None:
        return replace(new_action, rename_from=old)
    return replace(merged, rename_from=old)
