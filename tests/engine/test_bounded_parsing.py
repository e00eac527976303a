"""Parsing data tether did not write is bounded: YAML alias expansion, nesting depth, the
size of a key-by-key merge and the time and memory of the syntax check of a line merge.

Every update here runs the real CLI in a real process with a timeout: an unbounded parse
would run for minutes and use gigabytes, so the timeout, not a timing assertion, is what
fails. The timeouts are far above what a bounded run needs (well under a second)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders import call, make_release, run_forked
from tether.engine.structured import merge_structured, rules_for
from tether.engine.syntaxcheck import merge_breaks_syntax
from tether.model.plan import SideFault, SideProblem
from tether.parselimits import (
    MAX_ALIAS_EXPANSION,
    MAX_NESTING,
    STRUCTURED_MERGE_MAX_BYTES,
    SYNTAX_CHECK_INLINE_BYTES,
    depth_problem,
    json_loads,
    shape_problem,
    toml_loads,
)
from tether.report.reasons import side_problems
from tether.syntax_child import check_in_child

BOUND_SECONDS = 30  # an unbounded run takes minutes (and gigabytes) on the inputs below

BASE_YAML = "first: 1\nsecond: 2\nthird: 3\nlast: 4\n"


def laughs(levels: int) -> str:
    """A YAML "billion laughs": each level is nine aliases of the level before, so the
    data grows ninefold per line while the text grows by one line."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def nested_json(depth: int) -> str:
    return '{"deep": ' + "[" * depth + "]" * depth + ', "name": "x"}\n'


def installed(
    tmp_path: Path,
    rel: str,
    base: str,
    theirs: str,
    mine: str,
    merge: dict[str, Any] | None = None,
) -> Path:
    """A project at 1.0.0 whose ``rel`` the adopter changed to ``mine``; 2.0.0 ships
    ``theirs``."""
    shelf = tmp_path / "rel"
    extra = {"merge": {rel: merge}} if merge else None
    make_release(shelf, "1.0.0", {rel: base}, extra=extra)
    make_release(shelf, "2.0.0", {rel: theirs}, extra=extra)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / rel).write_text(mine)
    return project


def bounded_update(project: Path) -> tuple[int, dict[str, Any]]:
    result = run_forked("update", "--yes", "--json", "-C", str(project), timeout=BOUND_SECONDS)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


# ------------------------------------------------------------------ the hostile inputs


def test_billion_laughs_in_a_release_the_adopter_edited_is_a_conflict_with_a_note(
    tmp_path: Path,
) -> None:
    """The release prepends the bomb; the adopter changed the last line: the line merge is
    clean, and re-parsing it to check its syntax used to expand every alias."""
    theirs = laughs(8) + BASE_YAML
    mine = BASE_YAML.replace("last: 4", "last: 5")
    project = installed(tmp_path, "cfg.yaml", BASE_YAML, theirs, mine)
    code, doc = bounded_update(project)
    assert code == 4
    (conflict,) = doc["buckets"]["conflict"]
    assert conflict["path"] == "cfg.yaml"
    assert conflict["reason"] == (
        "the clean line merge could not be checked: the new release's file: YAML beyond "
        f"parsing limits: aliases expand to more than {MAX_ALIAS_EXPANSION:,} further values"
    )
    text = (project / "cfg.yaml").read_text()
    assert text.startswith("<<<<<<< ") and "last: 5" in text  # the person decides


def test_billion_laughs_under_a_merge_rule_is_not_merged_and_says_why(tmp_path: Path) -> None:
    base = "overrides:\n  a: '1'\n"
    theirs = laughs(8) + "overrides:\n  a: '2'\n"
    mine = "overrides:\n  a: '1'\n  b: '3'\n"
    project = installed(
        tmp_path, "pnpm-workspace.yaml", base, theirs, mine, {"preset": "pnpm-workspace"}
    )
    code, doc = bounded_update(project)
    assert code == 4
    assert doc["structured"] == [
        "pnpm-workspace.yaml: not merged, latest file does not parse: YAML beyond parsing "
        f"limits: aliases expand to more than {MAX_ALIAS_EXPANSION:,} further values"
    ]
    assert (project / "pnpm-workspace.yaml").read_text() == mine


@pytest.mark.parametrize("side", ["release", "adopter"])
def test_deeply_nested_json_under_a_merge_rule_is_a_conflict_not_a_traceback(
    tmp_path: Path, side: str
) -> None:
    """500 levels parse, but every walk over them (comparing, copying, writing) recursed
    past Python's stack."""
    base = '{"name": "x", "version": "1"}\n'
    deep = nested_json(500)
    theirs = deep if side == "release" else '{"name": "x", "version": "2"}\n'
    mine = deep if side == "adopter" else '{"name": "y", "version": "1"}\n'
    rule = {"rules": [{"path": "version", "merge": "value"}]}
    project = installed(tmp_path, "cfg.json", base, theirs, mine, rule)
    code, doc = bounded_update(project)
    assert code == 4
    role = "latest" if side == "release" else "current"
    assert doc["structured"] == [
        f"cfg.json: not merged, {role} file does not parse: JSON beyond parsing limits: "
        f"nested more than {MAX_NESTING} levels deep"
    ]
    assert (project / "cfg.json").read_text() == mine


