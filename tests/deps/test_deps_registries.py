"""Registries behind one interface: HTTP retries and timeouts, 404 as an answer, fixture
directories, registry selection from flags, environment and .npmrc, the PEP 691 shape."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fixtures.deps.kit import NOW, project, registry_file, run_json, setup_cli
from fixtures.deps.loopback import FIXTURES, LoopbackRegistry
from tether.deps.registries import (
    Fetcher,
    FetchError,
    FixtureDir,
    HttpClient,
    NpmRegistry,
    PypiIndex,
    from_simple_json,
    npm_source,
    pypi_source,
)

Script = Callable[[int], tuple[int, bytes, float]]  # request number → status, body, delay


class Scripted:
    """A loopback server whose answers follow a script (for retries and timeouts)."""

    def __init__(self, script: Script) -> None:
        self.calls = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.calls += 1
                status, body, delay = script(owner.calls)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Callable[[Script], Scripted]]:
    made: list[Scripted] = []

    def make(script: Script) -> Scripted:
        made.append(Scripted(script))
        return made[-1]

    yield make
    for server in made:
        server.close()


PACKUMENT = json.dumps(
    {"name": "x", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {}}, "time": {}}
).encode()


def test_retries_server_errors_with_backoff(scripted: Callable[[Script], Scripted]) -> None:
    server = scripted(lambda n: (503, b"busy", 0.0) if n <= 2 else (200, PACKUMENT, 0.0))
    sleeps: list[float] = []
    client = HttpClient(timeout=5, retries=2, backoff=0.25, sleep=sleeps.append)
    info = NpmRegistry(server.url, client).fetch("x")
    assert info is not None and info.latest == "1.0.0"
    assert server.calls == 3 and sleeps == [0.25, 0.5]


def test_gives_up_after_the_retries(scripted: Callable[[Script], Scripted]) -> None:
    server = scripted(lambda n: (500, b"down", 0.0))
    client = HttpClient(timeout=5, retries=1, sleep=lambda s: None)
    with pytest.raises(FetchError, match="HTTP 500"):
        NpmRegistry(server.url, client).fetch("x")
    assert server.calls == 2


def test_timeout_then_success(scripted: Callable[[Script], Scripted]) -> None:
    server = scripted(lambda n: (200, PACKUMENT, 1.0 if n == 1 else 0.0))
    client = HttpClient(timeout=0.2, retries=1, sleep=lambda s: None)
    assert NpmRegistry(server.url, client).fetch("x") is not None
    assert server.calls == 2


def test_not_found_is_an_answer_and_bad_json_an_error(
    scripted: Callable[[Script], Scripted],
) -> None:
    missing = scripted(lambda n: (404, b"{}", 0.0))
    client = HttpClient(retries=3, sleep=lambda s: None)
    assert NpmRegistry(missing.url, client).fetch("x") is None
    assert missing.calls == 1  # a 404 is never retried
    garbage = scripted(lambda n: (200, b"<html>", 0.0))
    with pytest.raises(FetchError, match="not JSON"):
        NpmRegistry(garbage.url, client).fetch("x")


def test_fetcher_reports_errors_per_package(scripted: Callable[[Script], Scripted]) -> None:
    server = scripted(lambda n: (502, b"", 0.0))
    fetcher = Fetcher({"npm": NpmRegistry(server.url, HttpClient(retries=0, sleep=lambda s: None))})
    answer = fetcher.fetch_all([("npm", "x")])[("npm", "x")]
    assert answer.info is None and answer.error is not None and "HTTP 502" in answer.error
    assert "no registry configured" in (
        Fetcher({}).fetch_all([("pypi", "x")])[("pypi", "x")].error or ""
    )


def test_fixture_directories_match_http() -> None:
    with LoopbackRegistry() as registry:
        over_http = NpmRegistry(registry.url).fetch("@scope/util")
        py_http = PypiIndex(registry.url + "/pypi").fetch("requests")
    assert FixtureDir(FIXTURES / "npm", "npm").fetch("@scope/util") == over_http
    assert FixtureDir(FIXTURES / "pypi", "pypi").fetch("requests") == py_http
    assert FixtureDir(FIXTURES / "npm", "npm").fetch("nope") is None


def test_a_simple_index_is_asked_for_its_json_form_and_read_as_the_json_api() -> None:
    """A private index (PEP 691): the page of each package, in JSON; its releases, ages and
    withdrawals read as pypi.org's JSON API gives them (which adds only the newest version)."""
    with LoopbackRegistry() as registry:
        index = pypi_source(None, {"PIP_INDEX_URL": registry.url + "/simple/"}, HttpClient())
        simple = index.fetch("requests")
        missing = index.fetch("nope")
        json_api = PypiIndex(registry.url + "/pypi").fetch("requests")
    assert simple is not None and json_api is not None and missing is None
    assert {r.version: (r.published, r.withdrawn) for r in simple.releases} == {
        r.version: (r.published, r.withdrawn) for r in json_api.releases
    }
    assert any(r.withdrawn for r in simple.releases)  # the fixture's yanked 2.32.0
    assert registry.counts["/simple/requests/"] == 1


