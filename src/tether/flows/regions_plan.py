"""Which generated regions one update honours (docs/regions.md): the declarations in force,
the switches that turn region awareness off, and what the comparison noticed. The masked
comparison and the regeneration are ``flows.regions_step``; neither it nor the region engine
is loaded for releases declaring no region (docs/performance.md, "Small projects").
"""

from __future__ import annotations

import os

from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.engine.regions import RegionDecl
    from tether.model.manifest import Manifest

NO_REGIONS_ENV = "TETHER_NO_REGIONS"


def regions_disabled(flag: bool, variable: str | None = None) -> bool:
    return regions_off_switch(flag, variable) is not None


def regions_off_switch(flag: bool, variable: str | None = None) -> str | None:
    """What switched region awareness off for this run (the flag, tether's variable or the
    profile's own, e.g. GAIA_UPDATE_NO_REGIONS=1), or None when it is on."""
    if flag:
        return "--no-regions"
    for name in (NO_REGIONS_ENV, variable):
        if name and os.environ.get(name, "") not in ("", "0"):
            return f"{name}={os.environ[name]}"
    return None


@valueclass()
class RegionPlan:
    """The declarations in force for one update, and what the comparison noticed."""

    declarations: list[RegionDecl] = field(default_factory=list)
    by_path: dict[str, RegionDecl] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # malformed declarations, skipped
    dropped: list[str] = field(default_factory=list)  # ids in B's manifest, not L's
    fallbacks: list[str] = field(default_factory=list)  # paths compared whole: malformed markers
    pre_region: list[str] = field(default_factory=list)  # paths with a side lacking markers
    disabled: bool = False
    disabled_by: str = ""  # the flag or variable that switched awareness off
    off_switch: str = "--no-regions"  # how to switch it off for one run (the profile's way)

    def to_json(self) -> dict[str, object]:
        return {
            "disabled": self.disabled,
            "disabled_by": self.disabled_by or None,
            "off_switch": self.off_switch,
            "declarations": [d.id for d in self.declarations],
            "malformed_declarations": self.problems,
            "dropped_declarations": self.dropped,
            "fallbacks": self.fallbacks,
            "pre_region_paths": self.pre_region,
            # Programs the update runs from the project's own tree after writing the files:
            # shown before a person confirms, since running them is their trust decision.
            "programs": [
                {"id": d.id, "command": d.regenerate.command_line}
                for d in self.declarations
                if d.regenerate is not None
            ],
        }


def plan_regions(base_manifest: Manifest | None, latest: Manifest, disabled: bool) -> RegionPlan:
    if disabled:
        return RegionPlan(disabled=True)
    declared = latest.region_declarations()
    base_declared = base_manifest.region_declarations() if base_manifest is not None else []
    if declared == [] and base_declared == []:
        # Neither release declares a region (most do not): nothing to parse or compare, and
        # the region engine is not loaded. A malformed value is not a list: it is parsed.
        return RegionPlan()
    from tether.engine.regions import dropped_declarations, parse_region_declarations

    decls, problems = parse_region_declarations(declared)
    plan = RegionPlan(declarations=decls, problems=problems)
    if base_manifest is not None:
        base_decls, _ = parse_region_declarations(base_declared)
        plan.dropped = dropped_declarations(base_decls, decls)
    for decl in decls:
        for path in decl.paths:
            plan.by_path.setdefault(path, decl)
    return plan
