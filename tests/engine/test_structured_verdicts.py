"""Every row of the keyed verdict table, for every managed part of every preset.

Each target below knows how to put a value for one managed key or entry into a document of
its preset's format; the table then builds baseline, latest and adopter files from three
values and checks the bucket and the written result.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tether.engine.structured import MISSING, merge_structured, rules_for
from tether.engine.structured.formats import parse

Doc = dict[str, Any]


@dataclass(frozen=True)
class Target:
    preset: str
    label: str
    put: Callable[[Doc, Any], None]
    get: Callable[[Doc], Any]
    values: tuple[Any, Any, Any]  # baseline-ish, latest-ish, a third value nobody else has
    added_applies: bool = False


PATHS = {
    "npm-package": "package.json",
    "pnpm-workspace": "pnpm-workspace.yaml",
    "gaia-audit-ci": ".gaia/audit-ci.yml",
    "pyproject": "pyproject.toml",
}

SKELETONS: dict[str, Callable[[], Doc]] = {
    "npm-package": lambda: {
        "name": "kit",
        "version": "1.0.0",
        "dependencies": {"zod": "^3.0.0"},
        "scripts": {"test": "vitest"},
    },
    "pnpm-workspace": lambda: {"packages": ["apps/*"], "overrides": {"keep": "1.0.0"}},
    "gaia-audit-ci": lambda: {
        "project_key": "mine",
        "audit_authors": "zed=full",
        "auditors": [{"name": "base", "globs": ["src/**"]}],
    },
    "pyproject": lambda: {
        "project": {
            "name": "kit",
            "version": "1.0",
            "dependencies": ["click>=8"],
            "optional-dependencies": {"dev": ["ruff"]},
        },
        "build-system": {"requires": ["wheel"], "build-backend": "hatchling.build"},
    },
}


def _entry(*path: str) -> tuple[Callable[[Doc, Any], None], Callable[[Doc], Any]]:
    def put(doc: Doc, value: Any) -> None:
        node = doc
        for segment in path[:-1]:
            node = node.setdefault(segment, {})
        node[path[-1]] = value

    def get(doc: Doc) -> Any:
        node: Any = doc
        for segment in path:
            if not isinstance(node, dict) or segment not in node:
                return MISSING
            node = node[segment]
        return node

    return put, get


def _token(login: str) -> tuple[Callable[[Doc, Any], None], Callable[[Doc], Any]]:
    def put(doc: Doc, value: Any) -> None:
        doc["audit_authors"] = f"{doc['audit_authors']} {login}={value}"

    def get(doc: Doc) -> Any:
        for token in doc["audit_authors"].split():
            name, _, mode = token.partition("=")
            if name.lower() == login.lower():
                return mode
        return MISSING

    return put, get


def _member(name: str) -> tuple[Callable[[Doc, Any], None], Callable[[Doc], Any]]:
    def put(doc: Doc, value: Any) -> None:
        doc["auditors"].append({"name": name, **value})

    def get(doc: Doc) -> Any:
        for member in doc["auditors"]:
            if member["name"] == name:
                return {k: v for k, v in member.items() if k != "name"}
        return MISSING

    return put, get


def _requirement(*path: str) -> tuple[Callable[[Doc, Any], None], Callable[[Doc], Any]]:
    name = path[-1]

    def put(doc: Doc, value: Any) -> None:
        node = doc
        for segment in path[:-2]:
            node = node.setdefault(segment, {})
        node.setdefault(path[-2], []).append(value)

    def get(doc: Doc) -> Any:
        node: Any = doc
        for segment in path[:-1]:
            node = node[segment]
        found = [req for req in node if re.split(r"[^\w.-]", req)[0] == name]
        return found[0] if found else MISSING

    return put, get


def _target(preset: str, label: str, accessors: Any, values: Any, applies: bool = False) -> Any:
    return Target(preset, label, accessors[0], accessors[1], values, applies)


SEMVER = ("^1.0.0", "^2.0.0", "^1.5.0")
TARGETS = [
    *(
        _target("npm-package", section, _entry(section, "@scope/pkg"), SEMVER)
        for section in (
            "dependencies",
            "devDependencies",
            "peerDependencies",
            "optionalDependencies",
        )
    ),
    _target("npm-package", "scripts", _entry("scripts", "build"), ("tsc", "tsc -b", "esbuild")),
    _target("npm-package", "engines", _entry("engines", "node"), (">=18", ">=20", ">=16")),
    _target(
        "npm-package", "packageManager", _entry("packageManager"), ("pnpm@9", "pnpm@10", "npm")
    ),
    _target("pnpm-workspace", "minimumReleaseAge", _entry("minimumReleaseAge"), (1440, 2880, 60)),
    _target("pnpm-workspace", "strict", _entry("minimumReleaseAgeStrict"), (False, True, "x")),
    _target("pnpm-workspace", "trustPolicy", _entry("trustPolicy"), ("a", "no-downgrade", "off")),
    _target(
        "pnpm-workspace",
        "trustPolicyExclude",
        _entry("trustPolicyExclude"),
        (["a"], ["a", "b"], ["b", "a"]),
    ),
    _target("pnpm-workspace", "ageExclude", _entry("minimumReleaseAgeExclude"), (["x"], [], ["y"])),
    _target("pnpm-workspace", "hoist", _entry("publicHoistPattern"), (["*eslint*"], ["*"], [])),
    _target("pnpm-workspace", "savePrefix", _entry("savePrefix"), ("^", "~", "")),
    _target("pnpm-workspace", "strictPeers", _entry("strictPeerDependencies"), (True, False, None)),
    _target("pnpm-workspace", "overrides", _entry("overrides", "@scope/pkg"), SEMVER),
    _target("pnpm-workspace", "allowBuilds", _entry("allowBuilds", "esbuild"), (True, False, "x")),
    _target("pnpm-workspace", "catalog", _entry("catalog", "react"), SEMVER),
    _target("pnpm-workspace", "catalogs", _entry("catalogs", "legacy", "react"), SEMVER),
    _target("gaia-audit-ci", "gate_label", _entry("gate_label"), ("audit", "audit-2", "mine")),
    _target("gaia-audit-ci", "budget_seconds", _entry("budget_seconds"), (600, 900, 60)),
    _target("gaia-audit-ci", "max_turns", _entry("max_turns"), (10, 20, 5)),
    _target("gaia-audit-ci", "push_fixes", _entry("push_fixes"), (False, True, "ask")),
    _target("gaia-audit-ci", "default_mode", _entry("default_mode"), ("light", "full", "off")),
    _target("gaia-audit-ci", "override_label", _entry("override_label"), ("skip", "ok", "no")),
    _target(
        "gaia-audit-ci",
        "retrigger_workflows",
        _entry("retrigger_workflows"),
        (["ci.yml"], ["ci.yml", "lint.yml"], ["mine.yml"]),
    ),
    _target("gaia-audit-ci", "audit_authors", _token("Alice"), ("full", "light", "off")),
    _target(
        "gaia-audit-ci",
        "auditors",
        _member("code-audit"),
        ({"globs": ["src/**"]}, {"globs": ["src/**", "lib/**"]}, {"globs": ["app/**"]}),
        applies=True,
    ),
    _target(
        "pyproject",
        "dependencies",
        _requirement("project", "dependencies", "requests"),
        ("requests>=2.0", "requests>=2.31", "requests==2.1"),
    ),
    _target(
        "pyproject",
        "optional-dependencies",
        _requirement("project", "optional-dependencies", "docs", "mkdocs"),
        ("mkdocs>=1.0", "mkdocs>=1.5", "mkdocs<1"),
    ),
    _target(
        "pyproject",
        "build-system",
        _requirement("build-system", "requires", "hatchling"),
        ("hatchling>=1.18", "hatchling>=1.20", "hatchling"),
    ),
]


def dump(preset: str, doc: Doc) -> bytes:
    fmt = rules_for(PATHS[preset], {"preset": preset}).format
    if fmt == "json":
        return (json.dumps(doc, indent=2) + "\n").encode()
    if fmt == "toml":
        import tomlkit

        return tomlkit.dumps(doc).encode()
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    buffer = io.StringIO()
    yaml.dump(doc, buffer)
    return buffer.getvalue().encode()


def build(target: Target, value: Any) -> bytes:
    doc = SKELETONS[target.preset]()
    if value is not MISSING:
        target.put(doc, value)
    return dump(target.preset, doc)


# Each target's file with each of its values (or none), built once: ten rows ask for the
# same few files again.
_built: dict[tuple[str, str, int], bytes] = {}


def built(target: Target, index: int) -> bytes:
    """``build`` of the target's value ``index`` (M: without it)."""
    key = (target.preset, target.label, index)
    if key not in _built:
        _built[key] = build(target, _value(target, index))
    return _built[key]


