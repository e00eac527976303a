"""An archive is bounded as a whole, not only member by member: a small ``.tar.gz`` that
unpacks to more than the release bound (or holds more entries than allowed) is refused in
one line while its headers are read, before anything is written. Real gzip tarballs of
zeros; the bounds set small through their environment variables."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from builders import make_release, run_tether
from helpers_sources import file_entry, hardlink_entry, listing, write_tar
from tether.errors import TetherError
from tether.sources import limits
from tether.sources.extract import extract_tar_safely

MIB = 1 << 20


@pytest.fixture(autouse=True)
def small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.RELEASE_BYTES, "4M")


BYTES_WORDS = (
    "its files unpack to more than 4,194,304 bytes (4 MiB) (TETHER_LIMIT_RELEASE_BYTES sets it)"
)


def _zeros(name: str, size: int) -> tuple[tarfile.TarInfo, bytes]:
    return file_entry(name, b"\0" * size)


def _bomb(dist: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """``kit-1.0.0.tgz``: a release (its manifest) followed by ``entries``."""
    folder = make_release(dist.parent / "build", "1.0.0", {"docs/a.md": "a\n"})
    manifest = (folder / ".tether/manifest.json").read_bytes()
    return write_tar(
        dist / "kit-1.0.0.tgz", [file_entry(".tether/manifest.json", manifest), *entries]
    )


def test_a_small_tarball_expanding_past_the_bound_is_refused_by_init(tmp_path: Path) -> None:
    archive = _bomb(tmp_path / "dist", [_zeros("docs/a.md", 6 * MIB)])
    assert archive.stat().st_size < 64 << 10  # 6 MiB of zeros compress to a few KiB
    project = tmp_path / "app"
    project.mkdir()
    source = str(tmp_path / "dist" / "kit-{version}.tgz")
    result = run_tether("init", "--source", source, "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr == f"tether: refusing archive {archive}: {BYTES_WORDS}\n"
    assert listing(project) == []


@pytest.mark.parametrize(
    "entries",
    [
        [_zeros(f"docs/{n}.bin", 2 * MIB) for n in range(3)],  # each member under the bound
        [  # links unpack to copies
            _zeros("docs/a.bin", 2 * MIB),
            hardlink_entry("docs/b.bin", "docs/a.bin"),
            hardlink_entry("docs/c.bin", "docs/a.bin"),
        ],
    ],
    ids=["three-members", "hard-links"],
)
def test_the_members_together_are_bounded(
    tmp_path: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]
) -> None:
    archive = write_tar(tmp_path / "in" / "kit.tgz", entries)
    with pytest.raises(TetherError) as caught:
        extract_tar_safely(archive, tmp_path / "out" / "tree")
    assert str(caught.value) == f"refusing archive {archive}: {BYTES_WORDS}"
    assert listing(tmp_path / "out") == []


def test_the_bound_stops_the_listing_before_the_end_of_the_archive(tmp_path: Path) -> None:
    """The headers are added up as they are read: an archive whose tail is damaged is refused
    for its size once it passes the bound, never read to its end."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for index in range(3):
            info, data = _zeros(f"f{index}", 3 * MIB)
            tar.addfile(info, io.BytesIO(data))
    damaged = raw.getvalue()[: 7 * MIB] + b"\xff" * 4096  # the third member's data cut off
    archive = tmp_path / "damaged.tar.gz"
    archive.write_bytes(gzip.compress(damaged))
    with pytest.raises(TetherError) as caught:
        extract_tar_safely(archive, tmp_path / "tree")
    assert str(caught.value) == f"refusing archive {archive}: {BYTES_WORDS}"


def test_the_number_of_entries_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.RELEASE_ENTRIES, "100")
    archive = write_tar(tmp_path / "many.tgz", [file_entry(f"f{n}", b"") for n in range(150)])
    with pytest.raises(TetherError) as caught:
        extract_tar_safely(archive, tmp_path / "tree")
    assert str(caught.value) == (
        f"refusing archive {archive}: it holds more than 100 entries "
        "(TETHER_LIMIT_RELEASE_ENTRIES sets it)"
    )
    assert not (tmp_path / "tree").exists()


def test_an_archive_within_the_bounds_unpacks(tmp_path: Path) -> None:
    archive = write_tar(
        tmp_path / "ok.tgz", [_zeros("a.bin", 2 * MIB), _zeros("b.bin", 2 * MIB - 1)]
    )
    extract_tar_safely(archive, tmp_path / "tree")
    assert (tmp_path / "tree" / "b.bin").stat().st_size == 2 * MIB - 1


def test_a_bound_set_to_nonsense_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(limits.RELEASE_ENTRIES, "many")
    archive = write_tar(tmp_path / "ok.tgz", [_zeros("a.bin", 1)])
    with pytest.raises(TetherError, match=r"^TETHER_LIMIT_RELEASE_ENTRIES='many': not a whole"):
        extract_tar_safely(archive, tmp_path / "tree")
