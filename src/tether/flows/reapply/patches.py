"""The saved patches: one ``backup-meta.json`` and the user's copies beside it, as an
installer (GSD's, for one) leaves them before it wipes its files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import read_bytes, sha256_bytes
from tether.parselimits import json_loads

META_FILE = "backup-meta.json"


@dataclass(frozen=True)
class PatchSet:
    """One saved backup: ``backup-meta.json`` and the user's copies beside it."""

    root: Path
    files: tuple[str, ...]
    pristine_hashes: dict[str, str]
    from_version: str | None
    meta_sha256: str
    folder: Path  # the patches folder given or found (``root`` or its parent)

    def saved(self, rel: str) -> Path:
        return self.root / rel


def find_patch_set(patches: Path) -> Path:
    """The folder holding ``backup-meta.json``: ``patches`` itself, else its newest saved
    subfolder (``--save`` writes one per run, named so that names sort by time)."""
    if (patches / META_FILE).is_file():
        return patches
    if not patches.is_dir():
        raise TetherError(f"{patches}: no such patches folder")
    saved = sorted(
        child
        for child in patches.iterdir()
        if child.is_dir() and not child.name.startswith(".") and (child / META_FILE).is_file()
    )
    if not saved:
        raise TetherError(f"{patches}: no {META_FILE} here or in a saved subfolder")
    return saved[-1]


def load_patch_set(patches: Path) -> PatchSet:
    root = find_patch_set(patches)
    raw = read_bytes(root / META_FILE)
    try:
        meta = json_loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise TetherError(f"{root / META_FILE}: not valid JSON ({error})") from None
    if not isinstance(meta, dict):
        raise TetherError(f"{root / META_FILE}: expected a JSON object")
    files = meta.get("files")
    if not isinstance(files, list) or not all(isinstance(p, str) for p in files):
        raise TetherError(f"{root / META_FILE}: 'files' must be a list of paths")
    hashes = meta.get("pristine_hashes") or {}
    if not isinstance(hashes, dict) or not all(isinstance(v, str) for v in hashes.values()):
        raise TetherError(f"{root / META_FILE}: 'pristine_hashes' must map paths to sha256")
    version = meta.get("from_version")
    return PatchSet(
        root=root,
        files=tuple(dict.fromkeys(files)),
        pristine_hashes={str(k): v.lower() for k, v in hashes.items()},
        from_version=str(version) if version is not None else None,
        meta_sha256=sha256_bytes(raw),
        folder=patches,
    )
