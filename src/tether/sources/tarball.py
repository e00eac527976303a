"""Tarball sources: a local path or an http(s) URL template with ``{version}`` or ``{tag}``.

``{tag}`` stands for ``v{version}``. Fetched tarballs are extracted (safely, a single
top-level folder stripped) into the tree cache, so each version is unpacked once.
"""

from __future__ import annotations

import glob
import re
import urllib.error
import urllib.request
from pathlib import Path

from tether import __version__
from tether.errors import TetherError
from tether.fsio import read_bytes, sha256_file
from tether.model.source_notes import SourceNote
from tether.sources.common import asked_version
from tether.sources.extract import extract_tar_safely
from tether.sources.protocol import ReleaseTree
from tether.sources.release_cache import TreeCache
from tether.sources.tagged import TaggedSource
from tether.sources.web import BoundExceeded, download_bounds, download_url
from tether.versions import parse_version

DOWNLOAD_TIMEOUT = 30  # seconds one read may wait: an unreachable host must fail early


def expand(template: str, version: str) -> str:
    # Plain replacement, not str.format: other braces in a path or URL stay as they are.
    return template.replace("{version}", version).replace("{tag}", f"v{version}")


class _TemplatedSource:
    """A source named by a path or URL template with a version placeholder."""

    def __init__(self, spec: str, template: str, cache: TreeCache, max_entry_bytes: int) -> None:
        self.notes: list[SourceNote] = []
        self.spec = spec
        self.template = template
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes


class LocalTarballSource(_TemplatedSource, TaggedSource):
    """Tarballs on disk, e.g. ``releases/app-{version}.tar.gz``; versions listed by glob."""

    def _offered(self) -> dict[str, str]:
        """Listed version -> tarball path, for every file the template matches."""
        pattern, regex = _glob_and_regex(self.template)
        offered: dict[str, str] = {}
        for found in sorted(glob.glob(pattern)):
            match = regex.fullmatch(found)
            if match is None or not Path(found).is_file():
                continue
            values = set(match.groups())
            version = values.pop()
            # Every placeholder must agree, and the name must read back through expand().
            if not values and parse_version(version) and not version.startswith("v"):
                offered[version] = found
        return offered

    def _locate(self, version: str) -> tuple[str, SourceNote | None]:
        """The tarball the template names for ``version``, else one listed as it."""
        exact = expand(self.template, version)
        return (exact, None) if Path(exact).is_file() else super()._locate(version)

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        from tether.checksums import verify_tarball_checksum

        tarball = Path(tag)
        if verify_tarball_checksum(tarball) is False:
            raise TetherError(
                f"{tarball}: does not match the sha256 published beside it "
                f"({tarball.name}.sha256); refusing to install it"
            )
        extract_tar_safely(tarball, dest, self.max_entry_bytes, label=str(tarball))


def _glob_and_regex(template: str) -> tuple[str, re.Pattern[str]]:
    """A glob finding candidate files and a regex capturing the version in each placeholder."""
    pieces = re.split(r"(\{version\}|\{tag\})", template)
    pattern, regex = "", ""
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            pattern += glob.escape(piece)
            regex += re.escape(piece)
        else:
            pattern += "v*" if piece == "{tag}" else "*"
            regex += ("v" if piece == "{tag}" else "") + r"([^/]+)"
    return pattern, re.compile(regex)


class UrlTarballSource(_TemplatedSource):
    """Tarballs over http(s). A URL cannot be listed, so versions must be given explicitly."""

    def available_versions(self, include_prereleases: bool = False) -> list[str]:
        raise TetherError(
            f"cannot list the versions of {self.spec}: a URL template does not say which "
            "exist; pass an explicit version"
        )

    def fetch(self, version: str) -> ReleaseTree:
        wanted = asked_version(version, self.spec)
        tree = self.cache.cached(wanted)
        if tree is None:
            url = expand(self.template, wanted)

            def fill(work: Path, dest: Path) -> None:
                download = work / "download"
                missing = f"version {wanted} not found in {self.spec}"
                fetch_url(url, download, missing=missing)
                _check_published_digest(url, download, work)
                extract_tar_safely(download, dest, self.max_entry_bytes, label=url)

            tree = self.cache.build(wanted, fill)
        return ReleaseTree(version=wanted, root=tree, source=self.spec)


def _check_published_digest(url: str, download: Path, work: Path) -> None:
    """Verify against ``<url>.sha256`` when the server publishes one."""
    from tether.checksums import expected_digest

    side = work / "download.sha256"
    try:
        fetch_url(url + ".sha256", side, missing="no checksum")
    except TetherError:
        return  # none published
    expected = expected_digest(read_bytes(side).decode("utf-8", "replace"), url.rsplit("/", 1)[-1])
    if expected is None or expected.lower() != sha256_file(download):
        raise TetherError(
            f"{url}: does not match the sha256 published beside it; refusing to install it"
        )


def fetch_url(url: str, out: Path, *, missing: str) -> None:
    """Download ``url`` to ``out``, within the download bounds; TetherError naming the URL
    when it cannot be had. ``missing`` starts the message for a 404/410, which means the
    version does not exist."""
    request = urllib.request.Request(url, headers={"User-Agent": f"tether/{__version__}"})
    bounds = download_bounds(DOWNLOAD_TIMEOUT)
    try:
        with open(out, "wb") as handle:
            download_url(request, handle, bounds)
    except urllib.error.HTTPError as error:
        if error.code in (404, 410):
            raise TetherError(f"{missing}: {url} returned HTTP {error.code}") from None
        raise TetherError(f"cannot download {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise TetherError(f"cannot download {url}: {error.reason}") from None
    except BoundExceeded as error:
        raise TetherError(f"cannot download {url}: {error}") from None
    except TimeoutError:
        raise TetherError(
            f"cannot download {url}: no answer within {bounds.read_timeout:g} s"
        ) from None
    except OSError as error:
        raise TetherError(f"cannot download {url}: {error}") from None
