"""Build ``.tether/manifest.json`` from ``tether.toml`` and the repository's files.

``manifest_build`` computes the manifest and writes nothing; ``write_manifest`` writes it
when it changed; ``build_manifest`` is ``tether manifest build``: both, or the check alone.
"""

from __future__ import annotations

import difflib
import json
import os
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import git
from tether.errors import TetherError
from tether.fsio import atomic_write, read_bytes, sha256_file
from tether.model.lifecycle_declarations import check_against_files
from tether.model.manifest import (
    FileClass,
    Manifest,
    manifest_to_native,
    parse_manifest,
)
from tether.pathrules import relpath_problem
from tether.profiles import NATIVE, reserved_by_any_profile
from tether.publish.config import CONFIG_NAME, PublishConfig, load_publish_config
from tether.sources.manifest_file import load_manifest

MANIFEST_PATH = NATIVE.manifest_path

# ---------------------------------------------------------------------------- candidate files


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


# ---------------------------------------------------------------------------- classes and build


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


def region_problem(regions: Sequence[object], files: Collection[str]) -> str | None:
    """Why a region declaration cannot ship in a release of ``files``: a path it names, or
    the operand of its regeneration program, is not one of the release's files. An adopter's
    update refuses to run such a program (an operand must be a path the release ships,
    ``flows.regen``); an operand outside the release (``../x.sh``) never is one."""
    for index, region in enumerate(regions):
        if not isinstance(region, dict):
            continue  # a malformed declaration is refused where the declarations are read
        for path in region.get("paths", []):
            if path not in files:
                return f"regions[{index}]: {path} is not a shipped file"
        program = region.get("regenerate")
        operand = program.get("operand") if isinstance(program, dict) else None
        if not isinstance(operand, str):
            continue
        problem = relpath_problem(operand)
        if problem is not None:
            return (
                f"regions[{index}]: regenerate.operand {operand!r} is not a path inside the "
                f"release ({problem})"
            )
        if operand not in files:
            return f"regions[{index}]: regenerate.operand {operand} is not a shipped file"
    return None


def _check_regions_shipped(origin: str, config: PublishConfig, files: dict[str, FileClass]) -> None:
    problem = region_problem(config.regions, files)
    if problem is not None:
        raise TetherError(f"{origin}: {problem}")


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


def manifest_build(
    root: Path, config_path: Path | None = None, check_committed: bool = False
) -> ManifestBuild:
    """Compute ``.tether/manifest.json`` for the upstream repository at ``root``; writes nothing.
    ``check_committed``: the manifest already there must also be one an adopter's update
    accepts (``--check`` is the gate before it ships), else a one-line error naming it."""
    if not root.is_dir():
        raise TetherError(f"{root}: no such directory")
    config_path = config_path if config_path is not None else root / CONFIG_NAME
    origin = str(config_path)
    config = load_publish_config(config_path, root)
    skip = [rel for rel in [_config_rel(root, config_path)] if rel]
    files = classify_files(config, candidate_files(root), origin, skip)
    _check_regions_shipped(origin, config, files)
    check_against_files(config.lifecycle, set(files), origin)
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
        lifecycle=config.lifecycle,
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
    if check_committed and previous is not None:
        load_manifest(target, reserved=reserved_by_any_profile())
    return ManifestBuild(target, manifest, data, previous)


def write_manifest(build: ManifestBuild) -> bool:
    """Write the built manifest when it differs from the file on disk; True when written."""
    if not build.stale:
        return False
    atomic_write(build.path, build.data)
    return True


@dataclass(frozen=True)
class ManifestReport:
    """What ``tether manifest build`` did: the build, whether it wrote, whether it only checked."""

    build: ManifestBuild
    written: bool
    checked: bool  # --check: nothing was written

    @property
    def stale_left(self) -> bool:
        """The check found the manifest on disk out of date (nothing was written)."""
        return self.checked and self.build.stale

    def class_counts(self) -> list[tuple[str, int]]:
        """(class, files of that class), classes in name order."""
        counts = Counter(c.value for c in self.build.manifest.files.values())
        return sorted(counts.items())

    def to_json(self) -> dict[str, Any]:
        manifest = self.build.manifest
        return {
            "path": MANIFEST_PATH,
            "name": manifest.name,
            "version": manifest.version,
            "files": len(manifest.files),
            "sentinels": len(manifest.sentinels),
            "stale": self.build.stale,
            "written": self.written,
            "diff": self.build.diff() if self.build.stale else "",
        }


def build_manifest(
    root: Path, config_path: Path | None = None, *, check: bool = False
) -> ManifestReport:
    """Build the manifest and write it when it changed; with ``check`` write nothing."""
    build = manifest_build(root, config_path, check_committed=check)
    written = False if check else write_manifest(build)
    return ManifestReport(build, written, check)
