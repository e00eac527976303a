"""Line arithmetic over original text, and the check that an edit touched only its lines.

Lines are counted by ``"\\n"`` alone (a CRLF file has a ``"\\r"`` at the end of each line,
which stays part of that line) so offsets and line numbers always agree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rewrite:
    """A candidate new text for one edit.

    ``allowed`` is the half-open range of old line numbers the edit may replace: every line
    before and after it must come out unchanged (an insertion between lines is ``(k, k)``).
    When a writer cannot know its span (tomlkit), ``allowed`` is None and the changed region
    may span at most ``max_old_lines`` old lines. ``frame`` (start, end) is stricter still:
    every character of the old text before ``start`` and from ``end`` on must be kept, so
    a rewriter may not even respace a comment that shares the value's line.
    """

    text: str
    allowed: tuple[int, int] | None
    max_old_lines: int = 1
    frame: tuple[int, int] | None = None


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index)


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """Index of the line break ending the line holding ``index`` (a CR before LF included)."""
    end = text.find("\n", index)
    if end == -1:
        return len(text)
    return end - 1 if end > 0 and text[end - 1] == "\r" else end


def indentation(text: str, index: int) -> str:
    """The leading whitespace of the line holding ``index``."""
    start = line_start(text, index)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def starts_line(text: str, index: int) -> bool:
    """True when only spaces or tabs precede ``index`` on its line."""
    return text[line_start(text, index) : index].strip(" \t") == ""


def splice(text: str, start: int, end: int, replacement: str) -> Rewrite:
    lo = line_of(text, start)
    if end > start:
        hi = line_of(text, end - 1) + 1
    elif start == line_start(text, start) and start < len(text):
        hi = lo  # a pure insertion before line ``lo``
    else:
        hi = lo + 1  # text added inside (or at the end of) line ``lo`` changes that line
    return Rewrite(text[:start] + replacement + text[end:], (lo, hi), frame=(start, end))


def changed_lines_ok(old: str, new: str, rewrite: Rewrite) -> bool:
    if rewrite.frame is not None:
        start, end = rewrite.frame
        tail = len(old) - end
        if (
            len(new) < start + tail
            or new[:start] != old[:start]
            or new[len(new) - tail :] != old[end:]
        ):
            return False
    before = old.split("\n")
    after = new.split("\n")
    if rewrite.allowed is not None:
        lo, hi = rewrite.allowed
        tail = len(before) - hi
        if len(after) - tail < lo:
            return False
        return after[:lo] == before[:lo] and after[len(after) - tail :] == before[hi:]
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]
    ):
        suffix += 1
    return len(before) - suffix - prefix <= rewrite.max_old_lines
