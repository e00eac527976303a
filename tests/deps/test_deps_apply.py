"""``tether deps apply``: in-place edits, stop-on-fail and continue, isolation, and an
end-to-end run where ``npm install`` really installs from the loopback registry."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builders import git
from fixtures.deps.kit import calls, project, registry_file, run_cli, run_json, setup_cli, stand_in
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.edit import Change, EditError, prepare
from tether.deps.model import Locus

NPM = shutil.which("npm")
FAIL = f"{sys.executable} -c \"import sys; print('codemod failed'); sys.exit(3)\""


def deps(registry: Path, server: LoopbackRegistry, *args: str) -> list[str]:
    return [
        "deps",
        *args,
        "--registry",
        str(registry),
        "--npm-registry",
        server.url,
        "--pypi-index",
        server.url + "/pypi",
    ]


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


# --- format-preserving edits -----------------------------------------------------------------


def test_only_the_version_text_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    # Tabs, CRLF, odd spacing and no final newline: all of it must survive.
    package = (
        '{\r\n\t"name": "odd",\r\n\t"dependencies": {\r\n'
        '\t\t"alpha":   "^1.0.0" ,\r\n\t\t"beta": "0.1.0"\r\n\t}\r\n}'
    )
    workspace = (
        "# catalogs\ncatalog:\n  alpha: '^1.0.0'   # quoted\ncatalogs:\n  old:\n    gamma: ~4.1.0\n"
    )
    pyproject = (
        "[project]\nname = 'odd'\ndependencies = [\n"
        "    'requests >= 2.28 ; python_version >= \"3.9\"',  # http\n]\n"
    )
    root = project(
        tmp_path / "odd",
        {
            "package.json": package,
            "pnpm-workspace.yaml": workspace,
            "pyproject.toml": pyproject,
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
        },
    )
    reg = registry_file(tmp_path / "projects.json", {"odd": root})
    code, doc = run_json(*deps(reg, server, "apply", "--level", "minor", "--yes", "--no-install"))
    assert code == 0, doc
    assert (root / "package.json").read_bytes() == package.replace("^1.0.0", "^1.2.3").replace(
        '"0.1.0"', '"0.3.1"'
    ).encode()
    assert (root / "pnpm-workspace.yaml").read_text() == workspace.replace(
        "'^1.0.0'", "'^1.2.3'"
    ).replace("~4.1.0", "~4.1.1")
    assert (root / "pyproject.toml").read_text() == pyproject.replace(">= 2.28", ">= 2.32.3")


def test_a_file_changed_since_the_scan_is_refused(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"dependencies": {"alpha": "^1.1.0"}}')
    locus = Locus("package.json", "dependencies", "json", ("dependencies", "alpha"))
    with pytest.raises(EditError, match="changed since the scan"):
        prepare(tmp_path, [Change(locus, "^1.0.0", "^1.2.3")])


def test_a_value_already_at_its_target_is_left_as_it_is(tmp_path: Path) -> None:
    """A second run in the worktree an earlier run made finds its edits there."""
    (tmp_path / "package.json").write_text('{"dependencies": {"alpha": "^1.2.3", "beta": "1.0.0"}}')
    (tmp_path / ".nvmrc").write_text("22\n")
    alpha = Locus("package.json", "dependencies", "json", ("dependencies", "alpha"))
    beta = Locus("package.json", "dependencies", "json", ("dependencies", "beta"))
    node = Locus(".nvmrc", ".nvmrc", "text", (0,))
    assert prepare(tmp_path, [Change(alpha, "^1.0.0", "^1.2.3"), Change(node, "20", "22")]) == {}
    mixed = prepare(tmp_path, [Change(alpha, "^1.0.0", "^1.2.3"), Change(beta, "1.0.0", "1.1.0")])
    assert mixed == {"package.json": b'{"dependencies": {"alpha": "^1.2.3", "beta": "1.1.0"}}'}


# --- failures, stop and continue -------------------------------------------------------------


@pytest.fixture
def three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    roots = {}
    for name, deps_ in (
        ("one", {"alpha": "^1.0.0"}),
        ("two", {"storybook": "^8.0.0"}),
        ("three", {"gamma": "^4.0.0"}),
    ):
        roots[name] = project(
            tmp_path / name,
            {
                "package.json": {"name": name, "dependencies": deps_},
                "package-lock.json": {},
            },
        )
    (tmp_path / "overrides.yaml").write_text(
        f"- id: sb\n  match: [storybook]\n  command: {json.dumps(FAIL)}\n  versionSource: latest\n"
    )
    return registry_file(tmp_path / "projects.json", roots)


def _apply(reg: Path, server: LoopbackRegistry, *extra: str) -> tuple[int, dict[str, Any]]:
    overrides = str(reg.parent / "overrides.yaml")
    return run_json(
        *deps(
            reg,
            server,
            "apply",
            "--level",
            "minor",
            "--yes",
            "--no-install",
            "--overrides",
            overrides,
            "--override-action",
            "sb=run-override",
            *extra,
        )
    )


def test_stop_on_first_failure(three: Path, server: LoopbackRegistry) -> None:
    before = tree(three.parent / "three")
    code, doc = _apply(three, server)
    assert code == 1 and doc["status"] == "stopped"
    assert [p["name"] for p in doc["applied"]] == ["one"]
    failed = doc["failed"][0]
    assert (failed["name"], failed["step"], failed["exit_code"]) == ("two", "override:sb", 3)
    assert "codemod failed" in failed["log_tail"]
    assert [p["name"] for p in doc["pending"]] == ["three"]
    assert tree(three.parent / "three") == before


def test_continue_on_failure(three: Path, server: LoopbackRegistry) -> None:
    code, doc = _apply(three, server, "--continue-on-failure")
    assert code == 1 and doc["status"] == "done"
    assert [p["name"] for p in doc["applied"]] == ["one", "three"]
    assert [p["name"] for p in doc["failed"]] == ["two"]
    assert json.loads((three.parent / "three" / "package.json").read_text())["dependencies"] == {
        "gamma": "^4.1.1"
    }


def test_failure_text(three: Path, server: LoopbackRegistry) -> None:
    overrides = str(three.parent / "overrides.yaml")
    args = deps(
        three,
        server,
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--overrides",
        overrides,
        "--override-action",
        "sb=run-override",
    )
    code, out, _ = run_cli(*args)
    assert code == 1
    sections = [line for line in out.splitlines() if line.startswith("## ")]
    assert sections == [
        "## Applied projects (1)",
        "## Failed project",
        "## Pending projects (1)",
        "## Isolation: branch",
        "## Suggested next steps (not executed)",
    ]
    assert "[2/3] two: FAILED at override:sb (exit 3)" in out
    assert "    codemod failed" in out
    # branch is the default; outside git it degrades to in place, and says so
    assert "- one: in place — branch isolation not possible: not a git repository" in out
    steps = out[out.index("## Suggested next steps (not executed)") :]
    assert "1. run the tests, lint and type checks of one\n" in steps
    assert "2. review the changes (git diff) and commit project by project" in steps
    assert "commit hooks, so run its lint and build first" in steps


# --- isolation -------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    root = project(
        tmp_path / "repo",
        {
            "package.json": {"name": "repo", "dependencies": {"alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return registry_file(tmp_path / "projects.json", {"repo": root})


def test_branch_isolation_never_commits(repo: Path, server: LoopbackRegistry) -> None:
    root = repo.parent / "repo"
    head = git(root, "rev-parse", "HEAD")
    code, doc = run_json(
        *deps(
            repo,
            server,
            "apply",
            "--level",
            "minor",
            "--yes",
            "--no-install",
            "--isolate",
            "branch",
        )
    )
    assert code == 0
    assert git(root, "branch", "--show-current").strip() == "deps/minor-2025-06-01"
    assert git(root, "rev-parse", "HEAD") == head  # nothing committed
    assert "package.json" in git(root, "status", "--porcelain")
    used = doc["isolation"]["projects"][0]
    assert (used["used"], used["branch"]) == ("branch", "deps/minor-2025-06-01")


def test_worktree_isolation_leaves_the_checkout(repo: Path, server: LoopbackRegistry) -> None:
    root = repo.parent / "repo"
    before = tree(root)
    code, doc = run_json(
        *deps(
            repo,
            server,
            "apply",
            "--level",
            "minor",
            "--yes",
            "--no-install",
            "--isolate",
            "worktree",
        )
    )
    assert code == 0
    assert tree(root) == before
    worktree = Path(doc["isolation"]["projects"][0]["worktree_dir"])
    assert json.loads((worktree / "package.json").read_text())["dependencies"]["alpha"] == "^1.2.3"
    git(root, "worktree", "remove", "--force", str(worktree))


def test_a_worktree_run_over_a_dirty_checkout_plans_what_the_worktree_holds(
    repo: Path, server: LoopbackRegistry
) -> None:
    """The checkout has an uncommitted edit of the very value the run moves (and a
    dependency not committed yet); the worktree starts from HEAD, so the plan is made from
    HEAD's manifest: the worktree is bumped from what it holds, the checkout keeps its
    uncommitted bytes, nothing fails as 'changed since the scan'."""
    root = repo.parent / "repo"
    dirty = {"name": "repo", "dependencies": {"alpha": "^1.1.0", "beta": "^1.0.0"}}
    (root / "package.json").write_text(json.dumps(dirty, indent=2) + "\n")
    before = tree(root)
    code, doc = run_json(
        *deps(
            repo,
            server,
            "apply",
            "--level",
            "minor",
            "--yes",
            "--no-install",
            "--isolate",
            "worktree",
        )
    )
    assert code == 0, doc
    assert doc["failed"] == []
    [applied] = doc["applied"]
    assert [(b["name"], b["current_version"], b["target_version"]) for b in applied["bumps"]] == [
        ("alpha", "^1.0.0", "^1.2.3")
    ]
    assert tree(root) == before  # the uncommitted edit is still there, untouched
    worktree = Path(doc["isolation"]["projects"][0]["worktree_dir"])
    held = json.loads((worktree / "package.json").read_text())["dependencies"]
    assert held == {"alpha": "^1.2.3"}
    git(root, "worktree", "remove", "--force", str(worktree))


def test_an_asked_isolation_that_is_not_possible_skips_the_project(
    three: Path, server: LoopbackRegistry
) -> None:
    """Only the default degrades to in place outside git; an asked isolation skips."""
    before = tree(three.parent / "one")
    code, doc = _apply(three, server, "--isolate", "branch", "--continue-on-failure")
    assert code == 0 and doc["applied"] == doc["failed"] == []
    notes = {p["name"]: (p["used"], p["note"]) for p in doc["isolation"]["projects"]}
    assert notes["one"] == ("skipped", "branch isolation not possible: not a git repository")
    assert [p["name"] for p in doc["skipped_isolation"]] == ["one", "two", "three"]
    assert tree(three.parent / "one") == before
    code, out, _ = run_cli(
        *deps(
            three,
            server,
            "apply",
            "--level",
            "minor",
            "--yes",
            "--isolate",
            "worktree",
            "--no-install",
        )
    )
    assert "## Skipped (isolation not possible) (3)" in out
    assert "- one: skipped, nothing written — worktree isolation not possible" in out
    assert tree(three.parent / "one") == before


def _repo(root: Path) -> Path:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def test_projects_in_one_repository_share_one_worktree_and_never_touch_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    top = tmp_path / "mono"
    for name in ("web", "api"):
        project(
            top / "apps" / name,
            {"package.json": {"name": name, "dependencies": {"alpha": "^1.0.0"}}},
        )
    _repo(top)
    late = project(top / "apps" / "late", {"package.json": {"dependencies": {"alpha": "^1.0.0"}}})
    roots = {n: top / "apps" / n for n in ("web", "api")} | {"late": late}
    reg = registry_file(tmp_path / "projects.json", roots)
    head = git(top, "rev-parse", "HEAD")
    args = ("apply", "--level", "minor", "--yes", "--no-install", "--isolate", "worktree")
    shared = str(tmp_path / "mono-tether-deps-minor-2025-06-01")
    for attempt in ("first", "again"):
        code, doc = run_json(*deps(reg, server, *args))
        assert code == 0, doc
        isolated = doc["isolation"]["projects"]
        worktrees = {p["name"]: (p["used"], p["worktree_dir"]) for p in isolated}
        if attempt == "first":
            assert worktrees["web"] == worktrees["api"] == ("worktree", shared)
            assert [p["name"] for p in doc["applied"]] == ["web", "api"]
        else:  # scanned in the worktree the first run made: it holds the bumps already
            assert "web" not in worktrees and "api" not in worktrees
            assert doc["applied"] == []
        # never committed, so the worktree lacks it: skipped, not edited in the checkout
        [skipped] = doc["skipped_isolation"]
        assert skipped["name"] == "late"
        assert skipped["reason"] == (
            "worktree isolation not possible: apps/late is not committed, "
            "so the worktree does not contain it"
        )
        assert git(top, "rev-parse", "HEAD") == head
        assert git(top, "status", "--porcelain") == "?? apps/late/\n"
        assert git(top, "branch", "--show-current").strip() == "main"
    for name in ("web", "api"):
        edited = json.loads((Path(shared) / "apps" / name / "package.json").read_text())
        assert edited["dependencies"]["alpha"] == "^1.2.3"
    assert json.loads((late / "package.json").read_text())["dependencies"]["alpha"] == "^1.0.0"


# --- end to end with a real npm install ------------------------------------------------------


@pytest.mark.skipif(NPM is None, reason="npm is not on PATH: the end-to-end install test needs it")
def test_npm_install_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    npm_env = {
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_ignore_scripts": "true",
        "npm_config_update_notifier": "false",
        "npm_config_loglevel": "warn",
    }
    for key, value in npm_env.items():
        monkeypatch.setenv(key, value)
    web = project(
        tmp_path / "web",
        {"package.json": {"name": "web", "version": "1.0.0", "dependencies": {"e2e-lib": "1.0.0"}}},
    )
    api = project(
        tmp_path / "api",
        {
            "package.json": {
                "name": "api",
                "version": "1.0.0",
                "dependencies": {"e2e-broken": "1.0.0"},
            }
        },
    )
    docs = project(
        tmp_path / "docs",
        {
            "package.json": {
                "name": "docs",
                "version": "1.0.0",
                "dependencies": {"e2e-lib": "~1.0.0"},
            }
        },
    )
    install = [
        NPM or "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--registry",
        server.url,
    ]
    subprocess.run(install, cwd=web, check=True, capture_output=True, env=os.environ.copy())
    assert _locked(web) == "1.0.0"
    reg = registry_file(tmp_path / "projects.json", {"web": web, "api": api, "docs": docs})
    registry_bytes = reg.read_bytes()
    docs_before = tree(docs)

    code, out, err = run_cli(*deps(reg, server, "apply", "--level", "minor", "--yes"), "--json")
    doc = json.loads(out)
    assert code == 1, err
    assert [p["name"] for p in doc["applied"]] == ["web"]
    assert _locked(web) == "1.1.0"  # the lockfile really changed
    installed = json.loads((web / "node_modules" / "e2e-lib" / "package.json").read_text())
    assert installed["version"] == "1.1.0"
    failed = doc["failed"][0]
    assert (failed["name"], failed["step"]) == ("api", "install") and failed["exit_code"] != 0
    assert 0 < len(failed["log_tail"]) <= 40
    assert "npm install" in Path(failed["log"]).read_text()
    assert json.loads((api / "package.json").read_text())["dependencies"] == {"e2e-broken": "1.1.0"}
    assert [p["name"] for p in doc["pending"]] == ["docs"]
    assert tree(docs) == docs_before
    assert reg.read_bytes() == registry_bytes
    assert "[1/3] web:" in err and "[2/3] api: FAILED at install" in err  # digests on stderr


def _locked(root: Path) -> str:
    lock = json.loads((root / "package-lock.json").read_text())
    return str(lock["packages"]["node_modules/e2e-lib"]["version"])


def test_a_300_character_project_name_does_not_stop_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    long_name = "n" * 300
    roots = {
        name: project(
            tmp_path / f"p{index}",
            {"package.json": {"name": f"p{index}", "dependencies": {"alpha": "^1.0.0"}}},
        )
        for index, name in enumerate((long_name, "short", long_name[:-1] + "m"))
    }
    reg = registry_file(tmp_path / "projects.json", roots)
    code, doc = run_json(*deps(reg, server, "apply", "--level", "minor", "--yes", "--no-install"))
    assert code == 0, doc
    assert [p["name"] for p in doc["applied"]] == list(roots)
    for root in roots.values():
        assert json.loads((root / "package.json").read_text())["dependencies"] == {
            "alpha": "^1.2.3"
        }
    logs = [Path(p["log"]) for p in doc["applied"]]
    assert len(set(logs)) == 3 and all(len(p.name.encode()) < 255 for p in logs)
    assert all(p.is_file() for p in logs)


def test_a_deno_project_is_installed_with_deno(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """deno.lock names Deno as the package manager; its install is ``deno install`` in the
    project (a stand-in ``deno`` first on PATH records its argv and folder)."""
    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "deno")
    root = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
            "deno.lock": '{"version": "4"}\n',
        },
    )
    reg = registry_file(tmp_path / "projects.json", {"app": root})
    code, scan = run_json(*deps(reg, server, "scan", "--level", "minor"))
    assert code == 0
    [entry] = scan["projects"]
    assert (entry["package_manager"], entry["package_manager_source"]) == ("deno", "deno.lock")
    code, doc = run_json(*deps(reg, server, "apply", "--level", "minor", "--yes"))
    assert code == 0, doc
    assert calls(record) == [{"argv": ["install"], "cwd": str(root)}]
    assert doc["applied"][0]["steps"][-1]["command"] == "deno install"


def test_progress_names_each_phase_and_project_on_stderr_and_is_quiet_under_json(
    three: Path, server: LoopbackRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal (plain lines: NO_COLOR) each phase says when it starts and ends, with
    its count and the time it took: reading the projects, asking the registries, each
    project and each of its steps. Under --json or -q nothing of it is drawn."""
    import tether.report.progress

    monkeypatch.setattr(tether.report.progress, "is_terminal", lambda stream: True)
    monkeypatch.setenv("NO_COLOR", "1")
    stand_in(three.parent, monkeypatch, "npm")  # the install: records its argv, exits 0
    args = deps(three, server, "apply", "--level", "minor", "--yes", "--projects", "one,three")
    code, out, err = run_cli(*args, "--isolate", "none")
    assert code == 0, out
    lines = [line for line in err.splitlines() if line.startswith("tether: ")]
    assert lines[:2] == ["tether: reading projects 2 projects...", lines[1]]
    assert re.fullmatch(r"tether: reading projects done, 2 projects in \d+\.\d s", lines[1])
    assert "tether: asking the registries..." in lines
    asked = r"tether: asking the registries done, 2 packages in \d+\.\d s"
    assert any(re.fullmatch(asked, line) for line in lines)
    for line in (
        "tether: [1/2] one...",
        "tether: one: edit 1 bumps...",
        "tether: one: install...",
        "tether: [2/2] three...",
    ):
        assert line in lines, line
    installed = r"tether: one: install done in \d+\.\d s"
    assert any(re.fullmatch(installed, line) for line in lines)
    for quiet in ("--json", "-q"):
        _, _, err = run_cli(*args, "--isolate", "none", quiet)
        assert not [line for line in err.splitlines() if line.startswith("tether: ")], quiet
