"""Tarball sources: local templates (listed by glob) and URL templates over real HTTP."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from helpers_sources import (
    file_entry,
    listing,
    read_tree,
    release_tar,
    serve_directory,
    symlink_entry,
    write_tar,
)
from tether.errors import TetherError
from tether.sources import open_source


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    root = tmp_path / "dist"
    for version in ("1.0.0", "1.1.0", "2.0.0-beta.1"):
        release_tar(
            root / f"app-{version}.tar.gz",
            {"README.md": f"app {version}\n", "src/main.py": "print()\n"},
            top=f"app-{version}",
        )
    (root / "app-latest.tar.gz").write_bytes(b"not a version")
    (root / "app-v3.0.0.tar.gz").write_bytes(b"does not read back through the template")
    (root / "notes.txt").write_text("ignored")
    return root


def test_local_template_lists_versions_by_glob(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf / "app-{version}.tar.gz"), tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0"]
    assert source.available_versions(include_prereleases=True) == ["1.0.0", "1.1.0", "2.0.0-beta.1"]


def test_local_template_fetch_strips_the_top_folder(shelf: Path, tmp_path: Path) -> None:
    spec = str(shelf / "app-{version}.tar.gz")
    tree = open_source(spec, tmp_path / "cache").fetch("1.1.0")
    assert (tree.version, tree.source) == ("1.1.0", spec)
    assert tree.root.is_relative_to(tmp_path / "cache")
    assert read_tree(tree.root) == {"README.md": "app 1.1.0\n", "src/main.py": "print()\n"}


def test_tag_placeholder_in_a_folder_name(tmp_path: Path) -> None:
    for version in ("0.9.0", "1.0.0"):
        release_tar(tmp_path / "rel" / f"v{version}" / "app.tar", {"VERSION": version})
    (tmp_path / "rel" / "1.5.0").mkdir()  # no "v": not what {tag} means
    release_tar(tmp_path / "rel" / "1.5.0" / "app.tar", {"VERSION": "1.5.0"})
    source = open_source(str(tmp_path / "rel" / "{tag}" / "app.tar"), tmp_path / "cache")
    assert source.available_versions() == ["0.9.0", "1.0.0"]
    assert read_tree(source.fetch("v1.0.0").root) == {"VERSION": "1.0.0"}


def test_both_placeholders_must_agree(tmp_path: Path) -> None:
    release_tar(tmp_path / "v1.0.0" / "app-1.0.0.tar", {"a": "a"})
    release_tar(tmp_path / "v1.0.0" / "app-2.0.0.tar", {"a": "a"})
    source = open_source(str(tmp_path / "{tag}" / "app-{version}.tar"), tmp_path / "cache")
    assert source.available_versions() == ["1.0.0"]


def test_local_template_missing_version(shelf: Path, tmp_path: Path) -> None:
    spec = str(shelf / "app-{version}.tar.gz")
    with pytest.raises(TetherError) as caught:
        open_source(spec, tmp_path / "cache").fetch("1.2.0")
    assert str(caught.value) == (
        f"version 1.2.0 not found in {spec} (available: 1.0.0, 1.1.0, 2.0.0-beta.1)"
    )
    assert not (tmp_path / "cache").exists()


def test_short_version_finds_the_listed_tarball(shelf: Path, tmp_path: Path) -> None:
    source = open_source(str(shelf / "app-{version}.tar.gz"), tmp_path / "cache")
    assert read_tree(source.fetch("1.1").root)["README.md"] == "app 1.1.0\n"


def test_plain_tarball_path_needs_a_placeholder(shelf: Path, tmp_path: Path) -> None:
    with pytest.raises(TetherError, match=r"needs \{version\} or \{tag\} in its path"):
        open_source(str(shelf / "app-1.0.0.tar.gz"), tmp_path / "cache")


def test_malicious_local_tarball_leaves_no_cache(tmp_path: Path) -> None:
    write_tar(
        tmp_path / "evil-1.0.0.tar",
        [file_entry("fine", "x"), symlink_entry("escape", "../../../etc")],
    )
    source = open_source(str(tmp_path / "evil-{version}.tar"), tmp_path / "cache")
    with pytest.raises(TetherError, match="'escape' is a symlink leading outside the tree"):
        source.fetch("1.0.0")
    assert not (tmp_path / "cache").exists()


def test_file_url_with_placeholder_is_a_local_template(shelf: Path, tmp_path: Path) -> None:
    source = open_source(f"file://{shelf}/app-{{version}}.tar.gz", tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.1.0"]


# --- over HTTP -------------------------------------------------------------------------


def test_url_template_fetch(shelf: Path, tmp_path: Path) -> None:
    with serve_directory(shelf) as base:
        spec = f"{base}/app-{{version}}.tar.gz"
        tree = open_source(spec, tmp_path / "cache").fetch("1.0.0")
    assert tree.source == spec
    assert read_tree(tree.root) == {"README.md": "app 1.0.0\n", "src/main.py": "print()\n"}
    # Only the tree stays in the cache: the download was scratch.
    key_dir = tree.root.parent
    assert sorted(p.name for p in key_dir.iterdir()) == ["1.0.0"]


def test_url_template_with_tag_placeholder(tmp_path: Path) -> None:
    release_tar(tmp_path / "srv" / "v2.0.0" / "release.tgz", {"x": "2"}, top="x-2.0.0")
    with serve_directory(tmp_path / "srv") as base:
        tree = open_source(f"{base}/{{tag}}/release.tgz", tmp_path / "cache").fetch("2.0.0")
    assert read_tree(tree.root) == {"x": "2"}


def test_url_template_cannot_list_versions(shelf: Path, tmp_path: Path) -> None:
    source = open_source("https://example.org/app-{version}.tar.gz", tmp_path / "cache")
    with pytest.raises(TetherError, match="pass an explicit version"):
        source.available_versions()


def test_url_template_missing_version_is_a_404(shelf: Path, tmp_path: Path) -> None:
    with serve_directory(shelf) as base:
        spec = f"{base}/app-{{version}}.tar.gz"
        with pytest.raises(TetherError) as caught:
            open_source(spec, tmp_path / "cache").fetch("9.0.0")
    assert str(caught.value) == (
        f"version 9.0.0 not found in {spec}: {base}/app-9.0.0.tar.gz returned HTTP 404"
    )
    assert not (tmp_path / "cache").exists()


def test_url_serving_something_else_than_a_tarball(shelf: Path, tmp_path: Path) -> None:
    (shelf / "page-1.0.0.tar.gz").write_text("<html>login</html>")
    with serve_directory(shelf) as base:
        url = f"{base}/page-1.0.0.tar.gz"
        with pytest.raises(TetherError, match=re.escape(f"{url}: cannot read the archive (")):
            open_source(f"{base}/page-{{version}}.tar.gz", tmp_path / "cache").fetch("1.0.0")
    assert listing(tmp_path / "cache") == []


def test_unreachable_url_names_it(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/app-1.0.0.tgz"
    source = open_source(f"http://127.0.0.1:{port}/app-{{version}}.tgz", tmp_path / "cache")
    with pytest.raises(TetherError, match=f"cannot download {url}: "):
        source.fetch("1.0.0")
    assert not (tmp_path / "cache").exists()
