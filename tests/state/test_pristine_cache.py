"""The pristine cache: loose entries and packs, each entry checked by hash when read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tether.state.pristine import PristineCache


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_pack_holds_many_entries_in_one_file(tmp_path: Path) -> None:
    cache = PristineCache(tmp_path / "objects")
    blobs = [f"file {i}\n".encode() * (i + 1) for i in range(50)]
    with cache.pack_writer() as pack:
        digests = [pack.add(blob) for blob in blobs]
        assert pack.add(blobs[0]) == digests[0]  # the same bytes are packed once
    packs = sorted(p.name for p in (tmp_path / "objects/pack").iterdir())
    assert len(packs) == 2 and packs[0].endswith(".idx") and packs[1].endswith(".pack")
    assert (tmp_path / "objects/pack" / packs[1]).stat().st_size == sum(map(len, blobs))
    fresh = PristineCache(tmp_path / "objects")  # reads the index from disk
    for blob, digest in zip(blobs, digests, strict=True):
        assert fresh.has(digest)
        assert fresh.get(digest) == blob
    assert not fresh.has(sha(b"never stored"))
    assert fresh.get(sha(b"never stored")) is None
    assert not any(p.is_dir() and p.name != "pack" for p in (tmp_path / "objects").iterdir())


def test_entries_already_cached_are_not_packed_again(tmp_path: Path) -> None:
    cache = PristineCache(tmp_path / "objects")
    loose = cache.put(b"loose\n")
    with cache.pack_writer() as pack:
        pack.add(b"packed\n")
    with cache.pack_writer() as pack:
        assert pack.add(b"loose\n") == loose
        pack.add(b"packed\n")
        assert pack.entries == {}
    assert len(list((tmp_path / "objects/pack").glob("*.pack"))) == 1


def test_loose_entries_added_after_a_lookup_are_found(tmp_path: Path) -> None:
    """The cache lists its loose-entry folders once; its own later entries still count."""
    cache = PristineCache(tmp_path / "objects")
    assert not cache.has(sha(b"put\n"))  # looked before anything was stored
    put = cache.put(b"put\n")
    source = tmp_path / "release-file.txt"
    source.write_bytes(b"adopted\n")
    cache.adopt(source, sha(b"adopted\n"))
    assert cache.has(put) and cache.has(sha(b"adopted\n"))
    with cache.pack_writer() as pack:
        pack.add(b"put\n")
        pack.add(b"adopted\n")
        assert pack.entries == {}


def test_a_corrupted_pack_entry_reads_as_missing(tmp_path: Path) -> None:
    cache = PristineCache(tmp_path / "objects")
    with cache.pack_writer() as pack:
        first, second = pack.add(b"first\n"), pack.add(b"second\n")
    [pack_file] = (tmp_path / "objects/pack").glob("*.pack")
    with open(pack_file, "r+b") as handle:
        handle.write(b"F")
    fresh = PristineCache(tmp_path / "objects")
    assert fresh.get(first) is None
    assert fresh.get(second) == b"second\n"


def test_a_malformed_index_counts_as_no_pack(tmp_path: Path) -> None:
    cache = PristineCache(tmp_path / "objects")
    with cache.pack_writer() as pack:
        digest = pack.add(b"x\n")
    [index] = (tmp_path / "objects/pack").glob("*.idx")
    index.write_text('{"entries": [')
    assert PristineCache(tmp_path / "objects").get(digest) is None
    index.write_text(json.dumps({"pack": "gone.pack", "entries": {digest: [0, 2]}}))
    assert PristineCache(tmp_path / "objects").get(digest) is None


def test_a_failed_writer_leaves_nothing_and_a_killed_one_is_swept(tmp_path: Path) -> None:
    cache = PristineCache(tmp_path / "objects")
    with pytest.raises(RuntimeError), cache.pack_writer() as pack:
        pack.add(b"half\n")
        raise RuntimeError("stop")
    assert list((tmp_path / "objects/pack").iterdir()) == []
    # what a kill -9 leaves: a temp pack, and a pack whose index was never written
    (tmp_path / "objects/pack/.pack-dead.pack.tether-tmp").write_bytes(b"junk")
    (tmp_path / "objects/pack/pack-orphan.pack").write_bytes(b"junk")
    with cache.pack_writer() as pack:
        digest = pack.add(b"whole\n")
    names = sorted(p.name for p in (tmp_path / "objects/pack").iterdir())
    assert len(names) == 2 and not any("dead" in n or "orphan" in n for n in names)
    assert PristineCache(tmp_path / "objects").get(digest) == b"whole\n"


def test_adopt_checks_the_bytes_against_the_known_hash(tmp_path: Path) -> None:
    from tether.errors import TetherError

    source = tmp_path / "release.txt"
    source.write_bytes(b"what the manifest says\n")
    cache = PristineCache(tmp_path / "objects")
    wrong = sha(b"something else\n")
    with pytest.raises(TetherError, match="changed while tether"), cache.pack_writer() as pack:
        pack.adopt(source, wrong)
    with cache.pack_writer() as pack:
        pack.adopt(source, sha(source.read_bytes()))
    assert PristineCache(tmp_path / "objects").get(sha(source.read_bytes())) == source.read_bytes()
