"""Rules, parse failures, comparison, presence triage and notes of the structured merge."""

from __future__ import annotations

from typing import Any

import pytest

from tether.engine.structured import (
    MISSING,
    Rule,
    merge_structured,
    render_notes,
    rules_for,
    summary_line,
    triage,
)
from tether.engine.structured.values import same
from tether.model.plan import SideFault
from tether.report.reasons import side_problems

NPM = rules_for("package.json", {"preset": "npm-package"})
WORKSPACE = rules_for("pnpm-workspace.yaml", {"preset": "pnpm-workspace"})
PYPROJECT = rules_for("pyproject.toml", {"preset": "pyproject"})

GOOD = {
    "json": b'{"dependencies": {"a": "1"}}\n',
    "yaml": b"overrides:\n  a: '1'\n",
    "toml": b'[project]\ndependencies = ["a>=1"]\n',
}
BAD = {
    "json": [
        (b'{"dependencies": {"a": "1",}}', "invalid JSON"),
        (b'{"a": 1, "a": 2}', 'duplicate key "a" (line 1, column 10)'),
        (b'{"x": {"b": 1,\n "b": 2}}', 'duplicate key "b" (line 2, column 2)'),
        (b"[1, 2]", "the top level is a list, not a mapping"),
        (b"", "invalid JSON"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
    "yaml": [
        (b"overrides: [a\nb: 1\n", "invalid YAML"),
        (b"a: 1\na: 2\n", 'found duplicate key "a"'),
        (b"- a\n- b\n", "the top level is a list"),
        (b"a: 1\n---\nb: 2\n", "invalid YAML"),
        (b"just text\n", "the top level is a string"),
    ],
    "toml": [
        (b"[project\n", "invalid TOML"),
        (b"a = 1\na = 2\n", "invalid TOML"),
    ],
}
RULES = {"json": NPM, "yaml": WORKSPACE, "toml": PYPROJECT}
NAMES = {"json": "package.json", "yaml": "pnpm-workspace.yaml", "toml": "pyproject.toml"}
CASES = [(fmt, data, message) for fmt, cases in BAD.items() for data, message in cases]


@pytest.mark.parametrize("role", ["baseline", "latest", "current"])
@pytest.mark.parametrize(("fmt", "data", "message"), CASES)
def test_a_side_that_does_not_parse_is_reported_with_its_role(
    role: str, fmt: str, data: bytes, message: str
) -> None:
    sides = {name: GOOD[fmt] for name in ("baseline", "latest", "current")}
    sides[role] = data
    result = merge_structured(NAMES[fmt], RULES[fmt], **sides)
    [side] = result.unread
    assert (side.role, side.fault) == (role, SideFault.NOT_PARSED)
    assert message in side.message
    assert "\n" not in side.message and "Traceback" not in side.message
    assert side_problems(result.unread) == f"{role} file does not parse: {side.message}"
    assert result.error_role == role
    assert result.counts == (0, 0, 0)
    assert result.new_text == sides["current"]


def test_several_broken_sides_are_all_named() -> None:
    result = merge_structured("package.json", NPM, b"{", b"{}", b"nope")
    assert result.error_role == "baseline"
    assert [(side.role, side.fault) for side in result.unread] == [
        ("baseline", SideFault.NOT_PARSED),
        ("current", SideFault.NOT_PARSED),
    ]
    words = side_problems(result.unread)
    assert words.startswith("baseline file does not parse: ")
    assert "; current file does not parse: " in words


def test_empty_yaml_is_an_empty_mapping() -> None:
    result = merge_structured("pnpm-workspace.yaml", WORKSPACE, b"", b"savePrefix: '~'\n", b"")
    assert result.unread == ()
    assert [(item.key, item.reason) for item in result.suggestions] == [("savePrefix", "added")]


# ---------------------------------------------------------------------------------------
# Comparison


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, True),  # mapping order ignored
        ([1, 2], [2, 1], False),  # list order kept
        (True, 1, False),
        (0, False, False),
        (1, 1.0, True),
        ("1", 1, False),
        (None, MISSING, False),
        ({"a": None}, {}, False),
        ([{"x": [1]}], [{"x": [1]}], True),
    ],
)
def test_values_compare_as_parsed_data(left: Any, right: Any, equal: bool) -> None:
    assert same(left, right) is equal
    assert same(right, left) is equal


