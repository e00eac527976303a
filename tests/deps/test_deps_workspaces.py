"""A registered project that is one package of a pnpm / Bun workspace: its package manager,
lockfile and catalogs are the workspace root's, and its install runs there.

Packuments come from a loopback registry on 127.0.0.1. ``pnpm`` here is a stand-in script on
PATH that records its argv and working folder (one JSON line per call) and exits 0, so these
tests run where pnpm is absent too and say what pnpm was asked to do and where, not that an
install worked; the lockfiles are placeholders. tests/deps/test_deps_real_tools.py runs the real
pnpm, yarn berry and bun (tests/deps/test_deps_apply.py the real npm) and checks the lockfiles.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from builders import git
from fixtures.deps.kit import (
    calls,
    project,
    registry_file,
    run_json,
    setup_cli,
    stand_in,
    write_json,
)
from fixtures.deps.loopback import LoopbackRegistry


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


def pnpm_workspace(top: Path) -> Path:
    """A pnpm workspace (committed in git) whose apps/web uses the default catalog."""
    project(
        top,
        {
            "package.json": {"name": "mono", "private": True},
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            "pnpm-workspace.yaml": "packages:\n  - apps/*\ncatalog:\n  alpha: ^1.0.0\n",
            "apps/web/package.json": {
                "name": "web",
                "dependencies": {"alpha": "catalog:", "gamma": "^4.0.0", "delta": "catalog:"},
            },
            "apps/other/package.json": {"name": "other", "dependencies": {"beta": "0.1.0"}},
        },
    )
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "start")
    return top / "apps" / "web"


def test_a_workspace_package_is_read_and_installed_at_the_workspace_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "pnpm")
    web = pnpm_workspace(tmp_path / "mono")
    reg = registry_file(tmp_path / "projects.json", {"web": web})

    code, scan = run_json(*deps(reg, server, "scan", "--level", "minor"))
    assert code == 0
    [entry] = scan["projects"]
    assert (entry["package_manager"], entry["package_manager_source"]) == (
        "pnpm",
        "pnpm-lock.yaml",
    )
    assert entry["workspace_root"] == str((tmp_path / "mono").resolve())
    found = {d["name"]: (d["source_file"], d["location"]) for d in entry["dependencies"]}
    # the catalog: reference is followed to the root's catalog; the other package is not read
    assert found == {
        "gamma": ("apps/web/package.json", "dependencies"),
        "alpha": ("pnpm-workspace.yaml", "catalog"),
    }
    assert (
        "web: apps/web/package.json names delta as 'catalog:', but no catalog holds it"
        in (scan["warnings"])
    )

    code, doc = run_json(*deps(reg, server, "apply", "--level", "minor", "--yes"))
    assert code == 0, doc
    top = tmp_path / "mono"
    assert "alpha: ^1.2.3" in (top / "pnpm-workspace.yaml").read_text()
    web_deps = json.loads((web / "package.json").read_text())["dependencies"]
    assert web_deps == {"alpha": "catalog:", "gamma": "^4.1.1", "delta": "catalog:"}
    assert not (web / "package-lock.json").exists()  # npm never ran inside the package
    assert calls(record) == [
        {"argv": ["install", "--no-frozen-lockfile"], "cwd": str(top.resolve())}
    ]
    assert doc["applied"][0]["steps"][-1]["command"] == "pnpm install --no-frozen-lockfile"


def test_a_worktree_holds_the_workspace_and_the_install_runs_at_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "pnpm")
    web = pnpm_workspace(tmp_path / "mono")
    reg = registry_file(tmp_path / "projects.json", {"web": web})
    args = ("apply", "--level", "minor", "--yes", "--isolate", "worktree")
    code, doc = run_json(*deps(reg, server, *args))
    assert code == 0, doc
    tree = tmp_path / "mono-tether-deps-minor-2025-06-01"
    assert "alpha: ^1.2.3" in (tree / "pnpm-workspace.yaml").read_text()
    assert "alpha: ^1.0.0" in (tmp_path / "mono" / "pnpm-workspace.yaml").read_text()
    assert calls(record) == [
        {"argv": ["install", "--no-frozen-lockfile"], "cwd": str(tree.resolve())}
    ]


def test_monorepo_root_from_the_registry_record_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """No git here, so only the record's monorepoRoot can say where the workspace is."""
    setup_cli(monkeypatch, tmp_path)
    top = project(
        tmp_path / "bunmono",
        {
            "package.json": {
                "name": "root",
                "workspaces": {"packages": ["pkgs/*"], "catalog": {"alpha": "^1.0.0"}},
            },
            "bun.lock": "{}\n",
            "pkgs/app/package.json": {"name": "app", "dependencies": {"alpha": "catalog:"}},
        },
    )
    reg = registry_file(tmp_path / "projects.json", {"app": top / "pkgs" / "app"})
    code, plain = run_json(*deps(reg, server, "scan", "--level", "minor"))
    assert code == 0
    assert plain["projects"][0]["package_manager_source"] == "default"  # not found alone

    document = json.loads(reg.read_text())
    document["projects"]["app"]["monorepoRoot"] = str(top)
    write_json(reg, document)
    code, scan = run_json(*deps(reg, server, "scan", "--level", "minor"))
    assert code == 0
    [entry] = scan["projects"]
    assert (entry["package_manager"], entry["package_manager_source"]) == ("bun", "bun.lock")
    [alpha] = entry["dependencies"]
    assert (alpha["source_file"], alpha["location"], alpha["target_version"]) == (
        "package.json",
        "workspaces.catalog",
        "^1.2.3",
    )
    code, _ = run_json(*deps(reg, server, "apply", "--level", "minor", "--yes", "--no-install"))
    assert code == 0
    root = json.loads((top / "package.json").read_text())
    assert root["workspaces"]["catalog"] == {"alpha": "^1.2.3"}


