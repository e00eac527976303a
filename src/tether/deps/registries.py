"""Package registries behind one interface, and a fetcher that asks each package once.

A source answers ``fetch(name)`` with a ``PackageInfo`` (every version, its publish time,
whether it was withdrawn, the ``latest`` pointer), ``None`` when the registry does not know
the package, or raises ``FetchError`` when it could not be asked. Sources:

* the npm registry over HTTP: the full packument (``versions``, ``dist-tags``, ``time``);
  the abbreviated one lacks publish times, which release-age gating needs;
* PyPI's JSON API (``/pypi/<name>/json``) and, for other indexes, the JSON form of the
  simple API (PEP 691, with PEP 700 upload times);
* fixture directories holding the same JSON shapes, for tests and air-gapped use.

``Fetcher`` deduplicates the packages of a run, fetches them on a bounded thread pool
(the work is waiting on sockets) and keeps the answers for the rest of the run.
"""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from tether import __version__
from tether.deps import pyspec
from tether.deps.model import Ecosystem, PackageInfo, Release
from tether.fsio import read_bytes, read_head
from tether.parselimits import json_loads
from tether.process import map_in_threads
from tether.report.deps import no_registry
from tether.sources.web import BoundExceeded, answer_bounds, read_url

DEFAULT_NPM = "https://registry.npmjs.org/"
DEFAULT_PYPI = "https://pypi.org/pypi"
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 2
# The longest wait between two tries of one request (the waits double from ``backoff``).
MAX_BACKOFF = 30.0
DEFAULT_JOBS = 8
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


class FetchError(Exception):
    """The registry could not be asked (network, timeout, server error, bad JSON)."""


class Source(Protocol):
    ecosystem: Ecosystem

    def describe(self) -> str: ...
    def fetch(self, name: str) -> PackageInfo | None: ...


def route_of(source: Source, name: str) -> str:
    """Where ``source`` asks for ``name``: two projects whose sources route a package the
    same way share one fetch. A source may say it more exactly (``route``)."""
    route = getattr(source, "route", None)
    return str(route(name)) if callable(route) else f"{source.describe()}\0{name}"


# --- parsing the registries' own shapes --------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def from_packument(name: str, doc: Any) -> PackageInfo:
    if not isinstance(doc, dict):
        raise FetchError(f"{name}: the packument is not a JSON object")
    versions = doc.get("versions") or {}
    versions = versions if isinstance(versions, dict) else {}
    times = doc.get("time") or {}
    tags = doc.get("dist-tags") or {}
    releases = tuple(
        _npm_release(version, meta, times.get(version) if isinstance(times, dict) else None)
        for version, meta in versions.items()
    )
    latest = tags.get("latest") if isinstance(tags, dict) else None
    latest = latest if isinstance(latest, str) else None
    newest = versions.get(latest) if latest else None
    url, directory = _repository(doc.get("repository"))
    if url is None and isinstance(newest, dict):
        url, directory = _repository(newest.get("repository"))
    return PackageInfo("npm", name, releases, latest, url, directory)


_NO_PEERS: tuple[str, ...] = ()


def _npm_release(version: str, meta: Any, published: Any) -> Release:
    if not isinstance(meta, dict):
        return Release(version, parse_time(published))
    deprecated = meta.get("deprecated")
    peers = meta.get("peerDependencies")
    return Release(
        version,
        parse_time(published),
        bool(deprecated),
        deprecated if isinstance(deprecated, str) else "",
        tuple(peers) if isinstance(peers, dict) and peers else _NO_PEERS,
    )


def _repository(value: Any) -> tuple[str | None, str | None]:
    """npm's ``repository``: a string (a URL or a ``github:o/r`` / ``o/r`` shorthand) or
    ``{type, url, directory}``."""
    if isinstance(value, str) and value:
        return value, None
    if isinstance(value, dict) and isinstance(value.get("url"), str) and value["url"]:
        directory = value.get("directory")
        return value["url"], directory if isinstance(directory, str) and directory else None
    return None, None


