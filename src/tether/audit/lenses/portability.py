"""BSD versus GNU: options of common tools that only GNU has, or that BSD reads otherwise."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.shellast import Node, args, kind, literal, unwrap, walk

Words = list[str | None]

# xargs options that take a value, so the wrapped command is found after them.
_XARGS_WITH_VALUE: Final = {"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "-J", "-R"}


def _options(words: Words, with_value: frozenset[str] = frozenset()) -> list[str]:
    """The option words before ``--``; operands, dynamic words and option values are skipped."""
    found: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            break
        if word is not None and word.startswith("-") and len(word) > 1:
            found.append(word)
            i += 2 if word in with_value else 1
            continue
        i += 1
    return found


def _cluster_has(option: str, letter: str, stop: str = "") -> bool:
    """True when a short-option cluster (``-oP``) holds ``letter`` before a value-taking one."""
    if option.startswith("--") or not option[1:2].isalnum():
        return False
    for char in option[1:]:
        if char == letter:
            return True
        if char in stop:
            return False
    return False


def _sed_in_place(words: Words) -> bool:
    for option in _options(words, frozenset({"-e", "-f", "-l"})):
        if option.startswith("--in-place"):
            return True  # GNU's long form; BSD sed has no long options at all
        if option.startswith("--"):
            continue
        letters = option[1:]
        position = letters.find("i")
        stop = min((letters.find(c) for c in "ef" if c in letters), default=len(letters))
        if 0 <= position < stop and position == len(letters) - 1:
            return True  # `-i` (or `-Ei`) with nothing attached: BSD takes the next word
    return False


def _date_d(words: Words) -> bool:
    opts = _options(words, frozenset({"-r", "-f", "-v", "-z"}))
    return any(o.startswith("--date") or _cluster_has(o, "d", "rfvz") for o in opts)


def _grep_p(words: Words) -> bool:
    opts = _options(words, frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D"}))
    return any(o == "--perl-regexp" or _cluster_has(o, "P", "efmABCdD") for o in opts)


def _readlink_f(words: Words) -> bool:
    return any(o.startswith("--canonicalize") or _cluster_has(o, "f") for o in _options(words))


def _stat_c(words: Words) -> bool:
    long_forms = ("--format", "--printf")
    return any(o.startswith(long_forms) or _cluster_has(o, "c") for o in _options(words))


def _xargs_r(words: Words) -> bool:
    opts = _options(_xargs_options(words))
    return any(o == "--no-run-if-empty" or _cluster_has(o, "r", "IPLnsdEaJR") for o in opts)


def _head_negative(words: Words) -> bool:
    for index, word in enumerate(words):
        if word is None:
            continue
        value = None
        if word in ("-n", "-c") and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith(("--lines=", "--bytes=")):
            value = word.split("=", 1)[1]
        elif re.fullmatch(r"-[nc]-\d+", word):
            return True
        if value is not None and re.fullmatch(r"-\d+", value):
            return True
    return False


def _du_bytes(words: Words) -> bool:
    return any(o in ("--bytes", "--apparent-size") or _cluster_has(o, "b") for o in _options(words))


def _sort_version(words: Words) -> bool:
    opts = _options(words, frozenset({"-k", "-t", "-o", "-S", "-T"}))
    return any(o == "--version-sort" or _cluster_has(o, "V", "ktoST") for o in opts)


_GAWK_FUNCTIONS: Final = re.compile(
    r"\b(gensub|strftime|systime|mktime|asorti?|patsplit|isarray|typeof)\s*\("
)


def _awk_gnu(words: Words) -> bool:
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-f", "--file"):
            return False  # the program is in a file we do not read here
        if word in ("-F", "-v"):
            i += 2
            continue
        if word is not None and word.startswith("-") and len(word) > 1:
            i += 1
            continue
        return word is not None and bool(_GAWK_FUNCTIONS.search(word))
    return False


def _cp_parents(words: Words) -> bool:
    return "--parents" in _options(words)


def _find_printf(words: Words) -> bool:
    # find's primaries follow the paths, so every word is looked at.
    return any(word in ("-printf", "-fprintf") for word in words)


_CHECKS: Final[dict[str, tuple[str, Callable[[Words], bool]]]] = {
    "sed": ("portability/sed-in-place", _sed_in_place),
    "date": ("portability/date-d", _date_d),
    "grep": ("portability/grep-perl", _grep_p),
    "readlink": ("portability/readlink-f", _readlink_f),
    "stat": ("portability/stat-format", _stat_c),
    "xargs": ("portability/xargs-r", _xargs_r),
    "cp": ("portability/cp-parents", _cp_parents),
    "find": ("portability/find-printf", _find_printf),
    "head": ("portability/head-negative", _head_negative),
    "tac": ("portability/gnu-command", lambda words: True),
    "timeout": ("portability/gnu-command", lambda words: True),
    "du": ("portability/du-bytes", _du_bytes),
    "sort": ("portability/sort-version", _sort_version),
    "awk": ("portability/awk-gnu-function", _awk_gnu),
}


def option_words(cmd: Node) -> Words:
    """The literal arguments, a dynamic option kept as its literal head (``--date=``)."""
    found: Words = []
    for word in args(cmd):
        value = literal(word)
        if value is None:
            parts = word.get("Parts") or []
            head = parts[0].get("Value") if parts and kind(parts[0]) == "Lit" else None
            value = head if isinstance(head, str) and head.startswith("-") else None
        found.append(value)
    return found


def _xargs_options(words: Words) -> Words:
    """xargs's own options: everything up to the command it runs."""
    i = 0
    while i < len(words):
        word = words[i]
        if word is None or not word.startswith("-") or word == "--":
            break
        i += 2 if word in _XARGS_WITH_VALUE else 1
    return words[:i]


def _commands(words: Words) -> list[Words]:
    """The command and, for xargs, the command xargs runs."""
    found: list[Words] = []
    words = unwrap(words)
    while words and words[0] is not None:
        found.append(words)
        if words[0] != "xargs":
            break
        words = unwrap(words[1 + len(_xargs_options(words[1:])) :])
    return found


def check(tree: Node, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    for node in walk(tree):
        if kind(node) != "CallExpr":
            continue
        for words in _commands(option_words(node)):
            name = words[0] or ""
            entry = _CHECKS.get(name)
            if entry and entry[1](words[1:]):
                found.append(ctx.finding(entry[0], node, f"`{name}` command"))
    return found
