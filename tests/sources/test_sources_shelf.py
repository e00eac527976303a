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


# Files each of which one rule of member_problem refuses (names spelled for ext4, where
# every byte but "/" and NUL may stand in a name), and the plain ones beside them.
_REFUSED_FILES = {
    "a:b.txt": 0o644,  # looks like a drive letter
    "big.bin": 0o644,  # over the limit below
    "setuid.sh": 0o4755,
    "setgid.sh": 0o2755,
    "open.txt": 0o666,  # writable by every user
    "line\nbreak.txt": 0o644,  # a control character in the name
}


@pytest.mark.parametrize("name", sorted(_REFUSED_FILES))
def test_a_folder_file_is_refused_as_its_member_would_be(tmp_path: Path, name: str) -> None:
    """The walk leaves out of its members only files no rule refuses; each refused one is
    refused in member_problem's own words, as when every file was made a member."""
    from tether.sources.folder import _member, check_release_folder
    from tether.sources.members import member_problem, refusal

    root = tmp_path / "1.0.0"
    (root / "sub").mkdir(parents=True)
    (root / "plain.txt").write_text("x\n")
    (root / "sub" / "plain.py").write_text("y\n")
    path = root / name  # at the top: "a:b.txt" looks like a drive letter only there
    path.write_bytes(b"z" * (200 if name == "big.bin" else 10))
    os.chmod(path, _REFUSED_FILES[name])
    member = _member(str(path), name, os.lstat(path))
    why = member_problem(member, 100)
    assert why is not None
    with pytest.raises(TetherError) as raised:
        check_release_folder(root, "R", 100)
    assert str(raised.value) == str(refusal("release folder R", name, why))


def test_a_folder_walk_makes_no_member_of_a_plain_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release's many plain files are judged without a member each (docs/performance.md):
    only its folders are made members."""
    from tether.sources import folder

    root = tmp_path / "1.0.0"
    (root / "a" / "b").mkdir(parents=True)
    for rel in ("top.txt", "a/one.py", "a/b/two.md"):
        (root / rel).write_text(rel)
    made: list[str] = []
    real_member = folder._member

    def counted(path: str, rel: str, info: os.stat_result) -> object:
        made.append(rel)
        return real_member(path, rel, info)

    monkeypatch.setattr(folder, "_member", counted)
    folder.check_release_folder(root, "R", 1 << 20)
    assert sorted(made) == ["a", "a/b"]
