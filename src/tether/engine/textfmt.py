"""Byte-level facts about a file before it is merged: binary or text, BOM, line-ending style.

Everything here works on bytes and never decodes, so a file in any ASCII-compatible encoding
(UTF-8, Latin-1, Shift-JIS…) passes through unchanged.
"""

from __future__ import annotations

UTF8_BOM = b"\xef\xbb\xbf"

# git's rule (and libgit2's): a NUL byte in the first 8,000 bytes makes a file binary.
BINARY_SNIFF_BYTES = 8000

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import Literal

    EolStyle = Literal["lf", "crlf", "mixed", "none"]


def is_binary(data: bytes) -> bool:
    """True when ``data`` must never be merged line by line."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def split_bom(data: bytes) -> tuple[bool, bytes]:
    """(had a UTF-8 BOM, the bytes without it)."""
    if data.startswith(UTF8_BOM):
        return True, data[len(UTF8_BOM) :]
    return False, data


def eol_style(data: bytes) -> EolStyle:
    """How the lines of ``data`` end: all LF, all CRLF, a mix, or no line break at all."""
    lf = data.count(b"\n")
    if lf == 0:
        return "none"
    if b"\r" not in data:  # one-byte search: far quicker than counting CRLF
        return "lf"
    crlf = data.count(b"\r\n")
    if crlf == 0:
        return "lf"
    return "crlf" if crlf == lf else "mixed"


def to_lf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


def from_lf(data: bytes, style: EolStyle) -> bytes:
    """Write LF-normalised ``data`` back in ``style`` (only CRLF needs a change).

    For a file whose every line ended in CRLF, ``from_lf(to_lf(x), "crlf") == x``.
    """
    return data.replace(b"\n", b"\r\n") if style == "crlf" else data
