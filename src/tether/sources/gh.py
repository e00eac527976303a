"""``gh:owner/repo``: a GitHub repository read through the ``gh`` program (its login, its
network settings). Versions are the repository's tags; a release is the tag's tarball."""

from __future__ import annotations

import re
from pathlib import Path

from tether import progress
from tether.errors import TetherError
from tether.gh import GhBound, GhBoundExceeded, run_gh
from tether.gh import installed as gh_installed
from tether.sources import limits
from tether.sources.cache import TreeCache
from tether.sources.common import version_names
from tether.sources.extract import extract_tar_safely
from tether.sources.tagged import TaggedSource

PREFIX = "gh:"


def download_bound() -> GhBound:
    """A release download through gh is held to the bounds of any other (``limits``)."""
    return GhBound(
        limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        limits.byte_limit(limits.DOWNLOAD_BYTES, limits.DEFAULT_DOWNLOAD_BYTES),
    )


def bound_words(error: TetherError) -> str:
    """The error's words, with the variable that sets the bound gh was stopped by."""
    if isinstance(error, GhBoundExceeded):
        setting = limits.NETWORK_SECONDS if error.kind == "time" else limits.DOWNLOAD_BYTES
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
        self.notes: list[str] = []
        self.spec = spec
        self.repo = repo
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes

    def _offered(self) -> dict[str, str]:
        try:
            with progress.phase("listing versions"):
                text = run_gh(
                    ["api", "--paginate", f"repos/{self.repo}/tags", "--jq", ".[].name"]
                ).stdout
        except TetherError as error:
            raise TetherError(f"cannot read the tags of {self.spec}: {error}") from None
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


def release_asset_name(repo: str, version: str) -> str:
    """The tarball a release publishes: ``<repo name>-v<version>.tar.gz`` (GAIA's
    ``gaia-v1.6.1.tar.gz``)."""
    return f"{repo.rpartition('/')[2]}-v{version}.tar.gz"


class GhReleaseSource(TaggedSource):
    """``gh-release:OWNER/REPO``: versions are the repository's published releases; a release
    is its ``<repo name>-v<version>.tar.gz`` asset, which is what the publisher ships (a tag's
    tree may hold maintainer-only files the asset leaves out)."""

    def __init__(self, spec: str, repo: str, cache: TreeCache, max_entry_bytes: int) -> None:
        self.spec = spec
        self.repo = repo
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes
        self.notes: list[str] = []  # a release asset is always an archive: nothing to skip

    def _offered(self) -> dict[str, str]:
        args = ["release", "list", "--repo", self.repo, "--limit", "200"]
        try:
            with progress.phase("listing versions"):
                text = run_gh([*args, "--json", "tagName", "--jq", ".[].tagName"]).stdout
        except TetherError as error:
            raise TetherError(f"cannot list the releases of {self.spec}: {error}") from None
        return version_names(text.split())

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        asset = release_asset_name(self.repo, version)
        args = ["release", "download", tag, "--repo", self.repo, "--pattern", asset]
        try:
            run_gh([*args, "--dir", str(work)], work, bound=download_bound())
        except TetherError as error:
            raise TetherError(
                f"cannot download {asset} of {self.spec}: {bound_words(error)}"
            ) from None
        download = work / asset
        if not download.is_file():
            raise TetherError(f"release {tag} of {self.spec} has no asset {asset}")
        extract_tar_safely(download, dest, self.max_entry_bytes, label=f"{self.spec}@{tag}")
