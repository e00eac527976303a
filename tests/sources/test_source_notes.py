"""What a release source says is a fact (``model/source_notes.py``) of its ``notes``,
worded by ``report/notes.py`` among every other note, the same words in each report."""

from __future__ import annotations

import pytest

from tether.model.source_notes import SourceNote, SourceSaid
from tether.report.notes import worded_notes

WORDS = [
    (
        SourceNote(SourceSaid.TWIN_NAMES, "/up", "2.0.0", "v2.0.0", "2.0.0"),
        "/up: both 2.0.0 and v2.0.0 name version 2.0.0; 2.0.0 was used (a name without a "
        "leading v wins)",
    ),
    (
        SourceNote(SourceSaid.TAG_NOT_A_COMMIT, "/up", "v3.0.0", kind="tree"),
        "/up: tag v3.0.0 names a tree, not a commit, so it is no release; skipped",
    ),
    (
        SourceNote(SourceSaid.LISTED_THROUGH_API, "gh:acme/kit", detail="HTTP 401"),
        "gh: HTTP 401; the releases of gh:acme/kit were listed through GitHub's API",
    ),
    (
        SourceNote(SourceSaid.DOWNLOADED_THROUGH_API, "gh:acme/kit", "kit-v1.tar.gz", detail="x"),
        "gh: x; kit-v1.tar.gz was downloaded through GitHub's API",
    ),
]


@pytest.mark.parametrize(("note", "words"), WORDS)
def test_each_thing_a_source_says_is_worded_in_report(note: SourceNote, words: str) -> None:
    assert worded_notes([note]) == [words]


def test_every_kind_of_source_note_has_words() -> None:
    assert {note.code for note, _ in WORDS} == set(SourceSaid)
