"""gbrain's own record of an install (``.gbrain-source.json``), written beside tether's state
so gbrain's tools keep working. Its hashes are the recipe's bytes as copied (the baseline),
never the host's, so a keep-mine choice holds on the next refresh."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tether.fsio import read_bytes, sha256_bytes

if TYPE_CHECKING:
    from tether.flows.baseline import Baseline
    from tether.flows.project import Project, Release


def _manifest_target(path: str, target_root: str) -> str:
    prefix = target_root.rstrip("/") + "/"
    return path[len(prefix) :] if target_root not in ("", ".") and path.startswith(prefix) else path


def source_record(release: Release, copied_at: str, dropped: frozenset[str] = frozenset()) -> bytes:
    """``dropped``: files the host deleted and chose to keep deleted; their entries leave
    the record, as gbrain's own "remove from manifest" does."""
    manifest = release.manifest
    target_root = str(manifest.extra.get("target_root_relative_to_host_repo", "."))
    files = []
    for path in sorted(manifest.managed_paths()):
        if path in dropped:
            continue
        data = read_bytes(release.file_path(path))
        files.append(
            {
                "src": manifest.sources.get(path, path),
                "target": _manifest_target(path, target_root),
                "sha256": sha256_bytes(data),
                "mode": f"{release.mode_of(path):04o}",
            }
        )
    record = {
        "recipe": str(manifest.extra.get("recipe") or manifest.name),
        "gbrain_version": manifest.version,
        "install_kind": str(manifest.extra.get("install_kind") or "copy"),
        "copied_at": copied_at,
        "source": release.source,
        "files": files,
    }
    return (json.dumps(record, indent=2) + "\n").encode()


def recorded_drops(project: Project, baseline: Baseline) -> frozenset[str]:
    """Files tether installed whose entries the record no longer has: deletions a person
    chose to keep (a record that cannot be read drops nothing)."""
    from tether.parselimits import json_loads

    record_path = project.profile.source_record
    state = baseline.state
    if record_path is None or state is None or not project.path(record_path).is_file():
        return frozenset()
    try:
        record = json_loads(read_bytes(project.path(record_path)))
        listed = {str(f["target"]) for f in record["files"]}
    except (ValueError, KeyError, TypeError, OSError):
        return frozenset()
    target_root = str(baseline.manifest().extra.get("target_root_relative_to_host_repo", "."))
    return frozenset(p for p in state.files if _manifest_target(p, target_root) not in listed)