# The project_urls labels PyPI packages name their source repository with, most telling first.
_PYPI_SOURCE_LABELS = ("source", "source code", "repository", "code", "github", "homepage")


def _pypi_repository(info: Any) -> str | None:
    if not isinstance(info, dict):
        return None
    urls = info.get("project_urls")
    labelled = {str(k).lower(): v for k, v in urls.items()} if isinstance(urls, dict) else {}
    for label in _PYPI_SOURCE_LABELS:
        url = labelled.get(label)
        if isinstance(url, str) and url:
            return url
    home = info.get("home_page")
    return home if isinstance(home, str) and home else None


def from_pypi_json(name: str, doc: Any) -> PackageInfo:
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), dict):
        raise FetchError(f"{name}: the JSON API answer has no releases")
    releases = []
    for version, files in doc["releases"].items():
        files = [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
        times = [parse_time(f.get("upload_time_iso_8601") or f.get("upload_time")) for f in files]
        known = [t for t in times if t is not None]
        # A release whose every file was yanked is withdrawn; one without files has no age.
        yanked = bool(files) and all(bool(f.get("yanked")) for f in files)
        reasons = [f["yanked_reason"] for f in files if isinstance(f.get("yanked_reason"), str)]
        note = reasons[0] if yanked and reasons else ""
        releases.append(Release(version, min(known) if known else None, yanked, note))
    info = doc.get("info") or {}
    latest = info.get("version") if isinstance(info, dict) else None
    latest = latest if isinstance(latest, str) else None
    return PackageInfo("pypi", name, tuple(releases), latest, _pypi_repository(info))


def from_simple_json(name: str, doc: Any) -> PackageInfo:
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )

    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise FetchError(f"{name}: the simple API answer has no files")
    seen: dict[str, list[tuple[datetime | None, bool]]] = {
        str(v): [] for v in doc.get("versions") or []
    }
    for entry in doc["files"]:
        filename = str(entry.get("filename", ""))
        try:
            if filename.endswith(".whl"):
                version = str(parse_wheel_filename(filename)[1])
            else:
                version = str(parse_sdist_filename(filename)[1])
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        seen.setdefault(version, []).append(
            (parse_time(entry.get("upload-time")), bool(entry.get("yanked")))
        )
    releases = []
    for version, files in seen.items():
        known = [t for t, _ in files if t is not None]
        yanked = bool(files) and all(y for _, y in files)
        releases.append(Release(version, min(known) if known else None, yanked))
    return PackageInfo("pypi", name, tuple(releases), None)


# --- HTTP --------------------------------------------------------------------------------