def _files(top: Path) -> dict[str, bytes]:
    """Every file under ``top`` (git's own folders aside), by relative path."""
    return {
        p.relative_to(top).as_posix(): p.read_bytes()
        for p in sorted(top.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(top).parts
    }


@pytest.mark.parametrize("outer", ["outside git", "another repository"])
@pytest.mark.parametrize("mode", ["worktree", "branch"])
def test_a_workspace_root_above_the_projects_repository_is_never_edited_in_isolation(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: LoopbackRegistry,
    outer: str,
    mode: str,
) -> None:
    """The record's monorepoRoot (/src) lies above the project's own git repository
    (/src/web), the shape docs/fleet.md shows. A worktree or branch of /src/web cannot hold
    the workspace file and lockfile the bump edits, and a worktree of /src (when /src is a
    repository) does not hold the nested /src/web: isolation is not possible, so the project
    is skipped and nothing is written anywhere (no worktree folder, no branch either)."""
    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "pnpm")
    src = project(
        tmp_path / "src",
        {
            "package.json": {"name": "src", "private": True},
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            "pnpm-workspace.yaml": "packages:\n  - web\ncatalog:\n  alpha: ^1.0.0\n",
            "web/package.json": {
                "name": "web",
                "dependencies": {"alpha": "catalog:", "gamma": "^4.0.0"},
            },
        },
    )
    web = src / "web"
    git(web, "init", "-q", "-b", "main")
    git(web, "add", "-A")
    git(web, "commit", "-qm", "start")
    if outer == "another repository":
        (src / ".gitignore").write_text("web/\n")
        git(src, "init", "-q", "-b", "main")
        git(src, "add", "-A")
        git(src, "commit", "-qm", "start")
    reg = registry_file(tmp_path / "projects.json", {"web": web})
    document = json.loads(reg.read_text())
    document["projects"]["web"]["monorepoRoot"] = str(src)
    write_json(reg, document)
    before = _files(src)
    folders = sorted(p.name for p in tmp_path.iterdir())

    code, doc = run_json(
        *deps(reg, server, "apply", "--level", "minor", "--yes", "--isolate", mode)
    )
    assert code == 0, doc
    assert doc["applied"] == doc["failed"] == []
    [skipped] = doc["skipped_isolation"]
    assert skipped["name"] == "web"
    assert skipped["reason"].startswith(f"{mode} isolation not possible: the workspace root ")
    assert _files(src) == before
    # no worktree beside either repository (the run folder is under state/)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "state") == folders
    assert sorted(p.name for p in src.iterdir() if "tether" in p.name) == []
    assert git(web, "branch", "--format=%(refname:short)") == "main\n"
    assert calls(record) == []


def test_members_of_one_workspace_share_one_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """Two registered packages of one pnpm workspace: both are edited, and the workspace's
    install runs once, at its root, after the last of them (the stand-in pnpm records each
    call). Each member's owed install is settled by that one install."""
    from tether.deps.owed import OWED_FILE

    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "pnpm")
    web = pnpm_workspace(tmp_path / "mono")
    other = web.parent / "other"
    reg = registry_file(tmp_path / "projects.json", {"web": web, "other": other})
    code, doc = run_json(
        *deps(reg, server, "apply", "--level", "minor", "--yes", "--isolate", "none")
    )
    assert code == 0, doc
    top = (tmp_path / "mono").resolve()
    assert calls(record) == [{"argv": ["install", "--no-frozen-lockfile"], "cwd": str(top)}]
    steps = {p["name"]: [s["step"] for s in p["steps"]] for p in doc["applied"]}
    assert steps == {"web": ["edit"], "other": ["edit", "install"]}
    assert [p["install_with"] for p in doc["applied"]] == ["other", None]
    assert json.loads((other / "package.json").read_text())["dependencies"] == {"beta": "0.3.1"}
    assert "alpha: ^1.2.3" in (tmp_path / "mono" / "pnpm-workspace.yaml").read_text()
    assert not list((tmp_path / "state").rglob(OWED_FILE))


def test_a_run_asks_git_of_each_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """Reading a workspace package, isolating it in a worktree and carrying its
    configuration there ask git which repository holds the same folders: one ``deps apply``
    asks it once per folder (the real git runs behind a recorder first on PATH)."""
    setup_cli(monkeypatch, tmp_path)
    stand_in(tmp_path, monkeypatch, "pnpm")
    web = pnpm_workspace(tmp_path / "mono")
    reg = registry_file(tmp_path / "projects.json", {"web": web})
    real_git = shutil.which("git")
    assert real_git is not None
    record = tmp_path / "git-calls.record"
    recorder = tmp_path / "git-recorder" / "git"
    recorder.parent.mkdir()
    recorder.write_text(
        "#!/bin/sh\n"
        f"{{ printf '%s\\0' \"$(pwd -P)\" \"$@\"; printf '\\n'; }} >> {shlex.quote(str(record))}\n"
        f'exec {shlex.quote(real_git)} "$@"\n'
    )
    recorder.chmod(0o755)
    monkeypatch.setenv("PATH", f"{recorder.parent}{os.pathsep}{os.environ['PATH']}")

    args = ("apply", "--level", "minor", "--yes", "--isolate", "worktree")
    code, doc = run_json(*deps(reg, server, *args))
    assert code == 0, doc
    assert doc["applied"][0]["name"] == "web"
    asked = [c["cwd"] for c in calls(record) if "--show-toplevel" in c["argv"]]
    assert asked, "the recorder saw no git call"
    assert sorted(asked) == sorted(set(asked))
