"""``--level engines`` beyond the manifests: Dockerfiles, GitHub workflows (setup-node),
``.gitlab-ci.yml`` images, ``mise.toml``, ``devEngines`` and ``.bun-version``. Simple pins are
rewritten in place, keeping what follows the version; matrices, expressions, aliases, digests
and lists are listed as "left as is" with their file and line, and never touched.

Targets come from the fixtures: Node's newest LTS 22.16.0 (a file index), pnpm 10.11.0 and
bun 1.2.15 from a loopback npm registry on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import FIXTURES, LoopbackRegistry

DOCKERFILE = """\
ARG NODE_VERSION=20.11.1
FROM node:20-alpine AS build
FROM --platform=linux/amd64 node:20.11.1-bookworm-slim
FROM node:${NODE_VERSION}
FROM node:lts-alpine
FROM node:20@sha256:0123abcd
"""
WORKFLOW = """\
jobs:
  test:
    strategy:
      matrix:
        node: [18, 20]
    steps:
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node }}
      - uses: actions/setup-node@v4
        with:
          node-version: '20.x'  # main line
      - uses: actions/setup-node@v4
        with:
          node-version: [18, 20]
"""
GITLAB = """\
test:
  image: node:20.11-alpine
lint:
  image:
    name: "node:18"
"""
MISE = (
    '[env]\nnode = "not a tool"\n[tools]\nnode = "20.11.1"\nbun = ["1.1", "1.0"]\npython = "3.12"\n'
)
PACKAGE = {
    "name": "app",
    "private": True,
    "devEngines": {
        "runtime": {"name": "node", "version": ">=20.0.0"},
        "packageManager": [{"name": "pnpm", "version": "^9.0.0"}],
    },
}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    app = project(
        tmp_path / "app",
        {
            "package.json": PACKAGE,
            "Dockerfile": DOCKERFILE,
            ".github/workflows/ci.yml": WORKFLOW,
            ".gitlab-ci.yml": GITLAB,
            "mise.toml": MISE,
            ".bun-version": "1.1.0\n",
            "node_modules/dep/Dockerfile": "FROM node:16\n",  # never searched
        },
    )
    return registry_file(tmp_path / "projects.json", {"app": app})


def engines(world: Path, server: LoopbackRegistry, action: str, *extra: str) -> list[str]:
    return [
        "deps",
        action,
        "--level",
        "engines",
        "--registry",
        str(world),
        "--npm-registry",
        server.url,
        "--node-index",
        str(FIXTURES / "node-index.json"),
        *extra,
    ]


def test_surfaces_are_planned_and_the_rest_left_as_is(
    world: Path, server: LoopbackRegistry
) -> None:
    code, doc = run_json(*engines(world, server, "plan"))
    assert code == 0
    found = {
        (p["name"], o["source_file"], o["location"]): (o["current_version"], o["effective_target"])
        for p in doc["packages"]
        for o in p["occurrences"]
    }
    assert found == {
        ("node", "Dockerfile", "ARG NODE_VERSION (line 1)"): ("20.11.1", "22.16.0"),
        ("node", "Dockerfile", "FROM node (line 2)"): ("20", "22"),
        ("node", "Dockerfile", "FROM node (line 3)"): ("20.11.1", "22.16.0"),
        ("node", ".github/workflows/ci.yml", "setup-node node-version (line 12)"): ("20", "22"),
        ("node", ".gitlab-ci.yml", "image node (line 2)"): ("20.11", "22.16"),
        ("node", ".gitlab-ci.yml", "image node (line 5)"): ("18", "22"),
        ("node", "mise.toml", "[tools] node (line 4)"): ("20.11.1", "22.16.0"),
        ("node", "package.json", "devEngines.runtime"): (">=20.0.0", ">=22.16.0"),
        ("pnpm", "package.json", "devEngines.packageManager"): ("^9.0.0", "^10.11.0"),
        ("bun", ".bun-version", ".bun-version"): ("1.1.0", "1.2.15"),
    }
    left = {(s["source_file"], s["location"]): s["reason"] for s in doc["skipped"]}
    assert left == {
        ("Dockerfile", "FROM node (line 4)"): "an expression or a variable: left as is",
        ("Dockerfile", "FROM node (line 5)"): "'lts-alpine' is not a plain version: left as is",
        ("Dockerfile", "FROM node (line 6)"): "an image pinned by digest: left as is",
        (".github/workflows/ci.yml", "setup-node node-version (line 9)"): (
            "an expression or a variable: left as is"
        ),
        (".github/workflows/ci.yml", "setup-node node-version (line 15)"): (
            "a list of versions (a matrix): left as is"
        ),
        ("mise.toml", "[tools] bun (line 5)"): "a list of versions (a matrix): left as is",
    }
    assert {s["kind"] for s in doc["skipped"]} == {"left-as-is"}
    # Pins that disagree inside the project are reported, then converged with the rest.
    assert any(
        w.startswith("app: node is pinned differently within the project: ")
        and "18 (.gitlab-ci.yml)" in w
        and w.endswith("each converges to 22.16.0")
        for w in doc["warnings"]
    )

    code, text, _ = run_cli(*engines(world, server, "plan"))
    assert "## Left as is (6)" in text
    assert "- app: node FROM node:${NODE_VERSION} (Dockerfile FROM node (line 4)): " in text


def test_apply_rewrites_only_the_simple_pins(world: Path, server: LoopbackRegistry) -> None:
    app = world.parent / "app"
    code, doc = run_json(*engines(world, server, "apply", "--yes", "--isolate", "none"))
    assert code == 0, doc
    assert (app / "Dockerfile").read_text() == DOCKERFILE.replace(
        "ARG NODE_VERSION=20.11.1", "ARG NODE_VERSION=22.16.0"
    ).replace("node:20-alpine", "node:22-alpine").replace(
        "node:20.11.1-bookworm-slim", "node:22.16.0-bookworm-slim"
    )
    assert (app / ".github/workflows/ci.yml").read_text() == WORKFLOW.replace(
        "'20.x'  # main line", "'22.x'  # main line"
    )
    assert (app / ".gitlab-ci.yml").read_text() == GITLAB.replace(
        "node:20.11-alpine", "node:22.16-alpine"
    ).replace('"node:18"', '"node:22"')
    assert (app / "mise.toml").read_text() == MISE.replace('node = "20.11.1"', 'node = "22.16.0"')
    assert (app / ".bun-version").read_text() == "1.2.15\n"
    manifest = json.loads((app / "package.json").read_text())
    assert manifest["devEngines"]["runtime"]["version"] == ">=22.16.0"
    assert manifest["devEngines"]["packageManager"][0]["version"] == "^10.11.0"
    assert (app / "node_modules/dep/Dockerfile").read_text() == "FROM node:16\n"
    assert len(doc["left_as_is"]) == 6
