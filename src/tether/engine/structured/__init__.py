"""Field-aware merges of JSON, YAML and TOML files (package.json, pnpm-workspace.yaml, …).

Pure functions of bytes and data: the caller reads and writes files. Names are imported on
first use (and parsers only when a file of that kind is merged) so that commands which never
meet a structured file, or only need the preset names, start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.engine.structured.merge import merge_structured
    from tether.engine.structured.model import (
        MISSING,
        Item,
        Rule,
        RuleSet,
        StructuredMergeResult,
    )
    from tether.engine.structured.notes import render_notes, summary_line
    from tether.engine.structured.presence import Presence, triage
    from tether.engine.structured.presets import PRESETS, preset_names
    from tether.engine.structured.rules import rule_from_dict, rules_for

_HOMES = {
    "merge_structured": "merge",
    "MISSING": "model",
    "Item": "model",
    "Rule": "model",
    "RuleSet": "model",
    "StructuredMergeResult": "model",
    "render_notes": "notes",
    "summary_line": "notes",
    "PRESETS": "presets",
    "preset_names": "presets",
    "rule_from_dict": "rules",
    "rules_for": "rules",
    "Presence": "presence",
    "triage": "presence",
}

__all__ = [
    "MISSING",
    "PRESETS",
    "Item",
    "Presence",
    "Rule",
    "RuleSet",
    "StructuredMergeResult",
    "merge_structured",
    "preset_names",
    "render_notes",
    "rule_from_dict",
    "rules_for",
    "summary_line",
    "triage",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
