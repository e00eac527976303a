"""Release-age gates a project's own configuration sets, read as its package manager reads
them: each is a ``ReleaseGate`` naming the file and setting it came from, so a version held
back can say why.

* npm: ``min-release-age`` (days) in ``.npmrc`` — the user's, the workspace root's, the
  project's (later wins) — for projects npm installs;
* pnpm: ``minimumReleaseAge`` (minutes) and ``minimumReleaseAgeExclude`` (patterns) in
  ``pnpm-workspace.yaml``;
* yarn (berry): ``npmMinimalAgeGate`` in ``.yarnrc.yml`` (a number is minutes; ``3d``,
  ``12h``, ``30m``, ``90s``, ``1w`` are durations) and ``npmPreapprovedPackages`` (patterns);
* Bun: ``[install] minimumReleaseAge`` (seconds) and ``minimumReleaseAgeExcludes`` (names) in
  ``bunfig.toml``.

A value that cannot be read is a warning (the gate is then not applied), never an abort:
one project's odd file must not stop the others.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from tether.deps.model import ReleaseGate
from tether.report.deps import gate_ignored

_YARN_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_YARN_UNITS = {
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
    "w": timedelta(weeks=1),
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _patterns(value: Any) -> tuple[str, ...]:
    return tuple(str(p) for p in value) if isinstance(value, list) else ()


def _gate(
    setting: str, amount: float | None, unit: timedelta, exclude: tuple[str, ...] = ()
) -> ReleaseGate | None:
    # Zero (or less) turns a gate off, as each manager reads it.
    return None if amount is None or amount <= 0 else ReleaseGate(setting, amount * unit, exclude)


def pnpm_gate(doc: Mapping[str, Any], rel: str) -> tuple[ReleaseGate | None, list[str]]:
    value = doc.get("minimumReleaseAge")
    if value is None:
        return None, []
    minutes = value if isinstance(value, int) and not isinstance(value, bool) else None
    if minutes is None:
        return None, [gate_ignored(rel, "minimumReleaseAge", value, "minutes")]
    exclude = _patterns(doc.get("minimumReleaseAgeExclude"))
    setting = f"minimumReleaseAge {minutes} (minutes) in {rel}"
    return _gate(setting, minutes, timedelta(minutes=1), exclude), []


def npm_gate(settings: Mapping[str, str]) -> tuple[ReleaseGate | None, list[str]]:
    value = settings.get("min-release-age")
    if value is None or not value.strip():
        return None, []
    days = _number(value)
    if days is None:
        return None, [gate_ignored(".npmrc", "min-release-age", value, "days")]
    return _gate(f"min-release-age={value} (days) in .npmrc", days, timedelta(days=1)), []


def yarn_gate(doc: Mapping[str, Any], rel: str) -> tuple[ReleaseGate | None, list[str]]:
    value = doc.get("npmMinimalAgeGate")
    if value is None:
        return None, []
    match = _YARN_DURATION.match(str(value)) if not isinstance(value, bool) else None
    if match is None:
        return None, [gate_ignored(rel, "npmMinimalAgeGate", value, None)]
    unit = _YARN_UNITS[match[2] or "m"]
    exclude = _patterns(doc.get("npmPreapprovedPackages"))
    setting = f"npmMinimalAgeGate {value} in {rel}"
    return _gate(setting, float(match[1]), unit, exclude), []


def bun_gate(doc: Mapping[str, Any], rel: str) -> tuple[ReleaseGate | None, list[str]]:
    install = doc.get("install")
    if not isinstance(install, dict) or install.get("minimumReleaseAge") is None:
        return None, []
    value = install["minimumReleaseAge"]
    seconds = _number(value) if not isinstance(value, str) else None
    if seconds is None:
        return None, [gate_ignored(rel, "minimumReleaseAge", value, "seconds")]
    exclude = _patterns(install.get("minimumReleaseAgeExcludes"))
    setting = f"minimumReleaseAge {value} (seconds) in {rel} [install]"
    return _gate(setting, seconds, timedelta(seconds=1), exclude), []


def npm_settings(folders: Sequence[Path]) -> dict[str, str]:
    """The ``.npmrc`` layers npm reads for a project (the user's first)."""
    from tether.deps.registries import npmrc_settings

    return npmrc_settings(os.environ, folders)
