"""``gh:owner/repo``: a GitHub repository read through the ``gh`` program (its login, its
network settings). Versions are the repository's tags; a release is the tag's tarball."""

from __future__ import annotations

import re
from pathlib import Path

from tether import progress
from tether.errors import TetherError
from tether.gh import GhBound, GhBoundExceeded, run_gh
from tether.gh import installed as gh_installed
from tether.model.source_notes import SourceNote, SourceSaid
from tether.sources import limits
from tether.sources.common import match_version, version_names
from tether.sources.extract import extract_tar_safely
from tether.sources.github_api import GitHubApi, NotPublished
from tether.sources.release_cache import TreeCache
from tether.sources.tagged import TaggedSource

PREFIX = "gh:"


def download_bound() -> GhBound:
    """A release download through gh is held to the bounds of any other (``limits``)."""
    return GhBound(
        limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        limits.byte_limit(limits.DOWNLOAD_BYTES, limits.DEFAULT_DOWNLOAD_BYTES),
    )


def answer_bound() -> GhBound:
    """What gh answers (a source's list of versions, a release's notes, a pull request) is
    an answer like a registry's (``limits``): read in full before it is parsed."""
    return GhBound(
        limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        limits.byte_limit(limits.ANSWER_BYTES, limits.DEFAULT_ANSWER_BYTES),
    )


def bound_words(error: TetherError, bytes_setting: str = limits.DOWNLOAD_BYTES) -> str:
    """The error's words, with the variable that sets the bound gh was stopped by."""
    if isinstance(error, GhBoundExceeded):
        setting = limits.NETWORK_SECONDS if error.kind == "time" else bytes_setting
        return f"{error} ({setting} sets it)"
    return str(error)


_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def gh_repo(spec: str) -> str:
    """``owner/repo`` from ``gh:owner/repo``; TetherError when gh cannot be used."""
    repo = spec.removeprefix(PREFIX)
    if not _REPO.fullmatch(repo) or repo.startswith("-"):
        raise TetherError(f"unknown source {spec!r}: a gh source is gh:OWNER/REPO")
    if not gh_installed():
        raise TetherError(
            f"source {spec} needs the `gh` program, which is not installed; install it or use "
            f"https://github.com/{repo}.git"
        )
    return repo


class GhSource(TaggedSource):
    def __init__(self, spec: str, repo: str, cache: TreeCache, max_entry_bytes: int) -> None:
        self.notes: list[SourceNote] = []
        self.spec = spec
        self.repo = repo
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes

    def _offered(self) -> dict[str, str]:
        try:
            with progress.phase("listing versions"):
                args = ["api", "--paginate", f"repos/{self.repo}/tags", "--jq", ".[].name"]
                text = run_gh(args, bound=answer_bound()).stdout
        except TetherError as error:
            why = bound_words(error, limits.ANSWER_BYTES)
            raise TetherError(f"cannot read the tags of {self.spec}: {why}") from None
        return version_names(text.split())

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        download = work / "download.tar.gz"
        try:
            args = ["api", f"repos/{self.repo}/tarball/refs/tags/{tag}"]
            run_gh(args, out=download, bound=download_bound())
        except TetherError as error:
            why = bound_words(error)
            raise TetherError(f"cannot download tag {tag} of {self.spec}: {why}") from None
        # GitHub wraps the tree in one owner-repo-commit/ folder, which is stripped.
        extract_tar_safely(download, dest, self.max_entry_bytes, label=f"{self.spec}@{tag}")


# --- gh-release:OWNER/REPO: a repository's published release assets ---------------------

RELEASE_PREFIX = "gh-release:"


def release_repo(spec: str) -> str:
    """``owner/repo`` from ``gh-release:owner/repo``. gh is not required: without it, or
    when it fails, the releases are read through GitHub's REST API."""
    repo = spec.removeprefix(RELEASE_PREFIX)
    if not _REPO.fullmatch(repo) or repo.startswith("-"):
        raise TetherError(f"unknown source {spec!r}: a release source is gh-release:OWNER/REPO")
    return repo


def release_asset_name(repo: str, version: str) -> str:
    """The tarball a release publishes: ``<repo name>-v<version>.tar.gz`` (GAIA's
    ``gaia-v1.6.1.tar.gz``)."""
    return f"{repo.rpartition('/')[2]}-v{version}.tar.gz"


class _ListingFailed(TetherError):
    """Neither gh nor GitHub's API could list the releases."""


