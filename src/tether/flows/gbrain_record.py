"""gbrain's own record of an install (``.gbrain-source.json``), written where gbrain keeps it so
gbrain's tools keep working. Its hashes are the recipe's bytes as copied (the baseline),
never the host's, so a keep-mine choice holds on the next refresh.

gbrain's path model: a manifest entry's ``target`` is relative to the host repository's root,
and the record, the refresh log and the refresh lock sit in the recipe's target root
(``<host>/<target_root_relative_to_host_repo>/``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.fsio import read_bytes, sha256_bytes

if TYPE_CHECKING:
    from tether.flows.baseline import Baseline
    from tether.flows.project import Project, Release
    from tether.model.manifest import Manifest


TARGET_ROOT_KEY = "target_root_relative_to_host_repo"


def target_root(manifest: Manifest) -> str:
    """The recipe's target root in the host ("" for the host's root)."""
    root = str(manifest.extra.get(TARGET_ROOT_KEY, ".")).strip("/")
    return "" if root in ("", ".") else root


def ecosystem_path(manifest: Manifest, name: str) -> str:
    """Where gbrain keeps one of its files (record, log, lock) for this recipe, in the host."""
    root = target_root(manifest)
    return f"{root}/{name}" if root else name


def record_path(project: Project, manifest: Manifest) -> str | None:
    """The host path of gbrain's record of this install; None for other ecosystems."""
    name = project.profile.source_record
    return ecosystem_path(manifest, name) if name else None


def source_record(release: Release, copied_at: str, dropped: frozenset[str] = frozenset()) -> bytes:
    """``dropped``: files the host deleted and chose to keep deleted; their entries leave
    the record, as gbrain's own "remove from manifest" does."""
    manifest = release.manifest
    files = []
    for path in sorted(manifest.managed_paths()):
        if path in dropped:
            continue
        data = read_bytes(release.file_path(path))
        files.append(
            {
                "src": manifest.sources.get(path, path),
                "target": path,
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


def installed_manifest(project: Project) -> Manifest | None:
    """The installed recipe's manifest, for where gbrain keeps its files; None when it cannot
    be read (nothing installed yet: the files are looked for at the host's root)."""
    from tether.errors import TetherError
    from tether.flows.baseline import load_baseline

    try:
        if project.load_state() is None:
            return None
        return load_baseline(project).manifest()
    except (TetherError, OSError):
        return None


def recorded_drops(project: Project, baseline: Baseline) -> frozenset[str]:
    """Files tether installed whose entries the record no longer has: deletions a person
    chose to keep (a record that cannot be read drops nothing)."""
    from tether.parselimits import json_loads

    state = baseline.state
    if state is None:
        return frozenset()
    rel = record_path(project, baseline.manifest())
    if rel is None or not project.path(rel).is_file():
        return frozenset()
    try:
        record = json_loads(read_bytes(project.path(rel)))
        listed = {str(f["target"]) for f in record["files"]}
    except (ValueError, KeyError, TypeError, OSError):
        return frozenset()
    return frozenset(p for p in state.files if p not in listed)


@dataclass(frozen=True)
class RecordedInstall:
    """gbrain's record of an install it made itself: per copied file (its host path) the
    sha256 and mode gbrain recorded, and the version it copied."""

    path: str  # the record, in the host
    version: str
    files: dict[str, tuple[str, int]]  # target -> (sha256, mode)


def read_recorded_install(project: Project, manifest: Manifest) -> RecordedInstall | None:
    """The record gbrain keeps in the recipe's target root, when there is one: the baseline
    of a host gbrain installed without tether. None when there is none; a record that is
    not one (bad JSON, a malformed entry, a path outside the host) stops init."""
    import re

    from tether.errors import TetherError
    from tether.parselimits import json_loads
    from tether.pathrules import project_path_problem

    rel = record_path(project, manifest)
    if rel is None or not project.path(rel).is_file():
        return None
    where = project.path(rel)

    def refuse(problem: str) -> TetherError:
        return TetherError(
            f"{where}: {problem}; not gbrain's record of an install, nothing was installed "
            "(move it away to install afresh)"
        )

    try:
        data = json_loads(read_bytes(where))
    except (ValueError, UnicodeDecodeError) as error:
        raise refuse(f"not JSON ({error})") from None
    except OSError as error:
        raise TetherError(f"{where}: cannot read ({error.strerror})") from None
    entries = data.get("files") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise refuse("no files list")
    reserved = project.profile.reserved_paths()
    files: dict[str, tuple[str, int]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise refuse(f"files[{index}] is not an object")
        target, digest = entry.get("target"), entry.get("sha256")
        if not isinstance(target, str) or not isinstance(digest, str):
            raise refuse(f"files[{index}] has no target or sha256")
        problem = project_path_problem(target) or reserved.problem(target)
        if problem:
            raise refuse(f"files[{index}] target {target!r}: {problem}")
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise refuse(f"files[{index}] sha256 is not one")
        try:
            mode = int(str(entry.get("mode", "0644")), 8) & 0o777
        except ValueError:
            raise refuse(f"files[{index}] mode is not an octal mode") from None
        files[target] = (digest, mode)
    version = data.get("gbrain_version")
    return RecordedInstall(rel, str(version) if version else "", files)
