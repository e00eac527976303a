"""Sources whose releases are named versions at a remote, a repository or a folder (git tags,
GitHub tags, GitHub releases, tarballs on disk): listing, matching an asked version and caching
its tree are the same for each; a kind only says how it lists names and how it exports one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from tether.model.source_notes import SourceNote, SourceSaid
from tether.sources.common import asked_version, match_version, not_found, twin_note
from tether.sources.protocol import ReleaseTree
from tether.sources.release_cache import TreeCache
from tether.versions import sort_versions


class TaggedSource(ABC):
    spec: str
    cache: TreeCache
    notes: list[SourceNote]

    @abstractmethod
    def _offered(self) -> dict[str, str]:
        """Listed version -> its name at the source (a tag)."""

    @abstractmethod
    def _export(self, tag: str, version: str, work: Path, dest: Path) -> None:
        """Write the release named ``tag`` into ``dest`` (``work`` is scratch space)."""

    def available_versions(self, include_prereleases: bool = False) -> list[str]:
        return sort_versions(list(self._offered()), include_prereleases)

    def fetch(self, version: str) -> ReleaseTree:
        """The tree of ``version``. When two names at the source spell it (``v2.0.0`` and
        ``2.0.0``), a note says which one the tree came from, also when it is read back from
        the cache later (the note is kept beside the cached tree)."""
        wanted = asked_version(version, self.spec)
        tree = self.cache.cached(wanted)
        if tree is None:
            tag, note = self._locate(wanted)
            twin = (note.name, note.other, note.version) if note is not None else None
            tree = self.cache.build(
                wanted, lambda work, dest: self._export(tag, wanted, work, dest), twin
            )
        else:
            kept = self.cache.twin(wanted)
            note = SourceNote(SourceSaid.TWIN_NAMES, self.spec, *kept) if kept else None
        if note is not None and note not in self.notes:
            self.notes.append(note)
        return ReleaseTree(version=wanted, root=tree, source=self.spec)

    def _locate(self, version: str) -> tuple[str, SourceNote | None]:
        """The name at the source of the release ``version`` (an exact version), and the
        note naming it when another name spells the same version (None without one)."""
        offered = self._offered()
        tag = match_version(version, offered)
        if tag is None:
            raise not_found(version, self.spec, list(offered))
        return tag, twin_note(self.spec, offered, tag)
