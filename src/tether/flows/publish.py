"""The publisher's side, and release notes for adopters.

- ``manifest_build``: ``tether.toml`` + the repository's tracked files -> ``.tether/manifest.json``.
- ``pack_release``: the manifest's files -> a reproducible ``<name>-v<V>.tar.gz`` and its
  ``.sha256``; ``verify_tarball_checksum`` checks such a pair.
- ``changelog_report``: the changelog sections between two versions and the follow-ups
  that still apply to a project.

Nothing here prints; the CLI renders the values returned.
"""

from __future__ import annotations

import difflib
import gzip
import json
import os
import re
import stat
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tether import git
from tether.checksums import checksum_line
from tether.engine.changelog import (
    AdopterAction,
    Section,
    adopter_actions,
    applicable_actions,
    declared_packages,
    sections_between,
)
from tether.errors import TetherError, UsageError
from tether.fsio import NEW_FILE_MODE, atomic_write, read_bytes, sha256_file
from tether.model.manifest import (
    FileClass,
    Manifest,
    ManifestFormat,
    Rename,
    load_manifest,
    manifest_to_native,
    parse_manifest,
)
from tether.parselimits import MAX_NESTING, toml_loads
from tether.pathrules import project_path_problem
from tether.profiles import reserved_by_any_profile
from tether.versions import parse_version, strip_v

CONFIG_NAME = "tether.toml"
MANIFEST_PATH = ".tether/manifest.json"
DEFAULT_CHANGELOG = "CHANGELOG.md"
DEFAULT_OUT_DIR = "dist"

# ============================================================================ tether.toml


@dataclass(frozen=True)
class PublishConfig:
    name: str
    version: str
    default_class: FileClass | None = None
    sentinels: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    changelog: str = DEFAULT_CHANGELOG
    # (class, patterns) in the order the file lists them: the first match wins.
    classes: tuple[tuple[FileClass, tuple[str, ...]], ...] = ()
    merge: dict[str, dict[str, Any]] = field(default_factory=dict)
    regions: tuple[dict[str, Any], ...] = ()
    renames: tuple[Rename, ...] = ()
    hashes: bool = False  # record each file's sha256 in the manifest


_CONFIG_KEYS = frozenset(
    {
        "name",
        "version",
        "version_file",
        "default_class",
        "sentinels",
        "exclude",
        "changelog",
        "classes",
        "merge",
        "regions",
        "renames",
        "hashes",
    }
)


