"""A git repository whose tags ``v{version}`` or ``{version}`` mark releases.

Versions are read with ``ls-remote`` (no clone needed to list). A local repository is
archived in place; a remote one is first cloned bare into the cache (and later only the
missing tag is fetched). ``git archive`` output goes through the same safe extractor as
tarballs, without stripping: a repository's single top folder is real content.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tether import git, progress
from tether.errors import TetherError
from tether.sources.cache import TreeCache
from tether.sources.common import version_names
from tether.sources.extract import extract_tar_safely
from tether.sources.tagged import TaggedSource
from tether.versions import parse_version

MIRROR = "mirror.git"


def _not_a_commit(spec: str, tag: str, kind: str) -> str:
    return f"{spec}: tag {tag} names a {kind}, not a commit, so it is no release"


class GitSource(TaggedSource):
    def __init__(
        self, spec: str, location: str, local: Path | None, cache: TreeCache, max_entry_bytes: int
    ) -> None:
        """``location`` is what git is given; ``local`` is the repository when it is on disk."""
        self.spec = spec
        self.location = location
        self.local = local
        self.cache = cache
        self.max_entry_bytes = max_entry_bytes
        self.notes: list[str] = []

    def _offered(self) -> dict[str, str]:
        try:
            with progress.phase("listing versions"):
                return version_names(self._commit_tags(git.list_tags(self.location)))
        except TetherError as error:
            raise TetherError(f"cannot read the tags of {self.spec}: {error}") from None

    def _commit_tags(self, tags: list[str]) -> list[str]:
        """The tags that name a release: a tag of a blob or a tree is left out, with a note.
        Judged in the repository itself when it is on disk, else in the cached clone for the
        tags it already holds (a newer one is judged when fetched: see ``_export``)."""
        where = self.local if self.local is not None else self.cache.scratch(MIRROR)
        kinds = git.tag_kinds(where) if git.is_git_repo(where) else {}
        kept: list[str] = []
        for tag in tags:
            kind = kinds.get(tag, "commit")
            if kind == "commit":
                kept.append(tag)
            elif parse_version(tag) is not None:
                self.notes.append(_not_a_commit(self.spec, tag, kind) + "; skipped")
        return kept

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        repo = self.local if self.local is not None else self._mirror_with(tag)
        kind = git.tag_kinds(repo).get(tag, "commit")
        if kind != "commit":
            raise TetherError(_not_a_commit(self.spec, tag, kind))
        archive = work / "archive.tar"
        try:
            git.archive(repo, f"refs/tags/{tag}", archive)
        except TetherError as error:
            raise TetherError(f"cannot export tag {tag} of {self.spec}: {error}") from None
        extract_tar_safely(
            archive, dest, self.max_entry_bytes, strip_single_top=False, label=f"{self.spec}@{tag}"
        )

    def _mirror_with(self, tag: str) -> Path:
        """The cached bare clone, holding ``tag``: cloned the first time, topped up later."""
        mirror = self.cache.scratch(MIRROR)
        try:
            if not git.is_git_repo(mirror):
                self._clone(mirror)
            if not git.has_ref(mirror, f"refs/tags/{tag}"):
                git.fetch_tags(mirror, self.location, [tag])
        except TetherError as error:
            raise TetherError(f"cannot fetch {self.spec}: {error}") from None
        return mirror

    def _clone(self, mirror: Path) -> None:
        # Clone beside the final place, then rename: an interrupted clone is never reused.
        self.cache.remove_leftovers(MIRROR)
        partial = Path(tempfile.mkdtemp(prefix=f"{mirror.name}.partial-", dir=mirror.parent))
        try:
            git.clone_bare(self.location, partial / "repo")
            shutil.rmtree(mirror, ignore_errors=True)
            (partial / "repo").rename(mirror)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
