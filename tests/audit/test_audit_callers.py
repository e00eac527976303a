"""audit shell reads a script's callers: registered hook commands, pinning bats suites,
and a folder given on the command line (expanded, never "0 files, clean")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tether.git
from tests.audit.builders import audit, audit_json, commit, make_repo

HOOK_OUTSIDE_GLOBS = """#!/bin/bash
input=$(cat)
gh pr comment --body "seen"
"""

SETTINGS = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/tools/guard.sh --strict'}
                ],
            }
        ]
    }
}

SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
echo "verdict: $(date -d yesterday +%F)"
"""

PINNING_SUITE = """#!/usr/bin/env bats
@test "prints the verdict" {
  run scripts/verdict.sh
  [ "$output" = "verdict: 2026-01-01" ]
}
"""


def test_a_hook_registered_in_settings_is_audited_as_a_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {
            "tools/guard.sh": HOOK_OUTSIDE_GLOBS,
            "tools/other.sh": HOOK_OUTSIDE_GLOBS,
            ".claude/settings.json": json.dumps(SETTINGS),
        },
    )
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "--profile", "gaia", "tools")
    assert code == 3
    hooks = {f["path"]: f["hook"] for f in doc["files"]}
    assert hooks == {"tools/guard.sh": True, "tools/other.sh": False}
    classes = {(f["path"], f["finding_class"]) for f in doc["findings"]}
    assert ("tools/guard.sh", "hook/status-leak") in classes
    assert ("tools/guard.sh", "hook/unguarded-dependency") in classes
    assert not any(path == "tools/other.sh" and c.startswith("hook/") for path, c in classes)


def test_broken_settings_json_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path, monkeypatch, {"a.sh": "echo ok\n", ".claude/settings.json": "{not json"}
    )
    code, out, err = audit(capsys, "shell", "-C", str(repo), "a.sh")
    assert code == 1
    assert ".claude/settings.json: cannot read the hook registrations" in err
    assert out == ""


def test_findings_name_the_bats_suites_that_pin_the_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {
            "scripts/verdict.sh": SCRIPT,
            "test/verdict.bats": PINNING_SUITE,
            "test/unrelated.bats": '@test "x" {\n  run true\n  [ "$status" -eq 0 ]\n}\n',
        },
    )
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "scripts/verdict.sh")
    assert code == 0  # warnings only
    date_d = [f for f in doc["findings"] if f["finding_class"] == "portability/date-d"]
    assert [f["linked_tests"] for f in date_d] == [["test/verdict.bats"]]


def test_a_folder_is_expanded_and_a_missing_or_empty_one_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        tmp_path,
        monkeypatch,
        {"scripts/a.sh": SCRIPT, "scripts/deep/b.sh": SCRIPT, "scripts/readme.md": "# x\n"},
    )
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "scripts")
    assert [f["path"] for f in doc["files"]] == ["scripts/a.sh", "scripts/deep/b.sh"]
    assert code == 0  # date -d is a warning

    code, _, err = audit(capsys, "shell", "-C", str(repo), "nowhere")
    assert (code, err.strip()) == (2, "tether: nowhere: no such file or folder")

    (repo / "empty").mkdir()
    (repo / "empty" / "untracked.sh").write_text(SCRIPT)
    code, out, err = audit(capsys, "shell", "-C", str(repo), "empty")
    assert (code, out) == (1, "")
    assert "empty: no tracked files in this folder" in err
    commit(repo, "track it", {})
    code, doc = audit_json(capsys, "shell", "-C", str(repo), "empty")
    assert [f["path"] for f in doc["files"]] == ["empty/untracked.sh"]


