"""Consent and prompts: whether a person is there to ask, ``--yes``, the yes/no question,
the per-file conflict choices and the questions of ``deps apply`` (the conflict policy, an
override family's action, the one confirmation with its pick-subset). Every command that
asks goes through here.

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
from tether.model.plan import Bucket
from tether.report.style import is_terminal

if TYPE_CHECKING:
    from tether.deps.align import Plan
    from tether.deps.dossier import Improvement
    from tether.deps.overrides import BoundOverride
    from tether.deps.subset import GateAnswer
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


def ask_restore_missing(paths: list[str]) -> bool:
    """init into an existing project: restore the shipped files it lacks? (No: they stay
    deleted, recorded as the adopter's.)"""
    from tether.report.init import render_missing_question

    return ask_yes_no("Restore them from the release?", before=render_missing_question(paths))


BOTH_CHANGED = "both sides changed the same lines."


@dataclass(frozen=True)
class Answer:
    """One answer to the conflict question: its key, what it settles (the vocabulary of
    ``model.plan``: ``docs/cli.md``, "Settling conflicts"), and its words at the prompt."""

    key: str
    choice: str
    words: str
    hunk_level: bool = False  # needs a baseline: the clashing hunks are known


# Both levels in plain words: the clashing lines only (every other change of both sides is
# merged), or the whole file. A capital letter answers the same for every file still to ask.
CONFLICT_ANSWERS = (
    Answer("o", "ours", "[o] my side of the clashing lines", hunk_level=True),
    Answer("t", "theirs", "[t] their side of the clashing lines", hunk_level=True),
    Answer("k", "keep-mine", "[k]eep my whole file"),
    Answer("r", "take-theirs", "[r]eplace my whole file with theirs"),
    Answer("w", "markers", "[w]rite conflict markers"),
)
# A file the new release no longer ships (reapply): nothing to merge with, so it is kept as
# the adopter's own file or dropped.
DROPPED_ANSWERS = (
    Answer("k", "keep", "[k]eep it as my own file"),
    Answer("x", "drop", "[x] drop it (my copy stays in the patches folder)"),
)
SHOW_DIFF = "[d]iff"
FOR_ALL = "capital letter: the same for every file after"


def conflict_choices(
    hunk_level: bool = True, answers: tuple[Answer, ...] = CONFLICT_ANSWERS
) -> str:
    """The answers offered for one file (without a baseline the clashing lines are not
    known, so only the whole-file answers are)."""
    offered = [a.words for a in answers if hunk_level or not a.hunk_level]
    return ", ".join([*offered, SHOW_DIFF]) + f" ({FOR_ALL})"


@dataclass(frozen=True)
class ConflictQuestion:
    """One file to settle: what to ask about it, and its diff for the [d]iff answer.
    ``hunk_level``: whether its clashing hunks are known (a baseline to merge on);
    ``answers``: what may be answered (a dropped file's are not a conflict's)."""

    path: str
    question: str
    diff: Callable[[], str]
    hunk_level: bool = True
    answers: tuple[Answer, ...] = CONFLICT_ANSWERS


def choose_each(
    questions: Sequence[ConflictQuestion],
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> dict[str, str]:
    """Ask, file by file, how to settle it (``ours``, ``theirs``, ``keep-mine``,
    ``take-theirs`` or ``markers``; a dropped file ``keep`` or ``drop``), showing the diff
    on request; path -> choice. A capital letter settles this file and every later one the
    same way (a later file that cannot take that answer, one whose clashing lines are not
    known or a dropped file, is still asked).

    The end of input (an empty read, not an empty line) stops the run before anything is
    written: asking again would never get an answer."""
    for_all: Answer | None = None
    chosen: dict[str, str] = {}
    for item in questions:
        offered = {a.key: a for a in item.answers if item.hunk_level or not a.hunk_level}
        answer = for_all if for_all in offered.values() else None
        while answer is None:
            words = conflict_choices(item.hunk_level, item.answers)
            raw = ask(f"{item.path}: {item.question} {words}? ")
            if raw == "":
                raise TetherError("no answer at the prompt (end of input); nothing was written")
            typed = raw.strip()
            if typed.lower() == "d":
                show(item.diff())
            elif typed.lower() in offered:
                answer = offered[typed.lower()]
                if typed.isupper():
                    for_all = answer
        chosen[item.path] = answer.choice
    return chosen


def choose_conflicts(
    prepared: PreparedUpdate,
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> None:
    """Ask, file by file, how to settle each line-merge conflict; decisions land in the plan."""
    from tether.engine.patches import unified_patch
    from tether.engine.textfmt import is_binary
    from tether.flows.plan import can_resettle, resettle

    actions = prepared.plan.actions
    settle = [i for i, action in enumerate(actions) if can_resettle(action)]

    def diff(index: int) -> Callable[[], str]:
        action = actions[index]
        assert action.sides is not None
        sides = action.sides
        return lambda: unified_patch(action.path, sides[1], sides[2]).decode(errors="replace")

    def text(index: int) -> bool:
        sides = actions[index].sides or ()
        return not any(is_binary(side) for side in sides)

    questions = [
        ConflictQuestion(actions[i].path, BOTH_CHANGED, diff(i), hunk_level=text(i)) for i in settle
    ]
    chosen = choose_each(questions, ask, show)
    for index in settle:
        action = actions[index]
        actions[index] = resettle(prepared.project, action, chosen[action.path])


# gbrain's three decisions for a locally-modified file, in the one vocabulary, plus the
# clashing-lines answers when the recipe moved (there is a baseline to merge on).
HAND_MERGE = Answer("m", "hand-merge", "[m]erge by hand (show the diff, write nothing)")


def local_edit_choices(hunk_level: bool) -> dict[str, str]:
    """key -> choice for a locally-modified file, and the words of the question."""
    offered = [a for a in CONFLICT_ANSWERS if a.choice != "markers"]
    return {a.key: a.choice for a in (*offered, HAND_MERGE) if hunk_level or not a.hunk_level}


def local_edit_words(hunk_level: bool) -> str:
    offered = [a for a in (*CONFLICT_ANSWERS, HAND_MERGE) if a.choice != "markers"]
    return ", ".join(a.words for a in offered if hunk_level or not a.hunk_level)


def choose_local_edits(
    prepared: PreparedUpdate,
    ask: Callable[[str], str] = ask,
    show: Callable[[str], None] = show,
) -> None:
    """A refresh asks, per locally-modified file, how to settle it: gbrain's keep-mine,
    take-theirs and merge (by hand), and, when the recipe moved, either side of the
    clashing lines with every other change of both sides merged."""
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
        moved = action.sides is not None
        question = f"{action.path}: locally modified. {local_edit_words(moved)}? "
        choice = one_of(ask, question, local_edit_choices(moved))
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


def choose_source_deletions(prepared: PreparedUpdate, ask: Callable[[str], str] = ask) -> None:
    """A refresh asks, per file the recipe dropped that is still here, whether to clean it
    up (removed, backed up first) or keep it."""
    from tether.flows.refresh import settle_source_deleted

    actions = prepared.plan.actions
    for index, action in enumerate(actions):
        if action.bucket is not Bucket.DELETE or action.decision:
            continue
        edited = " (edited here)" if action.why is not None and action.why.edited_here else ""
        question = (
            f"{action.path}: the recipe no longer ships it{edited}. [c]lean it up (removed, "
            "backed up first), or [k]eep it? "
        )
        choice = one_of(ask, question, {"c": "cleanup", "k": "keep"})
        actions[index] = settle_source_deleted(action, choice)


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


# --- deps apply ----------------------------------------------------------------------------
# The deps modules are imported inside these functions: every command imports this module,
# and only ``deps apply`` needs them.


def _choice(answer: str, options: Sequence[str]) -> str | None:
    """``a``, ``apply``, ``apply-all`` all pick ``apply-all``: a unique prefix will do."""
    answer = answer.strip().lower()
    if not answer:
        return None
    found = [o for o in options if o.startswith(answer) or o[0] == answer]
    return found[0] if len(found) == 1 else None


def ask_conflict_policy(plan: Plan, ask: Callable[[str], str] = ask) -> str | None:
    """The conflicting packages, then one policy for all of them (None: no clear answer)."""
    from tether.deps.align import POLICIES
    from tether.report.deps import conflict_lines

    for line in conflict_lines(plan):
        show(line)
    question = (
        f"{len(plan.conflicts)} package(s) have conflicting targets. One policy for all of "
        "them: [u]se-max-where-possible / [p]er-project / [s]kip-package: "
    )
    return _choice(ask(question), POLICIES)


def ask_override_action(override: BoundOverride, ask: Callable[[str], str] = ask) -> str | None:
    """One decision for a family in every project it affects, after what it decides."""
    from tether.deps.overrides import ACTIONS
    from tether.report.deps import override_lines

    for line in override_lines(override):
        show(line)
    question = (
        "How should this family move in every affected project? "
        "[r]un-override / [s]kip-matched / [f]orce-generic: "
    )
    return _choice(ask(question), ACTIONS)


def ask_deps_gate(
    plan: Plan,
    count: int,
    offered: list[Improvement] | None = None,
    ask: Callable[[str], str] = ask,
) -> GateAnswer:
    """apply-all, pick-subset or cancel. With a dossier offering improvements, pick-subset
    asks what to apply (package names and improvement titles, as ``--select``); without,
    which packages to leave out."""
    from tether.deps.subset import GateAnswer

    question = (
        f"Apply {count} package update(s) across {len(plan.scan.scanned)} project(s)? "
        "[a]pply-all / [p]ick-subset / [c]ancel: "
    )
    while True:
        choice = _choice(ask(question), ("apply-all", "pick-subset", "cancel"))
        if choice == "apply-all":
            return GateAnswer(True)
        if choice == "pick-subset":
            picked = _ask_select(plan, offered, ask) if offered else None
            if picked is not None:
                return picked
            excluded = None if offered else _ask_exclude(plan, ask)
            if excluded is not None:
                return GateAnswer(True, excluded)
            continue
        return GateAnswer(False)  # cancel, EOF or anything unclear: nothing is written


def _ask_select(
    plan: Plan, offered: list[Improvement], ask: Callable[[str], str]
) -> GateAnswer | None:
    from tether.deps.bumps import classify
    from tether.deps.subset import GateAnswer, valid_list
    from tether.runs.selection import split_names

    titles = [i.title for i in offered]
    show(f"Packages in this plan: {valid_list(plan)}")
    show("Improvements in the dossier: " + "; ".join(titles))
    while True:
        answer = ask(
            "Apply which items (package names, or any part of an improvement title; "
            "comma-separated, empty to go back)? "
        )
        tokens = split_names([answer.strip()])
        if not tokens:
            return None
        picked = classify(tokens, plan.names(), titles)
        if not picked.unmatched:
            excluded = [name for name in plan.names() if name not in picked.bumps]
            taken = [i for i in offered if i.title in picked.improvements]
            return GateAnswer(True, excluded, taken)
        show(f"Matches nothing: {', '.join(picked.unmatched)}. Packages: {valid_list(plan)}")


def _ask_exclude(plan: Plan, ask: Callable[[str], str]) -> list[str] | None:
    from tether.deps.subset import unknown_names, valid_list
    from tether.runs.selection import split_names

    show(f"Packages in this plan: {valid_list(plan)}")
    while True:
        answer = ask("Exclude which packages (comma-separated, empty to go back)? ")
        names = split_names([answer.strip()])
        if not names:
            return None
        unknown = unknown_names(names, plan)
        if not unknown:
            return names
        show(f"Not in this plan: {', '.join(unknown)}. Valid: {valid_list(plan)}")