def test_reordered_mapping_value_is_not_a_change() -> None:
    base = b'{"engines": {"node": ">=18", "pnpm": ">=9"}, "packageManager": "pnpm@9"}'
    latest = b'{"packageManager": "pnpm@9", "engines": {"pnpm": ">=9", "node": ">=18"}}'
    result = merge_structured("package.json", NPM, base, latest, b'{"x": 1}')
    assert result.counts == (0, 0, 0)


def test_unmanaged_keys_are_never_compared() -> None:
    base = b'{"name": "a", "version": "1", "private": true, "bin": {"a": "x"}}'
    latest = b'{"name": "b", "version": "2", "private": false, "bin": {"b": "y"}, "type": "module"}'
    result = merge_structured("package.json", NPM, base, latest, base)
    assert result.counts == (0, 0, 0)


def test_adopter_only_entries_are_never_visited() -> None:
    base = b'{"dependencies": {"a": "1"}}'
    latest = b'{"dependencies": {"a": "1"}}'
    current = b'{"dependencies": {"a": "1", "mine": "2"}, "scripts": {"mine": "x"}}'
    result = merge_structured("package.json", NPM, base, latest, current)
    assert result.counts == (0, 0, 0)


def test_catalogs_wildcard_visits_upstream_catalogs_only() -> None:
    base = b"catalogs:\n  legacy:\n    react: ^17.0.0\n"
    latest = b"catalogs:\n  legacy:\n    react: ^17.0.2\n  next:\n    react: ^19.0.0\n"
    current = b"catalogs:\n  legacy:\n    react: ^17.0.0\n  mine:\n    vue: ^3.0.0\n"
    result = merge_structured("pnpm-workspace.yaml", WORKSPACE, base, latest, current)
    assert [(item.section, item.key) for item in result.applied] == [("catalogs.legacy", "react")]
    # The adopter has no "next" catalog: suggested, never created.
    assert [(item.section, item.key, item.reason) for item in result.suggestions] == [
        ("catalogs.next", "react", "added")
    ]
    assert result.new_text == current.replace(b"^17.0.0", b"^17.0.2")


def test_requirements_compare_meaning_not_spelling() -> None:
    base = b'[project]\ndependencies = ["Foo_Bar >= 1.0", "baz[B,a]<2"]\n'
    latest = b'[project]\ndependencies = ["foo-bar>=1.0", "baz[a,b] <2", "not a requirement !"]\n'
    result = merge_structured("pyproject.toml", PYPROJECT, base, latest, base)
    assert result.counts == (0, 0, 0)


def test_requirements_first_of_a_name_wins_and_keeps_the_adopter_spelling_around() -> None:
    base = b'[project]\ndependencies = ["foo>=1"]\n'
    latest = b'[project]\ndependencies = ["foo>=2"]\n'
    current = b'[project]\ndependencies = ["x", "FOO>=1.0", "foo<0"]\n'
    result = merge_structured("pyproject.toml", PYPROJECT, base, latest, current)
    assert [item.adopter for item in result.applied] == ["FOO>=1.0"]
    assert result.new_text == b'[project]\ndependencies = ["x", "foo>=2", "foo<0"]\n'


