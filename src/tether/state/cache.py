"""Content-addressed pristine copies of every installed file, so a three-way merge
never needs the source again."""

from __future__ import annotations

import os
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import atomic_write, sha256_bytes


class PristineCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256[2:]

    def has(self, sha256: str) -> bool:
        return self.path_for(sha256).is_file()

    def put(self, data: bytes) -> str:
        digest = sha256_bytes(data)
        target = self.path_for(digest)
        try:
            if target.stat().st_size == len(data):
                return digest  # content-addressed: same name, same bytes
        except FileNotFoundError:
            pass
        self._write_new(target, data)
        return digest

    def adopt(self, source: Path, sha256: str, may_link: bool = False) -> None:
        """Cache a release file whose hash is already known. ``may_link`` (only for trees
        tether extracted itself and never rewrites) makes it a hard link, which costs a
        directory entry instead of a copy; a user's release folder is always copied, since
        an editor rewriting a file in place would change a linked entry too."""
        target = self.path_for(sha256)
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        if may_link and _linked(source, target):
            return
        data = source.read_bytes()
        if sha256_bytes(data) != sha256:
            raise TetherError(f"{source}: changed while tether was reading it; run again")
        self._write_new(target, data)

    @staticmethod
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
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def get(self, sha256: str) -> bytes | None:
        """The bytes with that hash, or None when missing or corrupted."""
        try:
            data = self.path_for(sha256).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise TetherError(f"{self.path_for(sha256)}: cannot read ({error.strerror})") from None
        return data if sha256_bytes(data) == sha256 else None


def _linked(source: Path, target: Path) -> bool:
    """Hard-link ``source`` as ``target``; False when this filesystem cannot (copy then)."""
    try:
        os.link(source, target)
    except FileExistsError:
        return True  # an entry with this content is already there
    except OSError:
        return False  # another filesystem, or links not allowed
    return True
