"""Two versions of a file and no baseline: which differences are mechanical drift and which
are the user's own edits.

An installer that rewrites paths on install (``/Users/me/.claude/`` for ``$HOME/.claude/``),
adds ``|| true`` to commands, or re-quotes and re-indents lines leaves differences between
the user's copy and the new release that nobody typed. Every line is compared through
``drift_key``, which forgets exactly those differences; what still differs is a user edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.engine.diff import diff_lines
from tether.engine.textfmt import split_bom, to_lf

# What ``drift_key`` forgets, named for the report.
DRIFT_KINDS = ("paths", "$HOME/~ expansion", "quoting", "'|| true'", "whitespace")

_OR_TRUE = re.compile(r"\s*\|\|\s*true\s*(?=;|$)")
_HOME_VARIABLE = re.compile(r"\$\{HOME\}|\$HOME\b")
_HOME_FOLDER = re.compile(r"(?<![\w.])(?:/Users|/home)/[^/\s\"'`]+|(?<![\w.])/root(?=/|\b)")
_TILDE = re.compile(r"(?<![\w/])~(?=/|\s|$)")
_QUOTES = re.compile(r"[\"'`]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class UserEdit:
    """One stretch where the user's copy differs from the installed file beyond drift."""

    line: int  # 1-based line of the user's copy where the stretch starts
    added: tuple[str, ...]  # lines of the user's copy the installed file lacks
    removed: tuple[str, ...]  # lines of the installed file the user's copy lacks

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "added": list(self.added), "removed": list(self.removed)}


@dataclass(frozen=True)
class TwoWay:
    edits: tuple[UserEdit, ...]  # the user's edits, in order

    @property
    def drift_only(self) -> bool:
        return not self.edits


def drift_key(line: str, home: str = "") -> str:
    """The line with mechanical drift forgotten: the home folder however it is spelled,
    ``|| true``, quotes and the amount of whitespace."""
    if home and home != "/":
        line = line.replace(home.rstrip("/"), "~")
    line = _HOME_VARIABLE.sub("~", line)
    line = _HOME_FOLDER.sub("~", line)
    line = _TILDE.sub("~", line)
    line = _OR_TRUE.sub("", line)
    line = _QUOTES.sub("", line)
    return _SPACE.sub(" ", line).strip()


def compare_two_way(ours: bytes, theirs: bytes, home: str = "") -> TwoWay:
    """The user's edits (``ours`` against ``theirs``) once drift is set aside; blank lines
    count as whitespace."""
    ours_lines, theirs_lines = _lines(ours), _lines(theirs)
    ours_kept = [i for i, line in enumerate(ours_lines) if drift_key(line, home)]
    theirs_kept = [i for i, line in enumerate(theirs_lines) if drift_key(line, home)]
    ours_keys = [drift_key(ours_lines[i], home) for i in ours_kept]
    theirs_keys = [drift_key(theirs_lines[i], home) for i in theirs_kept]
    edits: list[UserEdit] = []
    for change in diff_lines(theirs_keys, ours_keys):
        added = tuple(
            ours_lines[i] for i in ours_kept[change.b_start : change.b_start + change.b_count]
        )
        removed = tuple(
            theirs_lines[i] for i in theirs_kept[change.a_start : change.a_start + change.a_count]
        )
        at = ours_kept[change.b_start] if change.b_start < len(ours_kept) else len(ours_lines)
        edits.append(UserEdit(at + 1, added, removed))
    return TwoWay(tuple(edits))


def _lines(data: bytes) -> list[str]:
    return to_lf(split_bom(data)[1]).decode("utf-8", errors="replace").splitlines()
