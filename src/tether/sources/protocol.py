"""What every kind of release source promises (``Source``) and what fetching returns
(``ReleaseTree``)."""

from __future__ import annotations

from pathlib import Path

from tether.model.source_notes import SourceNote
from tether.valueclass import valueclass


@valueclass(frozen=True)
class ReleaseTree:
    """A release fetched from a source: its version and the folder holding its files."""

    version: str  # the version asked for, without a leading "v" (e.g. "1.3.0")
    root: Path  # a folder holding the release's files: read it, never write to it
    source: str  # the source string it came from


TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import Protocol

    class Source(Protocol):
        spec: str
        # What listing or fetching said (a git tag naming a blob left out, which of two tags was
        # used…), as facts for the report (``model/source_notes.py``).
        notes: list[SourceNote]

        def available_versions(self, include_prereleases: bool = False) -> list[str]:
            """Versions the source offers, ascending semver; prereleases only when asked."""
            ...

        def fetch(self, version: str) -> ReleaseTree:
            """The release tree of ``version``; TetherError "version X not found in SRC ..."."""
            ...
