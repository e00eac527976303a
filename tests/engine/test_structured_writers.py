"""Format preservation: applying items edits only those values' lines, byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether.engine.structured import merge_structured, rules_for
from tether.engine.structured.formats import parse
from tether.engine.structured.yamlwrite import _faithful_yaml


def changed_lines(old: bytes, new: bytes) -> list[int]:
    """Numbers (1-based) of the lines that differ; both texts must have as many lines."""
    before, after = old.split(b"\n"), new.split(b"\n")
    assert len(before) == len(after), "an in-place edit must keep the line count"
    return [number for number, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b]


def line_of(text: bytes, needle: str, start: int = 1) -> int:
    lines = text.split(b"\n")
    for number in range(start, len(lines) + 1):
        if needle.encode() in lines[number - 1]:
            return number
    raise AssertionError(f"{needle!r} not found")


def merge(path: str, spec: dict[str, Any], base: bytes, latest: bytes, current: bytes) -> Any:
    result = merge_structured(path, rules_for(path, spec), base, latest, current)
    assert result.unread == (), result.unread
    return result


NPM = {"preset": "npm-package"}

# A hand-formatted package.json: 4-space indent, odd spacing, escapes, scoped names, nested
# objects, a comment key and non-ASCII text.
PACKAGE_A = """{
    "name":    "my-app",
    "version": "0.3.1",
    "description": "Caf\\u00e9 \\"tools\\" \u2014 mine",
    "//": "keep scripts sorted",
    "scripts": {
        "build":  "tsc -p tsconfig.build.json && echo \\"done\\"",
        "test": "vitest --run",
        "lint": "eslint ."
    },
    "exports": {
        ".": { "import": "./dist/index.js", "types": "./dist/index.d.ts" }
    },
    "dependencies": {
        "@scope/pkg":   "^1.0.0",
        "@scope/pkg-extra": "^1.0.0",
        "left-pad": "1.3.0",
        "react": "^18.2.0"
    },
    "devDependencies": { "typescript": "~5.3.0" },
    "packageManager": "pnpm@9.0.0",
    "engines": {"node": ">=18"}
}
"""

PACKAGE_B = {
    "name": "kit",
    "version": "1.0.0",
    "scripts": {
        "build": 'tsc -p tsconfig.build.json && echo "done"',
        "test": "vitest",
        "lint": "eslint .",
    },
    "dependencies": {"@scope/pkg": "^1.0.0", "@scope/pkg-extra": "^1.0.0", "react": "^18.2.0"},
    "devDependencies": {"typescript": "~5.3.0"},
    "packageManager": "pnpm@9.0.0",
    "engines": {"node": ">=18"},
}


def _package_latest() -> dict[str, Any]:
    latest: dict[str, Any] = json.loads(json.dumps(PACKAGE_B))
    latest["version"] = "1.1.0"
    latest["scripts"]["build"] = 'tsc -b && echo "built \\\\ ok"'
    latest["dependencies"]["@scope/pkg"] = "^1.4.0"
    latest["devDependencies"]["typescript"] = "~5.4.0"
    latest["packageManager"] = "pnpm@9.5.0"
    latest["engines"]["node"] = ">=20"
    return latest


def _dumped(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode()


def test_json_n_items_change_exactly_their_lines() -> None:
    current = PACKAGE_A.encode()
    result = merge("package.json", NPM, _dumped(PACKAGE_B), _dumped(_package_latest()), current)
    keys = sorted((item.section or "", item.key) for item in result.applied)
    assert keys == [
        ("", "packageManager"),
        ("dependencies", "@scope/pkg"),
        ("devDependencies", "typescript"),
        ("engines", "node"),
        ("scripts", "build"),
    ]
    assert result.conflicts == ()  # scripts.test: adopter already differs, B == L
    expected = sorted(
        [
            line_of(current, '"@scope/pkg":'),
            line_of(current, '"typescript"'),
            line_of(current, '"packageManager"'),
            line_of(current, '"node"'),
            line_of(current, '"build"'),
        ]
    )
    assert changed_lines(current, result.new_text) == expected
    data = json.loads(result.new_text)
    assert data["scripts"]["build"] == 'tsc -b && echo "built \\\\ ok"'
    assert data["dependencies"]["@scope/pkg-extra"] == "^1.0.0"
    new_lines = result.new_text.split(b"\n")
    # The value is written in place: the odd spacing after the key survives.
    assert (
        new_lines[expected[0] - 1] == b'        "build":  "tsc -b && echo \\"built \\\\\\\\ ok\\"",'
    )
    assert b'"@scope/pkg":   "^1.4.0",' in result.new_text
    assert b'"devDependencies": { "typescript": "~5.4.0" },' in result.new_text


def test_version_only_release_gives_zero_items() -> None:
    latest = json.loads(json.dumps(PACKAGE_B))
    latest["version"] = "9.9.9"
    current = PACKAGE_A.encode()
    result = merge("package.json", NPM, _dumped(PACKAGE_B), _dumped(latest), current)
    assert result.counts == (0, 0, 0)
    assert result.new_text == current


def test_json_crlf_tabs_bom_and_no_final_newline_survive() -> None:
    current = (
        '\ufeff{\r\n\t"name": "x",\r\n\t"dependencies": {\r\n\t\t"a": "1",\r\n'
        '\t\t"b": "1"\r\n\t}\r\n}'
    ).encode()
    base = b'{"dependencies": {"a": "1", "b": "1"}}'
    latest = b'{"dependencies": {"a": "2", "b": "1"}}'
    result = merge("package.json", NPM, base, latest, current)
    assert result.new_text == current.replace(b'"a": "1"', b'"a": "2"')


def test_json_added_entry_goes_to_its_sorted_place_with_neighbours_indentation() -> None:
    spec = {"rules": [{"path": "dependencies", "merge": "entries", "added": "apply"}]}
    current = b'{\n   "dependencies": {\n      "alpha": "1",\n      "gamma": "1"\n   }\n}\n'
    base = b'{"dependencies": {"alpha": "1"}}'
    latest = b'{"dependencies": {"alpha": "1", "beta": "2", "zeta": "3"}}'
    result = merge("package.json", spec, base, latest, current)
    assert [item.key for item in result.applied] == ["beta", "zeta"]
    assert result.new_text == (
        b'{\n   "dependencies": {\n      "alpha": "1",\n      "beta": "2",\n'
        b'      "gamma": "1",\n      "zeta": "3"\n   }\n}\n'
    )


def test_json_added_entry_into_unsorted_inline_and_empty_objects() -> None:
    spec = {
        "rules": [
            {"path": "scripts", "merge": "entries", "added": "apply"},
            {"path": "engines", "merge": "entries", "added": "apply"},
            {"path": "config", "merge": "entries", "added": "apply"},
        ]
    }
    current = (
        b'{\n  "scripts": {\n    "z": "1",\n    "a": "1"\n  },\n'
        b'  "engines": {"node": ">=18"},\n  "config": {}\n}\n'
    )
    base = b'{"scripts": {}, "engines": {}, "config": {}}'
    latest = b'{"scripts": {"m": "2"}, "engines": {"pnpm": ">=9"}, "config": {"k": [1, 2]}}'
    result = merge("package.json", spec, base, latest, current)
    assert len(result.applied) == 3
    assert result.new_text == (
        b'{\n  "scripts": {\n    "z": "1",\n    "a": "1",\n    "m": "2"\n  },\n'
        b'  "engines": {"node": ">=18", "pnpm": ">=9"},\n'
        b'  "config": {\n    "k": [\n      1,\n      2\n    ]\n  }\n}\n'
    )


def test_json_list_member_appended_and_replaced() -> None:
    spec = {"rules": [{"path": "plugins", "merge": "list", "by": "name", "added": "apply"}]}
    current = (
        b'{\n    "plugins": [\n        {"name": "a", "on": true},\n'
        b'        {"name": "mine", "on": true}\n    ]\n}\n'
    )
    base = b'{"plugins": [{"name": "a", "on": true}]}'
    latest = b'{"plugins": [{"name": "a", "on": false}, {"name": "b", "on": true}]}'
    result = merge("settings.json", spec, base, latest, current)
    assert [item.key for item in result.applied] == ["a", "b"]
    assert result.new_text == (
        b'{\n    "plugins": [\n        {"name": "a", "on": false},\n'
        b'        {"name": "mine", "on": true},\n'
        b'        {\n            "name": "b",\n            "on": true\n        }\n    ]\n}\n'
    )


def test_json_multiline_value_replaced_with_file_indentation() -> None:
    spec = {"rules": [{"path": "exports", "merge": "value"}]}
    current = b'{\n\t"exports": {\n\t\t".": "./a.js"\n\t},\n\t"x": 1\n}\n'
    base = b'{"exports": {".": "./a.js"}}'
    latest = b'{"exports": {".": "./b.js", "./cli": "./cli.js"}}'
    result = merge("package.json", spec, base, latest, current)
    assert result.new_text == (
        b'{\n\t"exports": {\n\t\t".": "./b.js",\n\t\t"./cli": "./cli.js"\n\t},\n\t"x": 1\n}\n'
    )


# ---------------------------------------------------------------------------------------
# YAML

WORKSPACE_A = """# pnpm workspace for the monorepo
packages:
   - 'apps/*'      # odd 3-space indentation
   - 'packages/*'

