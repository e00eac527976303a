"""What part of a plan a run applies: the packages left out (``--skip-package``, or picked
at the confirmation) and, with a dossier, the improvements taken (``--select``). Pure rules
over the plan; the questions that ask for them are the command line's (``cli/interact.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tether.deps.align import Plan
from tether.deps.bumps import classify
from tether.deps.dossier import DOSSIER_MD, Improvement
from tether.errors import UsageError


@dataclass
class GateAnswer:
    """The answer to the one confirmation: apply or not, and what was picked there."""

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
