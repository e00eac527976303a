"""Managed-key changes between two copies of a structured file (what ``tether diff`` lists)."""

from tether.engine.structured import rules_for
from tether.engine.structured.changes import managed_changes
from tether.model.plan import SideFault

PYPROJECT = b"""[project]
name = "app"
dependencies = ["Requests >= 2.0", "rich"]

[project.optional-dependencies]
dev = ["pytest"]
"""


def changes(path, spec, baseline, current):
    found = managed_changes(path, rules_for(path, spec), baseline, current)
    assert found.unread == ()
    return [change.to_json() for change in found.changes]


def test_requirements_compare_by_meaning_not_spelling():
    respelled = PYPROJECT.replace(b'"Requests >= 2.0"', b'"requests>=2"')
    assert changes("pyproject.toml", {"preset": "pyproject"}, PYPROJECT, respelled) == []


def test_requirement_changes_added_and_removed_across_groups():
    current = (
        PYPROJECT.replace(b'"Requests >= 2.0", "rich"', b'"requests>=2.31"')
        .replace(b'dev = ["pytest"]', b'dev = ["pytest", "ruff"]')
        .replace(b'name = "app"', b'name = "ours"')
    )
    assert changes("pyproject.toml", {"preset": "pyproject"}, PYPROJECT, current) == [
        {
            "change": "changed",
            "kind": "entry",
            "section": "project.dependencies",
            "key": "requests",
            "baseline": "Requests >= 2.0",
            "current": "requests>=2.31",
        },
        {
            "change": "removed",
            "kind": "entry",
            "section": "project.dependencies",
            "key": "rich",
            "baseline": "rich",
        },
        {
            "change": "added",
            "kind": "entry",
            "section": "project.optional-dependencies.dev",
            "key": "ruff",
            "current": "ruff",
        },
    ]


def test_whole_value_key_and_a_catalog_the_adopter_added():
    base = b"savePrefix: '^'\ncatalogs:\n  react18:\n    react: ^18.0.0\n"
    current = base.replace(b"'^'", b"'~'") + b"  vue:\n    vue: ^3.0.0\n"
    assert changes("pnpm-workspace.yaml", {"preset": "pnpm-workspace"}, base, current) == [
        {"change": "changed", "kind": "key", "key": "savePrefix", "baseline": "^", "current": "~"},
        {
            "change": "added",
            "kind": "entry",
            "section": "catalogs.vue",
            "key": "vue",
            "current": "^3.0.0",
        },
    ]


def test_a_side_that_does_not_parse_is_reported_not_raised():
    found = managed_changes(
        "package.json", rules_for("package.json", {"preset": "npm-package"}), b"{}", b"{"
    )
    assert found.changes == ()
    [side] = found.unread
    assert (side.role, side.fault) == ("current", SideFault.NOT_PARSED)
    assert side.message.startswith("invalid JSON")
