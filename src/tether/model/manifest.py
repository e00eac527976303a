"""The release manifest: which paths a release ships and who owns each. Pure: the file is
read by ``sources/manifest_file.load_manifest``, through the one safe reader."""

from __future__ import annotations

import json
import re
from enum import StrEnum

from tether.errors import TetherError
from tether.model.lifecycle import LIFECYCLE_KEYS, Lifecycle, declares_any
from tether.parselimits import MAX_NESTING, json_loads
from tether.pathrules import (
    NOTHING_RESERVED,
    ReservedPaths,
    collision_key,
    project_path_problem,
)
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

MANIFEST_SCHEMA = 1
# Where a release keeps its changelog unless its manifest names another file.
DEFAULT_CHANGELOG = "CHANGELOG.md"


class FileClass(StrEnum):
    OWNED = "owned"
    SHARED = "shared"
    WIKI_OWNED = "wiki-owned"

    @property
    def is_shared(self) -> bool:
        """``wiki-owned`` is GAIA's name for a file that behaves like ``shared``."""
        return self is not FileClass.OWNED


class ManifestFormat(StrEnum):
    NATIVE = "native"
    GAIA = "gaia"
    GBRAIN = "gbrain"


@valueclass(frozen=True)
class Rename:
    """A path a release moved: the old path and the new one."""

    source: str
    target: str


@valueclass(frozen=True)
class Manifest:
    """A release's manifest: its files and their classes, and what else it declares."""

    name: str
    version: str
    files: dict[str, FileClass]
    sentinels: tuple[str, ...] = ()
    regions: tuple[Any, ...] = ()
    merge: dict[str, dict[str, Any]] = field(default_factory=dict)
    renames: tuple[Rename, ...] = ()
    changelog: str = DEFAULT_CHANGELOG
    extra: dict[str, Any] = field(default_factory=dict)
    # Path mapping: where a project path's bytes live in the release tree, when elsewhere.
    sources: dict[str, str] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)  # file modes the manifest fixes
    # sha256 of each file's bytes, when the publisher recorded them: planning then reads
    # only the release files whose hash differs from the installed one.
    hashes: dict[str, str] = field(default_factory=dict)
    # What an update does besides merging files (docs/lifecycle.md).
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    # ``regions`` as written when it is not a list (an object, a number…): kept, not dropped,
    # so the region engine reports it as it reports any malformed declaration.
    regions_not_a_list: object = None

    def region_declarations(self) -> object:
        """What the region engine parses (``engine.regions.parse_region_declarations``)."""
        if self.regions_not_a_list is not None:
            return self.regions_not_a_list
        return list(self.regions)

    def managed_paths(self) -> list[str]:
        """Manifest paths tether reads and writes: every file except sentinels."""
        sentinels = set(self.sentinels)
        return [p for p in self.files if p not in sentinels]

    def class_of(self, path: str) -> FileClass | None:
        return self.files.get(path)


class ManifestError(TetherError):
    pass


_SHA256 = re.compile(r"[0-9a-f]{64}")
# A class by its name: a dictionary look-up, where FileClass(name) costs a microsecond or two
# (a state of 20,000 files names one per file).
CLASSES_BY_NAME = {c.value: c for c in FileClass}


def _fail(origin: str, problem: str) -> ManifestError:
    return ManifestError(f"{origin}: {problem}")


def _check_path(
    origin: str, where: str, path: object, reserved: ReservedPaths | None = None
) -> str:
    """A path of the release tree (``reserved`` None) or of the project (the paths tether
    and the active profile keep for themselves given): the one path rule, else an error."""
    if not isinstance(path, str):
        raise _fail(origin, f"{where}: path {path!r} is not a string")
    problem = project_path_problem(path) or (reserved.problem(path) if reserved else None)
    if problem:
        raise _fail(origin, f"{where}: {path!r}: {problem}")
    return path


def _check_collisions(origin: str, paths: list[str]) -> None:
    seen: dict[str, str] = {}
    for path in paths:
        key = collision_key(path)
        if key in seen and seen[key] != path:
            raise _fail(
                origin,
                f"files: {seen[key]!r} and {path!r} collide on case-insensitive filesystems",
            )
        seen[key] = path
    as_files = set(paths)
    folders: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in folders:  # a folder seen before has its parents too
            if folder in as_files:
                raise _fail(
                    origin, f"files: {folder!r} is listed as a file and as a folder of {path!r}"
                )
            folders.add(folder)
            folder = folder.rpartition("/")[0]


