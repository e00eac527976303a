"""Renames between B and L: declared in L's manifest, or detected by content similarity,
so the adopter's edits at the old path follow the file to its new path."""

from __future__ import annotations

import difflib
from dataclasses import replace

from tether.flows.baseline import Baseline
from tether.flows.project import Project, Release
from tether.model.plan import Bucket, FileAction, Op

SIMILARITY = 0.6
MAX_PAIRS = 20_000  # dropped × new paths compared at most; beyond that only declared renames
MAX_BYTES = 1 << 20


def similarity(a: bytes, b: bytes) -> float:
    matcher = difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False)
    return matcher.ratio()


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
    for old in dropped:
        best = _most_similar(baseline.read(old) or b"", latest, new)
        if best is not None:
            pairs.append((old, best))
            new.remove(best)
    return pairs


def _most_similar(old: bytes, latest: Release, candidates: list[str]) -> str | None:
    if not old or len(old) > MAX_BYTES:
        return None
    best, best_score = None, SIMILARITY
    for path in candidates:
        data = latest.read(path) or b""
        if len(data) > MAX_BYTES:
            continue
        # Cheap upper bound first: most pairs are nowhere near alike.
        quick = difflib.SequenceMatcher(
            None, old.splitlines(), data.splitlines()
        ).real_quick_ratio()
        if quick < best_score:
            continue
        score = similarity(old, data)
        if score >= best_score:
            best, best_score = path, score
    return best


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
        ours = project.path(old).read_bytes()
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
