"""Record a tree's file hashes, and later say exactly what changed.

For a helper (a script, an agent) that prepares an update: record before it runs, check
afterwards that it touched nothing before approval, and that only the approved files
changed after. Regular files are hashed (sha256) with their executable bit; a symbolic link
is recorded by its target text and never followed. ``.git`` is left out by default: git
rewrites its own files on a mere ``git status``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import atomic_write, cannot_read, read_bytes, sha256_bytes, sha256_file
from tether.parselimits import json_loads

SCHEMA = 1
DEFAULT_EXCLUDE = (".git",)


@dataclass(frozen=True)
class Entry:
    kind: str  # file | link
    digest: str
    executable: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "sha256": self.digest, "executable": self.executable}


def _excluded(rel: str, patterns: Sequence[str]) -> bool:
    parts = rel.split("/")
    return any(
        fnmatch.fnmatchcase(rel, p) or any(fnmatch.fnmatchcase(part, p) for part in parts)
        for p in patterns
    )


def take(root: Path, exclude: Sequence[str] = DEFAULT_EXCLUDE) -> dict[str, Entry]:
    """Every file and link under ``root`` by relative POSIX path, sorted."""
    if not root.is_dir():
        raise TetherError(f"not a directory: {root}")
    entries: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else f"{rel_dir}/"
        dirnames[:] = sorted(d for d in dirnames if not _excluded(prefix + d, exclude))
        # os.walk lists links to folders as folders; record them as links instead.
        names = filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        for name in names:
            rel = prefix + name
            if not _excluded(rel, exclude):
                entries[rel] = _entry(Path(dirpath) / name)
    return dict(sorted(entries.items()))


def _entry(path: Path) -> Entry:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return Entry("link", sha256_bytes(os.readlink(path).encode("utf-8", "surrogateescape")))
    if not stat.S_ISREG(info.st_mode):
        return Entry("other", "")
    return Entry("file", sha256_file(path), bool(info.st_mode & stat.S_IXUSR))


def document(root: Path, entries: dict[str, Entry], exclude: Sequence[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA,
        "project_dir": str(root.resolve()),
        "exclude": list(exclude),
        "files": {rel: entry.to_json() for rel, entry in entries.items()},
    }


def record(root: Path, out: Path, exclude: Sequence[str] = DEFAULT_EXCLUDE) -> dict[str, Any]:
    doc = document(root, take(root, exclude), exclude)
    atomic_write(out, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    return doc


def load(path: Path) -> dict[str, Any]:
    try:
        doc = json_loads(read_bytes(path))
    except OSError as error:
        raise TetherError(cannot_read(path, error, "the baseline")) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: the baseline is not a snapshot ({error})") from None
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA or "files" not in doc:
        raise TetherError(
            f"{path}: the baseline is not a tether snapshot (schema_version {SCHEMA})"
        )
    return doc


def changes(baseline: dict[str, Any], root: Path) -> list[dict[str, str]]:
    """``[{path, change}]`` with change ``added``, ``removed``, ``modified`` or ``mode``."""
    exclude = baseline.get("exclude") or list(DEFAULT_EXCLUDE)
    now = {rel: e.to_json() for rel, e in take(root, exclude).items()}
    before: dict[str, Any] = baseline["files"]
    found = []
    for rel in sorted(set(before) | set(now)):
        old, new = before.get(rel), now.get(rel)
        if old is None:
            found.append({"path": rel, "change": "added"})
        elif new is None:
            found.append({"path": rel, "change": "removed"})
        elif old.get("sha256") != new["sha256"] or old.get("kind") != new["kind"]:
            found.append({"path": rel, "change": "modified"})
        elif bool(old.get("executable")) != new["executable"]:
            found.append({"path": rel, "change": "mode"})
    return found


def split_allowed(
    found: list[dict[str, str]], allow: Sequence[str]
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(changes outside the allowed globs, changes inside them)."""
    outside = [c for c in found if not any(fnmatch.fnmatchcase(c["path"], a) for a in allow)]
    inside = [c for c in found if c not in outside]
    return outside, inside


@dataclass(frozen=True)
class Recorded:
    """What ``tether snapshot`` wrote: the tree, the file (as given) and how many entries."""

    root: str
    out: str
    files: int

    def to_json(self) -> dict[str, Any]:
        return {"project_dir": self.root, "out": self.out, "files": self.files}


def record_tree(root: Path, out: str, exclude: Sequence[str] = ()) -> Recorded:
    """``tether snapshot``: record ``root`` in ``out``, leaving out ``.git`` and ``exclude``."""
    doc = record(root, Path(out), [*DEFAULT_EXCLUDE, *exclude])
    return Recorded(doc["project_dir"], out, len(doc["files"]))


@dataclass(frozen=True)
class Checked:
    """What ``tether snapshot check`` found: changes outside and inside the allowed globs."""

    baseline: str
    changed: list[dict[str, str]]
    allowed: list[dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "changed": self.changed, "allowed": self.allowed}


def check_tree(root: Path, baseline: str, allow: Sequence[str] = ()) -> Checked:
    """``tether snapshot check``: compare ``root`` with the snapshot file ``baseline``."""
    changed, allowed = split_allowed(changes(load(Path(baseline)), root), allow)
    return Checked(baseline, changed, allowed)