def test_registry_selection(tmp_path: Path) -> None:
    client = HttpClient()
    user = tmp_path / "user-npmrc"
    user.write_text("registry=https://user.example.invalid/\n@acme:registry=${ACME_URL}\n")
    (tmp_path / ".npmrc").write_text("; project\nregistry = https://project.example.invalid/\n")
    env = {"npm_config_userconfig": str(user), "ACME_URL": "https://acme.example.invalid/"}
    source = npm_source(None, env, tmp_path, client)
    assert isinstance(source, NpmRegistry)
    assert source.base == "https://project.example.invalid/"  # the project's .npmrc wins
    assert source.url_for("@acme/tool") == "https://acme.example.invalid/@acme%2Ftool"
    env["npm_config_registry"] = "https://env.example.invalid/"
    assert npm_source(None, env, tmp_path, client).describe() == "https://env.example.invalid/"
    flag = npm_source("https://flag.example.invalid/", env, tmp_path, client)
    assert flag.describe() == "https://flag.example.invalid/"
    npm_folder = FixtureDir(FIXTURES / "npm", "npm")
    assert npm_source(str(FIXTURES / "npm"), env, tmp_path, client) == npm_folder
    json_api = PypiIndex("https://pypi.org/pypi", client)
    assert pypi_source(None, {}, client) == json_api
    assert pypi_source(None, {"PIP_INDEX_URL": "https://pypi.org/simple"}, client) == json_api
    private = pypi_source(None, {"PIP_INDEX_URL": "https://pkgs.example.invalid/simple/"}, client)
    assert private == PypiIndex("https://pkgs.example.invalid/simple/", client, simple=True)
    assert pypi_source(str(FIXTURES / "pypi"), {}, client) == FixtureDir(FIXTURES / "pypi", "pypi")


def test_simple_api_shape() -> None:
    doc = {
        "name": "demo",
        "versions": ["1.0.0", "1.1.0", "2.0.0"],
        "files": [
            {"filename": "demo-1.0.0.tar.gz", "upload-time": "2024-01-01T00:00:00Z"},
            {
                "filename": "demo-1.1.0-py3-none-any.whl",
                "upload-time": "2024-02-01T00:00:00Z",
                "yanked": "broken",
            },
            {
                "filename": "demo-1.1.0.tar.gz",
                "upload-time": "2024-02-01T00:00:00Z",
                "yanked": True,
            },
        ],
    }
    info = from_simple_json("demo", doc)
    releases = {r.version: r for r in info.releases}
    assert releases["1.0.0"].published is not None and not releases["1.0.0"].withdrawn
    assert releases["1.1.0"].withdrawn
    assert releases["2.0.0"].published is None  # listed without files: no age


def test_scan_from_fixture_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Air-gapped: the same fixture JSON as directories, no server at all.
    setup_cli(monkeypatch, tmp_path)
    root = project(
        tmp_path / "p",
        {
            "package.json": {"dependencies": {"alpha": "^1.0.0"}},
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["django==4.2.0"]\n',
        },
    )
    reg = registry_file(tmp_path / "projects.json", {"p": root})
    code, doc = run_json(
        "deps",
        "scan",
        "--level",
        "patch",
        "--registry",
        str(reg),
        "--npm-registry",
        str(FIXTURES / "npm"),
        "--pypi-index",
        str(FIXTURES / "pypi"),
    )
    assert code == 0
    targets = {d["name"]: d["target_version"] for d in doc["projects"][0]["dependencies"]}
    assert targets == {"alpha": "^1.0.5", "django": "==4.2.16"}
    assert NOW.year == 2025


def test_proxy_variables_are_read_at_each_request(
    scripted: Callable[[Script], Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that fetched once through a proxy (here a closed loopback port) fetches
    directly once the variables are gone: nothing keeps the first request's proxies."""
    server = scripted(lambda n: (200, PACKUMENT, 0.0))
    client = HttpClient(timeout=5, retries=0, sleep=lambda s: None)
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("http_proxy", closed)
    monkeypatch.setenv("HTTP_PROXY", closed)
    with pytest.raises(FetchError):
        NpmRegistry(server.url, client).fetch("x")
    assert server.calls == 0  # the request went to the proxy
    monkeypatch.delenv("http_proxy")
    monkeypatch.delenv("HTTP_PROXY")
    info = NpmRegistry(server.url, client).fetch("x")
    assert info is not None and server.calls == 1
