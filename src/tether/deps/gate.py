"""The one confirmation for a whole plan, and the questions that may precede it.

Questions go through ``ask(question) -> answer`` (an EOF answers ``""``), so the same code
serves a terminal and a test. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tether.deps.align import POLICIES, Plan
from tether.deps.overrides import ACTIONS, BoundOverride
from tether.errors import UsageError
from tether.runs.selection import split_names

Ask = Callable[[str], str]
Say = Callable[[str], None]


@dataclass
class GateAnswer:
    approved: bool
    excluded: list[str] = field(default_factory=list)


def unknown_names(names: list[str], plan: Plan) -> list[str]:
    valid = set(plan.names())
    return [n for n in names if n not in valid]


def valid_list(plan: Plan) -> str:
    return ", ".join(plan.names()) or "(none)"


def check_skip(names: list[str], plan: Plan) -> list[str]:
    """``--skip-package``: every name must be a package of the plan; nothing is written
    otherwise."""
    unknown = unknown_names(names, plan)
    if unknown:
        raise UsageError(
            f"--skip-package names no package of this plan: {', '.join(unknown)} "
            f"(valid: {valid_list(plan)})"
        )
    return names


def conflict_lines(plan: Plan) -> list[str]:
    """What the person reads before choosing one policy for every conflicting package."""
    lines = []
    for package in plan.conflicts:
        targets = ", ".join(
            f"{p.resolved.occurrence.project} {p.resolved.target_declared.shown}"
            for p in package.occurrences
        )
        lines.append(f"conflict: {package.label}: highest {package.proposed_version}; {targets}")
    return lines


def _choice(answer: str, options: Sequence[str]) -> str | None:
    """``a``, ``apply``, ``apply-all`` all pick ``apply-all``: a unique prefix will do."""
    answer = answer.strip().lower()
    if not answer:
        return None
    found = [o for o in options if o.startswith(answer) or o[0] == answer]
    return found[0] if len(found) == 1 else None


def ask_gate(plan: Plan, count: int, ask: Ask, say: Say) -> GateAnswer:
    question = (
        f"Apply {count} package update(s) across {len(plan.scan.scanned)} project(s)? "
        "[a]pply-all / [p]ick-subset / [c]ancel: "
    )
    while True:
        choice = _choice(ask(question), ("apply-all", "pick-subset", "cancel"))
        if choice == "apply-all":
            return GateAnswer(True)
        if choice == "pick-subset":
            excluded = _ask_exclude(plan, ask, say)
            if excluded is not None:
                return GateAnswer(True, excluded)
            continue
        return GateAnswer(False)  # cancel, EOF or anything unclear: nothing is written


def _ask_exclude(plan: Plan, ask: Ask, say: Say) -> list[str] | None:
    say(f"Packages in this plan: {valid_list(plan)}")
    while True:
        names = split_names([ask("Exclude which packages (comma-separated, empty to go back)? ")])
        if not names:
            return None
        unknown = unknown_names(names, plan)
        if not unknown:
            return names
        say(f"Not in this plan: {', '.join(unknown)}. Valid: {valid_list(plan)}")


def ask_policy(count: int, ask: Ask) -> str | None:
    question = (
        f"{count} package(s) have conflicting targets. One policy for all of them: "
        "[u]se-max-where-possible / [p]er-project / [s]kip-package: "
    )
    return _choice(ask(question), POLICIES)


def ask_override(override: BoundOverride, ask: Ask) -> str | None:
    question = (
        f"Override {override.entry.id} ({', '.join(p.label for p in override.packages)}; "
        f"runs: {override.to_json()['command']}): "
        "[r]un-override / [s]kip-matched / [f]orce-generic: "
    )
    return _choice(ask(question), ACTIONS)
