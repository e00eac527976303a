"""Turning a manifest's merge entry (a preset name and/or explicit rules) into a RuleSet.

Errors are ValueError with a message naming the path and the offending field: the manifest
loader decides how to report them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from tether.engine.structured.formats import format_for_path
from tether.engine.structured.model import (
    FORMATS,
    MERGE_KINDS,
    AddedPolicy,
    Format,
    MergeKind,
    Rule,
    RuleSet,
)
from tether.engine.structured.presets import PRESETS, preset_names

_SPEC_FIELDS = {"preset", "rules", "format"}
_RULE_FIELDS = {"path", "merge", "by", "fold", "added"}


def rules_for(path: str, spec: Mapping[str, object]) -> RuleSet:
    """The rule set for ``path`` from its manifest entry, e.g. ``{"preset": "npm-package"}``."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"merge entry for {path}: expected an object")
    unknown = sorted(set(spec) - _SPEC_FIELDS)
    if unknown:
        raise ValueError(f"merge entry for {path}: unknown field {unknown[0]!r}")
    preset_name = spec.get("preset")
    rules: list[Rule] = []
    preset_format: Format | None = None
    if preset_name is not None:
        if not isinstance(preset_name, str) or preset_name not in PRESETS:
            known = ", ".join(preset_names())
            raise ValueError(f"merge entry for {path}: unknown preset {preset_name!r} ({known})")
        preset = PRESETS[preset_name]
        preset_format = preset["format"]
        rules += [rule_from_dict(raw, f"preset {preset_name}") for raw in preset["rules"]]
    extra = spec.get("rules", [])
    if not isinstance(extra, Sequence) or isinstance(extra, str):
        raise ValueError(f"merge entry for {path}: 'rules' must be a list")
    rules += [rule_from_dict(raw, f"merge entry for {path}") for raw in extra]
    if not rules:
        raise ValueError(f"merge entry for {path}: give a 'preset' or 'rules'")
    return RuleSet(tuple(rules), _format(path, spec.get("format"), preset_format), preset_name)


def _format(path: str, explicit: object, preset_format: Format | None) -> Format:
    # An explicit format wins, then the preset's (it names the file it was written for),
    # then the extension: release trees and temp copies do not always keep the file's name.
    if explicit is not None:
        for fmt in FORMATS:
            if explicit == fmt:
                return fmt
        raise ValueError(f"merge entry for {path}: format must be one of {', '.join(FORMATS)}")
    found = preset_format or format_for_path(path)
    if found is None:
        raise ValueError(f"merge entry for {path}: cannot tell the format; add 'format'")
    return found


def rule_from_dict(raw: object, where: str) -> Rule:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: each rule must be an object")
    unknown = sorted(set(raw) - _RULE_FIELDS)
    if unknown:
        raise ValueError(f"{where}: unknown rule field {unknown[0]!r}")
    path = _path(raw.get("path"), where)
    merge = raw.get("merge")
    if merge not in MERGE_KINDS:
        raise ValueError(f"{where}: rule {'.'.join(path)}: merge must be one of {MERGE_KINDS}")
    by = raw.get("by")
    if merge == "list" and (not isinstance(by, str) or not by):
        raise ValueError(f"{where}: rule {'.'.join(path)}: a list rule needs 'by'")
    if merge != "list" and by is not None:
        raise ValueError(f"{where}: rule {'.'.join(path)}: 'by' is only for list rules")
    fold = raw.get("fold", False)
    if not isinstance(fold, bool):
        raise ValueError(f"{where}: rule {'.'.join(path)}: 'fold' must be true or false")
    added = raw.get("added", "suggest")
    if added not in ("suggest", "apply"):
        raise ValueError(f"{where}: rule {'.'.join(path)}: 'added' must be suggest or apply")
    return Rule(
        path=path,
        merge=cast(MergeKind, merge),
        by=cast("str | None", by),
        fold=fold,
        added=cast(AddedPolicy, added),
    )


def _path(raw: Any, where: str) -> tuple[str, ...]:
    # A list of segments allows keys containing dots; a string is split on dots.
    if isinstance(raw, str):
        segments = raw.split(".")
    elif isinstance(raw, Sequence) and all(isinstance(part, str) for part in raw):
        segments = list(raw)
    else:
        raise ValueError(f"{where}: a rule 'path' must be a string or a list of strings")
    if not segments or any(not part for part in segments):
        raise ValueError(f"{where}: rule path {raw!r} has an empty segment")
    return tuple(segments)
