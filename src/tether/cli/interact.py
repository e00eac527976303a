"""Consent and prompts: whether a person is there to ask, ``--yes``, the yes/no question and
the per-file conflict choices. Every command that asks goes through here.

Prompts, and what a person reads to answer them, go to stderr: stdout carries only the
command's result, so ``--json`` output stays one document and a redirected report holds no
question (docs/cli.md, "Prompts and --yes").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.errors import TetherError
from tether.report.style import is_terminal

if TYPE_CHECKING:
    from tether.flows.update import PreparedUpdate


def stdin_is_terminal() -> bool:
    """A person can answer: stdin is a terminal (read at call time, so a replaced
    ``sys.stdin`` counts)."""
    return is_terminal(sys.stdin)


def require_consent(action: str, *, yes: bool, dry_run: bool = False) -> None:
    """Refuse to go on without a way to ask: no ``--yes``, no dry run and no terminal.

    ``action`` completes "pass --yes to ...": ``"apply the update"``.
    """
    if yes or dry_run or stdin_is_terminal():
        return
    raise TetherError(f"not running on a terminal: pass --yes to {action} (nothing was written)")


def ask(prompt: str) -> str:
    """Write ``prompt`` on stderr and return the line typed (empty at end of input)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()


def show(text: str) -> None:
    """Something a person reads to answer a prompt (a plan, a diff), on stderr."""
    print(text, file=sys.stderr)


def ask_yes_no(question: str, *, before: str = "") -> bool:
    """``before`` (the plan), then ``question [y/N]``; True only for y or yes."""
    if before:
        show(before)
    return ask(f"{question} [y/N] ").strip().lower() in ("y", "yes")


CONFLICT_CHOICES = "[m]ine, [t]heirs, [w]rite markers, [d]iff, [k]eep mine for all, [a]ll theirs"
BOTH_CHANGED = "both sides changed the same lines."


@dataclass(frozen=True)
class ConflictQuestion:
    """One file to settle: what to ask about it, and its diff for the [d]iff answer."""

    path: str
    question: str
    diff: Callable[[], str]


def choose_each(
    questions: Sequence[ConflictQuestion],
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> dict[str, str]:
    """Ask, file by file, mine / theirs / markers (``keep-mine``, ``take-theirs``,
    ``markers``), showing the diff on request; path -> choice.

    The end of input (an empty read, not an empty line) stops the run before anything is
    written: asking again would never get an answer."""
    for_all: str | None = None
    chosen: dict[str, str] = {}
    for item in questions:
        choice = for_all
        while choice is None:
            raw = ask(f"{item.path}: {item.question} {CONFLICT_CHOICES}? ")
            if raw == "":
                raise TetherError("no answer at the prompt (end of input); nothing was written")
            answer = raw.strip()
            if answer == "d":
                show(item.diff())
            elif answer in ("k", "a"):
                for_all = choice = "keep-mine" if answer == "k" else "take-theirs"
            elif answer in ("m", "t", "w"):
                choice = {"m": "keep-mine", "t": "take-theirs", "w": "markers"}[answer]
        chosen[item.path] = choice
    return chosen


def choose_conflicts(
    prepared: PreparedUpdate,
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> None:
    """Ask, file by file, how to settle each line-merge conflict; decisions land in the plan."""
    from tether.engine.patches import unified_patch
    from tether.flows.plan import can_resettle, resettle

    actions = prepared.plan.actions
    settle = [i for i, action in enumerate(actions) if can_resettle(action)]

    def diff(index: int) -> Callable[[], str]:
        action = actions[index]
        assert action.sides is not None
        sides = action.sides
        return lambda: unified_patch(action.path, sides[1], sides[2]).decode(errors="replace")

    questions = [ConflictQuestion(actions[i].path, BOTH_CHANGED, diff(i)) for i in settle]
    chosen = choose_each(questions, ask, show)
    for index in settle:
        action = actions[index]
        actions[index] = resettle(prepared.project, action, chosen[action.path])


LOCAL_EDIT_CHOICES = "[k]eep mine, [t]ake theirs, [m]erge (show the diff, write nothing)"


def choose_local_edits(
    prepared: PreparedUpdate,
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> None:
    """A refresh asks, per locally-modified file, which of the three decisions to take."""
    from tether.flows.refresh import (
        LOCALLY_MODIFIED,
        local_edit_diff,
        refresh_state,
        settle_local_edit,
    )

    project, latest, actions = prepared.project, prepared.latest, prepared.plan.actions
    for index, action in enumerate(actions):
        if refresh_state(action) != LOCALLY_MODIFIED or action.decision:
            continue
        question = f"{action.path}: locally modified. {LOCAL_EDIT_CHOICES}? "
        choice = one_of(ask, question, {"k": "keep-mine", "t": "take-theirs", "m": "hand-merge"})
        if choice == "hand-merge":
            show(local_edit_diff(project, latest, action).decode(errors="replace"))
        actions[index] = settle_local_edit(project, latest, action, choice)


def choose_host_deletions(prepared: PreparedUpdate, ask: Callable[[str], str] = ask) -> None:
    """A refresh asks, per file deleted on the host, whether to restore it or drop it."""
    from tether.flows.refresh import HOST_DELETED, refresh_state, settle_host_deleted

    actions = prepared.plan.actions
    for index, action in enumerate(actions):
        if refresh_state(action) != HOST_DELETED or action.decision:
            continue
        question = f"{action.path}: deleted here. [r]estore it, or [d]rop it for good? "
        choice = one_of(ask, question, {"r": "restore", "d": "drop"})
        actions[index] = settle_host_deleted(prepared.latest, action, choice)


def one_of(
    ask: Callable[[str], str],
    question: str,
    answers: dict[str, str],
    at_end: str | None = None,
) -> str:
    """Ask until one of ``answers``' keys is typed. The end of input (asking again would
    never get an answer) gives ``at_end`` when the question has a safe answer, else stops
    the run before anything is written."""
    while True:
        raw = ask(question)
        if raw == "":
            if at_end is not None:
                return at_end
            raise TetherError("no answer at the prompt (end of input); nothing was written")
        if raw.strip() in answers:
            return answers[raw.strip()]
