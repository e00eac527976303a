"""Group occurrences by package, propose one target, and apply the conflict policy.

A package's proposed target is the highest of its occurrences' own targets (written with
the operator of the occurrence that produced it). An occurrence can move to it when its
declared range admits that version and the version passes that project's release-age
gate. The package is in **conflict** when some occurrence whose own target is lower cannot
move to it (another major line, a narrower range, a stricter cooldown). Packages without a
conflict are aligned: every occurrence moves to the proposed target. The level bounds
alignment: an occurrence never moves outside its own level's window (a patch run keeps each
occurrence on its major.minor, a minor run on its major), so a project with no update of its
own at that level is never pulled across a line by another project's target; an occurrence
the proposed target lies beyond keeps its own target, and that is no conflict. For
conflicting packages one policy holds for the whole run:

* ``use-max-where-possible``: the proposed target where admitted, the occurrence's own
  target elsewhere;
* ``per-project``: every occurrence keeps its own target;
* ``skip-package``: the package is left alone.

No occurrence ever moves below the lowest version its range already admits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.deps.model import Declared, Level, Resolved, render_precision
from tether.deps.scan import ScanResult, common_sections
from tether.deps.targets import Dialect, dialect_of, eligible, in_window
from tether.report.deps import hash_dropped_warning

POLICIES = ("use-max-where-possible", "per-project", "skip-package")
DEFAULT_POLICY = "use-max-where-possible"


@dataclass
class PlannedOccurrence:
    resolved: Resolved
    effective: str | None = None  # the version it moves to; None: left as it is
    admits_max: bool = True
    # The proposed target lies inside this occurrence's level window (patch: its
    # major.minor; minor: its major); outside it, alignment never moves the occurrence.
    within_level: bool = True

    @property
    def effective_declared(self) -> Declared:
        declared = self.resolved.occurrence.declared
        if self.effective is None:
            return declared
        return declared.with_version(render_precision(self.effective, declared.precision))

    @property
    def changes(self) -> bool:
        return self.effective_declared.raw != self.resolved.occurrence.declared.raw


@dataclass
class PackagePlan:
    ecosystem: str
    name: str
    catalog: str | None
    occurrences: list[PlannedOccurrence]
    proposed: Resolved  # the occurrence whose own target is the highest
    conflict: bool = False
    skipped_by: str | None = None  # conflict-policy | user | override:<id>
    override: str | None = None  # the override entry that replaces the generic bump

    @property
    def label(self) -> str:
        return f"{self.name} (catalog {self.catalog})" if self.catalog else self.name

    @property
    def proposed_version(self) -> str:
        assert self.proposed.target is not None
        return self.proposed.target

    @property
    def applies(self) -> bool:
        return self.skipped_by is None and self.override is None


@dataclass
class Plan:
    level: Level
    policy: str
    scan: ScanResult
    packages: list[PackagePlan] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def conflicts(self) -> list[PackagePlan]:
        return [p for p in self.packages if p.conflict]

    def names(self) -> list[str]:
        return list(dict.fromkeys(p.name for p in self.packages))


def group(scan: ScanResult) -> list[list[Resolved]]:
    """Occurrences by (ecosystem, package, named catalog), in first-occurrence order."""
    groups: dict[tuple[str, str, str], list[Resolved]] = {}
    for project in scan.scanned:
        for resolved in scan.resolved.get(project.name, []):
            groups.setdefault(resolved.occurrence.group_key, []).append(resolved)
    return list(groups.values())


def build_plan(scan: ScanResult, policy: str = DEFAULT_POLICY) -> Plan:
    if policy not in POLICIES:
        raise ValueError(f"unknown conflict policy {policy!r}")
    plan = Plan(scan.level, policy, scan)
    for members in group(scan):
        package = _package(scan, members)
        if package is not None:
            apply_policy(package, policy)
            plan.packages.append(package)
    plan.warnings += _dropped_hashes(plan)
    return plan


def _dropped_hashes(plan: Plan) -> list[str]:
    """``packageManager``'s integrity hash names one version; moving it drops the hash."""
    lines = []
    for package in plan.packages:
        for planned in package.occurrences:
            declared = planned.resolved.occurrence.declared
            if planned.changes and declared.drop_suffix and declared.suffix:
                project = planned.resolved.occurrence.project
                lines.append(hash_dropped_warning(project, planned.effective_declared.raw))
    return lines