minimumReleaseAge: 1440   # minutes
minimumReleaseAgeExclude: [
  '@acme/*',   # our own packages
  'typescript',
]
trustPolicy: no-downgrade

overrides:
     'lodash@<4.17.21': '>=4.17.21'   # CVE-2021-23337
     "@types/node": 20.11.0
     semver: ^7.5.2
     mine: 1.0.0

catalog:
   react: ^18.2.0     # keep in step with react-dom
   react-dom: ^18.2.0
"""

WORKSPACE_B = """packages:
  - apps/*
minimumReleaseAge: 1440
minimumReleaseAgeExclude: ['@acme/*', typescript]
trustPolicy: no-downgrade
overrides:
  'lodash@<4.17.21': '>=4.17.21'
  '@types/node': 20.11.0
  semver: ^7.5.2
catalog:
  react: ^18.2.0
  react-dom: ^18.2.0
"""


def test_yaml_n_items_change_exactly_their_lines() -> None:
    latest = (
        WORKSPACE_B.replace("minimumReleaseAge: 1440", "minimumReleaseAge: 2880")
        .replace("semver: ^7.5.2", "semver: ^7.6.0")
        .replace("react: ^18.2.0", "react: ^18.3.1")
        .replace("'@types/node': 20.11.0", "'@types/node': 20.12.0")
    )
    current = WORKSPACE_A.encode()
    result = merge(
        "pnpm-workspace.yaml",
        {"preset": "pnpm-workspace"},
        WORKSPACE_B.encode(),
        latest.encode(),
        current,
    )
    assert len(result.applied) == 4
    assert changed_lines(current, result.new_text) == sorted(
        [
            line_of(current, "minimumReleaseAge: 1440"),
            line_of(current, "semver:"),
            line_of(current, "react: ^18.2.0"),
            line_of(current, '"@types/node"'),
        ]
    )
    text = result.new_text.decode()
    assert "minimumReleaseAge: 2880   # minutes\n" in text
    assert '     "@types/node": 20.12.0\n' in text
    assert "   react: ^18.3.1     # keep in step with react-dom\n" in text
    assert "  '@acme/*',   # our own packages\n" in text  # the flow list kept its comment


def test_ruamel_is_only_trusted_when_its_round_trip_is_exact() -> None:
    # ruamel collapses the multi-line flow list and drops the comment inside it.
    assert _faithful_yaml(WORKSPACE_A) is None
    assert _faithful_yaml(WORKSPACE_B) is not None


def test_yaml_multiline_flow_list_replaced_touches_only_its_own_lines() -> None:
    latest = WORKSPACE_B.replace("['@acme/*', typescript]", "['@acme/*', typescript, eslint]")
    current = WORKSPACE_A.encode()
    result = merge(
        "pnpm-workspace.yaml",
        {"preset": "pnpm-workspace"},
        WORKSPACE_B.encode(),
        latest.encode(),
        current,
    )
    assert [item.key for item in result.applied] == ["minimumReleaseAgeExclude"]
    before, after = current.decode(), result.new_text.decode()
    start = before.index("minimumReleaseAgeExclude")
    end = before.index("]\n", start) + 1
    assert after[:start] == before[:start]
    assert after.endswith(before[end:])
    # Quoting follows the neighbours: the file quotes this list's strings with ' '.
    assert "minimumReleaseAgeExclude: ['@acme/*', 'typescript', 'eslint']\n" in after


AUDIT_A = """# Audit CI for this repo. Edited by hand.
gate_label: audit            # the PR label that starts an audit
budget_seconds: 1200
max_turns: 30
retrigger_workflows:
- ci.yml
- e2e.yml
# login=mode, space separated
audit_authors: "Alice=full   bob=light  =orphan carol= dave alice=off erin=full"
auditors:
    -   name: code-audit
        globs:
            -   "src/**"
        scope: repo
    # an auditor of our own
    -   name: docs-audit
        globs:
            -   "docs/**"
        scope: docs
"""

AUDIT_B = """gate_label: audit
budget_seconds: 600
retrigger_workflows: [ci.yml]
audit_authors: "alice=full bob=light"
auditors:
  - name: code-audit
    globs: ["src/**"]
    scope: repo
"""


def test_audit_authors_edits_only_that_login_token() -> None:
    latest = AUDIT_B.replace("alice=full bob=light", "ALICE=light bob=light erin=light")
    current = AUDIT_A.encode()
    result = merge(
        ".gaia/audit-ci.yml",
        {"preset": "gaia-audit-ci"},
        AUDIT_B.encode(),
        latest.encode(),
        current,
    )
    # alice: case-folded, the adopter's first "Alice=full" equals the baseline → applied.
    assert [(item.section, item.key) for item in result.applied] == [("audit_authors", "ALICE")]
    # erin only exists upstream: suggested, never inserted, the adopter's erin untouched.
    assert [(item.key, item.reason) for item in result.suggestions] == [("erin", "added")]
    assert result.new_text == current.replace(b'"Alice=full ', b'"Alice=light ')


def test_audit_authors_first_occurrence_wins_on_every_side() -> None:
    base = b'audit_authors: "alice=full alice=off"\n'
    latest = b'audit_authors: "alice=light alice=full"\n'
    current = b'audit_authors: "x=y ALICE=off alice=full"\n'
    result = merge(".gaia/audit-ci.yml", {"preset": "gaia-audit-ci"}, base, latest, current)
    # B's alice is "full" (first), L's is "light"; A's first ALICE is "off": a conflict.
    assert [(item.key, item.adopter) for item in result.conflicts] == [("alice", "off")]
    assert result.new_text == current


def test_auditors_new_member_appended_with_neighbours_indentation() -> None:
    latest = AUDIT_B + (
        "  - name: workflows-audit\n"
        '    globs: [".github/workflows/**"]\n'
        "    scope: repo\n"
        "    push_fixes: false\n"
    )
    current = AUDIT_A.encode()
    result = merge(
        ".gaia/audit-ci.yml",
        {"preset": "gaia-audit-ci"},
        AUDIT_B.encode(),
        latest.encode(),
        current,
    )
    assert [(item.section, item.key) for item in result.applied] == [
        ("auditors", "workflows-audit")
    ]
    assert result.new_text == current + (
        b"    -   name: workflows-audit\n"
        b"        globs:\n"
        b'            -   ".github/workflows/**"\n'
        b"        scope: repo\n"
        b"        push_fixes: false\n"
    )


def test_auditors_member_changed_upstream_is_replaced_and_adopter_member_untouched() -> None:
    latest = AUDIT_B.replace('globs: ["src/**"]', 'globs: ["src/**", "lib/**"]')
    current = AUDIT_A.encode()
    result = merge(
        ".gaia/audit-ci.yml",
        {"preset": "gaia-audit-ci"},
        AUDIT_B.encode(),
        latest.encode(),
        current,
    )
    assert [item.key for item in result.applied] == ["code-audit"]
    expected = current.replace(
        b'            -   "src/**"\n', b'            -   "src/**"\n            -   "lib/**"\n'
    )
    assert result.new_text == expected
    assert b"-   name: docs-audit" in result.new_text


def test_auditors_edited_by_adopter_is_a_conflict() -> None:
    latest = AUDIT_B.replace("scope: repo", "scope: all")
    current = AUDIT_A.replace("scope: repo", "scope: src").encode()
    result = merge(
        ".gaia/audit-ci.yml",
        {"preset": "gaia-audit-ci"},
        AUDIT_B.encode(),
        latest.encode(),
        current,
    )
    assert [item.key for item in result.conflicts] == ["code-audit"]
    assert result.new_text == current


def test_yaml_crlf_document_marker_and_missing_final_newline() -> None:
    current = b"---\r\n# c\r\nminimumReleaseAge: 10\r\noverrides:\r\n  a: '1'"
    base = b"minimumReleaseAge: 10\noverrides: {a: '1'}\n"
    latest = b"minimumReleaseAge: 20\noverrides: {a: '2'}\n"
    result = merge("pnpm-workspace.yaml", {"preset": "pnpm-workspace"}, base, latest, current)
    assert result.new_text == b"---\r\n# c\r\nminimumReleaseAge: 20\r\noverrides:\r\n  a: '2'"


def test_yaml_added_entry_appended_to_mapping_and_flow_list() -> None:
    spec = {
        "rules": [
            {"path": "overrides", "merge": "entries", "added": "apply"},
            {"path": "list", "merge": "requirements", "added": "apply"},
        ],
        "format": "yaml",
    }
    current = b"overrides:\n    a: 1   # one\n# tail comment\nlist: [x>=1]  # pins\n"
    base = b"overrides: {a: 1}\nlist: [x>=1]\n"
    latest = b"overrides: {a: 1, b: {c: [1]}}\nlist: [x>=1, y<2]\n"
    result = merge("any.yaml", spec, base, latest, current)
    assert len(result.applied) == 2
    assert result.new_text == (
        b"overrides:\n    a: 1   # one\n    b:\n        c:\n          - 1\n"
        b"# tail comment\nlist: [x>=1, y<2]  # pins\n"
    )


def test_yaml_value_changing_shape_restarts_after_the_colon() -> None:
    base = b"publicHoistPattern:\n- a\n"
    latest = b"publicHoistPattern: []\n"
    current = b"publicHoistPattern:\n- a\nsavePrefix: ~\n"
    result = merge("pnpm-workspace.yaml", {"preset": "pnpm-workspace"}, base, latest, current)
    assert result.new_text == b"publicHoistPattern: []\nsavePrefix: ~\n"


def test_unwritable_value_becomes_a_conflict_and_the_file_is_untouched() -> None:
    # The adopter's value comes through a YAML merge key: there is no text to edit in place.
    current = b"defaults: &d\n  trustPolicy: off\n<<: *d\n"
    base = b"trustPolicy: off\n"
    latest = b"trustPolicy: no-downgrade\n"
    result = merge("pnpm-workspace.yaml", {"preset": "pnpm-workspace"}, base, latest, current)
    assert result.applied == ()
    assert [(item.key, item.reason) for item in result.conflicts] == [
        ("trustPolicy", "write-unsafe")
    ]
    assert result.new_text == current


@pytest.mark.parametrize(
    ("new_value", "plain"),
    [
        ("yes", False),  # a YAML 1.1 reader would see a boolean
        ("1.10", False),  # …or a number
        ("*glob", False),
        ("a: b", False),
        ("two\nlines", False),
        ("plain-text", True),
        ("^1.2.3", True),
    ],
)
def test_yaml_strings_are_quoted_only_when_needed(new_value: str, plain: bool) -> None:
    base = b"trustPolicy: before\n"
    latest = f"trustPolicy: {json.dumps(new_value)}\n".encode()
    result = merge(
        "pnpm-workspace.yaml", {"preset": "pnpm-workspace"}, base, latest, b"trustPolicy: before\n"
    )
    written = result.new_text.decode()
    assert written.count("\n") == 1
    assert (written == f"trustPolicy: {new_value}\n") is plain
    assert parse("yaml", written)["trustPolicy"] == new_value


# ---------------------------------------------------------------------------------------
# TOML

PYPROJECT_A = """[build-system]
requires = ["hatchling>=1.18", "hatch-vcs"]   # build backend
build-backend = "hatchling.build"

[project]
name = "my-tool"
version = "0.1.0"
dependencies = [
    # runtime
    "Requests >= 2.0",
    'ruamel.yaml>=0.18',   # literal string
    "my-own-lib==3.1",
]

[project.optional-dependencies]
dev = [
  "pytest>=8",
  "Ruff_Lint>=0.5",
]
docs = ["mkdocs"]

[tool.ruff]
line-length = 100 # house style
"""

PYPROJECT_B = """[build-system]
requires = ["hatchling>=1.18", "hatch-vcs"]
build-backend = "hatchling.build"
[project]
name = "kit"
dependencies = ["requests>=2.0", "ruamel.yaml>=0.18"]
[project.optional-dependencies]
dev = ["pytest>=8", "ruff-lint>=0.5"]
"""


def test_toml_requirements_keyed_by_normalised_name() -> None:
    latest = (
        PYPROJECT_B.replace('"requests>=2.0"', '"requests>=2.31"')
        .replace('"ruamel.yaml>=0.18"', '"ruamel.yaml>=0.19"')
        .replace('"ruff-lint>=0.5"', '"ruff-lint>=0.6"')
        .replace('"hatchling>=1.18"', '"hatchling>=1.20"')
    )
    current = PYPROJECT_A.encode()
    result = merge(
        "pyproject.toml", {"preset": "pyproject"}, PYPROJECT_B.encode(), latest.encode(), current
    )
    assert sorted((item.section, item.key) for item in result.applied) == [
        ("build-system.requires", "hatchling"),
        ("project.dependencies", "requests"),
        ("project.dependencies", "ruamel-yaml"),
        ("project.optional-dependencies.dev", "ruff-lint"),
    ]
    assert changed_lines(current, result.new_text) == sorted(
        [
            line_of(current, '"hatchling>=1.18"'),
            line_of(current, "Requests >= 2.0"),
            line_of(current, "ruamel.yaml>=0.18"),
            line_of(current, "Ruff_Lint"),
        ]
    )
    text = result.new_text.decode()
    assert "    'ruamel.yaml>=0.19',   # literal string\n" in text
    assert "# runtime" in text and "line-length = 100 # house style" in text


def test_toml_added_requirement_is_a_suggestion_unless_the_rule_applies_it() -> None:
    latest = PYPROJECT_B.replace('"ruamel.yaml>=0.18"]', '"ruamel.yaml>=0.18", "packaging"]')
    current = PYPROJECT_A.encode()
    result = merge(
        "pyproject.toml", {"preset": "pyproject"}, PYPROJECT_B.encode(), latest.encode(), current
    )
    assert [(item.key, item.reason) for item in result.suggestions] == [("packaging", "added")]
    assert result.new_text == current
    spec = {"rules": [{"path": "project.dependencies", "merge": "requirements", "added": "apply"}]}
    result = merge("pyproject.toml", spec, PYPROJECT_B.encode(), latest.encode(), current)
    assert result.new_text == current.replace(
        b'    "my-own-lib==3.1",\n', b'    "my-own-lib==3.1",\n    "packaging",\n'
    )


def test_toml_tool_tables_declared_by_the_manifest() -> None:
    spec = {
        "preset": "pyproject",
        "rules": [{"path": "tool.ruff.line-length", "merge": "value"}],
    }
    base = b"[tool.ruff]\nline-length = 100\n"
    latest = b"[tool.ruff]\nline-length = 120\n"
    current = PYPROJECT_A.encode()
    result = merge("pyproject.toml", spec, base, latest, current)
    assert [(item.kind, item.section, item.key) for item in result.applied] == [
        ("key", "tool.ruff", "line-length")
    ]
    assert result.new_text == current.replace(b"line-length = 100", b"line-length = 120")


def test_yaml_literal_block_keeps_its_header_and_comment() -> None:
    spec = {"rules": [{"path": "script", "merge": "value"}]}
    current = b"# top\nscript: |   # the script\n    echo a\nnext: 1\n"
    base = b"script: |\n  echo a\n"
    latest = b"script: |\n  echo b\n  echo c\n"
    result = merge("ci.yml", spec, base, latest, current)
    assert result.new_text == b"# top\nscript: |   # the script\n    echo b\n    echo c\nnext: 1\n"
    # A value the header's chomping cannot express: ruamel (the file round-trips exactly)
    # rewrites the header, comment kept; a splice would fall back to a one-line scalar.
    latest = b"script: |-\n  echo b\n"
    result = merge("ci.yml", spec, base, latest, current)
    assert result.new_text == b"# top\nscript: |-   # the script\n    echo b\nnext: 1\n"
    unfaithful = current + b"flow: [1,   # one\n  2]\n"  # ruamel would drop this comment
    result = merge("ci.yml", spec, base, latest, unfaithful)
    assert result.new_text == unfaithful.replace(
        b"|   # the script\n    echo a", b"echo b   # the script"
    )


def test_json_keys_with_escapes_are_found_by_their_decoded_text() -> None:
    current = (
        b'{\n  "nested": {"dependencies": {"A": "1"}},\n'
        b'  "dependencies": {\n    "a\\"b": "1",\n    "\\u0041": "1"\n  }\n}\n'
    )
    base = b'{"dependencies": {"a\\"b": "1", "A": "1"}}'
    latest = b'{"dependencies": {"a\\"b": "2", "A": "2"}}'
    result = merge("package.json", NPM, base, latest, current)
    assert result.new_text == current.replace(b'": "1",\n', b'": "2",\n').replace(
        b'"\\u0041": "1"', b'"\\u0041": "2"'
    )
    assert b'"nested": {"dependencies": {"A": "1"}}' in result.new_text


def test_toml_list_members_in_tables_and_inline_arrays() -> None:
    spec = {"rules": [{"path": "tool.hooks", "merge": "list", "by": "name", "added": "apply"}]}
    base = b'[[tool.hooks]]\nname = "a"\ncmd = "x"\n'
    latest = b'[[tool.hooks]]\nname = "a"\ncmd = "y"\n\n[[tool.hooks]]\nname = "b"\ncmd = "z"\n'
    current = b'[[tool.hooks]]\nname = "a"  # first\ncmd = "x"\n\n[[tool.hooks]]\nname = "mine"\n'
    result = merge("pyproject.toml", spec, base, latest, current)
    assert [item.key for item in result.applied] == ["a", "b"]
    assert result.new_text == (
        b'[[tool.hooks]]\nname = "a"  # first\ncmd = "y"\n\n[[tool.hooks]]\nname = "mine"\n'
        b'[[tool.hooks]]\nname = "b"\ncmd = "z"\n'
    )
    current = b'[tool]\nhooks = [\n  {name = "a", cmd = "x"},  # c\n]\n'
    result = merge("pyproject.toml", spec, base, latest, current)
    assert result.new_text == (
        b'[tool]\nhooks = [\n  {name = "a", cmd = "y"},  # c\n  {name = "b", cmd = "z"},\n]\n'
    )
