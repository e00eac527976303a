"""Pack a release reproducibly: the manifest's files -> ``<name>-v<V>.tar.gz`` and its
``.sha256`` (``tether.checksums.verify_tarball_checksum`` checks such a pair).

Same input, same bytes: fixed entry order, times, owners and modes, and a gzip header
without a name or time.
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tether.checksums import checksum_line
from tether.errors import TetherError
from tether.fsio import NEW_FILE_MODE, atomic_write, sha256_file
from tether.model.manifest import Manifest, ManifestFormat
from tether.profiles import reserved_by_any_profile
from tether.publish.config import CONFIG_NAME
from tether.publish.manifest import MANIFEST_PATH, manifest_build, region_problem
from tether.sources.manifest_file import load_manifest
from tether.versions import strip_v

DEFAULT_OUT_DIR = "dist"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_FIXED_MTIME = 0  # every entry's time: the same input must give the same bytes


@dataclass(frozen=True)
class PackResult:
    tarball: Path
    checksum_file: Path
    sha256: str
    folder: str  # the single top-level folder inside the tarball
    files: int  # file and link entries (folders not counted)

    def to_json(self) -> dict[str, Any]:
        return {
            "tarball": str(self.tarball),
            "sha256_file": str(self.checksum_file),
            "sha256": self.sha256,
            "top_dir": self.folder,
            "files": self.files,
        }


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
    problem = region_problem(manifest.regions, manifest.files)
    if problem is not None:
        raise TetherError(f"{root / MANIFEST_PATH}: {problem}")
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
