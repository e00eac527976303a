"""The one confirmation for a whole plan, and the questions that may precede it.

Questions go through ``ask(question) -> answer`` (an EOF answers ``""``), so the same code
serves a terminal and a test. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.deps.align import POLICIES, Plan
from tether.deps.bumps import classify
from tether.deps.dossier import DOSSIER_MD, Improvement
from tether.deps.overrides import ACTIONS, BoundOverride
from tether.errors import UsageError
from tether.runs.selection import split_names

Ask = Callable[[str], str]
Say = Callable[[str], None]


@dataclass
class GateAnswer:
    approved: bool
    excluded: list[str] = field(default_factory=list)
    improvements: list[Improvement] | None = None  # picked at the gate (None: not asked)


@dataclass(frozen=True)
class Chosen:
    """What a run applies of the plan and of the dossier: the packages left out, and the
    improvements taken (None: every one the dossier offers, as nothing was picked)."""

    offered: list[Improvement] | None  # the dossier's improvements; None: no dossier
    excluded: list[str] = field(default_factory=list)
    improvements: list[Improvement] | None = None

    @property
    def taken(self) -> list[Improvement]:
        return list(self.offered or []) if self.improvements is None else self.improvements


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


def check_select(
    tokens: list[str], plan: Plan, offered: list[Improvement] | None, plan_dir: Path | None
) -> Chosen:
    """``--select``: package names exactly, improvements by any part of their title (any
    case). Anything matching neither is a usage error and nothing is written."""
    if not tokens:
        return Chosen(offered)
    titles = [i.title for i in offered or []]
    picked = classify(tokens, plan.names(), titles)
    if picked.unmatched:
        raise UsageError(
            f"--select names nothing of this plan: {', '.join(picked.unmatched)} "
            f"(packages: {valid_list(plan)}; {_improvements_text(offered, plan_dir)})"
        )
    excluded = [name for name in plan.names() if name not in picked.bumps]
    taken = [i for i in offered or [] if i.title in picked.improvements]
    return Chosen(offered, excluded, taken)


def _improvements_text(offered: list[Improvement] | None, plan_dir: Path | None) -> str:
    if offered:
        return "improvements: " + "; ".join(i.title for i in offered)
    if plan_dir is None:
        return "no improvements: --plan-dir DIR names the folder of a filled dossier"
    if offered is None:
        return f"no improvements: no {plan_dir / DOSSIER_MD}"
    return f"no improvements in {plan_dir / DOSSIER_MD}"


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


def ask_gate(
    plan: Plan, count: int, ask: Ask, say: Say, offered: list[Improvement] | None = None
) -> GateAnswer:
    """apply-all, pick-subset or cancel. With a dossier offering improvements, pick-subset
    asks what to apply (package names and improvement titles, as ``--select``); without,
    which packages to leave out."""
    question = (
        f"Apply {count} package update(s) across {len(plan.scan.scanned)} project(s)? "
        "[a]pply-all / [p]ick-subset / [c]ancel: "
    )
    while True:
        choice = _choice(ask(question), ("apply-all", "pick-subset", "cancel"))
        if choice == "apply-all":
            return GateAnswer(True)
        if choice == "pick-subset":
            picked = _ask_select(plan, offered, ask, say) if offered else None
            if picked is not None:
                return picked
            excluded = None if offered else _ask_exclude(plan, ask, say)
            if excluded is not None:
                return GateAnswer(True, excluded)
            continue
        return GateAnswer(False)  # cancel, EOF or anything unclear: nothing is written


def _ask_select(plan: Plan, offered: list[Improvement], ask: Ask, say: Say) -> GateAnswer | None:
    titles = [i.title for i in offered]
    say(f"Packages in this plan: {valid_list(plan)}")
    say("Improvements in the dossier: " + "; ".join(titles))
    while True:
        answer = ask(
            "Apply which items (package names, or any part of an improvement title; "
            "comma-separated, empty to go back)? "
        )
        tokens = split_names([answer])
        if not tokens:
            return None
        picked = classify(tokens, plan.names(), titles)
        if not picked.unmatched:
            excluded = [name for name in plan.names() if name not in picked.bumps]
            taken = [i for i in offered if i.title in picked.improvements]
            return GateAnswer(True, excluded, taken)
        say(f"Matches nothing: {', '.join(picked.unmatched)}. Packages: {valid_list(plan)}")


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


def ask_override(override: BoundOverride, ask: Ask, say: Say) -> str | None:
    """One decision for a family in every project it affects, after what it decides."""
    entry = override.entry
    say(f"Override {entry.id}: {entry.notes or 'a family moved by its own command'}")
    say(f"  matched packages (in every project): {', '.join(p.label for p in override.packages)}")
    say(f"  affected projects: {', '.join(override.projects)}")
    say(f"  command: {override.to_json()['command']}")
    if entry.reference:
        say(f"  reference: {entry.reference}")
    question = (
        "How should this family move in every affected project? "
        "[r]un-override / [s]kip-matched / [f]orce-generic: "
    )
    return _choice(ask(question), ACTIONS)