class GhReleaseSource(TaggedSource):
    """``gh-release:OWNER/REPO``: versions are the repository's published releases; a release
    is its ``<repo name>-v<version>.tar.gz`` asset, which is what the publisher ships (a tag's
    tree may hold maintainer-only files the asset leaves out).

    Each read asks the ``gh`` program first (its login, its network settings) and, when gh
    is not installed or fails, GitHub's REST API (``sources.github_api``). A release asked
    for by version (``--to``, the installed one) is fetched also when no listing works: its
    tag is then taken to be ``v<version>``, as the publisher names them."""

    def __init__(self, spec: str, repo: str, cache: TreeCache, max_entry_bytes: int) -> None:
        self.spec = spec
        self.repo = repo
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes
        self.notes: list[SourceNote] = []  # a release asset is always an archive: nothing to skip
        self._listed: dict[str, str] | _ListingFailed | None = None
        self._listing_failure = ""

    def _api(self) -> GitHubApi:
        return GitHubApi.from_environment()

    def _note(self, note: SourceNote) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _offered(self) -> dict[str, str]:
        if self._listed is None:
            try:
                self._listed = self._list()
            except _ListingFailed as error:
                self._listed = error
        if isinstance(self._listed, _ListingFailed):
            raise self._listed
        return self._listed

    def _list(self) -> dict[str, str]:
        failures = []
        gh_error: str | None = None  # what gh said when it failed: the API stood in
        with progress.phase("listing versions"):
            if gh_installed():
                args = ["release", "list", "--repo", self.repo, "--limit", "200"]
                tag_names = [*args, "--json", "tagName", "--jq", ".[].tagName"]
                try:
                    text = run_gh(tag_names, bound=answer_bound()).stdout
                    return version_names(text.split())
                except GhBoundExceeded as error:  # the API's listing would pass it as well
                    why = bound_words(error, limits.ANSWER_BYTES)
                    raise TetherError(f"cannot list the releases of {self.spec}: {why}") from None
                except TetherError as error:
                    gh_error = str(error)
                    failures.append(f"gh: {error}")
            else:
                failures.append("gh: not installed")
            try:
                releases = self._api().releases(self.repo)
            except TetherError as error:
                failures.append(f"GitHub's API: {error}")
                raise _ListingFailed(
                    f"cannot list the releases of {self.spec}: {'; '.join(failures)}"
                ) from None
        if gh_error is not None:
            self._note(SourceNote(SourceSaid.LISTED_THROUGH_API, self.spec, detail=gh_error))
        return version_names([release.tag for release in releases])

    def _locate(self, version: str) -> tuple[str, SourceNote | None]:
        """As for any tagged source; when no listing works, the tag ``v<version>``."""
        try:
            self._offered()
        except _ListingFailed as error:
            self._listing_failure = str(error)
            return f"v{version}", None
        return super()._locate(version)

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        asset = release_asset_name(self.repo, version)
        download = work / asset
        failures = []
        gh_error: str | None = None
        if gh_installed():
            try:
                self._gh_download(tag, asset, work)
            except GhBoundExceeded as error:  # the API's download would pass it as well
                why = bound_words(error)
                raise TetherError(f"cannot download {asset} of {self.spec}: {why}") from None
            except TetherError as error:
                gh_error = str(error)
                failures.append(f"gh: {error}")
        else:
            failures.append("gh: not installed")
        if failures:
            try:
                self._api_download(tag, asset, download)
            except TetherError as error:
                failures.append(f"GitHub's API: {error}")
                # Without a listing the tag was taken from the version: say so.
                unlisted = " (the releases could not be listed)" if self._listing_failure else ""
                raise TetherError(
                    f"cannot download {asset} of {self.spec}{unlisted}: {'; '.join(failures)}"
                ) from None
            if gh_error is not None:
                said = SourceSaid.DOWNLOADED_THROUGH_API
                self._note(SourceNote(said, self.spec, asset, detail=gh_error))
        extract_tar_safely(download, dest, self.max_entry_bytes, label=f"{self.spec}@{tag}")

    def _gh_download(self, tag: str, asset: str, work: Path) -> None:
        args = ["release", "download", tag, "--repo", self.repo, "--pattern", asset]
        run_gh([*args, "--dir", str(work)], work, bound=download_bound())
        if not (work / asset).is_file():
            raise TetherError(f"release {tag} has no asset {asset}")

    def _api_download(self, tag: str, asset: str, out: Path) -> None:
        api = self._api()
        try:
            release = api.release(self.repo, tag)
        except NotPublished:
            raise TetherError(f"no published release {tag}") from None
        found = next((a for a in release.assets if a.name == asset), None)
        if found is None:
            raise TetherError(f"release {tag} has no asset {asset}")
        api.download_asset(self.repo, found, out)

    def release_body(self, version: str) -> str | None:
        """The notes published with release ``version`` (its GitHub release page), None
        when they cannot be had; best effort, never an error."""
        try:
            tag = match_version(version, self._offered()) or f"v{version}"
        except TetherError:
            tag = f"v{version}"
        if gh_installed():
            args = ["release", "view", tag, "--repo", self.repo, "--json", "body", "--jq", ".body"]
            try:
                return run_gh(args, bound=answer_bound()).stdout
            except GhBoundExceeded:  # the API would take as long again: no notes
                return None
            except TetherError:
                pass
        try:
            return self._api().release(self.repo, tag).body
        except TetherError:
            return None
