"""yarn berry's ``.yarnrc.yml`` names a project's registries: ``npmRegistryServer`` for every
package and ``npmScopes`` per scope (with its token), so that project's fetches go there.

Two real registries on 127.0.0.1 (the default one of the yarn project, and a private one that
answers only requests carrying its token); ``npm_config_registry`` points at a third, which
yarn never reads, so a fetch that ignored ``.yarnrc.yml`` would land there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.deps.kit import (
    project,
    registry_file,
    run_cli,
    run_json,
    setup_cli,
)
from fixtures.deps.loopback import LoopbackRegistry

TOKEN = "yarn_s3cr3t-T0KEN-c41d"


@pytest.fixture
def default() -> Iterator[LoopbackRegistry]:
    with LoopbackRegistry() as registry:
        yield registry


@pytest.fixture
def elsewhere() -> Iterator[LoopbackRegistry]:
    with LoopbackRegistry(root=Path("/nonexistent")) as registry:
        yield registry


@pytest.fixture
def berry(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    default: LoopbackRegistry,
    private: LoopbackRegistry,
    elsewhere: LoopbackRegistry,
) -> Path:
    setup_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("npm_config_registry", elsewhere.url)
    monkeypatch.setenv("YARN_PRIVATE_TOKEN", TOKEN)
    shop = project(
        tmp_path / "shop",
        {
            "package.json": {
                "name": "shop",
                "packageManager": "yarn@4.1.0",
                "dependencies": {"@private/widget": "^1.0.0", "alpha": "^1.0.0"},
            },
            "yarn.lock": "__metadata:\n  version: 8\n",
            ".yarnrc.yml": (
                f'npmRegistryServer: "{default.url}"\n'
                "npmScopes:\n"
                "  private:\n"
                f'    npmRegistryServer: "{private.url}"\n'
                '    npmAuthToken: "${YARN_PRIVATE_TOKEN}"\n'
            ),
        },
    )
    return registry_file(tmp_path / "projects.json", {"shop": shop})


def test_yarnrc_registries_route_the_projects_fetches(
    berry: Path,
    default: LoopbackRegistry,
    private: LoopbackRegistry,
    elsewhere: LoopbackRegistry,
) -> None:
    code, doc = run_json("deps", "plan", "--level", "minor", "--registry", str(berry))
    assert code == 0
    targets = {p["name"]: p["occurrences"][0]["effective_target"] for p in doc["packages"]}
    assert targets["@private/widget"] == "^1.4.0"
    assert targets["alpha"].startswith("^1.")
    assert doc["warnings"] == []
    assert default.counts["/alpha"] == 1
    assert [path for path in default.counts if "widget" in path] == []
    assert sum(n for path, n in private.counts.items() if "widget" in path) == 1
    assert f"Bearer {TOKEN}" in private.authorizations
    assert elsewhere.total == 0


def test_the_yarnrc_token_never_shows(berry: Path) -> None:
    texts = []
    for extra in ((), ("--json",)):
        _, out, err = run_cli("deps", "plan", "--level", "minor", "--registry", str(berry), *extra)
        texts += [out, err]
    assert not [t for t in texts if "T0KEN" in t]


def test_the_home_yarnrc_routes_a_yarn_berry_project_without_its_own(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    default: LoopbackRegistry,
    private: LoopbackRegistry,
    elsewhere: LoopbackRegistry,
) -> None:
    """yarn berry layers ``~/.yarnrc.yml`` under the project's files; an npm project in the
    same run never reads it (its fetches go where npm's settings say)."""
    setup_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("npm_config_registry", elsewhere.url)
    monkeypatch.setenv("YARN_PRIVATE_TOKEN", TOKEN)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".yarnrc.yml").write_text(
        f'npmRegistryServer: "{default.url}"\n'
        "npmScopes:\n  private:\n"
        f'    npmRegistryServer: "{private.url}"\n'
        '    npmAuthToken: "${YARN_PRIVATE_TOKEN}"\n'
    )
    monkeypatch.setenv("HOME", str(home))
    deps = {"@private/widget": "^1.0.0", "alpha": "^1.0.0"}
    shop = project(
        tmp_path / "shop",
        {
            "package.json": {"name": "shop", "packageManager": "yarn@4.1.0", "dependencies": deps},
            "yarn.lock": "__metadata:\n  version: 8\n",
        },
    )
    plain = project(
        tmp_path / "plain",
        {"package.json": {"name": "plain", "dependencies": {"alpha": "^1.0.0"}}},
    )
    registry = registry_file(tmp_path / "projects.json", {"shop": shop})
    code, doc = run_json("deps", "plan", "--level", "minor", "--registry", str(registry))
    assert code == 0, doc
    targets = {p["name"]: p["occurrences"][0]["effective_target"] for p in doc["packages"]}
    assert targets["@private/widget"] == "^1.4.0"
    assert f"Bearer {TOKEN}" in private.authorizations
    assert default.counts["/alpha"] == 1 and elsewhere.total == 0
    npm_only = registry_file(tmp_path / "npm-projects.json", {"plain": plain})
    run_json("deps", "plan", "--level", "minor", "--registry", str(npm_only))
    assert elsewhere.total >= 1 and default.counts["/alpha"] == 1