def _package(scan: ScanResult, members: list[Resolved]) -> PackagePlan | None:
    with_target = [r for r in members if r.target is not None]
    if not with_target:
        return None  # every occurrence is already at its newest: nothing to propose
    first = members[0].occurrence
    dialect = dialect_of(first.ecosystem)
    proposed = with_target[0]
    for resolved in with_target[1:]:
        if dialect.compare(resolved.target or "", proposed.target or "") > 0:
            proposed = resolved
    best = proposed.target or ""
    info = scan.infos.get((first.ecosystem, first.name))
    planned = []
    for resolved in members:
        occurrence = resolved.occurrence
        admitted = dialect.admits(occurrence.declared.op + occurrence.declared.version, best)
        if info is not None and scan.now is not None:
            policy = scan.policies[occurrence.project]
            admitted = admitted and eligible(info, best, policy, scan.now, occurrence.name)
        within = _within_level(dialect, occurrence.min_version, best, scan.window)
        planned.append(PlannedOccurrence(resolved, admits_max=admitted, within_level=within))
    package = PackagePlan(first.ecosystem, first.name, first.catalog, planned, proposed)
    # At the engines level every locus converges to the run's one target (or stays above
    # it): there is no range to admit and so no conflict to decide.
    package.conflict = scan.level != "engines" and any(_in_conflict(p, best) for p in planned)
    return package


def _within_level(dialect: Dialect, floor: str, best: str, level: Level) -> bool:
    """Whether ``best`` is a version ``level`` lets an occurrence whose range starts at
    ``floor`` move to: the window its own target was chosen from."""
    if level not in ("patch", "minor") or not (dialect.valid(floor) and dialect.valid(best)):
        return True
    return in_window(dialect.parts(best), dialect.parts(floor), level)


def _below(version: str, best: str, ecosystem: str) -> bool:
    return dialect_of(ecosystem).compare(version, best) < 0  # type: ignore[arg-type]


def _in_conflict(planned: PlannedOccurrence, best: str) -> bool:
    occurrence = planned.resolved.occurrence
    if not _below(occurrence.min_version, best, occurrence.ecosystem):
        return False  # already at or above it: never moved down, never in the way
    if planned.resolved.target == best or not planned.within_level:
        return False  # at the target, or the level keeps it on its own line: no conflict
    return not planned.admits_max


def apply_policy(package: PackagePlan, policy: str) -> None:
    """Set each occurrence's effective version for ``policy``."""
    best = package.proposed_version
    if package.conflict and policy == "skip-package":
        package.skipped_by = "conflict-policy"
        for planned in package.occurrences:
            planned.effective = None
        return
    for planned in package.occurrences:
        planned.effective = _effective(planned, best, package.conflict, policy)


def _effective(planned: PlannedOccurrence, best: str, conflict: bool, policy: str) -> str | None:
    occurrence = planned.resolved.occurrence
    own = planned.resolved.target
    if own is not None and _below(own, occurrence.min_version, occurrence.ecosystem):
        return own  # moved down only because it was asked for (engines, --converge-engines)
    if not _below(occurrence.min_version, best, occurrence.ecosystem):
        return None
    if not planned.within_level:
        return own  # the level's window ends below the proposed target
    if not conflict:
        return best
    if policy == "use-max-where-possible" and (own == best or planned.admits_max):
        return best
    return own


# --- decisions after the plan ------------------------------------------------------------


def exclude_packages(plan: Plan, names: list[str]) -> None:
    """Pick-subset: the named packages (every catalog line of them) are skipped by the user."""
    for package in plan.packages:
        if package.name in names and package.skipped_by is None:
            package.skipped_by = "user"


# --- JSON --------------------------------------------------------------------------------


def planned_json(planned: PlannedOccurrence) -> dict[str, Any]:
    occurrence = planned.resolved.occurrence
    return {
        "project_name": occurrence.project,
        "current_version": occurrence.declared.shown,
        "target_version": planned.resolved.target_declared.shown,
        "effective_target": planned.effective_declared.shown,
        "location": occurrence.locus.location,
        "source_file": occurrence.locus.source_file,
        "skipped_by_release_age": planned.resolved.held_back is not None,
    }


def package_json(package: PackagePlan) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": package.name,
        "ecosystem": package.ecosystem,
        "proposed_target": package.proposed.target_declared.shown,
        "conflict": package.conflict,
    }
    if package.catalog:
        out["catalog"] = package.catalog
    if package.skipped_by:
        out["skipped_by"] = package.skipped_by
    if package.override:
        out["override"] = package.override
    out["occurrences"] = [planned_json(p) for p in package.occurrences]
    return out


def plan_document(plan: Plan, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``cross-project-plan.json`` and ``tether deps plan --json``."""
    sections = common_sections(plan.scan)
    sections["warnings"] = sections["warnings"] + plan.warnings
    return {
        "level": plan.level,
        "target": plan.scan.window,
        "conflict_policy": plan.policy,
        "packages": [package_json(p) for p in plan.packages],
        **sections,
        **(extra or {}),
    }
