"""``tether region-compare``: read three copies of a region file and compare them with the
region masked (tether.engine.regions does the comparing)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.fsio import read_named_file

if TYPE_CHECKING:
    from tether.engine.regions import RegionComparison


def _read(option: str, path: Path) -> bytes:
    return read_named_file(path, f"the {option} file")


def compare_region_files(
    baseline: Path, latest: Path, current: Path, start_marker: str, end_marker: str
) -> RegionComparison:
    """Compare the files outside the region between the markers; a file that cannot be read
    is an error naming its option."""
    from tether.engine.regions import compare_region_file

    base = _read("--baseline", baseline)
    theirs = _read("--latest", latest)
    ours = _read("--current", current)
    return compare_region_file(base, theirs, ours, start_marker, end_marker)
