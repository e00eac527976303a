"""Content-addressed pristine copies of every installed file, so a three-way merge
never needs the source again.

An entry is either a loose file (``objects/ab/cdef…``) or a blob inside a pack
(``objects/pack/<name>.pack`` with its index ``<name>.idx``). A release's many new files go
into one pack, because creating thousands of small files costs far more than appending their
bytes to one; every entry is checked against its hash when read, whichever way it is stored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType

from tether.errors import TetherError
from tether.fsio import (
    TEMP_SUFFIX,
    atomic_write,
    cannot_read,
    read_bytes,
    sha256_bytes,
    write_all,
)
from tether.parselimits import json_loads
from tether.valueclass import field, valueclass

PACK_DIR = "pack"
PACK_SCHEMA = 1


class PackEntry:
    """Where one entry's bytes lie in a pack. A plain class: an index makes one per entry it
    holds, where a value class would take several times as long (a status reads the index
    for the one manifest it needs)."""

    __slots__ = ("length", "offset", "pack")

    def __init__(self, pack: Path, offset: int, length: int) -> None:
        self.pack = pack
        self.offset = offset
        self.length = length


class PristineCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._packed: dict[str, PackEntry] | None = None
        self._fanouts: set[str] | None = None  # the objects/xx folders loose entries are in

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256[2:]

    @property
    def pack_dir(self) -> Path:
        return self.root / PACK_DIR

    def packed(self) -> dict[str, PackEntry]:
        """Every packed entry, read from the packs' indexes once per cache object."""
        if self._packed is None:
            self._packed = {}
            try:
                for index in sorted(self.pack_dir.glob("*.idx")):
                    self._packed.update(_read_index(index))
            except (FileNotFoundError, NotADirectoryError):
                pass
        return self._packed

    def has(self, sha256: str) -> bool:
        if sha256 in self.packed():
            return True
        if sha256[:2] not in self._loose_folders():
            return False  # no look at the disk for each of a release's new files
        return os.path.isfile(os.path.join(self.root, sha256[:2], sha256[2:]))

    def _loose_folders(self) -> set[str]:
        """The fan-out folders, listed once per cache object and kept up to date by its own
        writes. An entry another writer adds meanwhile is only packed a second time."""
        if self._fanouts is None:
            try:
                self._fanouts = {name for name in os.listdir(self.root) if name != PACK_DIR}
            except (FileNotFoundError, NotADirectoryError):
                self._fanouts = set()
        return self._fanouts

    def _made_loose(self, sha256: str) -> None:
        if self._fanouts is not None:
            self._fanouts.add(sha256[:2])

    def put(self, data: bytes) -> str:
        digest = sha256_bytes(data)
        if digest in self.packed():
            return digest
        target = self.path_for(digest)
        try:
            if target.stat().st_size == len(data):
                return digest  # content-addressed: same name, same bytes
        except FileNotFoundError:
            pass
        _write_new(target, data)
        self._made_loose(digest)
        return digest

    def adopt(self, source: Path, sha256: str, may_link: bool = False) -> None:
        """Cache a release file whose hash is already known. ``may_link`` (only for trees
        tether extracted itself and never rewrites) makes it a hard link, which costs a
        directory entry instead of a copy; a user's release folder is always copied, since
        an editor rewriting a file in place would change a linked entry too."""
        target = self.path_for(sha256)
        if sha256 in self.packed() or target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        self._made_loose(sha256)
        if may_link and _linked(source, target):
            return
        _write_new(target, _read_expected(source, sha256))

    def pack_writer(self) -> PackWriter:
        """Collect new entries into one pack; entries already cached are skipped."""
        return PackWriter(self)

    def get(self, sha256: str) -> bytes | None:
        """The bytes with that hash, or None when missing or corrupted."""
        path = self.path_for(sha256)
        try:
            data: bytes | None = read_bytes(path)
        except FileNotFoundError:
            data = None
        except OSError as error:
            raise TetherError(cannot_read(path, error)) from None
        if data is None or sha256_bytes(data) != sha256:
            data = self._get_packed(sha256)
        return data if data is not None and sha256_bytes(data) == sha256 else None

    def _get_packed(self, sha256: str) -> bytes | None:
        entry = self.packed().get(sha256)
        if entry is None:
            return None
        try:
            with open(entry.pack, "rb") as handle:
                handle.seek(entry.offset)
                return handle.read(entry.length)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise TetherError(cannot_read(entry.pack, error)) from None