def test_a_structured_file_above_the_size_cap_is_merged_line_by_line_with_a_note(
    tmp_path: Path,
) -> None:
    filler = "".join(f'  "key{i:05}": "{"v" * 40}",\n' for i in range(2000))
    base = '{\n  "version": "1",\n' + filler + '  "name": "x"\n}\n'
    assert len(base) > STRUCTURED_MERGE_MAX_BYTES
    theirs = base.replace('"version": "1"', '"version": "2"')
    mine = base.replace('"name": "x"', '"name": "ours"')
    rule = {"rules": [{"path": "version", "merge": "value"}]}
    project = installed(tmp_path, "big.json", base, theirs, mine, rule)
    code, doc = bounded_update(project)
    assert code == 0
    assert doc["buckets"]["merged"] == ["big.json"]
    assert doc["structured"] == [
        "big.json: merged line by line: the baseline file is larger than "
        f"{STRUCTURED_MERGE_MAX_BYTES // 1024} KiB (the limit for a key-by-key merge)"
    ]
    merged = (project / "big.json").read_text()
    assert '"version": "2"' in merged and '"name": "ours"' in merged


def test_the_summary_says_why_a_clean_line_merge_became_a_conflict(tmp_path: Path) -> None:
    base = '{\n  "a": 1,\n  "m": 2,\n  "z": 3\n}\n'
    mine = base.replace('"a": 1,', '"a": 1,\n  "new": true,')
    theirs = base.replace('"z": 3', '"z": 3,\n  "new": false')
    project = installed(tmp_path, "cfg.json", base, theirs, mine)
    result = run_forked("update", "--yes", "-C", str(project), timeout=BOUND_SECONDS)
    assert result.returncode == 4
    assert (
        "  cfg.json (conflict markers in the file; the clean line merge is not valid: "
        'invalid JSON: duplicate key "new" (line 6, column 3))'
    ) in result.stdout.splitlines()


# ------------------------------------------------------------ normal merges unchanged


def test_a_large_clean_line_merge_is_still_checked_in_a_child_process(tmp_path: Path) -> None:
    """Above the in-process size the check runs in a child; it still finds the key both
    sides added in different places."""
    filler = "".join(f'  "key{i:05}": "{"v" * 40}",\n' for i in range(2000))
    base = '{\n  "a": 1,\n' + filler + '  "z": 3\n}\n'
    assert len(base) > SYNTAX_CHECK_INLINE_BYTES
    mine = base.replace('  "a": 1,\n', '  "a": 1,\n  "new": true,\n')
    theirs = base.replace('  "z": 3\n', '  "z": 3,\n  "new": false\n')
    project = installed(tmp_path, "cfg.json", base, theirs, mine)
    code, doc = bounded_update(project)
    assert code == 4
    (conflict,) = doc["buckets"]["conflict"]
    assert conflict["reason"].startswith("the clean line merge is not valid: invalid JSON: dup")


def test_a_large_valid_line_merge_is_accepted_after_the_child_checks_it(tmp_path: Path) -> None:
    # Long values, few keys: over the inline limit with little for the parser to do.
    filler = "".join(f"key{i:05}: {'v' * 80}\n" for i in range(800))
    base = "first: 1\n" + filler + "last: 4\n"
    assert len(base) > SYNTAX_CHECK_INLINE_BYTES
    project = installed(
        tmp_path,
        "cfg.yaml",
        base,
        base.replace("first: 1", "first: 2"),
        base.replace("last: 4", "last: 5"),
    )
    code, doc = bounded_update(project)
    assert code == 0
    assert doc["buckets"]["merged"] == ["cfg.yaml"]
    text = (project / "cfg.yaml").read_text()
    assert text.startswith("first: 2\n") and text.endswith("last: 5\n")


def test_yaml_anchors_and_merge_keys_of_ordinary_files_still_merge(tmp_path: Path) -> None:
    defaults = "defaults: &defaults\n  image: node\n  retries: 2\n"
    jobs = "".join(f"job{i}:\n  <<: *defaults\n  name: job{i}\n" for i in range(50))
    base = defaults + jobs + "overrides:\n  a: '1'\n"
    theirs = base.replace("a: '1'", "a: '2'")
    mine = base.replace("retries: 2", "retries: 3")
    project = installed(
        tmp_path, "pnpm-workspace.yaml", base, theirs, mine, {"preset": "pnpm-workspace"}
    )
    code, doc = bounded_update(project)
    assert code == 0
    assert doc["structured"] == ["pnpm-workspace.yaml: 1 applied, 0 conflicts, 0 suggestions"]
    assert (project / "pnpm-workspace.yaml").read_text() == mine.replace("a: '1'", "a: '2'")


