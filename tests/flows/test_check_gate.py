"""``tether check`` as a gate a team configures: every finding with its next step, what
fails decided in one place (``--fail-on``, ``[check] fail_on``, the default; ``--strict``,
``--check-latest``), runnable from the repository's pre-commit hook."""

import json
from pathlib import Path

import pytest

from builders import make_release, run_tether, write_files

HOOKS = Path(__file__).parents[2] / ".pre-commit-hooks.yaml"


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    files = {"bin/lint.sh": "lint\n", "docs/guide.md": "guide\n", "old.md": "old\n"}
    make_release(shelf, "1.0.0", files, {"bin/lint.sh": "owned"})
    make_release(shelf, "1.1.0", {**files, "docs/guide.md": "guide 2\n"}, {"bin/lint.sh": "owned"})
    return shelf


@pytest.fixture
def project(tmp_path, shelf):
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    (project / "bin/lint.sh").write_text("my lint\n")  # owned drift
    return project


def check(project, *args):
    result = run_tether("check", "--json", "-C", str(project), *args)
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_each_finding_names_its_next_step(project):
    code, doc = check(project)
    assert code == 3 and doc["reasons"] == ["owned-drift"]
    (finding,) = doc["findings"]
    assert finding == {
        "reason": "owned-drift",
        "path": "bin/lint.sh",
        "next_steps": ["tether diff bin/lint.sh", "tether own bin/lint.sh"],
        "fails": True,
    }
    human = run_tether("check", "-C", str(project)).stdout
    assert "next: tether diff bin/lint.sh | tether own bin/lint.sh" in human
    assert "fails on: run-in-progress, unfinished-update, owned-drift" in human
    code, doc = check(project, "--check-latest")
    newer = [f for f in doc["findings"] if f["reason"] == "update-available"]
    assert newer == [
        {
            "reason": "update-available",
            "path": None,
            "next_steps": ["tether update --to 1.1.0"],
            "fails": True,
        }
    ]


def test_the_project_config_decides_what_fails(project):
    write_files(project, {".tether/config.toml": '[check]\nfail_on = ["update-available"]\n'})
    code, doc = check(project)
    # Named in the config, a newer release is looked for without --check-latest.
    assert code == 3 and doc["reasons"] == ["update-available"]
    assert doc["latest_version"] == "1.1.0"
    assert doc["fail_on_from"] == ".tether/config.toml"
    drift = [f for f in doc["findings"] if f["reason"] == "owned-drift"]
    assert drift and not drift[0]["fails"]  # still listed, not failing
    # The command line wins over the config.
    code, doc = check(project, "--fail-on", "leftovers")
    assert code == 0 and doc["fail_on"] == ["leftovers"] and doc["fail_on_from"] == "--fail-on"
    write_files(project, {".tether/config.toml": "[check]\nfail_on = []\n"})
    code, doc = check(project)
    assert code == 0 and doc["ok"] and doc["fail_on"] == []
    code, doc = check(project, "--strict")
    assert code == 3 and "owned-drift" in doc["reasons"]


def test_unknown_kinds_are_refused_in_one_line(project):
    result = run_tether("check", "--fail-on", "owned-drift,drifts", "-C", str(project))
    assert result.returncode == 2 and "--fail-on: unknown 'drifts'" in result.stderr
    write_files(project, {".tether/config.toml": '[check]\nfail_on = ["conflicts"]\n'})
    result = run_tether("check", "-C", str(project))
    assert result.returncode == 1
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "config.toml: [check] fail_on: unknown 'conflicts'" in line


def test_help_says_what_check_does():
    words = " ".join(run_tether("--help").stdout.split())  # the help as one line
    entry = words[words.index(" check ") : words.index(" diff ")]
    assert "[check] fail_on" in entry and "open conflicts" in entry
    assert "available update" not in entry  # a newer release fails only when asked for


def test_the_pre_commit_hook_runs_check_from_the_repository_top(project):
    """What .pre-commit-hooks.yaml declares, run as pre-commit runs it: its entry and its
    args, from the repository's top, once per commit (no file names)."""
    from ruamel.yaml import YAML

    (hook,) = YAML(typ="safe").load(HOOKS.read_text())
    assert hook["id"] == "tether-check"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    program, *args = hook["entry"].split()
    assert program == "tether"
    failed = run_tether(*args, *hook.get("args", []), cwd=project)
    assert failed.returncode == 3 and "Owned drift (1):" in failed.stdout
    run_tether("own", "bin/lint.sh", cwd=project)
    assert run_tether(*args, *hook.get("args", []), cwd=project).returncode == 0
