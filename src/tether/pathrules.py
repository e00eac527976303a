"""The one rule for a relative path inside a release or a project, pure."""

from __future__ import annotations

import unicodedata


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


def collision_key(path: str) -> str:
    """Two paths with the same key would be one file on macOS or Windows."""
    return unicodedata.normalize("NFC", path).casefold()


def _has_control_character(path: str) -> bool:
    return not path.isprintable() and any(ord(c) < 0x20 or c == "\x7f" for c in path)
