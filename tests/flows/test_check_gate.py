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


def test_every_kind_of_finding_is_a_fact_whose_next_steps_the_report_words():
    """findings_of keeps facts (the kind, the path, an action item's migration); report/
    status_document.check_next_steps words their next steps from the status, as the flow
    worded them before, for the text and the JSON document alike."""
    from tether.flows.check import CHECK_REASONS, CheckReport, Finding, findings_of
    from tether.flows.status import StatusReport, UnfinishedUpdate
    from tether.report.check import render_check
    from tether.report.status_document import check_document, check_next_steps

    status = StatusReport("native", "kit", "/shelf", "1.0.0", latest_version="1.1.0")
    status.running = {"pid": 4242, "started": "t", "command": "update"}
    status.unfinished = UnfinishedUpdate("R1", "1.0.0", "1.1.0", "update --to 1.1.0")
    status.modified_owned = ["bin/my lint.sh"]
    status.conflicts = [
        {"path": "a.md", "style": "markers", "artifact": "a.md"},
        {"path": "b.json", "style": "patch", "artifact": ".tether/merge/b.json.patch"},
    ]
    status.action_items = [
        {"id": "m1", "command": "bash mig/m1.sh", "status": "error", "run_id": "R0", "at": "t"}
    ]
    status.not_regular = ["fifo"]
    status.leftovers, status.leftovers_unmodified = ["gone.md", "kept.md"], ["gone.md"]
    findings = findings_of(status, CHECK_REASONS)
    assert findings[5] == Finding("action-required", None, True, "m1")
    steps = [(f.reason, f.path, check_next_steps(f, status)) for f in findings]
    assert steps == [
        ("run-in-progress", None, ("wait for it to end (pid 4242), then check again",)),
        ("unfinished-update", None, ("tether update --to 1.1.0", "tether update --abandon")),
        (
            "owned-drift",
            "bin/my lint.sh",
            ("tether diff 'bin/my lint.sh'", "tether own 'bin/my lint.sh'"),
        ),
        ("unresolved-conflicts", "a.md", ("resolve the conflict markers in a.md",)),
        (
            "unresolved-conflicts",
            "b.json",
            (
                "resolve b.json using .tether/merge/b.json.patch, then delete "
                ".tether/merge/b.json.patch",
            ),
        ),
        (
            "action-required",
            None,
            ("settle what stopped migration m1 (bash mig/m1.sh)", "tether migrations --rerun"),
        ),
        ("not-regular-files", "fifo", ("put a regular file at fifo", "tether own fifo")),
        (
            "leftovers",
            "gone.md",
            ("tether own gone.md", "rm gone.md", "tether update --delete-removed"),
        ),
        ("leftovers", "kept.md", ("tether own kept.md", "rm kept.md")),
        ("update-available", None, ("tether update --to 1.1.0",)),
    ]
    report = CheckReport(status, CHECK_REASONS, "--fail-on", findings)
    documented = [tuple(f["next_steps"]) for f in check_document(report)["findings"]]
    assert documented == [words for _, _, words in steps]
    assert report.to_json()["findings"][0]["next_steps"] == []  # the facts carry no words
    assert "    next: tether diff 'bin/my lint.sh' | tether own 'bin/my lint.sh'" in (
        render_check(report).splitlines()
    )