_OCTAL_MODE = re.compile(r"(0o?)?[0-7]{3}")


def _parse_mode(origin: str, where: str, raw: object) -> int:
    """A file mode: an octal string (``"0644"``, ``"644"``, ``"0o644"``) or an integer, within
    0o000-0o777 and readable by its owner. Floats, booleans and special bits are refused: a
    release must not install files nobody can read (``status`` would then fail on them)."""
    if isinstance(raw, str) and _OCTAL_MODE.fullmatch(raw):
        mode = int(raw, 8)
    elif isinstance(raw, int) and not isinstance(raw, bool):
        mode = raw
    else:
        raise _fail(origin, f'{where}: mode {raw!r} is not an octal file mode such as "0644"')
    if not 0 <= mode <= 0o777:
        raise _fail(origin, f"{where}: mode {raw!r} is out of range (0000-0777)")
    if not mode & 0o400:
        raise _fail(origin, f"{where}: mode {raw!r} leaves the file unreadable by its owner")
    return mode


def _split_entry(
    origin: str,
    path: str,
    entry: object,
    sources: dict[str, str],
    modes: dict[str, int],
    hashes: dict[str, str],
) -> object:
    """A files entry is a class, or ``{"class", "src"?, "mode"?, "sha256"?}``; returns
    the class."""
    if not isinstance(entry, dict):
        return entry
    if "sha256" in entry:
        digest = entry["sha256"]
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise _fail(origin, f"files[{path!r}].sha256 is not a lowercase hex sha256")
        hashes[path] = digest
    if "src" in entry:
        sources[path] = _check_path(origin, f"files[{path!r}].src", entry["src"])
    if "mode" in entry:
        modes[path] = _parse_mode(origin, f"files[{path!r}]", entry["mode"])
    return entry.get("class", "shared")


def _parse_files(
    origin: str,
    raw: object,
    sources: dict[str, str] | None = None,
    modes: dict[str, int] | None = None,
    hashes: dict[str, str] | None = None,
    reserved: ReservedPaths = NOTHING_RESERVED,
) -> dict[str, FileClass]:
    if not isinstance(raw, dict):
        raise _fail(origin, "'files' must be an object mapping path to class")
    files: dict[str, FileClass] = {}
    for path, entry in raw.items():
        _check_path(origin, "files", path, reserved)
        cls = _split_entry(
            origin,
            path,
            entry,
            sources if sources is not None else {},
            modes if modes is not None else {},
            hashes if hashes is not None else {},
        )
        try:
            files[path] = CLASSES_BY_NAME[str(cls)]
        except KeyError:
            allowed = ", ".join(c.value for c in FileClass)
            raise _fail(
                origin, f"files: {path!r}: unknown class {cls!r} (expected {allowed})"
            ) from None
    _check_collisions(origin, list(files))
    return files


def _parse_str_list(origin: str, key: str, raw: object, reserved: ReservedPaths) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(origin, f"'{key}' must be a list of paths")
    return tuple(_check_path(origin, key, p, reserved) for p in raw)


