"""Where a project keeps things, and how a release tree is read. Shared by every flow."""

from __future__ import annotations

import datetime as _dt
import functools
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether import progress
from tether.errors import TetherError
from tether.flows.safety import PathGuard, check_own_paths
from tether.fsio import (
    NOT_REGULAR,
    NotRegularFileError,
    cannot_read,
    file_mode,
    read_bytes,
    read_regular,
    read_with_stat,
    sha256_bytes,
    walk_files,
)
from tether.model.manifest import Manifest, ManifestFormat, load_manifest
from tether.profiles import NATIVE, Profile, detect_profile, get_profile
from tether.state.cache import PristineCache
from tether.state.statcache import StatCache
from tether.state.store import State, load_state


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Project:
    root: Path
    profile: Profile

    def __post_init__(self) -> None:
        # Absolute from the start: tether hands these paths to programs that run in
        # other folders (git in a source repository, regeneration programs).
        # abspath, not resolve: the user's spelling of linked folders is kept.
        object.__setattr__(self, "root", Path(os.path.abspath(self.root)))

    def path(self, rel: str) -> Path:
        return self.root / rel

    @property
    def state_path(self) -> Path:
        return self.root / self.profile.state_file

    @functools.cached_property
    def pristine(self) -> PristineCache:
        # One per project object: the packs' indexes are read once.
        return PristineCache(self.root / self.profile.cache_dir / "objects")

    def stat_cache(self) -> StatCache:
        return self._stat_cache

    @functools.cached_property
    def _stat_cache(self) -> StatCache:
        # One per project object: planning and finalizing share what was loaded and learnt.
        return StatCache(self.root / self.profile.cache_dir / "stat.json")

    @property
    def releases_cache(self) -> Path:
        return self.root / self.profile.cache_dir / "releases"

    @property
    def merge_dir(self) -> Path:
        return self.root / self.profile.merge_dir

    @property
    def backup_root(self) -> Path:
        return self.root / self.profile.backup_root

    def load_state(self) -> State | None:
        return load_state(self.state_path, self.profile)

    def read_version_marker(self) -> str | None:
        if not self.profile.version_file:
            return None
        try:
            return read_regular(self.path(self.profile.version_file)).decode().strip() or None
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            raise TetherError(cannot_read(self.path(self.profile.version_file), error)) from None


def check_project_dir(root: Path) -> Path:
    if root.exists() and not root.is_dir():
        raise TetherError(f"{root}: not a directory")
    if not root.exists():
        raise TetherError(f"{root}: no such directory")
    return root


def open_project(root: Path, forced_profile: str | None = None) -> Project:
    """An installed project; a clear error when tether cannot find what it installed, or
    when its own folders are links or not folders (before any command writes there)."""
    check_project_dir(root)
    profile = detect_profile(root, forced_profile)
    if profile is None:
        raise TetherError(
            f"{root}: no tether install found (no {NATIVE.state_file}); run 'tether init' first"
        )
    project = Project(root, profile)
    check_own_paths(project.root, profile)
    return project


def profile_for_new_install(root: Path, forced: str | None) -> Profile:
    if forced:
        return get_profile(forced)
    return detect_profile(root) or NATIVE


@dataclass(frozen=True)
class Release:
    version: str
    root: Path
    source: str
    manifest: Manifest
    manifest_bytes: bytes
    _modes: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def manifest_sha256(self) -> str:
        return sha256_bytes(self.manifest_bytes)

    def file_path(self, rel: str) -> Path:
        return Path(self._file_name(rel))

    def digest(self, rel: str) -> str:
        """sha256 of the release's bytes for ``rel``: the manifest's record when it has one
        (checked whenever the bytes are read), else computed."""
        recorded = self.manifest.hashes.get(rel)
        return recorded if recorded is not None else sha256_bytes(self.verified_bytes(rel))

    def _file_name(self, rel: str) -> str:
        return os.path.join(self.root, self.manifest.sources.get(rel, rel))

    def verified_bytes(self, rel: str) -> bytes:
        data = self._read(rel)
        recorded = self.manifest.hashes.get(rel)
        if recorded is not None and sha256_bytes(data) != recorded:
            raise self._mismatch(rel)
        return data

    def verified(self, rel: str) -> tuple[bytes, str]:
        """``verified_bytes`` and their sha256, hashed once for both."""
        data = self._read(rel)
        digest = sha256_bytes(data)
        recorded = self.manifest.hashes.get(rel)
        if recorded is not None and digest != recorded:
            raise self._mismatch(rel)
        return data, digest

    def _read(self, rel: str) -> bytes:
        """The release file's bytes; its mode noted on the way for ``mode_of``."""
        try:
            data, info = read_with_stat(self._file_name(rel))
        except OSError as error:
            raise self._unreadable(rel, error) from None
        if rel not in self._modes:
            self._modes[rel] = self.manifest.modes.get(rel) or stat.S_IMODE(info.st_mode)
        return data

    def _mismatch(self, rel: str) -> TetherError:
        return TetherError(
            f"release {self.version} ({self.source}): {rel} does not match the sha256 "
            "its manifest records"
        )

    def mode_of(self, rel: str) -> int:
        mode = self._modes.get(rel)
        if mode is None:
            try:
                mode = self.manifest.modes.get(rel) or file_mode(self._file_name(rel))
            except OSError as error:
                raise self._unreadable(rel, error) from None
            self._modes[rel] = mode
        return mode

    def _unreadable(self, rel: str, error: OSError) -> TetherError:
        return TetherError(f"release {self.version} ({self.source}): {cannot_read(rel, error)}")

    def read(self, rel: str) -> bytes | None:
        """The release's bytes for a path, None when the release does not contain it."""
        path = self.file_path(rel)
        try:
            return read_regular(path)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise TetherError(f"release {self.version}: {rel} is a directory, not a file") from None
        except NotRegularFileError:
            raise TetherError(f"release {self.version}: {rel} {NOT_REGULAR}") from None
        except OSError as error:
            raise self._unreadable(rel, error) from None