@dataclass
class HttpClient:
    """GET a JSON document with a timeout and retries; 404 is an answer (None)."""

    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = 0.5
    sleep: Callable[[float], None] = time.sleep

    def get_json(
        self, url: str, accept: str = "application/json", authorization: str | None = None
    ) -> Any | None:
        request = urllib.request.Request(
            url, headers={"Accept": accept, "User-Agent": f"tether/{__version__}"}
        )
        if authorization is not None:
            # Unredirected: a registry redirecting elsewhere never hands the token on.
            request.add_unredirected_header("Authorization", authorization)
        bounds = answer_bounds(self.timeout)
        for attempt in range(self.retries + 1):
            try:
                body = read_url(request, bounds)
                break
            except BoundExceeded as error:  # asking again would only take as long again
                raise FetchError(f"{url}: {error}") from None
            except urllib.error.HTTPError as error:
                if error.code == 404:
                    return None
                if error.code not in _RETRY_STATUS or attempt == self.retries:
                    raise FetchError(f"{url}: HTTP {error.code}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                if attempt == self.retries:
                    reason = getattr(error, "reason", error)
                    raise FetchError(f"{url}: {reason}") from None
            # Exponential backoff: a registry shedding load gets room to recover.
            self.sleep(min(MAX_BACKOFF, self.backoff * (2**attempt)))
        try:
            return json_loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise FetchError(f"{url}: the answer is not JSON") from None


def npm_package_url(base: str, name: str) -> str:
    # A scoped name travels as one path segment: @scope%2fname.
    return base.rstrip("/") + "/" + urllib.parse.quote(name, safe="@")


@dataclass
class NpmRegistry:
    base: str
    client: HttpClient = field(default_factory=HttpClient)
    scopes: Mapping[str, str] = field(default_factory=dict)
    ecosystem: Ecosystem = "npm"
    # ``//host/path/`` → the Authorization value for requests under it. Never shown:
    # kept out of repr, descriptions, errors and routes.
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)

    def describe(self) -> str:
        return self.base

    def url_for(self, name: str) -> str:
        scope = name.split("/", 1)[0] if name.startswith("@") else ""
        return npm_package_url(self.scopes.get(scope, self.base), name)

    def authorization(self, url: str) -> str | None:
        """npm's rule: the credential whose ``//host/path/`` is the longest prefix of the URL."""
        bare = "//" + url.split("://", 1)[-1]
        matches = [key for key in self.credentials if bare.startswith(key)]
        return self.credentials[max(matches, key=len)] if matches else None

    def route(self, name: str) -> str:
        # Whether a credential is sent is part of the route (a private answer is never
        # shared with a project that has no token), the credential itself is not.
        url = self.url_for(name)
        return f"{url}\0{'auth' if self.authorization(url) else 'anonymous'}"

    def fetch(self, name: str) -> PackageInfo | None:
        url = self.url_for(name)
        doc = self.client.get_json(url, authorization=self.authorization(url))
        return None if doc is None else from_packument(name, doc)


@dataclass
class PypiIndex:
    """A PyPI index over HTTP: pypi.org's JSON API (``<base>/<name>/json``), or with
    ``simple`` a PEP 691 simple index (``<base>/<name>/``, asked for its JSON form)."""

    base: str
    client: HttpClient = field(default_factory=HttpClient)
    simple: bool = False
    ecosystem: Ecosystem = "pypi"

    def describe(self) -> str:
        return self.base

    def fetch(self, name: str) -> PackageInfo | None:
        page = f"{self.base.rstrip('/')}/{urllib.parse.quote(name)}/"
        if self.simple:
            doc = self.client.get_json(page, accept=_SIMPLE_JSON)
            return None if doc is None else from_simple_json(name, doc)
        doc = self.client.get_json(page + "json")
        return None if doc is None else from_pypi_json(name, doc)


# --- fixture directories -----------------------------------------------------------------


@dataclass
class FixtureDir:
    """A folder of JSON documents, one per package, standing in for a registry: npm's as
    ``<name>.json`` packuments (a scoped one as ``@scope/name.json``), PyPI's as
    ``<canonical-name>.json`` in its JSON API's shape."""

    root: Path
    ecosystem: Ecosystem

    def describe(self) -> str:
        return str(self.root)

    def fetch(self, name: str) -> PackageInfo | None:
        if self.ecosystem == "npm":
            doc = _read_fixture(self.root / f"{name}.json")
            return None if doc is None else from_packument(name, doc)
        doc = _read_fixture(self.root / f"{pyspec.canonical(name)}.json")
        return None if doc is None else from_pypi_json(name, doc)


def _read_fixture(path: Path) -> Any | None:
    try:
        return json_loads(read_bytes(path))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FetchError(f"{path}: {error}") from None


# --- which registry ----------------------------------------------------------------------


def _local_dir(location: str) -> Path | None:
    if location.startswith("file:"):
        return Path(urllib.parse.urlparse(location).path)
    if "://" not in location and Path(location).expanduser().is_dir():
        return Path(location).expanduser()
    return None


