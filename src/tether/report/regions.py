"""The words of ``tether region-compare``: the verdict and how each side was compared."""

from __future__ import annotations

from tether.engine.regions import SIDES, RegionComparison, SideScan

VERDICT_TEXT = {
    "no-upstream-change": "upstream did not change the file outside the region: keep current",
    "no-adopter-drift": "current matches the baseline outside the region: take latest",
    "already-latest": "current already matches latest outside the region: keep current",
    "conflict": "both sides changed the file outside the region",
}


def _side_text(name: str, side: SideScan) -> str:
    scan = side.scan
    if scan.kind == "region":
        where = f"region at lines {scan.start_line}-{scan.end_line}"
    elif scan.kind == "absent":
        where = "no markers"
    else:
        where = f"malformed markers ({scan.reason})"
    return f"  {name}: {where}, {'masked' if side.masked else 'compared raw'}"


def render_comparison(comparison: RegionComparison) -> str:
    lines = [f"{comparison.verdict}: {VERDICT_TEXT[comparison.verdict]}"]
    lines += [_side_text(name, comparison.side(name)) for name in SIDES]
    if comparison.bailed:
        lines.append("  fallback: malformed-markers (no side masked)")
    return "\n".join(lines)
