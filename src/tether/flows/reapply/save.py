"""``reapply --save``: the installer's backup step done safely. Each call writes a new
timestamped folder and never touches an earlier one."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.flows.reapply.patches import META_FILE
from tether.flows.reapply.target import check_dir, prepare_runtime, profile_of
from tether.flows.safety import PathGuard, check_own_paths
from tether.fsio import cannot_read, file_mode, read_bytes, sha256_file
from tether.parselimits import json_loads
from tether.pathrules import project_path_problem
from tether.state.journal import new_run_id
from tether.state.lock import ProjectLock

PARTIAL_PREFIX = ".partial-"  # a --save folder still being written


@dataclass
class SaveReport:
    folder: Path | None  # None when nothing differed from the manifest
    files: list[str]
    absent: list[str]  # listed in the manifest, gone from the target: nothing to save
    checked: int

    def to_json(self) -> dict[str, Any]:
        return {
            "saved": str(self.folder) if self.folder else None,
            "files": self.files,
            "absent": self.absent,
            "checked": self.checked,
        }


def save_patches(target: Path, manifest: Path, patches: Path) -> SaveReport:
    """Copy every file whose sha256 differs from the install manifest into a NEW folder
    ``<patches>/<timestamp>/`` with ``backup-meta.json``; earlier folders are never touched.

    The folder is filled under a dot-name and renamed when complete, so an interrupted save
    never looks like a backup to ``reapply``.
    """
    check_dir(target, "target")
    installed = _read_manifest(manifest)
    check_own_paths(target, profile_of(target))
    prepare_runtime(target)
    with ProjectLock(target / profile_of(target).lock_file, command="reapply --save"):
        changed, absent = _customised(target, installed["files"])
        if not changed:
            return SaveReport(None, [], absent, len(installed["files"]))
        folder = _write_save(target, patches, installed, changed)
    return SaveReport(folder, changed, absent, len(installed["files"]))


def _read_manifest(manifest: Path) -> dict[str, Any]:
    try:
        data = json_loads(read_bytes(manifest))
    except OSError as error:
        raise TetherError(cannot_read(manifest, error, "the manifest")) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise TetherError(f"{manifest}: not valid JSON ({error})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise TetherError(f"{manifest}: expected {{'files': {{path: sha256}}}}")
    for rel in files:
        problem = project_path_problem(rel)
        if problem:
            raise TetherError(f"{manifest}: {rel!r}: {problem}")
    assert isinstance(data, dict)
    return data


def _customised(target: Path, files: Mapping[str, str]) -> tuple[list[str], list[str]]:
    changed: list[str] = []
    absent: list[str] = []
    for rel in sorted(files):
        path = target / rel
        if not path.is_file():
            absent.append(rel)
        elif sha256_file(path) != files[rel].lower():
            changed.append(rel)
    return changed, absent


def _write_save(target: Path, patches: Path, installed: dict[str, Any], changed: list[str]) -> Path:
    name = new_run_id()
    folder = patches / name
    staging = patches / f"{PARTIAL_PREFIX}{name}"
    saved = PathGuard(staging)
    for rel in changed:
        source = target / rel
        saved.write(rel, read_bytes(source), mode=file_mode(source))
    meta = {
        "backed_up_at": _iso_now(),
        "from_version": installed.get("version"),
        "from_manifest_timestamp": installed.get("timestamp"),
        "files": changed,
        "pristine_hashes": {rel: installed["files"][rel].lower() for rel in changed},
    }
    saved.write(META_FILE, (json.dumps(meta, indent=2) + "\n").encode())
    if folder.exists():  # new_run_id() carries random bits; this is only a last guard
        raise TetherError(f"{folder} already exists; not writing over an earlier backup")
    os.rename(staging, folder)
    return folder


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
