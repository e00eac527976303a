"""audit shell weighs a hook's dependency checks across files: a guard function from a
sourced library counts in the hook calling it, and a sourced library of jq filters is
answered for by the hooks that source it when every one of them checks jq first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.audit.builders import audit_json, make_repo

# A library of jq filters: it reads the fields the hooks ask for and decides nothing
# about a missing jq; the hooks sourcing it do.
FILTERS = """#!/bin/bash
[ -n "${PAYLOAD_FILTERS_LOADED:-}" ] && return 0
PAYLOAD_FILTERS_LOADED=1

payload_tool() {
  jq -r '.tool_name // ""' <<<"$1"
}

payload_command() {
  jq -r '.tool_input.command // ""' <<<"$1"
}
"""

# The same library with an `if` include guard, sourced only by another library.
NESTED_FILTERS = """#!/bin/bash
if [ -n "${NESTED_FILTERS_LOADED:-}" ]; then
  return 0
fi
NESTED_FILTERS_LOADED=1

payload_cwd() {
  jq -r '.cwd // ""' <<<"$1"
}
"""

# A library that only wraps the other: its hooks' checks answer for both.
WRAPPER = """#!/bin/bash
here=${BASH_SOURCE[0]%/*}
# shellcheck source=/dev/null
. "$here/nested-filters.sh"

payload_where() {
  payload_cwd "$1"
}
"""

CHECKS_THEN_SOURCES = """#!/bin/bash
command -v jq >/dev/null 2>&1 || exit 0
input=$(cat)
lib="$(dirname "${BASH_SOURCE[0]}")/lib"
# shellcheck source=/dev/null
. "$lib/payload-filters.sh"
# shellcheck source=/dev/null
. "$lib/wrapper.sh"
[ "$(payload_tool "$input")" = Bash ] || exit 0
printf '%s in %s\\n' "$(payload_command "$input")" "$(payload_where "$input")"
exit 0
"""

ALSO_CHECKS = """#!/bin/bash
if ! type jq >/dev/null 2>&1; then
  exit 0
fi
input=$(cat)
# shellcheck source=/dev/null
. "${BASH_SOURCE[0]%/*}/lib/payload-filters.sh"
payload_tool "$input" >/dev/null || exit 0
exit 0
"""

SOURCES_THEN_CHECKS = """#!/bin/bash
input=$(cat)
# shellcheck source=/dev/null
. "${BASH_SOURCE[0]%/*}/lib/payload-filters.sh"
command -v jq >/dev/null 2>&1 || exit 0
payload_tool "$input" >/dev/null || exit 0
exit 0
"""

# A library whose function checks jq, and hooks that call it before their own jq.
REQUIRE_JQ = """#!/bin/bash
require_jq() {
  if command -v jq >/dev/null 2>&1; then
    return 0
  fi
  printf 'jq is missing, so this call cannot be checked\\n' >&2
  exit 2
}
"""

CALLS_THE_GUARD = """#!/bin/bash
input=$(cat)
# shellcheck source=/dev/null
. "${BASH_SOURCE[0]%/*}/lib/require-jq.sh"
require_jq
path=$(jq -r '.tool_input.file_path // ""' <<<"$input")
[ -n "$path" ] || exit 0
exit 0
"""

SKIPS_THE_GUARD = """#!/bin/bash
input=$(cat)
# shellcheck source=/dev/null
. "${BASH_SOURCE[0]%/*}/lib/require-jq.sh"
path=$(jq -r '.tool_input.file_path // ""' <<<"$input")
require_jq
[ -n "$path" ] || exit 0
exit 0
"""

SUITE = """#!/usr/bin/env bats
setup() {
  . "$BATS_TEST_DIRNAME/../lib/payload-filters.sh"
}

@test "reads the tool name" {
  run payload_tool '{"tool_name":"Bash"}'
  [ "$output" = Bash ]
}
"""


def _unguarded(doc: dict[str, Any]) -> set[tuple[str, int]]:
    return {
        (f["path"], f["line"])
        for f in doc["findings"]
        if f["finding_class"] == "hook/unguarded-dependency"
    }


def _run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
) -> dict[str, Any]:
    repo = make_repo(tmp_path, monkeypatch, files)
    _, doc = audit_json(capsys, "shell", "-C", str(repo), "--profile", "gaia", "--no-cache")
    assert "findings" in doc, doc
    return dict(doc)


HOOKS = ".claude/hooks"


def test_a_filter_library_sourced_only_by_hooks_that_check_jq_first_is_answered_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _run(
        tmp_path,
        monkeypatch,
        capsys,
        {
            f"{HOOKS}/lib/payload-filters.sh": FILTERS,
            f"{HOOKS}/lib/nested-filters.sh": NESTED_FILTERS,
            f"{HOOKS}/lib/wrapper.sh": WRAPPER,
            f"{HOOKS}/print-command.sh": CHECKS_THEN_SOURCES,
            f"{HOOKS}/bash-only.sh": ALSO_CHECKS,
            f"{HOOKS}/tests/payload-filters.bats": SUITE,  # a suite vouches for nothing
        },
    )
    assert _unguarded(doc) == set()
    hooks = {f["path"]: f["hook"] for f in doc["files"]}
    assert hooks[f"{HOOKS}/tests/payload-filters.bats"] is False  # a suite is never a hook


def test_one_hook_sourcing_the_library_before_checking_keeps_the_library_s_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _run(
        tmp_path,
        monkeypatch,
        capsys,
        {
            f"{HOOKS}/lib/payload-filters.sh": FILTERS,
            f"{HOOKS}/bash-only.sh": ALSO_CHECKS,
            f"{HOOKS}/late-check.sh": SOURCES_THEN_CHECKS,
        },
    )
    assert _unguarded(doc) == {(f"{HOOKS}/lib/payload-filters.sh", 6)}


def test_a_library_no_hook_sources_keeps_its_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _run(
        tmp_path,
        monkeypatch,
        capsys,
        {
            f"{HOOKS}/lib/payload-filters.sh": FILTERS,
            f"{HOOKS}/tests/payload-filters.bats": SUITE,
        },
    )
    assert _unguarded(doc) == {(f"{HOOKS}/lib/payload-filters.sh", 6)}


def test_a_nested_library_is_answered_for_through_the_library_sourcing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        f"{HOOKS}/lib/payload-filters.sh": FILTERS,
        f"{HOOKS}/lib/nested-filters.sh": NESTED_FILTERS,
        f"{HOOKS}/lib/wrapper.sh": WRAPPER,
        f"{HOOKS}/print-command.sh": CHECKS_THEN_SOURCES,
    }
    assert _unguarded(_run(tmp_path, monkeypatch, capsys, files)) == set()


def test_the_nested_library_keeps_its_warning_when_its_sourcing_library_is_unvouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unchecked = SOURCES_THEN_CHECKS.replace("payload-filters.sh", "wrapper.sh")
    files = {
        f"{HOOKS}/lib/nested-filters.sh": NESTED_FILTERS,
        f"{HOOKS}/lib/wrapper.sh": WRAPPER,
        f"{HOOKS}/unchecked.sh": unchecked,
    }
    doc = _run(tmp_path, monkeypatch, capsys, files)
    assert (f"{HOOKS}/lib/nested-filters.sh", 8) in _unguarded(doc)


def test_a_guard_function_from_a_sourced_library_guards_the_hook_after_its_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _run(
        tmp_path,
        monkeypatch,
        capsys,
        {
            f"{HOOKS}/lib/require-jq.sh": REQUIRE_JQ,
            f"{HOOKS}/reads-path.sh": CALLS_THE_GUARD,
            f"{HOOKS}/reads-path-first.sh": SKIPS_THE_GUARD,
        },
    )
    # The call comes after the jq use in the second hook: that use is still unchecked.
    assert _unguarded(doc) == {(f"{HOOKS}/reads-path-first.sh", 5)}
