"""The one rule for text tether did not write that reaches a terminal: a release's migration
labels and commands, notice texts, region command lines, hand-off conditions, release notes,
follow-ups, a program's output. A control character (an escape sequence, a carriage return,
a backspace) or an invisible bidirectional control could redraw or reorder what a person
reads before consenting, hiding a line or a command; each is shown as a visible escape
instead (``\\x1b``, ``\\r``, ``\\u202e``). Text meant for one line also has its line breaks
escaped, so it cannot forge the lines that follow it (docs/security.md, "A release's
lifecycle steps", rule 3)."""

from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control characters (Unicode's Cc: C0, DEL, C1), and the invisible characters that reorder
# or break lines: bidirectional embeddings, overrides, isolates and marks ("Trojan Source"),
# and the line and paragraph separators.
_INVISIBLE = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
# Every one of them is a character ``str.isprintable`` calls not printable (Unicode's Cc, Cf,
# Zl and Zp): text it calls printable has none, and is shown as it is without a pattern
# (compiled on first use, by ``re``, which keeps it; ~0.5 ms of every status otherwise).
_HIDDEN = f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]"
_HIDDEN_BUT_NEWLINE = f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_INVISIBLE}]"


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: object) -> str:
    """``text`` for one line of a report: every control character, line break included,
    and every invisible bidirectional control, shown as an escape."""
    text = str(text)
    if text.isprintable():
        return text
    return re.sub(_HIDDEN, _escape, text)


def lines_of(text: object) -> list[str]:
    """Text of several lines (a program's output, a release note's body): one entry per line
    (split at ``\\n`` only), each escaped as ``one_line`` escapes."""
    return [one_line(line) for line in str(text).split("\n")]


def printable(text: str) -> str:
    """A whole rendered report: line breaks kept, every other control character and
    invisible bidirectional control escaped. The last guard, after each field went through
    ``one_line``: nothing a renderer missed reaches the terminal raw."""
    if text.replace("\n", "").isprintable():
        return text
    return re.sub(_HIDDEN_BUT_NEWLINE, _escape, text)
