"""The install in a worktree reads the registry configuration the plan read.

A project's ``.npmrc`` (or yarn berry's ``.yarnrc.yml``) with a private registry's token is
git-ignored, so a fresh worktree lacks it: the install there would ask the public registry
(and could resolve a private unscoped name publicly). tether carries the project's ignored
package-manager configuration into the worktree, where the same ``.gitignore`` keeps it out
of every commit.

What is real here: npm, pnpm, yarn berry and bun (found by ``fixtures.deps.tools``: the
tools ``.ci/run`` installs; a test skips with the reason when its tool is absent), git, the
files, and a private npm registry on 127.0.0.1 that answers only requests carrying its token.
Every other host goes to a closed port, so an install that asked the default registry fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from builders import git
from fixtures.deps.kit import calls, project, registry_file, run_json, setup_cli, stand_in
from fixtures.deps.loopback import LoopbackRegistry
from fixtures.deps.tools import Tool, offline_env, offline_tools, real_tool

TOKEN = "npm_w0rktree-T0KEN-4d21"
NEW_TARBALL = "/e2e-lib/-/e2e-lib-1.1.0.tgz"
WORKTREE = "app-tether-deps-minor-2025-06-01"
LOCKFILE = {
    "npm": "package-lock.json",
    "pnpm": "pnpm-lock.yaml",
    "yarn": "yarn.lock",
    "bun": "bun.lock",
}


def config_for(tool: str, url: str) -> tuple[str, str]:
    """(the ignored file, its text) naming the private registry and its token."""
    if tool == "yarn":
        return ".yarnrc.yml", (
            f'npmRegistryServer: "{url}"\n'
            f'npmAuthToken: "{TOKEN}"\n'
            "npmAlwaysAuth: true\n"
            'unsafeHttpWhitelist:\n  - "127.0.0.1"\n'
        )
    host = url.removeprefix("http:")
    return ".npmrc", f"registry={url}/\n{host}/:_authToken={TOKEN}\n"


def first_install(tool: Tool, root: Path) -> None:
    """The lockfile the project starts from, made by the tool from its own configuration."""
    env = {**os.environ, **offline_env(root.parent / "first-home")}
    env.pop("CI", None)
    done = subprocess.run(
        [str(tool.path), "install"], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def apply(registry: Path) -> tuple[int, dict[str, Any]]:
    return run_json(
        "deps", "apply", "--level", "minor", "--yes", "--isolate", "worktree",
        "--registry", str(registry),
    )  # fmt: skip


@pytest.mark.parametrize("name", ["npm", "pnpm", "yarn", "bun"])
def test_the_worktree_install_reads_the_ignored_registry_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    tool = real_tool(name)
    setup_cli(monkeypatch, tmp_path)
    offline_tools(monkeypatch, tmp_path, tool)
    with LoopbackRegistry(token=TOKEN) as private:
        config, text = config_for(name, private.url)
        root = project(
            tmp_path / "app",
            {
                ".gitignore": f"node_modules/\n{config}\n",
                config: text,
                "package.json": {
                    "name": "app",
                    "version": "1.0.0",
                    "dependencies": {"e2e-lib": "1.0.0"},
                },
            },
        )
        if name == "yarn":  # yarn berry writes its own files beside the lockfile
            (root / ".gitignore").write_text(f"node_modules/\n{config}\n.yarn/\n.pnp.*\n")
        (root / config).chmod(0o600)
        first_install(tool, root)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "start")
        checkout = {p: (root / p).read_bytes() for p in ("package.json", LOCKFILE[name])}

        code, doc = apply(registry_file(tmp_path / "projects.json", {"app": root}))
        assert code == 0, doc["failed"] or doc
        assert private.counts[NEW_TARBALL] >= 1  # the install asked the private registry

    tree = tmp_path / WORKTREE
    assert json.loads((tree / "package.json").read_text())["dependencies"] == {"e2e-lib": "1.1.0"}
    assert "1.1.0" in (tree / LOCKFILE[name]).read_text()
    # carried as it is, mode kept, and never committable: git ignores it in the worktree
    assert (tree / config).read_text() == text
    assert (tree / config).stat().st_mode & 0o777 == 0o600
    status = git(tree, "status", "--porcelain", "--untracked-files=all")
    assert config not in status and "??" not in status
    assert {p: (root / p).read_bytes() for p in checkout} == checkout  # the checkout as it was
    assert any(config in note for note in _isolation_notes(doc))


def _isolation_notes(doc: dict[str, Any]) -> list[str]:
    return [p["note"] for p in doc["isolation"]["projects"]]


def test_configuration_that_is_neither_committed_nor_ignored_is_not_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An untracked ``.npmrc`` that git does not ignore would show up in the worktree as a
    file to commit, tokens and all: it is not copied, and since the install there could not
    read it, worktree isolation is not possible for that project (nothing written, no install
    run). Ignored ``bunfig.toml`` and ``.pnpmfile.cjs`` of the workspace root are carried."""
    setup_cli(monkeypatch, tmp_path)
    record = stand_in(tmp_path, monkeypatch, "npm")
    with LoopbackRegistry() as server:
        root = project(
            tmp_path / "app",
            {
                ".gitignore": "node_modules/\nbunfig.toml\n.pnpmfile.cjs\n",
                "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
                "package-lock.json": {},
            },
        )
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "start")
        (root / ".npmrc").write_text(f"registry={server.url}/\n")
        (root / "bunfig.toml").write_text("[install]\n")
        (root / ".pnpmfile.cjs").write_text("module.exports = {}\n")
        code, doc = apply(registry_file(tmp_path / "projects.json", {"app": root}))

    assert code == 0, doc
    [skipped] = doc["skipped_isolation"]
    assert skipped["reason"] == (
        "worktree isolation not possible: .npmrc is in the checkout but neither committed "
        "nor git-ignored, so the install in the worktree could not read it without it "
        "becoming a file to commit there"
    )
    tree = tmp_path / WORKTREE
    assert not (tree / ".npmrc").exists()
    assert (tree / "bunfig.toml").read_text() == "[install]\n"
    assert (tree / ".pnpmfile.cjs").read_text() == "module.exports = {}\n"
    assert json.loads((tree / "package.json").read_text())["dependencies"] == {"alpha": "^1.0.0"}
    assert calls(record) == []
