"""What a release source says while it lists or fetches, as facts (``Source.notes``): they
travel among a release's and a baseline's notes into every report that shows them, and
``report/notes.py`` words them there, as it words the notes of ``flows/notes.py``."""

from __future__ import annotations

from enum import StrEnum

from tether.valueclass import valueclass


class SourceSaid(StrEnum):
    # Two names at the source spell one version (``v2.0.0`` and ``2.0.0``): ``name`` was
    # used, ``other`` not; ``version`` is the version both name.
    TWIN_NAMES = "twin-names"
    # A tag naming a ``kind`` (a blob, a tree) rather than a commit: no release, skipped.
    TAG_NOT_A_COMMIT = "tag-not-a-commit"
    # gh failed (``detail``: its error) and GitHub's API listed the releases instead.
    LISTED_THROUGH_API = "listed-through-api"
    # gh failed (``detail``) and GitHub's API downloaded the asset ``name`` instead.
    DOWNLOADED_THROUGH_API = "downloaded-through-api"


@valueclass(frozen=True)
class SourceNote:
    """One thing a source said: its code, the source (``spec``, as given) and the data
    its words need."""

    code: SourceSaid
    spec: str
    name: str = ""
    other: str = ""
    version: str = ""
    kind: str = ""
    detail: str = ""