def test_a_registered_hook_whose_script_is_gone_is_an_error_and_other_files_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh",
                        },
                        {"type": "command", "command": "bash .claude/hooks/lint.sh --fast"},
                        {"type": "command", "command": "npx --yes prettier --check ."},
                    ],
                }
            ]
        }
    }
    base = {
        ".claude/settings.json": json.dumps(settings, indent=2) + "\n",
        ".claude/hooks/guard.sh": "#!/bin/bash\nexit 0\n",
        ".claude/hooks/lint.sh": "#!/bin/bash\nexit 0\n",
        ".claude/rules/shell.md": "# shell rules\n",
    }
    # The branch moves one hook and forgets the registration.
    moved = {
        ".claude/hooks/guard.sh": None,
        ".claude/hooks/guards/bash.sh": "#!/bin/bash\nexit 0\n",
    }
    repo = make_repo(tmp_path, monkeypatch, base, moved)
    args = ["shell", "-C", str(repo), "--remit", ".claude/**", "--base-ref", "main"]
    code, doc = audit_json(capsys, *args)
    (missing,) = [f for f in doc["findings"] if f["finding_class"] == "hook/missing-script"]
    assert code == 3 and missing["severity"] == "error"
    assert missing["path"] == ".claude/settings.json" and missing["line"] == 9
    assert ".claude/hooks/guard.sh does not exist" in missing["title"]
    assert doc["deleted"] == [".claude/hooks/guard.sh"]
    # The rules page is in the remit, and no lens reads it: said, never skipped (the
    # settings file is read as policy).
    _, doc = audit_json(capsys, "shell", "-C", str(repo), "--remit", ".claude/**")
    assert doc["not_analysed"] == [".claude/rules/shell.md"]
    _, out, _ = audit(capsys, "shell", "-C", str(repo), "--remit", ".claude/**")
    assert "not analysed (no lens reads it): .claude/rules/shell.md" in out
    # Registering the new path fixes it.
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = (
        "$CLAUDE_PROJECT_DIR/.claude/hooks/guards/bash.sh"
    )
    commit(repo, "register", {".claude/settings.json": json.dumps(settings, indent=2) + "\n"})
    _, doc = audit_json(capsys, *args)
    assert not [f for f in doc["findings"] if f["finding_class"] == "hook/missing-script"]


STRICT = "#!/bin/bash\nset -e\n"
LIB = "scripts/lib/common.sh"


def test_the_callers_of_a_changed_library_or_hook_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "hooks": [
                        {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}
                    ]
                }
            ]
        }
    }
    base = {
        "scripts/lib/common.sh": 'say() { echo "$1"; }\n',
        "scripts/a.sh": STRICT + 'here=$(dirname "$0")\n. "$here/lib/common.sh"\nsay a\n',
        "scripts/b.sh": "#!/bin/bash\nset -e\nsource scripts/lib/common.sh\nsay b\n",
        "scripts/c.sh": '#!/bin/bash\nset -e\necho "see scripts/lib/common.sh"\n',
        ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: bash " + LIB + "\n",
        ".claude/settings.json": json.dumps(settings),
        ".claude/hooks/guard.sh": "#!/bin/bash\nexit 0\n",
    }
    branch = {
        "scripts/lib/common.sh": "say() { printf '%s\\n' \"$1\"; }\n",
        ".claude/hooks/guard.sh": "#!/bin/bash\nexit 2\n",
    }
    repo = make_repo(tmp_path, monkeypatch, base, branch)
    _, doc = audit_json(capsys, "shell", "-C", str(repo), "--base-ref", "main")
    assert doc["callers"] == {
        ".claude/hooks/guard.sh": [".claude/settings.json"],
        "scripts/lib/common.sh": [".github/workflows/ci.yml", "scripts/a.sh", "scripts/b.sh"],
    }
    _, out, _ = audit(capsys, "shell", "-C", str(repo), "--base-ref", "main")
    assert (
        "callers of scripts/lib/common.sh (read them against its new contract): "
        ".github/workflows/ci.yml, scripts/a.sh, scripts/b.sh" in out
    )


def test_one_shell_run_lists_the_tracked_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The files to read, the dependency checks of other hooks, the pinning suites, the
    registered scripts and the callers all need the checkout's tracked files: one listing
    serves them all (nothing an audit does stages a file)."""
    base = {
        "tools/guard.sh": HOOK_OUTSIDE_GLOBS,
        ".claude/settings.json": json.dumps(SETTINGS),
        "scripts/verdict.sh": SCRIPT,
        "test/verdict.bats": PINNING_SUITE,
    }
    branch = {"tools/guard.sh": HOOK_OUTSIDE_GLOBS + "echo done\n", "scripts/verdict.sh": SCRIPT}
    branch["scripts/verdict.sh"] += "echo more\n"
    repo = make_repo(tmp_path, monkeypatch, base, branch)
    asked: list[list[str]] = []
    real = tether.git.run_git

    def noting(args, *rest, **options):  # type: ignore[no-untyped-def]
        asked.append(list(args))
        return real(args, *rest, **options)

    monkeypatch.setattr(tether.git, "run_git", noting)
    args = ("shell", "-C", str(repo), "--profile", "gaia", "--base-ref", "main")
    code, doc = audit_json(capsys, *args)
    assert code == 0  # warnings only
    classes = {(f["path"], f["finding_class"]) for f in doc["findings"]}
    assert ("tools/guard.sh", "hook/unguarded-dependency") in classes
    date_d = [f for f in doc["findings"] if f["finding_class"] == "portability/date-d"]
    assert [f["linked_tests"] for f in date_d] == [["test/verdict.bats"]]
    assert doc["callers"] == {"tools/guard.sh": [".claude/settings.json"]}
    assert [a for a in asked if a[:1] == ["ls-files"]] == [["ls-files", "-z", "--cached"]]
