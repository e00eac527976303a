"""The deterministic lenses over shfmt's syntax tree, driven by annotated fixtures.

Each fixture marks the lines a lens must flag with ``# expect: class``; every other line
must stay unflagged, so each fixture holds positive and negative shapes side by side.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.audit.builders import FIXTURES, expected_marks
from tether.audit.findings import RULES, Finding
from tether.audit.lenses import LensContext, bash32, bats, discipline, hooks, paths, portability
from tether.audit.shell import Target, _lens_analysis
from tether.audit.shellast import parse
from tether.audit.tools import Tool, Toolset, default_tools

LENSES = FIXTURES / "lenses"
DOCS = Path(__file__).parents[2] / "docs" / "audit.md"

Lens = Callable[[Any, LensContext], list[Finding]]


@pytest.fixture(scope="module")
def shfmt() -> Tool:
    tool = default_tools().shfmt
    if not tool.available:
        pytest.skip("shfmt is not installed (pip install shfmt-py)")
    return tool


def run_lens(shfmt: Tool, name: str, lens: Lens, dialect: str = "bash") -> set[tuple[int, str]]:
    data = (LENSES / name).read_bytes()
    parsed = parse(shfmt, data, dialect)
    assert parsed.tree is not None, parsed.error
    return {(f.line, f.finding_class) for f in lens(parsed.tree, LensContext(name, "shfmt"))}


def hook_lens(tree: Any, ctx: LensContext) -> list[Finding]:
    first_line = (LENSES / ctx.path).read_text().splitlines()[0]
    return hooks.check(tree, ctx, first_line)


def hook_and_paths_lens(tree: Any, ctx: LensContext) -> list[Finding]:
    return [*hook_lens(tree, ctx), *paths.check(tree, ctx)]


def discipline_lens(tree: Any, ctx: LensContext) -> list[Finding]:
    first_line = (LENSES / ctx.path).read_text().splitlines()[0]
    return discipline.check(tree, ctx, first_line)


@pytest.mark.parametrize(
    ("name", "lens", "dialect"),
    [
        ("hollow.bats", bats.check, "bats"),
        ("bash32.sh", bash32.check, "bash"),
        ("portability.sh", portability.check, "bash"),
        ("hook_bad.sh", hook_lens, "bash"),
        ("hook_good.sh", hook_lens, "bash"),
        ("hook_errexit_trapped.sh", hook_lens, "bash"),
        ("hook_loop_read.sh", hook_lens, "bash"),
        ("hook_library_read.sh", hook_lens, "bash"),
        ("hook_contract_bad.sh", hook_and_paths_lens, "bash"),
        ("hook_contract_good.sh", hook_and_paths_lens, "bash"),
        ("paths.sh", paths.check, "bash"),
        ("library_cd.sh", paths.check, "bash"),
        ("library_cd_if_guard.sh", paths.check, "bash"),
        ("discipline_bad.sh", discipline_lens, "bash"),
        ("discipline_good.sh", discipline_lens, "bash"),
        ("discipline_pipefail_bad.sh", discipline_lens, "bash"),
        ("discipline_pipefail_good.sh", discipline_lens, "bash"),
    ],
)
def test_lens_flags_exactly_the_marked_lines(
    shfmt: Tool, name: str, lens: Lens, dialect: str
) -> None:
    expected = expected_marks((LENSES / name).read_text())
    assert run_lens(shfmt, name, lens, dialect) == expected


def _test_names(text: str) -> list[str]:
    return re.findall(r'^@test "([^"]+)"', text, re.MULTILINE)


def test_hollow_fixture_covers_enough_shapes(shfmt: Tool) -> None:
    text = (LENSES / "hollow.bats").read_text()
    names = _test_names(text)
    positive = [n for n in names if n.startswith("P")]
    negative = [n for n in names if n.startswith("N")]
    assert len(positive) >= 6 and len(negative) >= 9
    flagged = run_lens(shfmt, "hollow.bats", bats.check, "bats")
    # Every positive shape is flagged at least once; no negative shape is.
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'^@test "([^"]+)"', text, re.M)]
    line_of_test = [(text.count("\n", 0, offset) + 1, name) for offset, name in starts]

    def owner(line: int) -> str:
        return [name for start, name in line_of_test if start <= line][-1]

    owners = {owner(line) for line, _ in flagged}
    assert owners == set(positive)
    for shape in ("nested if", "subshell", "run ! cmd", "loop body"):
        assert any(shape in name for name in names), shape


def test_bats_lens_only_reads_test_bodies(shfmt: Tool) -> None:
    text = (LENSES / "hollow.bats").read_text()
    helper_line = text.splitlines().index("  [[ 1 == 2 ]]", text.splitlines().index("helper() {"))
    flagged = run_lens(shfmt, "hollow.bats", bats.check, "bats")
    assert (helper_line + 1, "bats/hollow-assertion") not in flagged


def _tools_without(name: str) -> Toolset:
    tools = default_tools()
    return Toolset(
        shellcheck=tools.shellcheck if name != "shellcheck" else Tool("shellcheck"),
        shfmt=tools.shfmt if name != "shfmt" else Tool("shfmt"),
    )


def test_parse_failure_is_cannot_analyse_never_clean(shfmt: Tool) -> None:
    target = Target("broken.sh", "bash", bats=False, hook=False)
    found = _lens_analysis(target, b"#!/bin/bash\nif [ x; then\n", default_tools())[0]
    assert [f.finding_class for f in found] == ["audit/cannot-analyse"]
    assert found[0].severity == "error"
    assert "shfmt could not parse it" in found[0].title


def test_missing_shfmt_is_cannot_analyse() -> None:
    target = Target("fine.sh", "bash", bats=False, hook=False)
    found = _lens_analysis(target, b"echo ok\n", _tools_without("shfmt"))[0]
    assert [(f.finding_class, f.title) for f in found] == [
        ("audit/cannot-analyse", "cannot analyse this file: shfmt not available")
    ]


def test_every_class_is_documented() -> None:
    text = DOCS.read_text()
    missing = [name for name in RULES if f"`{name}`" not in text]
    assert missing == []


def test_gaia_vocabulary_maps_hollow_assertions_and_defaults_the_rest() -> None:
    hollow = RULES["bats/hollow-assertion"].at("t.bats", 3, "x")
    assert hollow.to_json("gaia")["finding_class"] == "holistic/hollow-assertion"
    assert RULES["bash32/coproc"].at("a.sh", 1, "x").to_json("gaia")["finding_class"] == (
        "holistic/unclassified"
    )
    oracle = Finding("shellcheck/SC2086", "suggestion", "a.sh", 1, "t", "f", "v", "s")
    assert oracle.to_json("gaia")["finding_class"] == "holistic/unclassified"
    assert oracle.to_json("tether")["area_tags"] == ["."]


def test_bats_really_passes_a_flagged_hollow_assertion(shfmt: Tool, tmp_path: Path) -> None:
    if shutil.which("bats") is None:
        pytest.skip("bats-core is not installed (Debian package bats); cannot run the suite")
    suite = FIXTURES / "bats" / "hollow_passes.bats"
    parsed = parse(shfmt, suite.read_bytes(), "bats")
    assert parsed.tree is not None
    flagged = {(f.line, f.finding_class) for f in bats.check(parsed.tree, LensContext("s", "x"))}
    lines = suite.read_text().splitlines()
    negated = lines.index('  ! grep -q needle "$BATS_TEST_TMPDIR/haystack"') + 1
    guard = lines.index('  [ "left" = "right" ] && return 1') + 1
    assert flagged == {(negated, "bats/hollow-assertion"), (guard, "bats/final-guard-fails")}

    # The condition the first test states is false: the word is in the file.
    haystack = tmp_path / "haystack"
    haystack.write_text("needle\n")
    assert subprocess.run(["grep", "-q", "needle", str(haystack)], check=False).returncode == 0

    result = subprocess.run(
        ["bats", "--tap", str(suite)], capture_output=True, text=True, check=False, timeout=60
    )
    assert "ok 1 negated grep" in result.stdout  # passes while its condition is false
    assert "not ok 2 final guard" in result.stdout  # fails in the passing case


def test_a_failing_lens_reads_as_cannot_analyse(
    shfmt: Tool, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(tree: Any, ctx: LensContext) -> list[Finding]:
        raise KeyError("Cmd")

    monkeypatch.setattr(bash32, "check", broken)
    target = Target("a.sh", "bash", bats=False, hook=False)
    found = _lens_analysis(target, b"set -e\nsed -i s/a/b/ f\n", default_tools())[0]
    classes = sorted(f.finding_class for f in found)
    assert classes == ["audit/cannot-analyse", "portability/sed-in-place"]
    assert "the bash32 lens failed (KeyError" in found[0].title


def test_an_shfmt_with_numeric_operators_is_refused(tmp_path: Path) -> None:
    # shfmt before 3.14 printed operators as enum numbers; the lenses would read none.
    fake = tmp_path / "shfmt"
    tree = (
        '{"Type": "File", "Stmts": [{"Pos": {"Line": 1}, "Cmd": {"Type": "BinaryCmd", "Op": 11}}]}'
    )
    fake.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{tree}'\n")
    fake.chmod(0o755)
    parsed = parse(Tool("shfmt", str(fake), "3.13.1", "PATH"), b"a && b\n", "bash")
    assert parsed.tree is None
    assert parsed.error == "shfmt 3.13.1 prints operators as numbers; need 3.14 or later"


def test_guarded_branches_downgrade_portability_to_suggestions(shfmt: Tool) -> None:
    data = (LENSES / "guards.sh").read_bytes()
    target = Target("guards.sh", "bash", bats=False, hook=False)
    found = {
        (f.line, f"{f.finding_class}@{f.severity}")
        for f in _lens_analysis(target, data, default_tools())[0]
    }
    assert found == expected_marks(data.decode())


def test_hook_good_fixture_is_quiet_in_the_whole_pipeline(shfmt: Tool) -> None:
    data = (LENSES / "hook_contract_good.sh").read_bytes()
    target = Target(".claude/hooks/guard.sh", "bash", bats=False, hook=True)
    assert _lens_analysis(target, data, default_tools())[0] == []


def test_decision_json_names_the_misspelled_key_and_the_bad_value(shfmt: Tool) -> None:
    parsed = parse(shfmt, (LENSES / "hook_contract_bad.sh").read_bytes(), "bash")
    assert parsed.tree is not None
    titles = sorted(
        f.title
        for f in hooks.check(parsed.tree, LensContext("h.sh", "x"))
        if f.finding_class == "hook/decision-json"
    )
    joined = "\n".join(titles)
    assert (
        "unknown key `hookSpecificOutput.permissionDecison` (did you mean `permissionDecision`?)"
        in joined
    )
    assert "`permissionDecision` is 'block', not one of allow, ask, deny" in joined
    assert "the printed document is not JSON (Expecting property name" in joined  # `,}`
    assert "`hookEventName` is 'PostToolUse', not 'PreToolUse'" in joined
    assert "`hookSpecificOutput.permissionDecision` without `hookEventName: PreToolUse`" in joined


def test_lens_findings_are_cached_by_bytes_target_and_lens_code(
    shfmt: Tool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from tether.audit import shell
    from tether.audit.result_cache import ResultCache

    cache, tools = ResultCache(tmp_path / "cache"), default_tools()
    target = Target("a.sh", "bash", bats=False, hook=False)
    data = b"set -e\nsed -i s/a/b/ f\n"
    first = shell._cached_lens_analysis(target, data, tools, cache)[0]
    assert [f.finding_class for f in first] == ["portability/sed-in-place"]
    calls: list[object] = []

    def counting(*args: object) -> tuple[list[Finding], None]:
        calls.append(args)
        return [], None

    monkeypatch.setattr(shell, "_lens_analysis", counting)
    assert shell._cached_lens_analysis(target, data, tools, cache)[0] == first
    assert calls == []  # served from the cache
    shell._cached_lens_analysis(replace(target, hook=True), data, tools, cache)
    shell._cached_lens_analysis(target, data + b"echo\n", tools, cache)
    assert len(calls) == 2  # another target kind, other bytes: misses
    monkeypatch.setattr(shell, "lens_code_digest", lambda: "changed lenses")
    shell._cached_lens_analysis(target, data, tools, cache)
    assert len(calls) == 3  # new lens code never reads old results


def test_decision_problems_check_values_and_leave_other_documents_alone() -> None:
    from tether.audit.lenses.hookout import decision_problems

    assert decision_problems({"decision": "allow", "reason": "x"}) == [
        "`decision` is 'allow', not one of approve, block"
    ]
    assert decision_problems({"decision": {"behavior": "deny"}}) == []
    assert decision_problems({"name": "tether", "count": 3}) == []  # not a decision
    assert (
        decision_problems(
            {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}
        )
        == []
    )
    assert decision_problems({"hookSpecificOutput": {"permissionDecision": "deny"}}) == [
        "`hookSpecificOutput.permissionDecision` without `hookEventName: PreToolUse`"
    ]