def _config_flag(origin: str, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TetherError(f"{origin}: '{key}' must be true or false")
    return value


def _class_value(origin: str, where: str, value: object) -> FileClass:
    try:
        return FileClass(str(value))
    except ValueError:
        allowed = ", ".join(c.value for c in FileClass)
        raise TetherError(
            f"{origin}: {where}: unknown class {value!r} (expected {allowed})"
        ) from None


def _str_list(origin: str, key: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TetherError(f"{origin}: '{key}' must be a list of non-empty strings")
    return tuple(value)


def _relpath(origin: str, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise TetherError(f"{origin}: '{key}' must be a string")
    problem = project_path_problem(value)
    if problem:
        raise TetherError(f"{origin}: '{key}': {value!r}: {problem}")
    return value


def _config_version(origin: str, data: dict[str, Any], root: Path) -> str:
    if ("version" in data) == ("version_file" in data):
        raise TetherError(f"{origin}: give exactly one of 'version' and 'version_file'")
    if "version" in data:
        raw, where = data["version"], "'version'"
        if not isinstance(raw, str):
            raise TetherError(f"{origin}: 'version' must be a string such as \"1.2.0\"")
    else:
        rel = _relpath(origin, "version_file", data["version_file"])
        where = rel
        try:
            raw = read_bytes(root / rel).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise TetherError(f"{origin}: cannot read version_file {rel} ({error})") from None
    version = strip_v(raw.strip())
    if parse_version(version) is None:
        raise TetherError(f"{origin}: {where}: {raw!r} is not a semantic version (x.y.z)")
    return version


def _config_classes(origin: str, raw: object) -> tuple[tuple[FileClass, tuple[str, ...]], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise TetherError(f"{origin}: [classes] must map a class to a list of globs")
    # tomllib keeps the file's order, and that order decides which class wins.
    return tuple(
        (_class_value(origin, f"classes.{name}", name), _str_list(origin, f"classes.{name}", globs))
        for name, globs in raw.items()
    )


def _config_merge(origin: str, raw: object) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise TetherError(
            f"{origin}: [merge] must map a path to a table such as {{ preset = ... }}"
        )
    return {
        _relpath(origin, "merge", path): dict(sorted(rule.items()))
        for path, rule in sorted(raw.items())
    }


def _config_regions(origin: str, raw: object) -> tuple[dict[str, Any], ...]:
    from tether.engine.regions import parse_region_declarations

    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise TetherError(f"{origin}: regions must be [[regions]] tables")
    # The region engine forgives a broken declaration at update time; a publisher
    # should hear about it before shipping instead.
    _decls, problems = parse_region_declarations(raw)
    if problems:
        raise TetherError(f"{origin}: {problems[0]}")
    return tuple(raw)


def _config_renames(origin: str, raw: object) -> tuple[Rename, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(
        isinstance(r, dict) and set(r) == {"from", "to"} for r in raw
    ):
        raise TetherError(f"{origin}: renames must be a list of {{ from = ..., to = ... }}")
    return tuple(
        Rename(_relpath(origin, "renames", r["from"]), _relpath(origin, "renames", r["to"]))
        for r in raw
    )


def _config_name(origin: str, raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise TetherError(f"{origin}: 'name' is required (the upstream's name, e.g. \"acme-kit\")")
    return raw.strip()


def parse_publish_config(data: dict[str, Any], origin: str, root: Path) -> PublishConfig:
    """Validate a decoded ``tether.toml``. ``root`` is where ``version_file`` is read from."""
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise TetherError(
            f"{origin}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_CONFIG_KEYS))})"
        )
    default = data.get("default_class")
    return PublishConfig(
        name=_config_name(origin, data.get("name")),
        version=_config_version(origin, data, root),
        default_class=None if default is None else _class_value(origin, "default_class", default),
        sentinels=tuple(
            _relpath(origin, "sentinels", s)
            for s in _str_list(origin, "sentinels", data.get("sentinels"))
        ),
        exclude=_str_list(origin, "exclude", data.get("exclude")),
        changelog=_relpath(origin, "changelog", data.get("changelog", DEFAULT_CHANGELOG)),
        classes=_config_classes(origin, data.get("classes")),
        merge=_config_merge(origin, data.get("merge")),
        regions=_config_regions(origin, data.get("regions")),
        renames=_config_renames(origin, data.get("renames")),
        hashes=_config_flag(origin, "hashes", data.get("hashes", False)),
    )


def load_publish_config(path: Path, root: Path) -> PublishConfig:
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise TetherError(
            f"{path}: no such file (the publisher's config; see docs/publishing.md)"
        ) from None
    except OSError as error:
        raise TetherError(f"{path}: cannot read ({error.strerror})") from None
    try:
        data = toml_loads(raw.decode("utf-8"), max_depth=MAX_NESTING)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: not valid TOML ({error})") from None
    return parse_publish_config(data, str(path), root)


# ============================================================================ candidate files


def _walk(root: Path) -> list[str]:
    """Every file and link under ``root`` outside git, skipping ``.git`` folders."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        # os.walk lists a link to a folder among the folders and never enters it;
        # it is still one entry to ship.
        links = [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and d not in links)
        found.extend(prefix + name for name in [*filenames, *links])
    return sorted(found)


def candidate_files(root: Path) -> list[str]:
    """The files a release may ship: git's tracked files, or a walk outside git.

    Tracked files missing from the disk and submodules (folders) are left out: only what
    can be packed is a candidate.
    """
    names = git.ls_files(root) if git.inside_work_tree(root) else _walk(root)
    return sorted(
        name
        for name in names
        if os.path.lexists(root / name) and (os.path.islink(root / name) or (root / name).is_file())
    )


# ============================================================================ manifest build


def _spec(origin: str, key: str, patterns: Sequence[str]) -> Any:
    import pathspec  # imported here: only the publisher's commands need it

    try:
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except ValueError as error:
        raise TetherError(f"{origin}: {key}: bad pattern ({error})") from None


def _unmatched_error(origin: str, unmatched: list[str]) -> TetherError:
    more = f" (and {len(unmatched) - 1} more)" if len(unmatched) > 1 else ""
    return TetherError(
        f"{origin}: {unmatched[0]} matches no class and there is no default_class{more}; "
        "add a glob under [classes], list it in exclude, or set default_class"
    )


def classify_files(
    config: PublishConfig, candidates: Sequence[str], origin: str, skip: Sequence[str] = ()
) -> dict[str, FileClass]:
    """Path -> class for every candidate that ships. Pure.

    Excluded paths, sentinels, ``.tether/`` and the ``skip`` paths are left out; the
    first class (in the config's order) with a matching glob wins, else ``default_class``.
    """
    exclude = _spec(origin, "exclude", config.exclude)
    specs = [(cls, _spec(origin, f"classes.{cls.value}", globs)) for cls, globs in config.classes]
    left_out = set(config.sentinels) | set(skip)
    files: dict[str, FileClass] = {}
    unmatched: list[str] = []
    for path in candidates:
        if path in left_out or path.startswith(".tether/") or exclude.match_file(path):
            continue
        cls = next((c for c, spec in specs if spec.match_file(path)), config.default_class)
        if cls is None:
            unmatched.append(path)
        else:
            files[path] = cls
    if unmatched:
        raise _unmatched_error(origin, unmatched)
    return files


def _check_regions_shipped(origin: str, config: PublishConfig, files: dict[str, FileClass]) -> None:
    for index, region in enumerate(config.regions):
        for path in region.get("paths", []):
            if path not in files:
                raise TetherError(f"{origin}: regions[{index}]: {path} is not a shipped file")


def render_manifest(manifest: Manifest) -> bytes:
    """The manifest's bytes: keys in a fixed order, paths in code-point order, final newline."""
    doc = manifest_to_native(manifest)
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass(frozen=True)
class ManifestBuild:
    path: Path  # where the manifest lives
    manifest: Manifest
    data: bytes  # what it should contain
    previous: bytes | None  # what it contains now (None when absent)

    @property
    def stale(self) -> bool:
        return self.previous != self.data

    def diff(self) -> str:
        """The unified difference from the file on disk to the built manifest."""
        old = (self.previous or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
        new = self.data.decode("utf-8").splitlines(keepends=True)
        before = f"a/{MANIFEST_PATH}" if self.previous is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, before, f"b/{MANIFEST_PATH}"))


def _config_rel(root: Path, config_path: Path) -> str | None:
    """``config_path`` relative to ``root`` when it lies inside it (so it is never shipped)."""
    try:
        return config_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def manifest_build(root: Path, config_path: Path | None = None) -> ManifestBuild:
    """Compute ``.tether/manifest.json`` for the upstream repository at ``root``; writes nothing."""
    if not root.is_dir():
        raise TetherError(f"{root}: no such directory")
    config_path = config_path if config_path is not None else root / CONFIG_NAME
    origin = str(config_path)
    config = load_publish_config(config_path, root)
    skip = [rel for rel in [_config_rel(root, config_path)] if rel]
    files = classify_files(config, candidate_files(root), origin, skip)
    _check_regions_shipped(origin, config, files)
    manifest = Manifest(
        name=config.name,
        version=config.version,
        files=files,
        sentinels=tuple(sorted(set(config.sentinels))),
        regions=config.regions,
        merge=config.merge,
        renames=config.renames,
        changelog=config.changelog,
        hashes={rel: sha256_file(root / rel) for rel in files} if config.hashes else {},
    )
    data = render_manifest(manifest)
    # Whatever the manifest parser would refuse (colliding paths, ...) must fail here,
    # in the publisher's repository, not in every adopter's update.
    parse_manifest(json.loads(data), origin, reserved=reserved_by_any_profile())
    target = root / MANIFEST_PATH
    try:
        previous: bytes | None = read_bytes(target)
    except FileNotFoundError:
        previous = None
    return ManifestBuild(target, manifest, data, previous)


def write_manifest(build: ManifestBuild) -> bool:
    """Write the built manifest when it differs from the file on disk; True when written."""
    if not build.stale:
        return False
    atomic_write(build.path, build.data)
    return True


# ============================================================================ release pack

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_FIXED_MTIME = 0  # every entry's time: the same input must give the same bytes


@dataclass(frozen=True)
class PackResult:
    tarball: Path
    checksum_file: Path
    sha256: str
    folder: str  # the single top-level folder inside the tarball
    files: int  # file and link entries (folders not counted)


def _tar_info(name: str, kind: bytes, mode: int, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.linkname = link
    info.mtime = _FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _link_escapes(rel: str, target: str) -> bool:
    if target.startswith("/"):
        return True
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return joined == ".." or joined.startswith("../")


def _file_member(root: Path, rel: str, name: str) -> tuple[tarfile.TarInfo, Path | None]:
    source = root / rel
    try:
        st = os.lstat(source)
    except FileNotFoundError:
        raise TetherError(f"{rel} is listed in {MANIFEST_PATH} but missing from {root}") from None
    if stat.S_ISLNK(st.st_mode):
        link = os.readlink(source)
        if _link_escapes(rel, link):
            raise TetherError(f"{rel} is a link to {link}, outside the release; adopters refuse it")
        return _tar_info(name, tarfile.SYMTYPE, 0o777, link=link), None
    if not stat.S_ISREG(st.st_mode):
        raise TetherError(f"{rel} is not a regular file; a release ships files and links only")
    # Only the executable bit is meaningful across machines; umask and group bits are not.
    mode = 0o755 if st.st_mode & 0o111 else 0o644
    return _tar_info(name, tarfile.REGTYPE, mode, size=st.st_size), source


def _members(
    root: Path, folder: str, paths: Sequence[str]
) -> Iterator[tuple[tarfile.TarInfo, Path | None]]:
    """Tar members in code-point order; every folder precedes what it contains."""
    folders = {""}
    for rel in paths:
        parts = rel.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    entries: dict[str, str | None] = {(f"{folder}/{d}" if d else folder): None for d in folders}
    entries.update({f"{folder}/{rel}": rel for rel in paths})
    for name in sorted(entries):
        shipped = entries[name]
        if shipped is None:
            yield _tar_info(name, tarfile.DIRTYPE, 0o755), None
        else:
            yield _file_member(root, shipped, name)


def _write_tar_stream(
    stream: IO[bytes], members: Iterator[tuple[tarfile.TarInfo, Path | None]]
) -> int:
    count = 0
    # No file name and a zero time in the gzip header: both would otherwise vary per run.
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=stream, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for info, source in members:
            if source is None:
                tar.addfile(info)
            else:
                with open(source, "rb") as handle:
                    tar.addfile(info, handle)
            count += 0 if info.isdir() else 1
    return count


def _write_tarball(dest: Path, members: Iterator[tuple[tarfile.TarInfo, Path | None]]) -> int:
    """Write the tarball beside ``dest`` and rename it into place; returns the entry count."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tether-tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            count = _write_tar_stream(raw, members)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, NEW_FILE_MODE)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def _pack_paths(root: Path, manifest: Manifest) -> list[str]:
    shipped_sentinels = [s for s in manifest.sentinels if os.path.lexists(root / s)]
    return sorted({*manifest.files, *shipped_sentinels, MANIFEST_PATH})


def _check_pack_version(manifest: Manifest, version: str) -> str:
    wanted = strip_v(version.strip())
    if wanted != manifest.version:
        raise TetherError(
            f"--version {wanted} differs from the manifest's version {manifest.version}; "
            f"set the version in {CONFIG_NAME} and run 'tether manifest build' first"
        )
    return wanted


def _check_fresh(root: Path) -> None:
    if not (root / CONFIG_NAME).is_file():
        return  # a hand-written manifest: nothing to compare it with
    if manifest_build(root).stale:
        raise TetherError(
            f"{MANIFEST_PATH} is stale against {CONFIG_NAME}; run 'tether manifest build' first"
        )


def pack_release(root: Path, version: str, out_dir: Path | None = None) -> PackResult:
    """Pack the release at ``root`` into ``<out>/<name>-v<V>.tar.gz`` and its ``.sha256``."""
    manifest = load_manifest(root / MANIFEST_PATH, ManifestFormat.NATIVE, reserved_by_any_profile())
    wanted = _check_pack_version(manifest, version)
    if not _SAFE_NAME.fullmatch(manifest.name):
        raise TetherError(
            f"manifest name {manifest.name!r} cannot name a file; use letters, digits, . _ + -"
        )
    _check_fresh(root)
    folder = f"{manifest.name}-v{wanted}"
    out = out_dir if out_dir is not None else root / DEFAULT_OUT_DIR
    tarball = out / f"{folder}.tar.gz"
    count = _write_tarball(tarball, _members(root, folder, _pack_paths(root, manifest)))
    digest = sha256_file(tarball)
    checksum_file = tarball.with_name(tarball.name + ".sha256")
    atomic_write(checksum_file, checksum_line(digest, tarball.name).encode(), NEW_FILE_MODE)
    return PackResult(tarball, checksum_file, digest, folder, count)


# ============================================================================ checksums


# ============================================================================ changelog


@dataclass(frozen=True)
class ChangelogReport:
    from_version: str
    to_version: str
    origin: str  # where the changelog was read (or looked for)
    found: bool  # False when the release has no changelog at all
    sections: list[Section]
    actions: list[AdopterAction]  # only those that still apply to the project

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.from_version,
            "to": self.to_version,
            "changelog": self.origin,
            "changelog_found": self.found,
            "sections": [s.to_json() for s in self.sections],
            "actions": [a.to_json() for a in self.actions],
        }


def check_version_range(from_version: str, to_version: str) -> None:
    parsed = {}
    for option, text in (("--from", from_version), ("--to", to_version)):
        version = parse_version(text)
        if version is None:
            raise UsageError(f"{option}: {text!r} is not a version")
        parsed[option] = version
    if parsed["--from"] > parsed["--to"]:
        raise UsageError(f"--from {from_version} is newer than --to {to_version}")


def _read_text(path: Path, what: str) -> str:
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError as error:
        raise TetherError(f"cannot read {what} {path}: {error.strerror or error}") from None


def _tree_changelog_path(tree: Path) -> str:
    """The changelog a release tree names in its manifest (native, then GAIA's), or the default."""
    for rel, fmt in (
        (MANIFEST_PATH, ManifestFormat.NATIVE),
        (".gaia/manifest.json", ManifestFormat.GAIA),
    ):
        if (tree / rel).is_file():
            return load_manifest(tree / rel, fmt).changelog
    return DEFAULT_CHANGELOG


def release_changelog(spec: str, version: str, cache_dir: Path) -> tuple[str | None, str]:
    """(changelog text or None when the release has none, a label saying where it was read)."""
    from tether.sources import open_source

    tree = open_source(spec, cache_dir).fetch(version).root
    rel = _tree_changelog_path(tree)
    label = f"{rel} of release {strip_v(version)} ({spec})"
    path = tree / rel
    return (_read_text(path, "changelog") if path.is_file() else None), label


def _fetched_changelog(root: Path, spec: str, version: str) -> tuple[str | None, str]:
    from tether.profiles import detect_profile

    profile = detect_profile(root) if root.is_dir() else None
    if profile is not None:
        return release_changelog(spec, version, root / profile.cache_dir / "releases")
    # Not an installed project: fetch into a throwaway cache rather than leave one behind.
    with tempfile.TemporaryDirectory(prefix="tether-changelog-") as tmp:
        return release_changelog(spec, version, Path(tmp))


def _recorded_source(root: Path) -> str:
    from tether.flows.project import open_project

    try:
        project = open_project(root)
    except TetherError:
        project = None
    state = project.load_state() if project is not None else None
    if state is None or not state.source:
        raise UsageError(
            f"{root}: no recorded source (no tether install here); give --file PATH or --source SRC"
        )
    return state.source


def project_presence(root: Path, actions: Sequence[AdopterAction]) -> tuple[set[str], set[str]]:
    """(declared packages, existing paths) of the project, as far as ``actions`` ask."""
    packages: set[str] = set()
    if any(a.kind == "remove-package" for a in actions):
        names = [
            "package.json",
            "pyproject.toml",
            *sorted(p.name for p in root.glob("requirements*.txt")),
        ]
        for name in names:
            if (root / name).is_file():
                packages |= declared_packages(name, _read_text(root / name, "dependency file"))
    paths: set[str] = set()
    for action in actions:
        if action.kind != "remove-file" or action.target is None:
            continue
        if set("*?[") & set(action.target):
            paths.update(p.relative_to(root).as_posix() for p in root.glob(action.target))
        elif os.path.lexists(root / action.target):
            paths.add(action.target)
    return packages, paths


def changelog_report(
    root: Path,
    from_version: str,
    to_version: str,
    *,
    file: Path | None = None,
    source: str | None = None,
) -> ChangelogReport:
    """The sections after ``from_version`` up to ``to_version`` and the follow-ups that still
    apply to the project at ``root``. The changelog comes from ``file``, else from release
    ``to_version`` of ``source``, else of the project's recorded source."""
    check_version_range(from_version, to_version)
    if file is not None:
        text: str | None = _read_text(file, "changelog")
        origin: str = str(file)
    else:
        spec = source if source is not None else _recorded_source(root)
        text, origin = _fetched_changelog(root, spec, to_version)
    sections = sections_between(text, from_version, to_version) if text is not None else []
    actions = adopter_actions(sections)
    packages, paths = project_presence(root, actions)
    return ChangelogReport(
        from_version,
        to_version,
        origin,
        text is not None,
        sections,
        applicable_actions(actions, packages, paths),
    )
