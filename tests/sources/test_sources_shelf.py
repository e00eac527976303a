"""A local directory of releases: <dir>/<version>/ and <dir>/v<version>/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers_sources import read_tree
from tether.errors import TetherError
from tether.sources import open_source
from tether.sources.protocol import ReleaseTree


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    root = tmp_path / "releases"
    for folder in (
        "1.0.0",
        "v1.1.0",
        "1.2.0-rc.1",
        "1.2.0-rc.10",
        "1.2.0-rc.2",
        "v2.0.0",
        "10.0.0",
    ):
        (root / folder).mkdir(parents=True)
        (root / folder / "README.md").write_text(f"release {folder}\n")
    (root / "notes").mkdir()  # not a version: ignored
    (root / "3.0.0").write_text("a file, not a release folder")
    return root


def test_lists_versions_in_semver_order_without_prereleases(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0", "2.0.0", "10.0.0"]


def test_lists_prereleases_in_place_when_asked(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    assert source.available_versions(include_prereleases=True) == [
        "1.0.0",
        "1.1.0",
        "1.2.0-rc.1",
        "1.2.0-rc.2",
        "1.2.0-rc.10",
        "2.0.0",
        "10.0.0",
    ]


def test_fetch_returns_the_release_folder_itself(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    assert source.fetch("1.0.0") == ReleaseTree("1.0.0", shelf / "1.0.0", str(shelf))
    tree = source.fetch("1.1.0")
    assert tree.root == shelf / "v1.1.0"
    assert read_tree(tree.root) == {"README.md": "release v1.1.0\n"}


def test_fetch_accepts_a_v_prefix_and_a_short_version(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    assert source.fetch("v2.0.0").version == "2.0.0"
    assert source.fetch("1.1").root == shelf / "v1.1.0"


def test_missing_version_lists_what_is_available(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    with pytest.raises(TetherError) as caught:
        source.fetch("9.9.9")
    message = str(caught.value)
    assert message.startswith(f"version 9.9.9 not found in {shelf} (available: 1.0.0, 1.1.0,")
    assert message.endswith("2.0.0, 10.0.0)")


def test_not_a_version_is_refused(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    with pytest.raises(TetherError, match="'latest' is not a version"):
        source.fetch("latest")


def test_a_shelf_never_writes_to_the_cache(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf), tmp_path / "cache")
    source.fetch("1.0.0")
    assert not (tmp_path / "cache").exists()


def test_empty_directory_offers_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    source = open_source(str(tmp_path / "empty"), tmp_path / "cache")
    assert source.available_versions() == []
    with pytest.raises(TetherError, match=r"\(available: none\)"):
        source.fetch("1.0.0")


def test_fetch_checks_the_folder_with_the_archive_rules(shelf: Path, tmp_path: Path) -> None:
    """Every caller of fetch (init, update, reapply, release notes) gets a checked folder."""
    (tmp_path / "secret").write_text("s")
    os.symlink("../../secret", shelf / "1.0.0" / "leak")
    source = open_source(str(shelf), tmp_path / "cache")
    with pytest.raises(TetherError) as caught:
        source.fetch("1.0.0")
    assert str(caught.value) == (
        f"refusing release folder {shelf / '1.0.0'}: member 'leak' is a symlink leading "
        "outside the tree ('../../secret')"
    )
    os.symlink("README.md", shelf / "v1.1.0" / "alias")  # stays inside: fine
    assert source.fetch("1.1.0").root == shelf / "v1.1.0"


def test_fetch_applies_the_size_limit_without_reading(shelf: Path, tmp_path: Path) -> None:
    with open(shelf / "1.0.0" / "big.bin", "wb") as out:
        out.truncate(101)  # sparse: the limit is judged from the size, nothing is read
    source = open_source(str(shelf), tmp_path / "cache", max_entry_bytes=100)
    with pytest.raises(TetherError, match=r"member 'big\.bin' is 101 bytes, over the limit of 100"):
        source.fetch("1.0.0")
