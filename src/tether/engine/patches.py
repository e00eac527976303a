"""Unified diffs for conflict artifacts. Pure."""

from __future__ import annotations

import difflib


def unified_patch(path: str, ours: bytes, theirs: bytes, context: int = 3) -> bytes:
    """A ``git apply``-able diff turning the adopter's file into the release's."""
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        ours.splitlines(keepends=True),
        theirs.splitlines(keepends=True),
        fromfile=f"a/{path}".encode(),
        tofile=f"b/{path}".encode(),
        n=context,
    )
    out = bytearray()
    for line in lines:
        out += line
        if not line.endswith(b"\n"):
            out += b"\n\\ No newline at end of file\n"
    return bytes(out)


def whole_file_markers(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The whole file as one diff3-style conflict, for a merge that must not be trusted."""

    def block(data: bytes) -> bytes:
        return data if not data or data.endswith(b"\n") else data + b"\n"

    return (
        b"<<<<<<< ours\n"
        + block(ours)
        + b"||||||| base\n"
        + block(base)
        + b"=======\n"
        + block(theirs)
        + b">>>>>>> theirs\n"
    )