def merge_rules(profile: Profile, merge: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A manifest's field-merge rules over its profile's default presets."""
    return {**{p: {"preset": n} for p, n in profile.field_merges.items()}, **merge}


def read_release(
    root: Path, version: str, source: str, profile: Profile, exclude: Sequence[str] = ()
) -> Release:
    """The release tree at ``root``. A native release without a manifest ships every regular
    file as ``shared`` (``model/implicit.py``); ``exclude`` (the adopter's ``--exclude``
    patterns) applies to such a release only."""
    manifest_path = root / profile.manifest_path
    if profile.manifest_format is ManifestFormat.NATIVE and not os.path.lexists(manifest_path):
        from tether.flows.implicit_release import implicit_release_manifest

        implicit, implicit_bytes = implicit_release_manifest(
            root, version, source, profile.reserved_paths(), exclude
        )
        return Release(version, root, source, implicit, implicit_bytes)
    manifest = load_manifest(manifest_path, profile.manifest_format, profile.reserved_paths())
    if profile.manifest_format is ManifestFormat.GAIA:
        extra_sentinels = tuple(s for s in profile.sentinels if s not in manifest.sentinels)
        manifest = Manifest(
            name=manifest.name,
            version=manifest.version or version,
            files=manifest.files,
            sentinels=manifest.sentinels + extra_sentinels,
            regions=manifest.regions,
            regions_not_a_list=manifest.regions_not_a_list,
            merge=merge_rules(profile, manifest.merge),
            renames=manifest.renames,
            changelog=manifest.changelog,
            extra=manifest.extra,
            sources=manifest.sources,
            modes=manifest.modes,
            hashes=manifest.hashes,
        )
    present = set(walk_files(root))  # one walk instead of a stat per manifest path
    missing = [p for p in manifest.managed_paths() if manifest.sources.get(p, p) not in present]
    if missing:
        shown = ", ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
        raise TetherError(
            f"release {version} ({source}): manifest lists files it does not contain: {shown}"
        )
    return Release(version, root, source, manifest, read_bytes(manifest_path))


def absolute_source(spec: str) -> str:
    """A local path source recorded as an absolute path, so later runs from any folder find it."""
    if ":" in spec.split("/")[0] or spec.startswith(("git+", "gh:")):
        return spec
    return os.path.abspath(os.path.expanduser(spec))


def fetch_release(
    project: Project, source_spec: str, version: str, exclude: Sequence[str] = ()
) -> Release:
    """Release ``version`` from ``source_spec``; ``exclude``: the adopter's patterns for a
    release without a manifest (see ``read_release``)."""
    from tether.sources import open_source

    if project.profile.source_is_tree:
        release = read_tree_release(Path(source_spec), source_spec, project.profile)
        check_tree_version(release.version, version, source_spec)
        return release
    with progress.phase(f"fetching release {version}"):
        source = open_source(source_spec, project.releases_cache)
        tree = source.fetch(version)
        return read_release(tree.root, version, source_spec, project.profile, exclude)


def check_tree_version(holds: str, wanted: str | None, source: str) -> None:
    """A recipe folder holds one version: asking for another (``--to``) is an error, not a
    silent move to what the folder holds."""
    if wanted and wanted != holds:
        raise TetherError(f"{source}: the recipe folder holds version {holds}, not {wanted}")


def read_tree_release(root: Path, source: str, profile: Profile) -> Release:
    """A source that is one release tree (a recipe folder): its version is the one its
    manifest names, else a digest of the manifest, so a changed recipe reads as new."""
    from tether.sources import DEFAULT_MAX_ENTRY_BYTES
    from tether.sources.folder import check_release_folder

    if not root.is_dir():
        raise TetherError(f"{root}: the source folder does not exist")
    check_release_folder(root, str(root), DEFAULT_MAX_ENTRY_BYTES)
    manifest_path = root / profile.manifest_path
    manifest = load_manifest(manifest_path, profile.manifest_format, profile.reserved_paths())
    version = manifest.version or "0.0.0+" + sha256_bytes(read_bytes(manifest_path))[:12]
    return read_release(root, version, source, profile)


def write_ignore_rules(project: Project, durable: bool = True) -> list[Path]:
    """Keep tether's runtime folders out of git, adding only the lines that are missing.
    Returns the file when written (``durable=False``: for the caller's sync)."""
    target = project.path(project.profile.ignore_file)
    try:
        existing = read_regular(target).decode()
    except FileNotFoundError:
        existing = ""
    except NotRegularFileError:
        raise TetherError(f"{target}: {NOT_REGULAR}") from None
    present = {line.strip() for line in existing.splitlines()}
    missing = [rule for rule in project.profile.ignore_rules if rule not in present]
    if not missing:
        return []
    prefix = existing if not existing or existing.endswith("\n") else existing + "\n"
    header = "" if existing else "# tether runtime files (written by tether)\n"
    rules = (prefix + header + "\n".join(missing) + "\n").encode()
    return [PathGuard(project.root).write(project.profile.ignore_file, rules, durable=durable)]
