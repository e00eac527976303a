"""A git repository whose tags ``v{version}`` or ``{version}`` mark releases.

Versions are read with ``ls-remote`` (no clone needed to list). A local repository is
archived in place; a remote one is first cloned bare into the cache (and later only the
missing tag is fetched). Every exchange with a remote is bounded like any other network
read (``limits``: total time, and the bytes it may write), and the cached clone is handed
to git only while it holds nothing tether's clone never has (a setting, a hook: see
``git.foreign_clone_setting``), so a clone changed in the cache runs nothing.

The tagged tree is written as a tar of its blobs as committed (``write_tree_tar``: no
filter, no conversion, nothing of the repository's config runs) and goes through the same
safe extractor as tarballs, without stripping: a repository's single top folder is real
content.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from pathlib import Path

from tether import git, progress
from tether.errors import TetherError
from tether.model.source_notes import SourceNote, SourceSaid
from tether.sources import limits
from tether.sources.common import version_names
from tether.sources.extract import extract_tar_safely
from tether.sources.release_cache import TreeCache
from tether.sources.tagged import TaggedSource
from tether.versions import parse_version

MIRROR = "mirror.git"
_FOLDER_KINDS = ("tree", "commit")  # a submodule (a commit in the tree) is an empty folder


def write_tree_tar(repo: Path, rev: str, out: Path) -> None:
    """The tree of ``rev`` as a tar file at ``out``: every blob as committed, read with
    ``cat-file``. Not ``git archive``: it runs the filters the repository's own
    ``.gitattributes`` name (``filter.<name>.smudge``, a program from the repository's
    config) and its conversions, so a source could make tether run a program by being
    exported. No attribute applies here (no ``export-ignore``/``export-subst`` either)."""
    entries = git.tree_listing(repo, rev)
    with (
        git.BlobReader(repo) as blobs,
        tarfile.open(out, "w", format=tarfile.GNU_FORMAT, errors="surrogateescape") as tar,
    ):
        for mode, kind, oid, path in entries:
            info = tarfile.TarInfo(path)
            info.mtime = 0
            if kind in _FOLDER_KINDS:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif mode == "120000":
                size, stream = blobs.open(oid)
                info.type = tarfile.SYMTYPE
                info.linkname = stream.read(size).decode("utf-8", "surrogateescape")
                tar.addfile(info)
            else:
                size, stream = blobs.open(oid)
                info.size, info.mode = size, 0o755 if mode == "100755" else 0o644
                tar.addfile(info, stream)


def listing_bound() -> git.TransferBound:
    """A remote's list of tags is an answer like a registry's (``limits``)."""
    return git.TransferBound(
        limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        limits.byte_limit(limits.ANSWER_BYTES, limits.DEFAULT_ANSWER_BYTES),
    )


def transfer_bound() -> git.TransferBound:
    """A clone or fetch of a remote is a release download like a tarball's (``limits``)."""
    return git.TransferBound(
        limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        limits.byte_limit(limits.DOWNLOAD_BYTES, limits.DEFAULT_DOWNLOAD_BYTES),
    )


def bound_words(error: TetherError, bytes_setting: str) -> str:
    """The error's words, with the variable that sets the bound git was stopped by."""
    if isinstance(error, git.TransferBoundExceeded):
        setting = limits.NETWORK_SECONDS if error.kind == "time" else bytes_setting
        return f"{error} ({setting} sets it)"
    return str(error)


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
        self.notes: list[SourceNote] = []
        # The kinds of the tags git last told of (``_kinds_of``), dropped when a clone or a
        # fetch changes the cached clone: listing and exporting a version ask once.
        self._kinds: dict[str, str] | None = None

    def _offered(self) -> dict[str, str]:
        bound = None if self.local is not None else listing_bound()
        where = self.local if self.local is not None else self._checked_mirror()
        try:
            with progress.phase("listing versions"):
                tags = git.list_tags(self.location, bound)
                return version_names(self._commit_tags(where, tags))
        except TetherError as error:
            raise TetherError(
                f"cannot read the tags of {self.spec}: {bound_words(error, limits.ANSWER_BYTES)}"
            ) from None

    def _commit_tags(self, where: Path, tags: list[str]) -> list[str]:
        """The tags that name a release: a tag of a blob or a tree is left out, with a note.
        Judged in the repository itself when it is on disk, else in the cached clone for the
        tags it already holds (a newer one is judged when fetched: see ``_export``)."""
        # A repository on disk was found to be one when the source was opened; the cached
        # clone may not be there yet.
        held = self.local is not None or git.is_git_repo(where)
        kinds = self._kinds_of(where, tags) if held else {}
        kept: list[str] = []
        for tag in tags:
            kind = kinds.get(tag, "commit")
            if kind == "commit":
                kept.append(tag)
            elif parse_version(tag) is not None:
                said = SourceSaid.TAG_NOT_A_COMMIT
                self.notes.append(SourceNote(said, self.spec, tag, kind=kind))
        return kept

    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        repo = self.local if self.local is not None else self._mirror_with(tag)
        kind = self._kinds_of(repo, [tag]).get(tag, "commit")
        if kind != "commit":
            raise TetherError(_not_a_commit(self.spec, tag, kind))
        archive = work / "archive.tar"
        try:
            write_tree_tar(repo, f"refs/tags/{tag}", archive)
        except (TetherError, OSError) as error:
            raise TetherError(f"cannot export tag {tag} of {self.spec}: {error}") from None
        extract_tar_safely(
            archive, dest, self.max_entry_bytes, strip_single_top=False, label=f"{self.spec}@{tag}"
        )

    def _kinds_of(self, repo: Path, tags: list[str]) -> dict[str, str]:
        """The kinds of ``repo``'s tags (``git.tag_kinds``), asked again only when a tag
        asked about is not among those git told of (a tag made since)."""
        if self._kinds is None or any(tag not in self._kinds for tag in tags):
            self._kinds = git.tag_kinds(repo)
        return self._kinds

    def _mirror_with(self, tag: str) -> Path:
        """The cached bare clone, holding ``tag``: cloned the first time, topped up later."""
        mirror = self._checked_mirror()
        try:
            if not git.is_git_repo(mirror):
                self._clone(mirror)
            if not git.has_ref(mirror, f"refs/tags/{tag}"):
                self._fetch(mirror, tag)
        except TetherError as error:
            raise TetherError(
                f"cannot fetch {self.spec}: {bound_words(error, limits.DOWNLOAD_BYTES)}"
            ) from None
        return mirror

    def _checked_mirror(self) -> Path:
        """The cached clone's place, refused when something other than tether changed it
        in a way that could make git run a program or read another repository."""
        return git.checked_own_clone(
            self.cache.scratch(MIRROR), f"clone of {self.spec}", "clone again"
        )

    def _fetch(self, mirror: Path, tag: str) -> None:
        self._kinds = None
        try:
            git.fetch_tags(mirror, self.location, [tag], transfer_bound())
        except git.TransferBoundExceeded:
            # git was stopped mid-fetch: what it left (a partial pack) is not kept.
            shutil.rmtree(mirror, ignore_errors=True)
            raise

    def _clone(self, mirror: Path) -> None:
        # Clone beside the final place, then rename: an interrupted clone is never reused.
        self._kinds = None
        self.cache.remove_leftovers(MIRROR)
        partial = Path(tempfile.mkdtemp(prefix=f"{mirror.name}.partial-", dir=mirror.parent))
        try:
            git.clone_bare(self.location, partial / "repo", transfer_bound())
            shutil.rmtree(mirror, ignore_errors=True)
            (partial / "repo").rename(mirror)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
