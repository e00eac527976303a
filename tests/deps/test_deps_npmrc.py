"""Each project's own ``.npmrc`` (and the user's): scoped registries and credentials, so a
private package is planned instead of "could not fetch", and no credential ever shows.

Two real registries on 127.0.0.1: the public fixture one and a private one that answers only
requests carrying its token.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.deps.kit import (
    PRIVATE_WIDGET,
    project,
    registry_file,
    run_cli,
    run_json,
    setup_cli,
)
from fixtures.deps.loopback import LoopbackRegistry

TOKEN = "npm_s3cr3t-T0KEN-7f3a9c"  # from the environment, through ${PRIVATE_TOKEN}
USER_TOKEN = "npm_us3r-T0KEN-51be02"  # written in the user's own .npmrc
WIDGET = PRIVATE_WIDGET


@pytest.fixture
def public() -> Iterator[LoopbackRegistry]:
    with LoopbackRegistry() as registry:
        yield registry


@pytest.fixture
def private_user() -> Iterator[LoopbackRegistry]:
    packuments = {"@private/widget": WIDGET}
    with LoopbackRegistry(packuments=packuments, token=USER_TOKEN) as registry:
        yield registry


def manifest(name: str) -> dict[str, object]:
    return {"name": name, "dependencies": {"@private/widget": "^1.0.0", "alpha": "^1.0.0"}}


@pytest.fixture
def world(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    public: LoopbackRegistry,
    private: LoopbackRegistry,
    private_user: LoopbackRegistry,
) -> Path:
    setup_cli(monkeypatch, tmp_path)
    monkeypatch.setenv("npm_config_registry", public.url)
    monkeypatch.setenv("PRIVATE_TOKEN", TOKEN)
    # The user's .npmrc holds the second registry's token; "shop" names only its scope.
    user = tmp_path / "user-npmrc"
    host = private_user.url.removeprefix("http:")
    user.write_text(f"{host}/:_authToken={USER_TOKEN}\n")
    monkeypatch.setenv("npm_config_userconfig", str(user))
    web = project(
        tmp_path / "web",
        {
            "package.json": manifest("web"),
            ".npmrc": f"@private:registry={private.url}/\n"
            f"{private.url.removeprefix('http:')}/:_authToken=${{PRIVATE_TOKEN}}\n",
        },
    )
    shop = project(
        tmp_path / "shop",
        {"package.json": manifest("shop"), ".npmrc": f"@private:registry={private_user.url}/\n"},
    )
    bare = project(tmp_path / "bare", {"package.json": manifest("bare")})
    return registry_file(tmp_path / "projects.json", {"web": web, "shop": shop, "bare": bare})


def test_private_packages_are_planned_per_project(
    world: Path, private: LoopbackRegistry, private_user: LoopbackRegistry
) -> None:
    code, doc = run_json("deps", "plan", "--level", "minor", "--registry", str(world))
    assert code == 0
    widget = next(p for p in doc["packages"] if p["name"] == "@private/widget")
    assert {o["project_name"]: o["effective_target"] for o in widget["occurrences"]} == {
        "web": "^1.4.0",
        "shop": "^1.4.0",
    }
    # "bare" has no scope mapping: the public registry does not know the package.
    assert any("@private/widget" in w and "bare" in w for w in doc["warnings"])
    assert not any("web" in w or "shop" in w for w in doc["warnings"] if "widget" in w)
    assert f"Bearer {TOKEN}" in private.authorizations
    assert f"Bearer {USER_TOKEN}" in private_user.authorizations


def test_no_credential_appears_anywhere(world: Path, tmp_path: Path) -> None:
    outputs = []
    for action in ("scan", "plan"):
        for extra in ((), ("--json",)):
            outputs.append(
                run_cli("deps", action, "--level", "minor", "--registry", str(world), *extra)
            )
    args = ("--level", "minor", "--registry", str(world), "--plan-dir", str(tmp_path / "plans"))
    apply = ("deps", "apply", *args, "--yes", "--no-install", "--isolate", "none")
    outputs.append(run_cli(*apply))
    assert outputs[-1][0] == 0, outputs[-1]
    web = json.loads((tmp_path / "web" / "package.json").read_text())
    assert web["dependencies"]["@private/widget"] == "^1.4.0"  # planned, then applied
    written = [p for p in (tmp_path / "state").rglob("*") if p.is_file()]
    written += [p for p in (tmp_path / "plans").rglob("*") if p.is_file()]
    assert any(p.name == "cross-project-plan.json" for p in written)
    texts = [text for _, out, err in outputs for text in (out, err)]
    texts += [p.read_text(errors="replace") for p in written]
    for secret in (TOKEN, USER_TOKEN, "T0KEN"):
        assert not [t for t in texts if secret in t]


def test_credentials_follow_npms_prefix_rule_and_never_show(tmp_path: Path) -> None:
    from tether.deps.registries import HttpClient, NpmRegistry, npm_source

    user = tmp_path / "user-npmrc"
    user.write_text(
        "registry=https://r.example.invalid/npm/\n"
        "_authToken=bare-T0KEN\n"
        "//r.example.invalid/npm/private/:_authToken=${DEEP}\n"
        "//other.example.invalid/:_auth=dXNlcjpwYXNz\n"
        "//unset.example.invalid/:_authToken=${NOT_SET}\n"
    )
    env = {"npm_config_userconfig": str(user), "DEEP": "deep-T0KEN"}
    source = npm_source(None, env, tmp_path, HttpClient())
    assert isinstance(source, NpmRegistry)
    assert source.authorization("https://r.example.invalid/npm/x") == "Bearer bare-T0KEN"
    deep = source.authorization("https://r.example.invalid/npm/private/x")
    assert deep == "Bearer deep-T0KEN"  # the longest prefix wins
    assert source.authorization("https://other.example.invalid/y") == "Basic dXNlcjpwYXNz"
    assert source.authorization("https://unset.example.invalid/z") is None
    assert source.authorization("https://elsewhere.example.invalid/z") is None
    shown = repr(source) + source.describe() + source.route("x")
    assert "T0KEN" not in shown and "dXNlcjpwYXNz" not in shown