@valueclass()
class PackWriter:
    """Appends new entries to one pack file; ``close`` makes pack and index durable and
    visible (the index last, so a reader never sees an index without its pack)."""

    cache: PristineCache
    entries: dict[str, tuple[int, int]] = field(default_factory=dict)
    _fd: int | None = None
    _name: str = ""
    _size: int = 0

    def __enter__(self) -> PackWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()

    def has(self, sha256: str) -> bool:
        return sha256 in self.entries or self.cache.has(sha256)

    def add(self, data: bytes, sha256: str | None = None) -> str:
        digest = sha256 or sha256_bytes(data)
        if not self.has(digest):
            self._append(digest, data)
        return digest

    def adopt(self, source: Path, sha256: str) -> None:
        """Pack a release file whose hash is known, checking its bytes on the way."""
        if not self.has(sha256):
            self._append(sha256, _read_expected(source, sha256))

    def _temp(self) -> Path:
        return self.cache.pack_dir / f".{self._name}.pack{TEMP_SUFFIX}"

    def _append(self, digest: str, data: bytes) -> None:
        if self._fd is None:
            self.cache.pack_dir.mkdir(parents=True, exist_ok=True)
            _sweep_unfinished(self.cache.pack_dir)
            self._name = "pack-" + os.urandom(8).hex()
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            self._fd = os.open(self._temp(), flags, 0o644)
        write_all(self._fd, data)
        self.entries[digest] = (self._size, len(data))
        self._size += len(data)

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        pack = self.cache.pack_dir / f"{self._name}.pack"
        os.replace(self._temp(), pack)
        index = {
            "schema_version": PACK_SCHEMA,
            "pack": pack.name,
            "entries": {sha: list(span) for sha, span in self.entries.items()},
        }
        # Its folder's fsync after the index's rename makes the pack's rename durable too.
        atomic_write(pack.with_suffix(".idx"), json.dumps(index).encode())
        packed = self.cache.packed()
        for sha, (offset, length) in self.entries.items():
            packed[sha] = PackEntry(pack, offset, length)

    def discard(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.close(fd)
        self._temp().unlink(missing_ok=True)


def _sweep_unfinished(pack_dir: Path) -> None:
    """Remove what a killed writer left: temp packs, and packs whose index never came.
    Callers hold the project lock, so no other writer is midway."""
    for leftover in pack_dir.glob(f"*{TEMP_SUFFIX}"):
        leftover.unlink(missing_ok=True)
    for pack in pack_dir.glob("*.pack"):
        if not pack.with_suffix(".idx").exists():
            pack.unlink(missing_ok=True)


def _read_index(index: Path) -> dict[str, PackEntry]:
    """A pack's entries; an unreadable or malformed index counts as no pack (its entries
    are fetched from the source again when needed, and checked by hash anyway)."""
    try:
        doc = json_loads(read_bytes(index))
        pack = index.with_name(str(doc["pack"]))
        return {
            str(sha): PackEntry(pack, int(span[0]), int(span[1]))
            for sha, span in doc["entries"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return {}


def _read_expected(source: Path, sha256: str) -> bytes:
    data = read_bytes(source)
    if sha256_bytes(data) != sha256:
        raise TetherError(f"{source}: changed while tether was reading it; run again")
    return data


def _write_new(target: Path, data: bytes) -> None:
    """Straight to its final name, without a temp file or fsync: an entry is rebuilt
    from the source when torn, and a torn entry fails its hash check in ``get``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        atomic_write(target, data, mode=0o644, durable=False)  # a torn earlier entry
        return
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def _linked(source: Path, target: Path) -> bool:
    """Hard-link ``source`` as ``target``; False when this filesystem cannot (copy then)."""
    try:
        os.link(source, target)
    except FileExistsError:
        return True  # an entry with this content is already there
    except OSError:
        return False  # another filesystem, or links not allowed
    return True
