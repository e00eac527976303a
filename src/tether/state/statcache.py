"""A stat cache: (size, mtime_ns, ctime_ns, inode) → sha256 for project files tether hashed
or wrote, so ``status`` and planning skip reading files that did not change.

Kept in the git-ignored cache folder (inodes and mtimes belong to one checkout). An entry
is trusted only when the file's mtime is older than the moment the cache was written minus
a margin: a file changed within the same clock tick as its recording could otherwise keep
a stale hash (git calls this "racy"). The change time is part of the key because no program
can set it back the way ``touch -r`` sets the modification time.

That moment vouches for an entry only if the entry's hash was taken past the margin too: a
file hashed within the margin of its change may change again in the same tick after the
read. So a save never claims a moment later than the first such hash of its run, and drops
the entries the last save could not vouch for that its run did not hash again (a racy entry
becomes trusted only through a hash taken past the margin, which finds the same bytes).

Beside the files it keeps facts tether learnt about content it read, keyed by that content's
digest (and whatever else the answer depends on), so that a later run need not read, hash or
parse the content again: content with a given digest never changes, so neither does the
answer (``flows/status.py``: whether the installed manifest hands any path over).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from tether.fsio import atomic_write, open_regular, read_bytes, sha256_fd
from tether.parselimits import json_loads

RACY_MARGIN_NS = 2_000_000_000
SCHEMA = 3  # 3: a save vouches only for hashes taken past the margin

Key = tuple[int, int, int, int]


def stat_key(info: os.stat_result) -> Key:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


Entry = tuple[int, int, int, int, str]  # size, mtime_ns, ctime_ns, inode, sha256


class StatCache:
    """Entries are kept in the shape they are stored in (JSON arrays), so loading and
    saving tens of thousands of them is one C-level JSON call; a malformed entry simply
    never matches."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Sequence[object]] = {}
        self.facts: dict[str, object] = {}
        self.written_ns = 0
        self.dirty = False
        # What this run hashed (recorded or forgot) since the last save, and the first moment
        # it hashed a file within the margin of its change (None: none): a save vouches for
        # no moment after it.
        self._hashed: set[str] = set()
        self._racy_hash_ns: int | None = None
        self._load()

    def _load(self) -> None:
        try:
            data = json_loads(read_bytes(self.path))
            if data.get("schema_version") != SCHEMA or not isinstance(data["files"], dict):
                return
            self.written_ns = int(data["written_ns"])
            self.entries = data["files"]
            facts = data.get("facts", {})
            self.facts = facts if isinstance(facts, dict) else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.entries, self.facts, self.written_ns = {}, {}, 0  # a broken cache is empty

    def lookup(self, rel: str, info: os.stat_result) -> str | None:
        entry = self.entries.get(rel)
        if not isinstance(entry, (list, tuple)) or len(entry) != 5:
            return None
        if tuple(entry[:4]) != stat_key(info):
            return None
        if max(info.st_mtime_ns, info.st_ctime_ns) >= self.written_ns - RACY_MARGIN_NS:
            return None
        sha = entry[4]
        return sha if isinstance(sha, str) else None

    def record(
        self, rel: str, info: os.stat_result, sha: str, read_from_ns: int | None = None
    ) -> None:
        """Remember ``sha`` as the hash of the bytes ``rel`` held at ``info``, read from the
        moment ``read_from_ns`` (``time.time_ns()`` before the read; None: just now). A read
        that began within the margin of the file's change vouches for nothing."""
        entry: Entry = (*stat_key(info), sha)
        now = time.time_ns()
        read_from = now if read_from_ns is None else min(read_from_ns, now)
        changed = max(info.st_mtime_ns, info.st_ctime_ns)
        self._hashed.add(rel)
        if changed >= read_from - RACY_MARGIN_NS and (
            self._racy_hash_ns is None or read_from < self._racy_hash_ns
        ):
            self._racy_hash_ns = read_from
        old = self.entries.get(rel)
        if old is None or tuple(old) != entry or self._settles(changed, read_from):
            self.entries[rel] = entry
            self.dirty = True

    def _settles(self, changed: int, now: int) -> bool:
        """Whether saving now makes an entry trusted that the saved cache cannot vouch for:
        the file changed within the margin before the last save (an entry recorded right
        after its write, as init and update record theirs) and is older than the margin
        now. Without this a file recorded that way would be hashed by every later status,
        each finding the same entry and so never saving the cache again."""
        if changed < self.written_ns - RACY_MARGIN_NS:
            return False  # trusted already
        return changed < now - RACY_MARGIN_NS

    def record_on_disk(self, rel: str, path: Path) -> None:
        """Record the hash of the bytes ``path`` holds now, read for it: never a hash of
        bytes a run meant to write (a resumed run may keep what an interrupted one wrote).
        Nothing is recorded when the file changes while it is read, or cannot be read."""
        read_from = time.time_ns()
        try:
            fd, before = open_regular(path)
        except OSError:
            self.forget(rel)
            return
        try:
            sha = sha256_fd(fd)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if stat_key(before) == stat_key(after):
            self.record(rel, after, sha, read_from)
        else:
            self.forget(rel)

    def fact(self, key: str) -> object:
        """What was learnt under ``key`` (None: nothing)."""
        return self.facts.get(key)

    def learn(self, key: str, value: str) -> None:
        if self.facts.get(key) != value:
            self.facts[key] = value
            self.dirty = True

    def forget(self, rel: str) -> None:
        self._hashed.add(rel)
        if self.entries.pop(rel, None) is not None:
            self.dirty = True

    def _drop_unconfirmed(self) -> None:
        """Drop the entries the last save could not vouch for (or malformed) that this run
        did not hash again: saving under a later moment would vouch for them unread."""
        limit = self.written_ns - RACY_MARGIN_NS
        unconfirmed = []
        for rel, entry in self.entries.items():
            if rel in self._hashed:
                continue
            times = entry[1:3] if isinstance(entry, (list, tuple)) and len(entry) == 5 else ()
            if not (all(isinstance(t, int) for t in times) and max(times, default=limit) < limit):
                unconfirmed.append(rel)
        for rel in unconfirmed:
            del self.entries[rel]

    def save(self) -> None:
        """Write when something changed; never creates the cache folder's parents. A cache
        folder tether may not write in (a read-only checkout) is left as it is."""
        if not self.dirty or not self.path.parent.parent.exists():
            return
        now = time.time_ns()
        if self._racy_hash_ns is not None:
            now = min(now, self._racy_hash_ns)
        self._drop_unconfirmed()
        doc = {"schema_version": SCHEMA, "written_ns": now, "files": self.entries}
        if self.facts:
            doc["facts"] = self.facts
        try:
            atomic_write(self.path, json.dumps(doc, separators=(",", ":")).encode(), durable=False)
        except OSError:
            return  # a cache that cannot be written only costs the next run some reading
        self.written_ns, self.dirty = now, False
        self._hashed, self._racy_hash_ns = set(), None
