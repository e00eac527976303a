"""A local directory of releases: ``<dir>/<version>/`` or ``<dir>/v<version>/``.

Nothing is copied: the release folder itself is the tree (callers only read it).
"""

from __future__ import annotations

from pathlib import Path

from tether.errors import TetherError
from tether.sources import ReleaseTree
from tether.sources.common import asked_version, match_version, not_found, version_names
from tether.versions import sort_versions


class DirectorySource:
    def __init__(self, spec: str, root: Path) -> None:
        self.spec = spec
        self.root = root

    def _offered(self) -> dict[str, str]:
        try:
            names = [child.name for child in self.root.iterdir() if child.is_dir()]
        except OSError as error:
            raise TetherError(f"cannot read the release directory {self.spec}: {error}") from None
        return version_names(names)

    def available_versions(self, include_prereleases: bool = False) -> list[str]:
        return sort_versions(list(self._offered()), include_prereleases)

    def fetch(self, version: str) -> ReleaseTree:
        wanted = asked_version(version, self.spec)
        offered = self._offered()
        name = match_version(wanted, offered)
        if name is None:
            raise not_found(wanted, self.spec, list(offered))
        return ReleaseTree(version=wanted, root=self.root / name, source=self.spec)