def read_npmrc(paths: Iterable[Path], env: Mapping[str, str]) -> dict[str, str]:
    """Every ``key=value`` setting, ``${VAR}`` expanded; later files win, like npm's layers.
    Values may be credentials: callers keep them to themselves."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            text = read_bytes(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith(("#", ";")) or "=" not in line:
                continue
            key, _, value = (part.strip() for part in line.partition("="))
            found[_expand(key, env)] = _expand(value.strip("\"'"), env)
    return found


def _expand(value: str, env: Mapping[str, str]) -> str:
    return re.sub(r"\$\{([^}]+)\}", lambda m: env.get(m.group(1), ""), value)


def user_npmrc(env: Mapping[str, str]) -> Path:
    return Path(env.get("npm_config_userconfig") or Path.home() / ".npmrc")


def npmrc_settings(env: Mapping[str, str], folders: Sequence[Path]) -> dict[str, str]:
    """The user's ``.npmrc`` under each folder's (outermost first: a workspace root, then the
    project), as npm layers them."""
    return read_npmrc([user_npmrc(env), *(folder / ".npmrc" for folder in folders)], env)


def npm_source(
    flag: str | None,
    env: Mapping[str, str],
    cwd: Path,
    client: HttpClient,
    folders: Sequence[Path] | None = None,
) -> Source:
    """``--npm-registry`` > ``npm_config_registry`` > ``.npmrc`` (project, then user), with the
    ``.npmrc`` files' scoped registries and credentials. ``folders``: where a project's own
    ``.npmrc`` files are (default: ``cwd``)."""
    own = [cwd] if folders is None else folders
    settings = npmrc_settings(env, own)
    yarn = yarnrc_registries(env, own)
    location = (
        flag
        or yarn.server
        or env.get("npm_config_registry")
        or env.get("NPM_CONFIG_REGISTRY")
        or settings.get("registry")
        or DEFAULT_NPM
    )
    local = _local_dir(location)
    if local is not None:
        return FixtureDir(local, "npm")
    scopes = {
        key.removesuffix(":registry"): value
        for key, value in settings.items()
        if key.startswith("@") and key.endswith(":registry") and not flag
    }
    if not flag:
        scopes.update(yarn.scopes)
    credentials = {**_credentials(settings, location), **yarn.credentials(location)}
    return NpmRegistry(location, client, scopes, credentials=credentials)


@dataclass
class YarnRegistries:
    """What yarn berry's ``.yarnrc.yml`` files say about registries: ``npmRegistryServer``,
    ``npmScopes.<scope>.npmRegistryServer`` and the tokens (``npmAuthToken``/``npmAuthIdent``
    at the top, per scope and per ``npmRegistries`` URL). Tokens stay in here."""

    server: str | None = None
    scopes: dict[str, str] = field(default_factory=dict)  # "@scope" → registry URL
    auth: dict[str, str] = field(default_factory=dict, repr=False)  # URL ("" = default) → value
    scope_auth: dict[str, str] = field(default_factory=dict, repr=False)

    def credentials(self, default: str) -> dict[str, str]:
        found = {_auth_prefix(url or default): value for url, value in self.auth.items()}
        for scope, value in self.scope_auth.items():
            found[_auth_prefix(self.scopes.get(scope) or default)] = value
        return found


def _auth_prefix(url: str) -> str:
    return "//" + url.split("://", 1)[-1].rstrip("/") + "/"


def home_yarnrc(env: Mapping[str, str], folders: Sequence[Path]) -> Path | None:
    """The user's ``~/.yarnrc.yml`` when the project in ``folders`` is a yarn berry project
    (yarn 2+ layers it under the project's own files; npm, pnpm, Bun and yarn 1 never read
    it) and the file exists."""
    home = env.get("HOME")
    if not home or not any(_is_yarn_berry(folder) for folder in folders):
        return None
    path = Path(home) / ".yarnrc.yml"
    return path if path.is_file() else None


def _is_yarn_berry(folder: Path) -> bool:
    """A ``.yarnrc.yml`` (yarn 1 reads ``.yarnrc``), a ``yarn.lock`` in berry's format, or a
    ``packageManager`` of yarn 2 or later."""
    if (folder / ".yarnrc.yml").is_file():
        return True
    try:
        if b"__metadata:" in read_head(folder / "yarn.lock", 512):
            return True
    except OSError:  # absent, a folder, a FIFO: not a lockfile yarn berry wrote
        pass
    try:
        manifest = json_loads(read_bytes(folder / "package.json"))
    except (OSError, ValueError):  # the project's scan reports a bad package.json
        return False
    wanted = manifest.get("packageManager") if isinstance(manifest, dict) else None
    match = re.match(r"yarn@(\d+)", wanted) if isinstance(wanted, str) else None
    return match is not None and int(match[1]) >= 2


def yarnrc_registries(env: Mapping[str, str], folders: Sequence[Path]) -> YarnRegistries:
    """Each folder's ``.yarnrc.yml`` (outermost first, the inner one wins per setting), under
    the user's ``~/.yarnrc.yml`` for a yarn berry project.

    An unreadable or malformed file adds nothing here: the project's scan reads the same file
    and reports it."""
    found = YarnRegistries()
    home = home_yarnrc(env, folders)
    layers = [home] if home is not None else []
    for path in [*layers, *(folder / ".yarnrc.yml" for folder in folders)]:
        doc = _yarnrc(path)
        server = _yarn_text(doc.get("npmRegistryServer"), env)
        found.server = server or found.server
        _yarn_token(found.auth, "", doc, env)
        for url, entry in _mapping(doc.get("npmRegistries")).items():
            _yarn_token(found.auth, _yarn_text(url, env) or "", _mapping(entry), env)
        for scope, entry in _mapping(doc.get("npmScopes")).items():
            name = "@" + str(scope).lstrip("@")
            scoped = _yarn_text(_mapping(entry).get("npmRegistryServer"), env)
            if scoped:
                found.scopes[name] = scoped
            _yarn_token(found.scope_auth, name, _mapping(entry), env)
    return found


def _yarnrc(path: Path) -> dict[str, Any]:
    from tether.engine.structured.formats import ParseProblem, decode, parse

    try:
        doc = parse("yaml", decode(read_bytes(path)).body)
    except (OSError, ParseProblem):
        return {}
    return _mapping(doc)


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _yarn_text(value: Any, env: Mapping[str, str]) -> str | None:
    """A string setting with yarn's ``${VAR}`` and ``${VAR:-fallback}`` expanded."""
    if not isinstance(value, str) or not value:
        return None
    expanded = re.sub(
        r"\$\{([^}:]+)(?::-([^}]*))?\}",
        lambda m: env.get(m.group(1)) or (m.group(2) or ""),
        value,
    )
    return expanded or None


