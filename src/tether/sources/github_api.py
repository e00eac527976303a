"""GitHub's REST API for a repository's published releases: what ``gh-release:`` sources
read when the ``gh`` program is not installed or fails (GAIA's Step 2 falls back the same
way). Every read goes through ``sources.web``, bounded in time and bytes.

The address is ``$GITHUB_API_URL`` (what GitHub Actions sets, and what ``deps notes``
reads), else ``https://api.github.com``. ``$GITHUB_TOKEN`` or ``$GH_TOKEN`` is sent as a
bearer token when set: only to that address, only over HTTPS (or to this machine's own
loopback address), never along a redirect (an asset's download is redirected to a storage
host), and never shown, logged or kept.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether import __version__
from tether.errors import TetherError
from tether.parselimits import json_loads
from tether.sources.web import (
    BoundExceeded,
    ReadBounds,
    answer_bounds,
    download_bounds,
    download_url,
    read_url,
)

API_URL_VARIABLE = "GITHUB_API_URL"
DEFAULT_API_URL = "https://api.github.com"
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")
READ_TIMEOUT = 30.0  # seconds one read may wait: an unreachable host must fail early
PER_PAGE = 100
MAX_PAGES = 5  # the newest 500 releases
_RATE_HINT = " (GitHub's rate limit for unauthenticated reads? $GITHUB_TOKEN raises it)"


class NotPublished(TetherError):
    """The API answered that the release (or the repository) does not exist."""


@dataclass(frozen=True)
class Asset:
    id: int
    name: str


@dataclass(frozen=True)
class Release:
    tag: str
    body: str
    draft: bool
    assets: tuple[Asset, ...]


@dataclass(frozen=True)
class GitHubApi:
    base: str = DEFAULT_API_URL
    token: str | None = field(default=None, repr=False)

    @classmethod
    def from_environment(cls) -> GitHubApi:
        base = os.environ.get(API_URL_VARIABLE, "").strip() or DEFAULT_API_URL
        token = next((os.environ[v] for v in TOKEN_VARIABLES if os.environ.get(v)), None)
        return cls(base.rstrip("/"), token)

    def releases(self, repo: str) -> list[Release]:
        """The repository's published releases, newest first (drafts left out)."""
        found: list[Release] = []
        for page in range(1, MAX_PAGES + 1):
            answer = self._json(f"/repos/{repo}/releases?per_page={PER_PAGE}&page={page}")
            if not isinstance(answer, list):
                raise TetherError(f"{self._url('/repos/' + repo + '/releases')}: not a list")
            found += [r for r in (_release(item) for item in answer) if not r.draft]
            if len(answer) < PER_PAGE:
                break
        return found

    def release(self, repo: str, tag: str) -> Release:
        """The release whose tag is ``tag``; NotPublished when there is none."""
        return _release(self._json(f"/repos/{repo}/releases/tags/{_segment(tag)}"))

    def download_asset(self, repo: str, asset: Asset, out: Path) -> None:
        """Stream the asset into ``out`` (within the download bounds)."""
        path = f"/repos/{repo}/releases/assets/{asset.id}"
        request = self._request(path, "application/octet-stream")
        bounds = download_bounds(READ_TIMEOUT)
        with open(out, "wb") as handle, _reading(self._url(path), bounds):
            download_url(request, handle, bounds)

    # --- one request -------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.base + path

    def _request(self, path: str, accept: str) -> urllib.request.Request:
        url = self._url(path)
        request = urllib.request.Request(
            url,
            headers={
                "Accept": accept,
                "User-Agent": f"tether/{__version__}",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        if self.token and may_carry_token(url):
            # Unredirected: the storage host an asset's download is sent on to never sees it.
            request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        return request

    def _json(self, path: str) -> Any:
        bounds = answer_bounds(READ_TIMEOUT)
        with _reading(self._url(path), bounds, rate_hint=not self.token):
            body = read_url(self._request(path, "application/vnd.github+json"), bounds)
        try:
            return json_loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            raise TetherError(f"{self._url(path)}: the answer is not JSON") from None


def may_carry_token(url: str) -> bool:
    """A token travels only over HTTPS, or to this machine itself."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        return True
    host = parts.hostname or ""
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _segment(text: str) -> str:
    return urllib.parse.quote(text, safe="")


@contextmanager
def _reading(url: str, bounds: ReadBounds, rate_hint: bool = False) -> Iterator[None]:
    """Turn what a read can raise into one TetherError naming the address."""
    try:
        yield
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise NotPublished(f"{url}: HTTP 404 (not found)") from None
        hint = _RATE_HINT if rate_hint and error.code in (403, 429) else ""
        raise TetherError(f"{url}: HTTP {error.code} {error.reason}{hint}") from None
    except urllib.error.URLError as error:
        raise TetherError(f"{url}: {error.reason}") from None
    except BoundExceeded as error:
        raise TetherError(f"{url}: {error}") from None
    except TimeoutError:
        raise TetherError(f"{url}: no answer within {bounds.read_timeout:g} s") from None
    except (http.client.HTTPException, OSError, ValueError) as error:
        # ValueError: an address urllib cannot use ($GITHUB_API_URL mistyped).
        raise TetherError(f"{url}: {error}") from None


def _release(item: object) -> Release:
    """One release of the API's answer; TetherError when it is not shaped like one."""
    if not isinstance(item, dict) or not isinstance(item.get("tag_name"), str):
        raise TetherError("GitHub's API answered a release without a tag name")
    assets = []
    for asset in item.get("assets") or []:
        if (
            isinstance(asset, dict)
            and isinstance(asset.get("id"), int)
            and isinstance(asset.get("name"), str)
        ):
            assets.append(Asset(asset["id"], asset["name"]))
    body = item.get("body")
    return Release(
        item["tag_name"],
        body if isinstance(body, str) else "",
        item.get("draft") is True,
        tuple(assets),
    )
