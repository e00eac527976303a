"""Settling conflicts before anything is written: a person's answer at the prompt, or
``--auto``, per file: keep mine (the saved copy), take theirs (the installed file, your copy
stays in the patches folder) or markers (the conflict as reapply leaves it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tether.errors import UsageError
from tether.flows.reapply.decide import Decision
from tether.flows.reapply.plan import mark_restore
from tether.flows.reapply.report import CONFLICT, RESOLUTIONS, RESOLVED


@dataclass(frozen=True)
class Pending:
    """A conflict waiting for a choice: the two versions and what to ask."""

    file: str
    saved: bytes  # your copy
    installed: bytes
    question: str | None  # the drift question, when only drift differs


# Given the conflicts and every file's pending state (file, status), in backup-meta.json's
# order, returns path -> one of RESOLUTIONS (a path left out keeps markers).
Chooser = Callable[[list[Pending], list[tuple[str, str]]], Mapping[str, str]]


def pending(decisions: list[Decision]) -> list[Pending]:
    """Conflicts a choice can settle: both versions known (not a dropped file)."""
    found = []
    for decision in decisions:
        saved, installed = decision.saved, decision.theirs
        if decision.result.status == CONFLICT and saved is not None and installed is not None:
            found.append(Pending(decision.result.file, saved, installed, decision.result.question))
    return found


def settle(decisions: list[Decision], auto: str | None, chooser: Chooser | None) -> None:
    """Apply ``--auto`` to every conflict, else the chooser's answers."""
    waiting = pending(decisions)
    if not waiting or (auto is None and chooser is None):
        return
    if auto is not None:
        chosen: Mapping[str, str] = {item.file: auto for item in waiting}
    else:
        assert chooser is not None
        chosen = chooser(waiting, [(d.result.file, d.result.status) for d in decisions])
    by_file = {d.result.file: d for d in decisions}
    for file, choice in chosen.items():
        if choice not in RESOLUTIONS:
            raise UsageError(f"--auto must be one of {', '.join(RESOLUTIONS)}")
        _apply(by_file[file], choice)


def _apply(decision: Decision, choice: str) -> None:
    result = decision.result
    if choice == "markers" or result.status != CONFLICT:
        return
    result.question = None
    if choice == "keep-mine":
        decision.write, decision.artifact = decision.saved, None
        reason = "you kept your saved copy (the installed version is backed up)"
    else:
        decision.write, decision.artifact = None, None
        reason = "you took the installed file; your copy stays in the patches folder"
    result.status, result.resolution, result.reason = RESOLVED, choice, reason
    decision.gate = False
    mark_restore(decision)
