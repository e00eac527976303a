"""The collision key (``pathrules.collision_key``): two paths one file on macOS or Windows.
An ASCII path takes a shortcut; it must give the key the whole rule gives."""

from __future__ import annotations

import unicodedata

import pytest

from tether.pathrules import collision_key


def whole_rule(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def test_every_ascii_character_keys_as_the_whole_rule_keys_it() -> None:
    for code in range(128):
        assert collision_key(chr(code)) == whole_rule(chr(code)), code


@pytest.mark.parametrize(
    ("path", "other"),
    [
        ("README.md", "readme.MD"),
        (".TETHER/state.json", ".tether/state.json"),
        ("caf\u00e9.txt", "CAFE\u0301.txt"),  # composed and decomposed, case apart
        ("stra\u00dfe.md", "STRASSE.md"),  # casefold, not lower
    ],
)
def test_paths_one_file_apart_share_a_key(path: str, other: str) -> None:
    assert collision_key(path) == collision_key(other) == whole_rule(path)
