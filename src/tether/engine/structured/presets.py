"""Built-in rule sets, written in the same shape a manifest uses for its own rules.

A manifest says ``"merge": {"package.json": {"preset": "npm-package"}}``; it may instead (or
as well) list ``"rules"`` of this very shape. See docs/structured-merge.md.
"""

from __future__ import annotations

from typing import Any, Final

_NPM_ENTRY_SECTIONS = (
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
    "scripts",
    "engines",
)

_PNPM_VALUE_KEYS = (
    "minimumReleaseAge",
    "minimumReleaseAgeStrict",
    "trustPolicy",
    "trustPolicyExclude",
    "minimumReleaseAgeExclude",
    "publicHoistPattern",
    "savePrefix",
    "strictPeerDependencies",
)

_AUDIT_CI_VALUE_KEYS = (
    "gate_label",
    "budget_seconds",
    "max_turns",
    "push_fixes",
    "default_mode",
    "override_label",
    "retrigger_workflows",
)

PRESETS: Final[dict[str, dict[str, Any]]] = {
    # package.json: name, version, description, bin, … belong to the adopter and are never
    # compared; only dependency-like sections (per entry) and the package manager pin are.
    "npm-package": {
        "format": "json",
        "rules": [
            *({"path": section, "merge": "entries"} for section in _NPM_ENTRY_SECTIONS),
            {"path": "packageManager", "merge": "value"},
        ],
    },
    "pnpm-workspace": {
        "format": "yaml",
        "rules": [
            *({"path": key, "merge": "value"} for key in _PNPM_VALUE_KEYS),
            {"path": "overrides", "merge": "entries"},
            {"path": "allowBuilds", "merge": "entries"},
            {"path": "catalog", "merge": "entries"},
            {"path": "catalogs.*", "merge": "entries"},
        ],
    },
    # GAIA's .gaia/audit-ci.yml. A roster member new upstream is applied, not suggested: a
    # new auditor is a capability the adopter cannot opt into if it never arrives.
    "gaia-audit-ci": {
        "format": "yaml",
        "rules": [
            *({"path": key, "merge": "value"} for key in _AUDIT_CI_VALUE_KEYS),
            {"path": "audit_authors", "merge": "tokens", "fold": True},
            {"path": "auditors", "merge": "list", "by": "name", "added": "apply"},
        ],
    },
    # tool.* tables vary per project: a manifest adds them with its own "rules".
    "pyproject": {
        "format": "toml",
        "rules": [
            {"path": "project.dependencies", "merge": "requirements"},
            {"path": "project.optional-dependencies.*", "merge": "requirements"},
            {"path": "build-system.requires", "merge": "requirements"},
        ],
    },
}


def preset_names() -> list[str]:
    return sorted(PRESETS)
