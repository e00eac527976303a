"""A local directory of releases: ``<dir>/<version>/`` or ``<dir>/v<version>/``.

Nothing is copied: the release folder itself is the tree (callers only read it), once it
has passed the member rules every release obeys (``folder.check_release_folder``).
"""

from __future__ import annotations

from pathlib import Path

from tether.errors import TetherError
from tether.fsio import cannot_read
from tether.model.source_notes import SourceNote
from tether.sources.common import (
    asked_version,
    match_version,
    not_found,
    twin_note,
    version_names,
)
from tether.sources.folder import check_release_folder
from tether.sources.limits import DEFAULT_MAX_ENTRY_BYTES
from tether.sources.protocol import ReleaseTree
from tether.versions import sort_versions


class DirectorySource:
    def __init__(
        self, spec: str, root: Path, max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES
    ) -> None:
        self.notes: list[SourceNote] = []
        self.spec = spec
        self.root = root
        self.max_entry_bytes = max_entry_bytes

    def _offered(self) -> dict[str, str]:
        try:
            names = [child.name for child in self.root.iterdir() if child.is_dir()]
        except OSError as error:
            raise TetherError(cannot_read(self.spec, error, "the release folder")) from None
        return version_names(names)

    def available_versions(self, include_prereleases: bool = False) -> list[str]:
        return sort_versions(list(self._offered()), include_prereleases)

    def fetch(self, version: str) -> ReleaseTree:
        wanted = asked_version(version, self.spec)
        offered = self._offered()
        name = match_version(wanted, offered)
        if name is None:
            raise not_found(wanted, self.spec, list(offered))
        tree = self.root / name
        check_release_folder(tree, str(tree), self.max_entry_bytes)
        note = twin_note(self.spec, offered, name)
        if note is not None and note not in self.notes:
            self.notes.append(note)
        return ReleaseTree(version=wanted, root=tree, source=self.spec)