def test_audit_tokens_without_login_or_mode_are_ignored() -> None:
    rules = rules_for("a.yml", {"preset": "gaia-audit-ci"})
    base = b'audit_authors: "=full bob= carol alice=full"\n'
    latest = b'audit_authors: "=light bob=x carol alice=light"\n'
    current = b'audit_authors: "=full bob= carol alice=full"\n'
    result = merge_structured("a.yml", rules, base, latest, current)
    # bob= is malformed in B and A, so bob=x is new upstream: a suggestion.
    assert [item.key for item in result.applied] == ["alice"]
    assert [(item.key, item.reason) for item in result.suggestions] == [("bob", "added")]
    assert result.new_text == b'audit_authors: "=full bob= carol alice=light"\n'


def test_audit_authors_missing_on_the_adopter_side() -> None:
    rules = rules_for("a.yml", {"preset": "gaia-audit-ci"})
    base = b'audit_authors: "alice=full"\n'
    latest = b'audit_authors: "alice=light"\n'
    result = merge_structured("a.yml", rules, base, latest, b"gate_label: x\n")
    assert [(item.key, item.reason) for item in result.suggestions] == [
        ("alice", "removed-then-changed")
    ]


def test_buckets_sorted_by_section_then_key_in_code_point_order() -> None:
    base = b'{"scripts": {"b": "1", "B": "1", "a": "1"}, "dependencies": {"z": "1"}}'
    latest = (
        b'{"scripts": {"b": "2", "B": "2", "a": "2"}, "dependencies": {"z": "2"},'
        b' "packageManager": "x"}'
    )
    result = merge_structured("package.json", NPM, base, latest, base)
    assert [(item.section, item.key) for item in result.applied] == [
        ("dependencies", "z"),
        ("scripts", "B"),
        ("scripts", "a"),
        ("scripts", "b"),
    ]
    assert [(item.section, item.key) for item in result.suggestions] == [(None, "packageManager")]


# ---------------------------------------------------------------------------------------
# Rule sets from manifest entries


def test_presets_build_rule_sets_with_their_format() -> None:
    assert NPM.format == "json" and NPM.preset == "npm-package"
    assert WORKSPACE.format == "yaml"
    assert PYPROJECT.format == "toml"
    audit = rules_for(".gaia/audit-ci.yml", {"preset": "gaia-audit-ci"})
    assert Rule(("auditors",), "list", by="name", added="apply") in audit.rules
    assert Rule(("audit_authors",), "tokens", fold=True) in audit.rules


def test_explicit_rules_extend_a_preset_and_accept_dotted_keys_as_lists() -> None:
    rules = rules_for(
        "conf/settings.json",
        {
            "rules": [
                {"path": ["tool", "a.b"], "merge": "value"},
                {"path": "plugins", "merge": "list", "by": "id", "added": "apply"},
            ]
        },
    )
    assert rules.format == "json"
    assert rules.rules == (
        Rule(("tool", "a.b"), "value"),
        Rule(("plugins",), "list", by="id", added="apply"),
    )
    assert rules_for("x.txt", {"preset": "npm-package"}).format == "json"
    assert (
        rules_for("x.yaml", {"rules": [{"path": "a", "merge": "value"}], "format": "toml"}).format
        == "toml"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"preset": "nope"}, "unknown preset 'nope'"),
        ({}, "give a 'preset' or 'rules'"),
        ({"preset": "npm-package", "extra": 1}, "unknown field 'extra'"),
        ({"rules": "dependencies"}, "'rules' must be a list"),
        ({"rules": [{"path": "a", "merge": "magic"}]}, "merge must be one of"),
        ({"rules": [{"path": "a", "merge": "list"}]}, "a list rule needs 'by'"),
        ({"rules": [{"path": "a", "merge": "value", "by": "x"}]}, "'by' is only for list"),
        ({"rules": [{"path": "a..b", "merge": "value"}]}, "empty segment"),
        ({"rules": [{"path": "a", "merge": "value", "added": "maybe"}]}, "'added' must be"),
        ({"rules": [{"path": "a", "merge": "tokens", "fold": "yes"}]}, "'fold' must be"),
        ({"rules": [{"path": "a", "merge": "value", "when": 1}]}, "unknown rule field 'when'"),
        ({"rules": [{"path": 3, "merge": "value"}]}, "'path' must be a string"),
        ({"rules": [{"path": "a", "merge": "value"}], "format": "ini"}, "format must be one of"),
    ],
)
def test_bad_merge_entries_raise_value_error(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("'", "'")):
        rules_for("settings.json", spec)