def _yarn_token(
    into: dict[str, str], key: str, doc: Mapping[str, Any], env: Mapping[str, str]
) -> None:
    token = _yarn_text(doc.get("npmAuthToken"), env)
    ident = _yarn_text(doc.get("npmAuthIdent"), env)
    if token:
        into[key] = f"Bearer {token}"
    elif ident:
        basic = base64.b64encode(ident.encode()).decode() if ":" in ident else ident
        into[key] = f"Basic {basic}"


def _credentials(settings: Mapping[str, str], default: str) -> dict[str, str]:
    """``//host/path/:_authToken`` (Bearer) and ``//host/path/:_auth`` (Basic) by prefix; a
    bare ``_authToken`` belongs to the default registry, as older npm read it."""
    found: dict[str, str] = {}
    for key, value in settings.items():
        if not value:
            continue  # an unset ${VAR}: no credential rather than an empty one
        prefix, _, kind = key.rpartition(":")
        if not prefix.startswith("//"):
            continue
        if kind == "_authToken":
            found[prefix] = f"Bearer {value}"
        elif kind == "_auth":
            found.setdefault(prefix, f"Basic {value}")
    bare = settings.get("_authToken")
    if bare:
        found.setdefault("//" + default.split("://", 1)[-1], f"Bearer {bare}")
    return found