def _parse_renames(origin: str, raw: object, reserved: ReservedPaths) -> tuple[Rename, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(origin, "'renames' must be a list of {from, to}")
    renames = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "from" not in item or "to" not in item:
            raise _fail(origin, f"renames[{i}]: expected an object with 'from' and 'to'")
        renames.append(
            Rename(
                _check_path(origin, f"renames[{i}]", item["from"], reserved),
                _check_path(origin, f"renames[{i}]", item["to"], reserved),
            )
        )
    return tuple(renames)


def _parse_merge(origin: str, raw: object, reserved: ReservedPaths) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(origin, "'merge' must be an object mapping path to a merge rule")
    merge: dict[str, dict[str, Any]] = {}
    for path, rule in raw.items():
        _check_path(origin, "merge", path, reserved)
        if not isinstance(rule, dict):
            raise _fail(
                origin, f'merge: {path!r}: rule must be an object such as {{"preset": ...}}'
            )
        merge[path] = dict(rule)
    return merge


_NATIVE_KEYS = {
    "schema_version",
    "name",
    "version",
    "files",
    "sentinels",
    "regions",
    "merge",
    "renames",
    "changelog",
    *LIFECYCLE_KEYS,
}


def parse_manifest(
    data: object,
    origin: str,
    fmt: ManifestFormat = ManifestFormat.NATIVE,
    reserved: ReservedPaths = NOTHING_RESERVED,
) -> Manifest:
    """Validate a decoded manifest. ``origin`` names it in every error message.

    Every path passes the one path rule (``pathrules.project_path_problem``: relative,
    normalised, never under ``.git``); the project paths (files, sentinels, merge rules,
    renames) also may not fall in ``reserved``, the paths tether and the active profile
    keep for their own records. ``src`` and ``changelog`` name files of the release tree."""
    if not isinstance(data, dict):
        raise _fail(origin, "manifest must be a JSON object")
    if fmt is ManifestFormat.NATIVE:
        if "schema" in data:  # the spelling before 0.1.0: no release was ever made with it
            raise _fail(origin, "'schema' is spelled 'schema_version': run 'tether manifest build'")
        schema = data.get("schema_version", MANIFEST_SCHEMA)
        if schema != MANIFEST_SCHEMA:
            raise _fail(
                origin,
                f"unsupported manifest schema {schema!r} (this tether reads {MANIFEST_SCHEMA})",
            )
    if fmt is ManifestFormat.GBRAIN:
        return parse_gbrain_manifest(data, origin, reserved)
    if "files" not in data:
        raise _fail(origin, "missing 'files'")
    sources: dict[str, str] = {}
    modes: dict[str, int] = {}
    hashes: dict[str, str] = {}
    files = _parse_files(origin, data["files"], sources, modes, hashes, reserved)
    version = data.get("version", "")
    if not isinstance(version, str):
        raise _fail(origin, "'version' must be a string")
    regions = data.get("regions")
    # Lifecycle declarations are tether's own: another ecosystem's manifest may use the same
    # key names for something else, and its profile declares its lifecycle instead.
    native = fmt is ManifestFormat.NATIVE
    lifecycle = Lifecycle()
    if native and declares_any(data):
        from tether.model.lifecycle_declarations import parse_lifecycle

        lifecycle = parse_lifecycle(data, origin, reserved)
    known = _NATIVE_KEYS if native else _NATIVE_KEYS - set(LIFECYCLE_KEYS)
    changelog = data.get("changelog", DEFAULT_CHANGELOG)
    if not isinstance(changelog, str) or project_path_problem(changelog):
        raise _fail(origin, f"'changelog' must be a relative path, got {changelog!r}")
    return Manifest(
        name=str(data.get("name") or ("gaia" if fmt is ManifestFormat.GAIA else "upstream")),
        version=version,
        files=files,
        sentinels=_parse_str_list(origin, "sentinels", data.get("sentinels"), reserved),
        # Region declarations are parsed defensively by the region engine, never fatal here.
        regions=tuple(regions) if isinstance(regions, list) else (),
        regions_not_a_list=None if isinstance(regions, list) or regions in (None, "") else regions,
        merge=_parse_merge(origin, data.get("merge"), reserved),
        renames=_parse_renames(origin, data.get("renames"), reserved),
        changelog=changelog,
        extra={k: v for k, v in data.items() if k not in known},
        sources=sources,
        modes=modes,
        hashes=hashes,
        lifecycle=lifecycle,
    )


# gbrain manifest schemas this parser reads; a manifest without the key is the first one.
GBRAIN_SCHEMA_VERSIONS = ("0.1.0",)


def parse_gbrain_manifest(
    data: dict[str, Any], origin: str, reserved: ReservedPaths = NOTHING_RESERVED
) -> Manifest:
    """gbrain's ``install/manifest.json``: ``files[]`` and ``skills[]`` entries
    ``{src, target, mode}`` copied to ``<host>/<target>`` (``target`` is relative to the host
    repository's root); ``target_root_relative_to_host_repo`` is where gbrain keeps its
    record, log and lock."""
    schema = data.get("schema_version", GBRAIN_SCHEMA_VERSIONS[0])
    if schema not in GBRAIN_SCHEMA_VERSIONS:
        known = ", ".join(GBRAIN_SCHEMA_VERSIONS)
        raise _fail(
            origin,
            f"schema_version {schema!r} is not one tether reads (known: {known}); not "
            "refreshing: re-install the recipe with a tether that reads it",
        )
    root = data.get("target_root_relative_to_host_repo", ".")
    if not isinstance(root, str) or (root != "." and project_path_problem(root)):
        raise _fail(origin, f"target_root_relative_to_host_repo {root!r} is not a relative path")
    if root not in (".", ""):
        # The ecosystem's records of the install (a top-level reserved file) sit in the
        # target root too: a recipe may not ship them there either.
        inside = tuple(f"{root.strip('/')}/{name}" for name in reserved.files if "/" not in name)
        reserved = reserved.union(ReservedPaths((), inside))
    files: dict[str, FileClass] = {}
    sources: dict[str, str] = {}
    modes: dict[str, int] = {}
    for key in ("files", "skills"):
        entries = data.get(key, [])
        if not isinstance(entries, list):
            raise _fail(origin, f"'{key}' must be a list of {{src, target, mode}}")
        for index, entry in enumerate(entries):
            where = f"{key}[{index}]"
            if not isinstance(entry, dict) or "src" not in entry or "target" not in entry:
                raise _fail(origin, f"{where}: expected an object with 'src' and 'target'")
            # Relative to the host repository's root, as gbrain resolves it (not to the
            # target root, which only says where gbrain keeps its records).
            path = _check_path(origin, where, entry["target"], reserved)
            sources[path] = _check_path(origin, f"{where}.src", entry["src"])
            if "mode" in entry:
                modes[path] = _parse_mode(origin, where, entry["mode"])
            files[path] = FileClass.SHARED
    _check_collisions(origin, list(files))
    version = data.get("version") or data.get("gbrain_version") or ""
    return Manifest(
        name=str(data.get("name") or data.get("recipe") or "gbrain"),
        version=str(version),
        files=files,
        # gbrain's path-mapping table: a source renamed from one target to another is an
        # update of the file, not a removal and an addition.
        renames=_parse_renames(origin, data.get("renames"), reserved),
        extra={k: v for k, v in data.items() if k not in ("files", "skills", "renames")},
        sources=sources,
        modes=modes,
    )


def manifest_from_bytes(
    raw: bytes,
    origin: str,
    fmt: ManifestFormat = ManifestFormat.NATIVE,
    reserved: ReservedPaths = NOTHING_RESERVED,
) -> Manifest:
    """The manifest ``raw`` holds; ``origin`` names it in errors (its file, usually)."""
    try:
        data = json_loads(raw, max_depth=MAX_NESTING)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(f"{origin}: manifest is not valid JSON ({error})") from None
    return parse_manifest(data, origin, fmt, reserved)


def _native_entry(manifest: Manifest, path: str, cls: FileClass) -> object:
    extra: dict[str, object] = {}
    if path in manifest.sources:
        extra["src"] = manifest.sources[path]
    if path in manifest.modes:
        extra["mode"] = f"{manifest.modes[path]:04o}"
    if path in manifest.hashes:
        extra["sha256"] = manifest.hashes[path]
    return {"class": cls.value, **extra} if extra else cls.value


def manifest_to_native(manifest: Manifest) -> dict[str, Any]:
    """The native JSON document for a manifest (stable key order)."""
    doc: dict[str, Any] = {
        "schema_version": MANIFEST_SCHEMA,
        "name": manifest.name,
        "version": manifest.version,
        "files": {p: _native_entry(manifest, p, c) for p, c in sorted(manifest.files.items())},
    }
    if manifest.sentinels:
        doc["sentinels"] = list(manifest.sentinels)
    if manifest.regions:
        doc["regions"] = list(manifest.regions)
    if manifest.merge:
        doc["merge"] = manifest.merge
    if manifest.renames:
        doc["renames"] = [{"from": r.source, "to": r.target} for r in manifest.renames]
    if manifest.changelog != DEFAULT_CHANGELOG:
        doc["changelog"] = manifest.changelog
    doc.update(manifest.lifecycle.to_json())
    doc.update(manifest.extra)
    return doc
