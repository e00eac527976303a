"""Release sources: turn a source string and a version into a release tree on disk.

Kinds, decided by the spec string alone (see ``open_source``): a directory of releases,
a tarball path or URL template with ``{version}``/``{tag}``, a git repository,
``gh:owner/repo`` when the ``gh`` program is installed, and ``npm:<package>[@<version>]``.
The modules for each kind are imported only when that kind is opened, so importing this
package stays cheap; what every kind returns and promises is in ``protocol``, the bounds in
``limits``, so no kind imports this package.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tether.errors import TetherError

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:  # reading a project's manifest (sources.manifest_file) opens no source
    from tether.sources.protocol import Source

# Spec shapes that can only mean a git repository.
_SCP_LIKE = re.compile(r"^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:(?!//)")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_GIT_SCHEMES = ("ssh", "git", "file", "http", "https")


def unknown_source(spec: str, hint: str = "") -> TetherError:
    return TetherError(
        f"unknown source {spec!r}: expected a directory of releases, a tarball path/URL with "
        f"{{version}}, or a git repository{hint}"
    )


def _needs_placeholder(spec: str) -> TetherError:
    return TetherError(
        f"tarball source {spec} needs {{version}} or {{tag}} in its path "
        "(e.g. releases/app-{version}.tar.gz)"
    )


def open_source(spec: str, cache_dir: Path, *, max_entry_bytes: int | None = None) -> Source:
    """The source ``spec`` names. Fetched trees are cached under ``cache_dir/<key>/``;
    ``max_entry_bytes``: the bound on one file of a release (None: the default bound).

    Nothing is written here; ``cache_dir`` is created by the first fetch that needs it.
    """
    if max_entry_bytes is None:
        from tether.sources.limits import DEFAULT_MAX_ENTRY_BYTES

        max_entry_bytes = DEFAULT_MAX_ENTRY_BYTES
    text = spec.strip()
    if not text:
        raise unknown_source(spec)
    if text.startswith("npm:"):
        from tether.sources.npm import NpmSource

        return NpmSource(spec, cache_dir, max_entry_bytes)
    if text.startswith("gh:"):
        return _open_gh(spec, cache_dir, max_entry_bytes)
    if text.startswith("gh-release:"):
        return _open_gh_release(spec, cache_dir, max_entry_bytes)
    if text.startswith("git+"):
        return _open_git(spec, text.removeprefix("git+"), cache_dir, max_entry_bytes)
    scheme = _SCHEME.match(text)
    if scheme is not None:
        return _open_url(spec, text, scheme.group(1).lower(), cache_dir, max_entry_bytes)
    if _SCP_LIKE.match(text):
        return _open_git(spec, text, cache_dir, max_entry_bytes)
    return _open_path(spec, Path(os.path.expanduser(text)), cache_dir, max_entry_bytes)


def _open_url(spec: str, url: str, scheme: str, cache_dir: Path, limit: int) -> Source:
    from tether.sources.common import TAR_SUFFIXES, has_placeholder

    if scheme == "file":
        path = url.removeprefix("file://")
        if has_placeholder(path):
            return _open_path(spec, Path(path), cache_dir, limit)
        return _open_git(spec, url, cache_dir, limit)
    if scheme in ("http", "https") and has_placeholder(url):
        from tether.sources.release_cache import TreeCache, source_key
        from tether.sources.tarball import UrlTarballSource

        cache = TreeCache(cache_dir, source_key("url-tarball", url), limit)
        return UrlTarballSource(spec, url, cache, limit)
    if scheme in ("http", "https") and url.split("?")[0].endswith(TAR_SUFFIXES):
        raise _needs_placeholder(spec)
    if scheme in ("http", "https") and not url.rstrip("/").endswith(".git"):
        raise unknown_source(spec, " (a git URL ends in .git or starts with git+)")
    if scheme in _GIT_SCHEMES:
        return _open_git(spec, url, cache_dir, limit)
    raise unknown_source(spec)


def _open_path(spec: str, path: Path, cache_dir: Path, limit: int) -> Source:
    from tether import git
    from tether.sources.common import TAR_SUFFIXES, has_placeholder

    if has_placeholder(str(path)):
        from tether.sources.release_cache import TreeCache, source_key
        from tether.sources.tarball import LocalTarballSource

        template = os.path.abspath(path)
        cache = TreeCache(cache_dir, source_key("tarball", template), limit)
        return LocalTarballSource(spec, template, cache, limit)
    if path.name.endswith(TAR_SUFFIXES):
        raise _needs_placeholder(spec)
    if path.is_dir():
        if git.is_git_repo(path):
            return _open_git(spec, str(path.resolve()), cache_dir, limit, local=path.resolve())
        from tether.sources.shelf import DirectorySource

        return DirectorySource(spec, path, limit)
    raise unknown_source(spec, "" if path.exists() else " (no such file or directory)")


def _open_git(
    spec: str, location: str, cache_dir: Path, limit: int, local: Path | None = None
) -> Source:
    from tether import git
    from tether.sources.gitrepo import GitSource
    from tether.sources.release_cache import TreeCache, source_key

    if location.startswith("-"):
        raise unknown_source(spec)
    if local is None and not (_SCHEME.match(location) or _SCP_LIKE.match(location)):
        # "git+/some/path": a local repository named explicitly.
        candidate = Path(os.path.expanduser(location))
        if not git.is_git_repo(candidate):
            raise TetherError(f"source {spec}: {location} is not a git repository")
        local = candidate.resolve()
        location = str(local)
    return GitSource(
        spec, location, local, TreeCache(cache_dir, source_key("git", location), limit), limit
    )


def _open_gh_release(spec: str, cache_dir: Path, limit: int) -> Source:
    from tether.sources.github import GhReleaseSource, release_repo
    from tether.sources.release_cache import TreeCache, source_key

    repo = release_repo(spec)
    return GhReleaseSource(
        spec, repo, TreeCache(cache_dir, source_key("gh-release", repo), limit), limit
    )


def _open_gh(spec: str, cache_dir: Path, limit: int) -> Source:
    from tether.sources.github import GhSource, gh_repo
    from tether.sources.release_cache import TreeCache, source_key

    repo = gh_repo(spec)
    return GhSource(spec, repo, TreeCache(cache_dir, source_key("gh", repo), limit), limit)
