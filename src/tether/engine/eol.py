"""Equality that ignores a checkout's line endings. Pure.

A file git checked out with CRLF (core.autocrlf) is the release's file, not a
customisation; comparing bytes would call it modified on every platform that converts.
"""

from __future__ import annotations

from tether.engine.textfmt import eol_style, from_lf, is_binary, to_lf


def same_text(a: bytes, b: bytes) -> bool:
    """Equal bytes, or text that differs only in CRLF versus LF line endings."""
    if a == b:
        return True
    if b"\r\n" not in a and b"\r\n" not in b:
        return False
    if is_binary(a) or is_binary(b):
        return False
    return to_lf(a) == to_lf(b)


def in_style_of(data: bytes, model: bytes) -> bytes:
    """``data`` with ``model``'s line endings when ``model`` is consistently CRLF."""
    if is_binary(data) or eol_style(model) != "crlf" or eol_style(data) not in ("lf", "crlf"):
        return data
    return from_lf(to_lf(data), "crlf")
