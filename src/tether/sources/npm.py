"""Releases published to an npm registry: ``npm:<package>`` or ``npm:<package>@<version>``.

The registry is npm's own setting (``npm_config_registry``, else ``NPM_CONFIG_REGISTRY``,
else the public registry). The package document (the packument) lists the versions and,
per version, its tarball URL and digest (``dist.integrity``, else ``dist.shasum``); the
tarball is downloaded, checked against that digest, and extracted (its one top folder,
``package/``, stripped) into the tree cache, so each version is fetched once.

A spec that names a version (``npm:get-shit-done-cc@1.37.1``) offers that version only.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import cannot_read, read_regular
from tether.model.source_notes import SourceNote
from tether.parselimits import json_loads
from tether.sources.common import asked_version, match_version, not_found
from tether.sources.extract import extract_tar_safely
from tether.sources.protocol import ReleaseTree
from tether.sources.release_cache import TreeCache, source_key
from tether.versions import parse_version, sort_versions

PREFIX = "npm:"
DEFAULT_REGISTRY = "https://registry.npmjs.org/"
REGISTRY_VARIABLES = ("npm_config_registry", "NPM_CONFIG_REGISTRY")

# npm's rule for package names: an optional @scope/, then url-safe lower-case characters.
_NAME = re.compile(r"(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``npm:<package>[@<version>]`` → (package, version or None); TetherError otherwise."""
    text = spec.strip().removeprefix(PREFIX)
    at = text.rfind("@")
    name, version = (text[:at], text[at + 1 :]) if at > 0 else (text, None)
    if not _NAME.fullmatch(name) or (version is not None and parse_version(version) is None):
        raise TetherError(
            f"source {spec!r}: expected npm:<package> or npm:<package>@<version> "
            "(e.g. npm:get-shit-done-cc@1.37.1)"
        )
    return name, version


def pinned_version(spec: str) -> str | None:
    """The version an ``npm:<package>@<version>`` spec names; None for any other spec."""
    if not spec.strip().startswith(PREFIX):
        return None
    return parse_spec(spec)[1]


def registry_url(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    for name in REGISTRY_VARIABLES:
        if env.get(name):
            return env[name]
    return DEFAULT_REGISTRY


class NpmSource:
    """One package of an npm registry, read over HTTP(S)."""

    def __init__(self, spec: str, cache_dir: Path, max_entry_bytes: int) -> None:
        self.spec = spec
        self.notes: list[SourceNote] = []
        self.package, self.pinned = parse_spec(spec)
        self.registry = registry_url()
        scheme = urllib.parse.urlsplit(self.registry).scheme
        if scheme not in ("http", "https"):
            raise TetherError(f"npm registry {self.registry!r}: expected an http(s) URL")
        self.cache = TreeCache(cache_dir, source_key("npm", f"{self.registry}\0{self.package}"))
        self.max_entry_bytes = max_entry_bytes
        self._versions: dict[str, Any] | None = None

    def _packument_url(self) -> str:
        # A scoped name keeps its @ and has its slash encoded, as npm asks for it.
        return self.registry.rstrip("/") + "/" + self.package.replace("/", "%2f")

    def _packument(self) -> dict[str, Any]:
        if self._versions is None:
            with tempfile.TemporaryDirectory(prefix="tether-npm-") as work:
                self._versions = self._read_versions(Path(work))
        return self._versions

    def _read_versions(self, work: Path) -> dict[str, Any]:
        """Version → its metadata, from the registry's package document."""
        from tether.sources.tarball import fetch_url

        url = self._packument_url()
        document = work / "packument.json"
        fetch_url(url, document, missing=f"package {self.package} not found in {self.registry}")
        try:
            data = json_loads(read_regular(document))
        except OSError as error:
            raise TetherError(cannot_read(document, error, "the package document")) from None
        except (ValueError, UnicodeDecodeError) as error:
            raise TetherError(f"{url}: not a package document ({error})") from None
        versions = data.get("versions") if isinstance(data, dict) else None
        if not isinstance(versions, dict):
            raise TetherError(f"{url}: not a package document (no 'versions')")
        return {str(v): meta for v, meta in versions.items() if parse_version(str(v))}

    def available_versions(self, include_prereleases: bool = False) -> list[str]:
        if self.pinned is not None:
            return [self.pinned]
        return sort_versions(list(self._packument()), include_prereleases)

    def fetch(self, version: str) -> ReleaseTree:
        wanted = asked_version(version, self.spec)
        if self.pinned is not None and parse_version(wanted) != parse_version(self.pinned):
            raise TetherError(f"version {wanted} not found in {self.spec} (it names {self.pinned})")
        tree = self.cache.cached(wanted)
        if tree is None:
            versions = self._packument()
            listed = match_version(wanted, {v: v for v in versions})
            if listed is None:
                raise not_found(wanted, self.spec, list(versions))
            tree = self.cache.build(
                wanted, lambda work, dest: self._fill(versions[listed], work, dest)
            )
        return ReleaseTree(version=wanted, root=tree, source=self.spec)

    def _fill(self, meta: object, work: Path, dest: Path) -> None:
        from tether.sources.tarball import fetch_url

        dist = meta.get("dist") if isinstance(meta, dict) else None
        url = dist.get("tarball") if isinstance(dist, dict) else None
        if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise TetherError(f"{self.spec}: the registry names no http(s) tarball for it")
        assert isinstance(dist, dict)
        download = work / "package.tgz"
        fetch_url(url, download, missing=f"{self.spec}: its tarball is gone")
        _check_digest(url, read_regular(download), dist)
        extract_tar_safely(download, dest, self.max_entry_bytes, label=url)


def _check_digest(url: str, data: bytes, dist: dict[str, Any]) -> None:
    """The tarball's bytes are the ones the registry published: ``integrity`` (its strongest
    sha512/sha384/sha256 entry), else the sha1 ``shasum``; a tarball with neither is refused."""
    integrity = dist.get("integrity")
    entries = str(integrity).split() if isinstance(integrity, str) else []
    for algorithm in ("sha512", "sha384", "sha256"):
        for entry in entries:
            if entry.startswith(algorithm + "-"):
                expected = entry.partition("-")[2].split("?")[0]
                actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
                if actual != expected:
                    raise TetherError(f"{url}: does not match its published {algorithm} integrity")
                return
    shasum = dist.get("shasum")
    if isinstance(shasum, str) and shasum:
        if hashlib.sha1(data, usedforsecurity=False).hexdigest() != shasum.lower():
            raise TetherError(f"{url}: does not match its published shasum")
        return
    raise TetherError(f"{url}: the registry publishes no digest for it; refusing to install it")
