"""``tether deps apply`` with the REAL pnpm, yarn berry and bun: the bump lands in the right
file, the real install runs where tether says (the workspace root), reads the registry it
should and really rewrites the lockfile.

What is real here: the package managers (found by ``fixtures.deps.tools``: ``.ci/tools``
from ``.ci/run``, then PATH; a test skips with the reason when its tool is absent), git,
the files, and a loopback npm registry on 127.0.0.1 serving packuments and tarballs. Nothing
else is reachable: each tool's home, caches and store are in the test's folder and every
other host goes to a closed port. ``CI=true`` is set, as on a CI runner, where pnpm and yarn
berry default to a frozen lockfile. The argv-only checks (owed installs, which folder,
subsets) stay with stand-in scripts in test_deps_workspaces.py, test_deps_owed.py and
test_deps_subset.py; test_deps_apply.py runs the real npm. The yarn berry project and the
lockfile yarn made for it are made once for the module (``yarn_app``) and copied into each
of its tests, which then run yarn against their own registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from builders import git
from fixtures.deps.kit import project, registry_file, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from fixtures.deps.tools import CLOSED, Tool, offline_env, offline_tools, real_tool

NEW_TARBALL = "/e2e-lib/-/e2e-lib-1.1.0.tgz"


def first_install(tool: Tool, root: Path, registry: str) -> None:
    """The lockfile the project starts from, made by the tool itself (not as under CI), with
    a home and caches of its own: the install under test must ask the registry again."""
    names = ("npm_config_registry", "pnpm_config_registry", "YARN_NPM_REGISTRY_SERVER")
    env = {
        **os.environ,
        **offline_env(root.parent / "first-home"),
        **dict.fromkeys(names, registry),
    }
    env.pop("CI", None)
    done = subprocess.run(
        [str(tool.path), "install"], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def committed(top: Path) -> None:
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "start")


def apply(reg: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    return run_json(
        "deps", "apply", "--level", "minor", "--yes", "--isolate", "none",
        "--registry", str(reg), *extra,
    )  # fmt: skip


def manifest(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def test_pnpm_workspace_package_is_bumped_and_locked_at_the_workspace_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pnpm = real_tool("pnpm")
    setup_cli(monkeypatch, tmp_path)
    offline_tools(monkeypatch, tmp_path, pnpm)
    top = project(
        tmp_path / "mono",
        {
            ".gitignore": "node_modules/\n",
            "package.json": {"name": "mono", "private": True},
            "pnpm-workspace.yaml": "packages:\n  - apps/*\ncatalog:\n  e2e-lib: 1.0.0\n",
            "apps/web/package.json": {
                "name": "web",
                "version": "1.0.0",
                "dependencies": {"e2e-lib": "catalog:", "delta": "1.0.0"},
            },
        },
    )
    with LoopbackRegistry() as server:
        first_install(pnpm, top, server.url)
        committed(top)
        reg = registry_file(tmp_path / "projects.json", {"web": top / "apps" / "web"})
        code, doc = apply(reg, "--npm-registry", server.url)
        assert code == 0, doc["failed"]
        assert server.counts[NEW_TARBALL] >= 1  # pnpm fetched from the loopback registry

    assert [s["command"] for s in doc["applied"][0]["steps"]][-1] == (
        "pnpm install --no-frozen-lockfile"
    )
    assert "e2e-lib: 1.1.0" in (top / "pnpm-workspace.yaml").read_text()
    web = manifest(top / "apps" / "web" / "package.json")
    assert web["dependencies"] == {"e2e-lib": "catalog:", "delta": "1.1.0"}
    lock = YAML(typ="safe").load((top / "pnpm-lock.yaml").read_text())
    assert lock["catalogs"]["default"]["e2e-lib"] == {"specifier": "1.1.0", "version": "1.1.0"}
    locked = lock["importers"]["apps/web"]["dependencies"]
    assert locked["e2e-lib"] == {"specifier": "catalog:", "version": "1.1.0"}
    assert locked["delta"] == {"specifier": "1.1.0", "version": "1.1.0"}
    # the install ran at the root: no lockfile of its own inside the package, no npm's
    assert sorted(p.name for p in top.rglob("*lock*") if "node_modules" not in p.parts) == [
        "pnpm-lock.yaml"
    ]


def yarnrc(registry: str) -> str:
    """The project's .yarnrc.yml naming ``registry``; yarn berry refuses plain http unless
    the host is allowed."""
    return f'npmRegistryServer: "{registry}"\nunsafeHttpWhitelist:\n  - "127.0.0.1"\n'


@pytest.fixture(scope="module")
def yarn_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tool, Path]:
    """yarn berry, and a project whose lockfile it made from a registry of the module's own
    (``first_install``); each test copies the project and writes its own .yarnrc.yml."""
    yarn = real_tool("yarn")
    base = tmp_path_factory.mktemp("yarn-app")
    with LoopbackRegistry() as server:
        root = project(
            base / "app",
            {
                ".yarnrc.yml": yarnrc(CLOSED),
                "package.json": {
                    "name": "app",
                    "version": "1.0.0",
                    "dependencies": {"e2e-lib": "1.0.0"},
                },
            },
        )
        first_install(yarn, root, server.url)
    shutil.rmtree(base / "first-home")
    return yarn, root


@pytest.mark.parametrize("named_by", ["yarnrc", "flag"])
def test_yarn_berry_installs_from_the_registry_the_plan_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named_by: str, yarn_app: tuple[Tool, Path]
) -> None:
    """The plan and the install read the same registry: the project's .yarnrc.yml, or
    ``--npm-registry`` over it (the .yarnrc.yml then names a closed port)."""
    yarn, made = yarn_app
    setup_cli(monkeypatch, tmp_path)
    offline_tools(monkeypatch, tmp_path, yarn)
    with LoopbackRegistry() as server:
        root = tmp_path / "app"
        shutil.copytree(made, root, symlinks=True)
        (root / ".yarnrc.yml").write_text(yarnrc(server.url if named_by == "yarnrc" else CLOSED))
        assert '"e2e-lib@npm:1.0.0"' in (root / "yarn.lock").read_text()
        reg = registry_file(tmp_path / "projects.json", {"app": root})
        flag = ("--npm-registry", server.url) if named_by == "flag" else ()
        code, doc = apply(reg, *flag)
        assert code == 0, doc["failed"]
        assert server.counts[NEW_TARBALL] >= 1

    assert doc["applied"][0]["steps"][-1]["command"] == "yarn install --no-immutable"
    assert manifest(root / "package.json")["dependencies"] == {"e2e-lib": "1.1.0"}
    lock = (root / "yarn.lock").read_text()
    assert '"e2e-lib@npm:1.1.0":\n  version: 1.1.0\n' in lock
    assert "e2e-lib@npm:1.0.0" not in lock


def test_bun_workspace_catalog_is_bumped_and_installed_at_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bun = real_tool("bun")
    setup_cli(monkeypatch, tmp_path)
    offline_tools(monkeypatch, tmp_path, bun)
    top = project(
        tmp_path / "mono",
        {
            ".gitignore": "node_modules/\n",
            "package.json": {
                "name": "mono",
                "private": True,
                "workspaces": {"packages": ["pkgs/*"], "catalog": {"e2e-lib": "1.0.0"}},
            },
            "pkgs/app/package.json": {
                "name": "app",
                "version": "1.0.0",
                "dependencies": {"e2e-lib": "catalog:", "delta": "1.0.0"},
            },
        },
    )
    with LoopbackRegistry() as server:
        first_install(bun, top, server.url)
        assert '"e2e-lib@1.0.0"' in (top / "bun.lock").read_text()
        committed(top)
        reg = registry_file(tmp_path / "projects.json", {"app": top / "pkgs" / "app"})
        code, doc = apply(reg, "--npm-registry", server.url)
        assert code == 0, doc["failed"]
        assert server.counts[NEW_TARBALL] >= 1

    assert doc["applied"][0]["steps"][-1]["command"] == "bun install"
    assert manifest(top / "package.json")["workspaces"]["catalog"] == {"e2e-lib": "1.1.0"}
    app = manifest(top / "pkgs" / "app" / "package.json")
    assert app["dependencies"] == {"e2e-lib": "catalog:", "delta": "1.1.0"}
    lock = (top / "bun.lock").read_text()
    assert '"e2e-lib": ["e2e-lib@1.1.0"' in lock and '"delta": ["delta@1.1.0"' in lock
    assert "e2e-lib@1.0.0" not in lock
    assert not (top / "pkgs" / "app" / "bun.lock").exists()