# ------------------------------------------------------------------- the limits alone


def test_alias_expansion_is_measured_without_expanding() -> None:
    from ruamel.yaml import YAML

    bomb = YAML(typ="rt").load(laughs(30))  # 9**30 values once expanded
    assert shape_problem(bomb) == (
        f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} further values"
    )
    assert shape_problem(YAML(typ="rt").load(laughs(5))) is None  # 59,049 values
    text = "s: &s " + "x" * 60_000 + "\nuses: [" + ", ".join(["*s"] * 100) + "]\n"
    assert shape_problem(YAML(typ="rt").load(text)) is not None  # 6,000,000 characters


@pytest.mark.parametrize(
    ("depth", "message"),
    [
        (MAX_NESTING, None),
        (MAX_NESTING + 1, f"nested more than {MAX_NESTING} levels deep"),
        (100_000, "nested too deeply"),  # beyond the parser's own stack
    ],
)
def test_nesting_beyond_the_bound_is_named(depth: int, message: str | None) -> None:
    text = "[" * depth + "]" * depth
    if message is None:
        assert json_loads(text, max_depth=MAX_NESTING) == json.loads(text)
        assert depth_problem(json.loads(text)) is None
        return
    with pytest.raises(json.JSONDecodeError) as error:
        json_loads(text, max_depth=MAX_NESTING)
    assert str(error.value) == message


def test_parsers_out_of_stack_raise_their_own_error_type() -> None:
    import tomllib

    with pytest.raises(json.JSONDecodeError) as json_error:
        json_loads("[" * 100_000 + "]" * 100_000)
    assert str(json_error.value) == "nested too deeply"
    with pytest.raises(tomllib.TOMLDecodeError, match="nested too deeply"):
        toml_loads("a = " + "[" * 100_000 + "]" * 100_000 + "\n")


def test_a_side_beyond_the_limits_leaves_the_merge_unchecked_not_accepted() -> None:
    bomb = (laughs(8) + BASE_YAML).encode()
    base, mine = BASE_YAML.encode(), BASE_YAML.replace("4", "5").encode()
    found = merge_breaks_syntax("c.yaml", base, mine, bomb, bomb.replace(b"last: 4", b"last: 5"))
    assert found is not None and not found.checked
    assert "new release's file" in found.problem
    # An input that is simply invalid still lets a clean merge through, as before.
    broken = b"first: [1\n"
    assert merge_breaks_syntax("c.yaml", base, mine, broken, broken) is None


def test_the_child_check_is_stopped_at_its_time_limit() -> None:
    """Real child process, a file that takes seconds to parse, a limit of a tenth of one."""
    text = "".join(f"key{i}:\n  a: {i}\n  b: [x, y, 'z']\n" for i in range(40_000)).encode()
    found = check_in_child("big.yaml", [text, text, text, text], 0.1, 2 << 30)
    assert found is not None and not found.checked
    assert found.problem == "parsing took longer than 0.1 s"


def test_the_child_check_is_stopped_at_its_memory_limit() -> None:
    """Loading a few megabytes of small JSON lists takes more than 300 MiB of objects: a
    child limited to 150 MiB is stopped."""
    pytest.importorskip("resource", reason="no address-space limit on this platform")
    text = ("[" + ", ".join(["[1, 2]"] * 1_200_000) + "]").encode()
    found = check_in_child("big.json", [text, text, text, text], 60, 150 << 20)
    assert found is not None and not found.checked
    assert found.problem == "parsing needed more than 150 MiB of memory"


def test_key_by_key_merge_refuses_a_side_above_the_size_cap() -> None:
    rules = rules_for("package.json", {"preset": "npm-package"})
    big = b'{"name": "x", "pad": "' + b"p" * STRUCTURED_MERGE_MAX_BYTES + b'"}'
    result = merge_structured("package.json", rules, b"{}", big, b"{}")
    assert result.error_role == "latest" and result.new_text == b"{}"
    limit = STRUCTURED_MERGE_MAX_BYTES // 1024
    assert result.unread == (SideProblem("latest", SideFault.TOO_LARGE, limit_kib=limit),)
    assert side_problems(result.unread) == (
        f"latest file is larger than {limit} KiB (the limit for a key-by-key merge)"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (laughs(8) + "overrides: []\n", "aliases expand to more than"),
        ("overrides: &self [*self]\n", "a value contains itself"),
    ],
)
def test_other_yaml_readers_refuse_what_the_bounds_refuse(
    tmp_path: Path, text: str, message: str
) -> None:
    from tether.deps.overrides import load
    from tether.errors import TetherError

    path = tmp_path / "overrides.yaml"
    path.write_text(text)
    with pytest.raises(TetherError, match=message):
        load(path)
