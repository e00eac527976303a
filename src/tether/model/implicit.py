"""The manifest of a release that carries none: every regular file is ``shared``.

A release without ``.tether/manifest.json`` (any git repository with version tags, a
tarball, a folder) is still a release: each of its regular files is seeded by upstream and
the adopter's to customise, so it is merged, never overwritten. Left out: version-control
metadata, the paths tether keeps for itself, the paths the release's own ``.tetherignore``
names (gitignore syntax) and the patterns the adopter gave ``tether init --exclude``. The
adopter's patterns are recorded in the manifest (``exclude``), so every later release of the
project is read with the same ones. Pure: the caller walks the tree and reads the ignore
file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from tether.errors import TetherError
from tether.model.manifest import FileClass, Manifest, manifest_to_native
from tether.pathrules import NOTHING_RESERVED, ReservedPaths, project_path_problem

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:  # the matcher is loaded when a release declares patterns
    from typing import Any

    import pathspec

# The release's own list of paths it does not ship (gitignore syntax).
IGNORE_FILE = ".tetherignore"
# The manifest key that records the adopter's --exclude patterns.
EXCLUDE_KEY = "exclude"
# The manifest key saying the manifest was made by tether, not shipped by the publisher.
IMPLICIT_KEY = "implicit"
# Folders (and git's pointer file) of version-control systems: never release content.
VCS_METADATA = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj", ".pijul"})


def is_vcs_metadata(path: str) -> bool:
    return any(segment in VCS_METADATA for segment in path.split("/"))


def compile_patterns(patterns: Sequence[str], origin: str) -> pathspec.GitIgnoreSpec:
    """gitignore-style patterns; a pattern that cannot be read is an error naming it."""
    for pattern in patterns:
        if not isinstance(pattern, str) or "\x00" in pattern or "\n" in pattern:
            raise TetherError(f"{origin}: exclude pattern {pattern!r} is not a one-line pattern")
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except (ValueError, TypeError) as error:  # pathspec's GitWildMatchPatternError is one
        raise TetherError(f"{origin}: unreadable exclude pattern ({error})") from None


def ignore_file_patterns(text: str) -> list[str]:
    """The patterns of a ``.tetherignore``: its lines without blanks and comments."""
    return [
        line.rstrip("\r")
        for line in text.split("\n")
        if line.strip() and not line.lstrip().startswith("#")
    ]


_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


def upstream_name(source: str) -> str:
    """A short name for the upstream, from the source string (a branch name is made of it):
    the last part of a path or URL, without ``.git`` or an archive's placeholder."""
    text = source.strip().rstrip("/")
    for prefix in ("git+", "gh:", "gh-release:"):
        text = text.removeprefix(prefix)
    last = re.split(r"[/:]", text)[-1] if text else ""
    last = last.removesuffix(".git").split("{")[0].rstrip("-_.")
    name = _NAME_CHARS.sub("-", last).strip("-.")
    return name or "upstream"


def implicit_manifest(
    name: str,
    version: str,
    paths: Iterable[str],
    ignore_patterns: Sequence[str] = (),
    exclude: Sequence[str] = (),
    reserved: ReservedPaths = NOTHING_RESERVED,
    origin: str = "release",
) -> Manifest:
    """Every path of ``paths`` (the release's regular files) as ``shared``, except those
    left out above. Paths that fail the one path rule are left out too: a release without
    a manifest names no path on purpose, so a stray one is no reason to refuse it."""
    ignored = compile_patterns(list(ignore_patterns), f"{origin}: {IGNORE_FILE}")
    excluded = compile_patterns(list(exclude), f"{origin}: --exclude")
    files: dict[str, FileClass] = {}
    for path in paths:
        if path == IGNORE_FILE or is_vcs_metadata(path):
            continue
        if project_path_problem(path) or reserved.problem(path):
            continue
        if ignored.match_file(path) or excluded.match_file(path):
            continue
        files[path] = FileClass.SHARED
    extra: dict[str, Any] = {IMPLICIT_KEY: True}
    if exclude:
        extra[EXCLUDE_KEY] = list(exclude)
    return Manifest(name=name, version=version, files=files, extra=extra)


def implicit_manifest_bytes(manifest: Manifest) -> bytes:
    """The manifest as tether writes it: stable, so one release always has one digest."""
    return (json.dumps(manifest_to_native(manifest), indent=2, sort_keys=True) + "\n").encode()


def recorded_exclude(manifest_doc: object) -> tuple[str, ...]:
    """The adopter's --exclude patterns recorded in an installed manifest (none when the
    manifest is a publisher's or records none)."""
    if not isinstance(manifest_doc, dict) or not manifest_doc.get(IMPLICIT_KEY):
        return ()
    patterns = manifest_doc.get(EXCLUDE_KEY) or []
    if not isinstance(patterns, list):
        return ()
    return tuple(p for p in patterns if isinstance(p, str))
