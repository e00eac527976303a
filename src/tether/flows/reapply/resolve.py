"""Settling conflicts before anything is written: a person's answer at the prompt, or
``--auto``, per file, in the one vocabulary (docs/cli.md, "Settling conflicts"): ``ours`` /
``theirs`` (the merge on the baseline with each clashing hunk taking that side's lines and
every other change of both sides kept), ``keep-mine`` (the saved copy, whole),
``take-theirs`` (the installed file, whole; your copy stays in the patches folder) or
``markers`` (the conflict as reapply leaves it). A file the new release no longer ships has
nothing to merge with: it is kept as the user's own file (``keep``: the saved copy written
back) or dropped (``drop``: nothing written, the saved copy stays in the patches folder),
by ``--dropped`` or at the prompt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tether.engine.textfmt import is_binary
from tether.errors import UsageError
from tether.flows.merging import favored_must_keep, merge_sides
from tether.flows.reapply.decide import Decision
from tether.flows.reapply.plan import mark_restore
from tether.flows.reapply.report import (
    CONFLICT,
    DROPPED_CHOICES,
    RESOLUTIONS,
    RESOLVED,
    Reason,
    Why,
)
from tether.model.plan import HUNK_CHOICES


@dataclass(frozen=True)
class Pending:
    """A conflict waiting for a choice: the two versions and what to ask."""

    file: str
    saved: bytes  # your copy
    installed: bytes | None  # None: the new release no longer ships the file
    drift_only: bool  # only mechanical drift differs: asked whether that was on purpose
    hunk_level: bool = False  # a baseline to merge on: ours/theirs can be offered

    @property
    def dropped(self) -> bool:
        """Asked keep (as your own file) or drop, not how to merge."""
        return self.installed is None


# Given the conflicts and every file's pending state (file, status), in backup-meta.json's
# order, returns path -> one of RESOLUTIONS (a path left out keeps markers).
Chooser = Callable[[list[Pending], list[tuple[str, str]]], Mapping[str, str]]


def pending(decisions: list[Decision]) -> list[Pending]:
    """Conflicts a choice can settle: a saved copy and the installed version, or none (a
    file the new release dropped)."""
    found = []
    for decision in decisions:
        saved, installed = decision.saved, decision.theirs
        if decision.result.status == CONFLICT and saved is not None:
            hunks = installed is not None and _hunk_level(decision)
            drift_only = decision.result.two_way == "drift-only"
            found.append(Pending(decision.result.file, saved, installed, drift_only, hunks))
    return found


def _hunk_level(decision: Decision) -> bool:
    """Whether the file's clashing hunks are known: merged on a baseline, as text."""
    sides = (decision.base, decision.ours, decision.theirs)
    return all(side is not None and not is_binary(side) for side in sides)


def settle(
    decisions: list[Decision],
    auto: str | None,
    chooser: Chooser | None,
    dropped: str | None = None,
) -> None:
    """Apply ``--auto`` to every conflict and ``--dropped`` to every file the new release
    dropped; the chooser (a person) answers what they leave open."""
    waiting = pending(decisions)
    chosen: dict[str, str] = {}
    for item in waiting:
        by_flag = dropped if item.dropped else auto
        if by_flag is not None:
            chosen[item.file] = by_flag
    asked = [item for item in waiting if item.file not in chosen]
    if asked and chooser is not None:
        chosen.update(chooser(asked, [(d.result.file, d.result.status) for d in decisions]))
    by_file = {d.result.file: d for d in decisions}
    for file, choice in chosen.items():
        decision = by_file[file]
        if decision.theirs is None:
            if choice in DROPPED_CHOICES:
                _settle_dropped(decision, choice)
            continue  # --auto has nothing to merge a dropped file with
        if choice not in RESOLUTIONS:
            raise UsageError(f"--auto must be one of {', '.join(RESOLUTIONS)}")
        _apply(decision, choice)


def _settle_dropped(decision: Decision, choice: str) -> None:
    """keep: the saved copy is written back, the user's own file from now on; drop: the
    release's removal stands and nothing is written (the saved copy stays in the patches)."""
    result = decision.result
    if choice == "keep":
        decision.write = decision.saved
        result.restate(Reason(Why.KEPT_DROPPED))
    else:
        result.restate(Reason(Why.DROPPED_TOO))
        # A rerun after an interrupted run that kept it: the copy that run wrote goes.
        decision.remove = decision.on_disk is not None
    result.status, result.resolution = RESOLVED, choice


def _apply(decision: Decision, choice: str) -> None:
    result = decision.result
    if choice == "markers" or result.status != CONFLICT:
        return
    if choice in HUNK_CHOICES:
        if not _hunk_level(decision):
            result.auto_left = choice
            return
        _favor(decision, choice)
    elif choice == "keep-mine":
        decision.write, decision.artifact = decision.saved, None
        result.restate(Reason(Why.KEPT_MINE))
        decision.gate = False
    else:
        decision.write, decision.artifact = None, None
        result.restate(Reason(Why.TOOK_THEIRS))
        decision.gate = False
    result.status, result.resolution = RESOLVED, choice
    mark_restore(decision)


def _favor(decision: Decision, choice: str) -> None:
    """The merge on the baseline, each clashing hunk taking ``choice``'s side (as ``git
    merge-file --ours/--theirs``): written and verified like a clean merge, held to every
    change of yours that did not clash (and, for ``ours``, to the ones that did)."""
    base, ours, theirs = decision.base, decision.ours, decision.theirs
    assert base is not None and ours is not None and theirs is not None
    merged, note = merge_sides(base, ours, theirs, favor=choice)
    reason = Reason(Why.FAVORED, count=merged.settled, other=choice, note=note)
    decision.result.restate(reason)
    decision.result.settled_hunks = merged.settled
    decision.artifact = None
    decision.must_keep = favored_must_keep(base, ours, theirs, choice)
    decision.write, decision.gate = merged.merged, True
