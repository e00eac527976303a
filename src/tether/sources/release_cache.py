"""The cache of fetched release trees: ``<cache_dir>/<source-key>/<version>/``.

A version folder exists only once complete: every fetch builds in a hidden
``.<version>.partial-*`` sibling and renames it into place as its last step (rename is
atomic), so presence means complete. Leftovers of an interrupted fetch are removed
before the next attempt, and a failed fetch removes its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import atomic_write, read_bytes
from tether.sources.folder import check_release_folder
from tether.sources.limits import DEFAULT_MAX_ENTRY_BYTES

PARTIAL = ".partial-"
NOTE = ".note"  # ``.<version>.note`` beside a version's tree
_NOTE_MAX = 4096


def source_key(kind: str, location: str) -> str:
    """A short stable folder name for one source (kind + normalised location)."""
    return hashlib.sha256(f"{kind}\0{location}".encode()).hexdigest()[:16]


class TreeCache:
    """Release trees of one source, one folder per version."""

    def __init__(
        self, cache_dir: Path, key: str, max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES
    ) -> None:
        self.cache_dir = cache_dir
        self.base = cache_dir / key
        self.max_entry_bytes = max_entry_bytes

    def path(self, version: str) -> Path:
        return self.base / version

    def cached(self, version: str) -> Path | None:
        """The complete tree for ``version``, or None when it was never fetched.

        The cache lies in the project, where anything can change it between runs: a tree
        read back obeys the rules of a release folder (``folder.check_release_folder``: no
        link leading out, no FIFO, ...), and the folders holding it are plain folders."""
        tree = self.path(version)
        for folder in (self.cache_dir, self.base, tree):
            try:
                info = os.lstat(folder)
            except OSError:
                return None
            if stat.S_ISLNK(info.st_mode):
                raise TetherError(
                    f"{folder}: is a symbolic link; tether reads cached releases only from "
                    "plain folders (remove it to fetch the release again)"
                )
            if not stat.S_ISDIR(info.st_mode):
                return None
        label = f"{tree} (tether's release cache; remove it to fetch the release again)"
        check_release_folder(tree, label, self.max_entry_bytes)
        return tree

    def twin(self, version: str) -> tuple[str, str, str] | None:
        """The twin names kept beside the tree of ``version`` (``build``): the name used,
        the other and the version both name; None without them. They are printed in
        reports, so a file holding anything but three lines of printable text (a terminal
        escape written there by someone else, a note of an older tether) is not read."""
        try:
            info = os.lstat(self._note_path(version))
            if not stat.S_ISREG(info.st_mode) or info.st_size > _NOTE_MAX:
                return None
            text = read_bytes(self._note_path(version)).decode("utf-8", "replace")
        except OSError:
            return None
        lines = text.splitlines()
        if len(lines) != 3 or not all(line and line.isprintable() for line in lines):
            return None
        return lines[0], lines[1], lines[2]

    def _note_path(self, version: str) -> Path:
        return self.base / f".{version}{NOTE}"

    def build(
        self,
        version: str,
        fill: Callable[[Path, Path], None],
        twin: tuple[str, str, str] | None = None,
    ) -> Path:
        """Fetch ``version`` once: ``fill(work, tree)`` must create ``tree``, using ``work``
        (an empty private folder) for any download. The tree is moved into the cache only
        when ``fill`` returns; on any failure nothing of this attempt remains. ``twin`` (the
        name used, the other name of the version and the version, when two names spell
        it) is kept beside it, for the runs that read it back to say so."""
        final = self.path(version)
        created: list[Path] = []
        try:
            created = self._ensure_base()
            self.remove_leftovers(version)
            work = Path(tempfile.mkdtemp(prefix=f".{version}{PARTIAL}", dir=self.base))
        except OSError as error:  # a cache folder tether may not write in
            self._prune(created)
            raise TetherError(
                f"{self.cache_dir}: cannot store release {version} there ({error.strerror})"
            ) from None
        try:
            fill(work, work / "tree")
            if twin is not None:
                text = "".join(f"{line}\n" for line in twin)
                atomic_write(self._note_path(version), text.encode(), durable=False)
            else:
                self._note_path(version).unlink(missing_ok=True)
            try:
                os.rename(work / "tree", final)
            except OSError:
                # Another run finished the same version first; its tree is as good as ours.
                if self.cached(version) is None:
                    raise
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            self._prune(created)
            raise
        shutil.rmtree(work, ignore_errors=True)
        return final

    def remove_leftovers(self, name: str) -> None:
        """Remove what an interrupted build of ``name`` (a version, or a scratch name) left:
        a rerun must not trust it."""
        if not self.base.is_dir():
            return
        for leftover in self.base.glob(f".{name}{PARTIAL}*"):
            shutil.rmtree(leftover, ignore_errors=True)

    def scratch(self, name: str) -> Path:
        """A hidden per-source path for helper data (such as a git mirror)."""
        return self.base / f".{name}"

    def _ensure_base(self) -> list[Path]:
        """Create the cache folders; return the ones created, so a failure can undo them."""
        created: list[Path] = []
        folder = self.base
        while not folder.exists() and folder != folder.parent:
            created.insert(0, folder)
            folder = folder.parent
        self.base.mkdir(parents=True, exist_ok=True)
        return created

    def _prune(self, created: list[Path]) -> None:
        """Remove folders this attempt created if they are still empty ("nothing written")."""
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                return
