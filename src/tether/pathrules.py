"""The one rule for a relative path inside a release or a project, pure.

Every path tether reads from data it did not compute in this run (a manifest, its state, its
journal, a patch folder's list) passes ``project_path_problem``; the paths a release may not
claim because tether or the active profile keeps its own records there pass
``ReservedPaths.problem`` as well. Whether a path that passes leads out of the project
through a link is the filesystem half of the rule (``flows/safety.py``).
"""

from __future__ import annotations

from tether.valueclass import field, valueclass


def relpath_problem(path: str) -> str | None:
    """Why ``path`` is not a safe, portable, relative POSIX path, or None when it is."""
    if not path:
        return "empty path"
    if "\x00" in path:
        return "path contains a NUL byte"
    if _has_control_character(path):
        # A newline in a name would forge lines in every one-path-per-line report.
        return "path contains a control character"
    if "\\" in path:
        return "path contains a backslash"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "path is absolute"
    padded = f"/{path}/"  # every segment sits between two slashes
    if "//" in padded:
        return "path has an empty segment"
    if "/../" in padded:
        return "path contains '..'"
    if "/./" in padded:
        return "path contains a '.' segment"
    return None


# Code points HFS+ ignores in names, so ".g\u200cit" is ".git" on macOS (the list git
# itself refuses under core.protectHFS).
_HFS_IGNORED = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)


def _is_git_name(segment: str) -> bool:
    name = "".join(c for c in segment if c not in _HFS_IGNORED).casefold()
    # Windows drops trailing dots and spaces (".git. " is ".git"); GIT~1 is its short name.
    return name.rstrip(". ") == ".git" or name == "git~1"


def git_dir_problem(path: str) -> str | None:
    """Why ``path`` lies in git's own folder (``.git`` in any case or spelling a
    case-insensitive filesystem folds to it), or None. A file there is never project
    content: a hook written there runs on the next commit."""
    if path.isascii() and "git" not in path.lower():
        return None  # the common case, without splitting the path
    if any(_is_git_name(segment) for segment in path.split("/")):
        return "path lies in git's own folder (.git)"
    return None


def program_name_problem(interpreter: str) -> str | None:
    """Why a declared program name is not a bare name looked up on PATH (a path or a shell
    snippet could run anything), or None."""
    if not interpreter.strip():
        return "interpreter is empty"
    unsafe = any(char in "/\\\x00" or char.isspace() for char in interpreter)
    if unsafe or interpreter in {".", ".."}:
        return f"interpreter {interpreter!r} is not a bare program name"
    return None


def project_path_problem(path: str) -> str | None:
    """The rule for a project path read from a record: relative, normalised, outside
    ``.git``. None when it passes."""
    return relpath_problem(path) or git_dir_problem(path)


def collision_key(path: str) -> str:
    """Two paths with the same key would be one file on macOS or Windows."""
    if path.isascii():
        return path.lower()  # what NFC and casefold make of ASCII, several times as fast
    # Only here: the Unicode database's module costs ~0.4 ms to load, which a project whose
    # paths are all ASCII (status, check) need not pay.
    from unicodedata import normalize

    return normalize("NFC", path).casefold()


@valueclass(frozen=True)
class ReservedPaths:
    """Project paths only tether writes: whole folders and single files. Compared by
    ``collision_key``, so ``.TETHER/state.json`` is caught on every filesystem."""

    folders: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    _folder_keys: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    _file_keys: dict[str, str] = field(init=False, repr=False, compare=False)
    _heads: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        folder_keys = tuple((collision_key(f), f) for f in self.folders if f)
        file_keys = {collision_key(f): f for f in self.files if f}
        heads = frozenset(k.split("/", 1)[0] for k in [*(k for k, _ in folder_keys), *file_keys])
        object.__setattr__(self, "_folder_keys", folder_keys)
        object.__setattr__(self, "_file_keys", file_keys)
        object.__setattr__(self, "_heads", heads)

    def owner(self, path: str) -> str | None:
        """The reserved folder (with a final ``/``) or file ``path`` falls in, or None."""
        if collision_key(path.split("/", 1)[0]) not in self._heads:
            return None  # the common case: one short key per path
        key = collision_key(path)
        if key in self._file_keys:
            return self._file_keys[key]
        for folder_key, folder in self._folder_keys:
            if key == folder_key or key.startswith(folder_key + "/"):
                return folder + "/"
        return None

    def problem(self, path: str) -> str | None:
        """Why a release or a record may not name ``path``, or None."""
        owner = self.owner(path)
        if owner is None:
            return None
        return f"path is reserved for tether's own records ({owner})"

    def union(self, other: ReservedPaths) -> ReservedPaths:
        return ReservedPaths(self.folders + other.folders, self.files + other.files)


NOTHING_RESERVED = ReservedPaths()


def _has_control_character(path: str) -> bool:
    return not path.isprintable() and any(ord(c) < 0x20 or c == "\x7f" for c in path)