V1, V2, V3 = 0, 1, 2
M = -1
# (row, baseline, latest, adopter, expected bucket or None for no item, reason)
ROWS = [
    ("unchanged-upstream", V1, V1, V3, None, None),
    ("adopter-at-baseline", V1, V2, V1, "applied", None),
    ("adopter-at-latest", V1, V2, V2, None, None),
    ("both-changed", V1, V2, V3, "conflicts", None),
    ("adopter-removed", V1, V2, M, "suggestions", "removed-then-changed"),
    ("added-upstream", M, V2, M, "suggestions", "added"),
    ("added-upstream-already-there", M, V2, V2, None, None),
    ("added-upstream-adopter-differs", M, V2, V3, "suggestions", "added"),
    ("removed-upstream", V1, M, V1, None, None),
    ("removed-upstream-adopter-changed", V1, M, V3, None, None),
]


def _value(target: Target, index: int) -> Any:
    return MISSING if index == M else target.values[index]


@pytest.mark.parametrize("row", ROWS, ids=[row[0] for row in ROWS])
@pytest.mark.parametrize("target", TARGETS, ids=[f"{t.preset}:{t.label}" for t in TARGETS])
def test_verdict_row(target: Target, row: tuple[Any, ...]) -> None:
    name, b, new, a, bucket, reason = row
    if target.added_applies and name == "added-upstream":
        bucket, reason = "applied", None  # a roster member new upstream is applied
    if target.added_applies and name == "added-upstream-adopter-differs":
        bucket, reason = "conflicts", None  # the adopter's own member of that name is kept
    path = PATHS[target.preset]
    current = built(target, a)
    result = merge_structured(
        path,
        rules_for(path, {"preset": target.preset}),
        built(target, b),
        built(target, new),
        current,
    )
    assert result.unread == ()
    buckets = result.to_json()
    everything = [(kind, item) for kind, items in buckets.items() for item in items]
    if bucket is None:
        assert everything == []
        assert result.new_text == current
        return
    assert len(everything) == 1, everything
    kind, item = everything[0]
    assert kind == bucket
    assert item.get("reason") == reason
    written = parse(
        rules_for(path, {"preset": target.preset}).format or "json", result.new_text.decode()
    )
    if bucket == "applied":
        assert target.get(written) == _value(target, new)
    else:
        assert result.new_text == current


@pytest.mark.parametrize("preset", sorted(PATHS))
def test_identical_files_give_no_items(preset: str) -> None:
    path = PATHS[preset]
    text = dump(preset, SKELETONS[preset]())
    result = merge_structured(path, rules_for(path, {"preset": preset}), text, text, text)
    assert result.counts == (0, 0, 0)
    assert result.new_text == text