def test_unknown_format_without_preset_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="cannot tell the format"):
        rules_for("settings.conf", {"rules": [{"path": "a", "merge": "value"}]})


# ---------------------------------------------------------------------------------------
# Presence triage


@pytest.mark.parametrize(
    ("baseline", "latest", "current", "expected"),
    [
        (b"b", None, b"a", "deletion"),
        (None, None, None, "deletion"),
        (None, b"l", None, "add"),
        (b"b", b"l", None, "removed"),
        (None, b"l", b"a", "whole-file-conflict"),
        (b"b", b"l", b"a", "merge"),
    ],
)
def test_presence_triage(
    baseline: bytes | None, latest: bytes | None, current: bytes | None, expected: str
) -> None:
    assert triage(baseline, latest, current) == expected


# ---------------------------------------------------------------------------------------
# Notes and summary


def _sample_result() -> Any:
    base = b'{"scripts": {"a": "1", "b": "1", "c": "1"}, "dependencies": {"x": "1"}}'
    latest = (
        b'{"scripts": {"a": "2", "b": "2", "c": "2", "d": "new"},'
        b' "dependencies": {"x": "2", "y": "1"}}'
    )
    current = b'{"scripts": {"a": "1", "b": "1", "c": "mine"}}'
    return merge_structured("package.json", NPM, base, latest, current)


def test_summary_line_counts_and_points_at_the_notes() -> None:
    result = _sample_result()
    assert result.counts == (2, 1, 3)
    assert (
        summary_line("package.json", result, ".tether/merge/package.json.notes")
        == "package.json: 2 applied, 1 conflict, 3 suggestions "
        "(see .tether/merge/package.json.notes)"
    )
    quiet = merge_structured("package.json", NPM, b"{}", b"{}", b"{}")
    assert summary_line("package.json", quiet) == "package.json: no managed-key changes"
    broken = merge_structured("package.json", NPM, b"{}", b"{", b"{}")
    assert summary_line("package.json", broken, unread_words=side_problems).startswith(
        "package.json: not merged, latest file does not parse: invalid JSON"
    )
    with pytest.raises(ValueError, match="no words given"):
        summary_line("package.json", broken)


def test_notes_list_every_conflict_and_suggestion_with_values_and_action() -> None:
    notes = render_notes("package.json", _sample_result(), header="kit 1.0.0 -> 1.1.0")
    assert notes.startswith("# tether structured merge notes for package.json\n# kit 1.0.0")
    conflict = notes.split("## Conflicts\n\n", 1)[1].split("\n\n", 1)[0]
    assert conflict.splitlines() == [
        "section:  scripts",
        "key:      c",
        'adopter:  "mine"',
        'baseline: "1"',
        'latest:   "2"',
        "action:   kept your value; upstream changed it too. To take upstream's change, set "
        "it to the latest value by hand.",
    ]
    assert "key:      x\nadopter:  (absent)" in notes
    assert "you removed this and upstream changed it" in notes
    assert "upstream added this; nothing was written" in notes
    assert '## Applied\n\nscripts a: "1" -> "2"\nscripts b: "1" -> "2"\n' in notes


def test_notes_for_a_parse_error() -> None:
    broken = merge_structured("package.json", NPM, b"{}", b"{}", b"{,}")
    notes = render_notes("package.json", broken, unread_words=side_problems)
    assert "Not merged: current file does not parse: invalid JSON" in notes
