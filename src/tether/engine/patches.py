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