def pypi_source(flag: str | None, env: Mapping[str, str], client: HttpClient) -> Source:
    """``--pypi-index`` > ``PIP_INDEX_URL`` > pypi.org's JSON API."""
    location = flag or env.get("PIP_INDEX_URL") or DEFAULT_PYPI
    local = _local_dir(location)
    if local is not None:
        return FixtureDir(local, "pypi")
    parsed = urllib.parse.urlparse(location)
    if parsed.path.rstrip("/").endswith("/simple"):
        if parsed.hostname == "pypi.org":
            return PypiIndex(DEFAULT_PYPI, client)
        return PypiIndex(location, client, simple=True)
    return PypiIndex(location, client)


# --- fetching once -----------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    info: PackageInfo | None = None
    error: str | None = None

    @property
    def unknown(self) -> bool:
        return self.info is None and self.error is None


Key = tuple[Ecosystem, str]


# The sources one project asks, from the folders its own configuration lives in.
ProjectSources = Callable[[Sequence[Path]], Mapping[Ecosystem, Source]]


class Fetcher:
    """Fetch packages on at most ``jobs`` threads; each package once per run (``dedupe``).

    Projects may route a package differently (their own ``.npmrc``): the answers are kept by
    route, so a package every project routes the same way is still fetched once.
    ``dedupe=False`` asks once per occurrence instead, which only the benchmark wants.
    """

    def __init__(
        self,
        sources: Mapping[Ecosystem, Source],
        jobs: int = DEFAULT_JOBS,
        dedupe: bool = True,
        project_sources: ProjectSources | None = None,
    ) -> None:
        self.sources = dict(sources)
        self.jobs = max(1, jobs)
        self.dedupe = dedupe
        self.project_sources = project_sources
        self.answers: dict[tuple[Key, str], Answer] = {}

    def sources_for(self, folders: Sequence[Path]) -> dict[Ecosystem, Source]:
        own = self.project_sources(folders) if self.project_sources else {}
        return {**self.sources, **own}

    def fetch_all(self, keys: Sequence[Key]) -> dict[Key, Answer]:
        asked = self.fetch_routed([(self.sources, key) for key in keys])
        return {key: asked[i] for i, key in enumerate(keys)}

    def fetch_routed(
        self, requests: Sequence[tuple[Mapping[Ecosystem, Source], Key]]
    ) -> list[Answer]:
        """Each request's answer, in order: a key asked of the given sources."""
        routed = [(self._route(sources, key), sources, key) for sources, key in requests]
        todo: dict[tuple[Key, str], tuple[Source | None, Key]] = {}
        fresh: list[Answer] = []
        if self.dedupe:
            for route, sources, key in routed:
                if route not in self.answers:
                    todo.setdefault(route, (sources.get(key[0]), key))
        else:
            fresh = self._run([(sources.get(key[0]), key) for _, sources, key in routed])
        for route, answer in zip(todo, self._run(list(todo.values())), strict=True):
            self.answers[route] = answer
        return fresh if not self.dedupe else [self.answers[route] for route, _, _ in routed]

    def _route(self, sources: Mapping[Ecosystem, Source], key: Key) -> tuple[Key, str]:
        source = sources.get(key[0])
        return key, route_of(source, key[1]) if source is not None else ""

    def _run(self, asks: list[tuple[Source | None, Key]]) -> list[Answer]:
        if not asks:
            return []
        return map_in_threads(lambda ask: _ask(*ask), asks, self.jobs)


def _ask(source: Source | None, key: Key) -> Answer:
    ecosystem, name = key
    if source is None:
        return Answer(error=no_registry(ecosystem))
    try:
        return Answer(info=source.fetch(name))
    except FetchError as error:
        return Answer(error=str(error))
