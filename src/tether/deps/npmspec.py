"""npm ranges: which ones tether rewrites, and version arithmetic through ``node-semver``.

Only three shapes are rewritten, keeping their operator: ``^1.2.3``, ``~1.2.3`` and the
exact ``1.2.3`` (also written ``=1.2.3`` or ``v1.2.3``). Every other range is reported with
the reason: rewriting ``>=1 <2``, ``1.x`` or ``^1 || ^2`` into a single new range would
change what the author meant, and collapsing it silently is how a bot ruins a range.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tether.deps.model import Declared, LeftAlone, Unmovable

# A full version with an optional prerelease and build; the operator is captured apart.
_SIMPLE = re.compile(
    r"^(?P<op>\^|~>?|=)?\s*(?P<v>v?)(?P<version>\d+\.\d+\.\d+"
    r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$"
)
_PARTIAL = re.compile(r"^[\^~=v]*\s*(?:[xX*]|\d+)(?:\.(?:[xX*]|\d+))?(?:\.(?:[xX*]))?$")
# Specs that are not a registry range at all, with the word used in the reason.
_NOT_REGISTRY = (
    ("workspace:", "workspace reference"),
    ("catalog:", "catalog reference"),
    ("file:", "local path"),
    ("link:", "local link"),
    ("portal:", "local portal"),
    ("npm:", "npm alias"),
    ("git+", "git dependency"),
    ("git:", "git dependency"),
    ("github:", "git dependency"),
    ("http:", "URL dependency"),
    ("https:", "URL dependency"),
)


def _semver() -> Any:
    import nodesemver  # type: ignore[import-untyped]

    return nodesemver


def reference_kind(spec: str) -> str | None:
    """``workspace:``/``catalog:`` and other non-registry specs: their kind, else None."""
    text = spec.strip()
    for start, kind in _NOT_REGISTRY:
        if text.startswith(start):
            return kind
    if "/" in text and not text.startswith(("<", ">", "=", "^", "~")):
        return "git dependency"  # the user/repo shorthand
    return None


def classify(spec: str) -> Declared | LeftAlone:
    """The declaration to rewrite, or why it cannot be rewritten faithfully."""
    text = spec.strip()
    kind = reference_kind(text)
    if kind is not None:
        return LeftAlone(Unmovable.REFERENCE, kind)
    if "||" in text:
        return LeftAlone(Unmovable.UNION_RANGE)
    if re.search(r"\s-\s", text):
        return LeftAlone(Unmovable.HYPHEN_RANGE)
    match = _SIMPLE.match(text)
    if match is not None:
        # Whatever stood before the version (operator, spaces, a "v") is kept as written,
        # and so is whitespace around the whole range.
        lead = spec[: len(spec) - len(spec.lstrip())]
        trail = spec[len(spec.rstrip()) :]
        op = text[: match.start("version")]
        return Declared(prefix=lead, op=op, version=match["version"], suffix=trail)
    return _reason(text, op_hint=op_of(text))


def op_of(text: str) -> str:
    found = re.match(r"^[<>=^~]*", text)
    return found.group(0) if found else ""


def _reason(text: str, op_hint: str) -> LeftAlone:
    if "<" in text:
        return LeftAlone(Unmovable.UPPER_BOUNDED_RANGE)
    if text in ("", "*", "x", "X") or _PARTIAL.match(text):
        return LeftAlone(Unmovable.PARTIAL_VERSION)
    if op_hint.startswith(">"):
        return LeftAlone(Unmovable.OPEN_RANGE)
    if _semver().valid_range(text, False) is None:
        return LeftAlone(Unmovable.NOT_SEMVER)
    return LeftAlone(Unmovable.COMPOUND_RANGE)


@functools.lru_cache(maxsize=1 << 16)
def _parsed(version: str) -> Any:
    # Parsing is node-semver's cost; a run compares the same few versions many times.
    return _semver().valid(version, False)


def valid(version: str) -> bool:
    return _parsed(version) is not None


def is_prerelease(version: str) -> bool:
    return "-" in version.split("+", 1)[0]


def compare(left: str, right: str) -> int:
    parsed_left, parsed_right = _parsed(left), _parsed(right)
    if parsed_left is None or parsed_right is None:
        result: int = _semver().compare(left, right, False)  # raises like node-semver
        return result
    ordered: int = parsed_left.compare(parsed_right)
    return ordered


sort_key = functools.cmp_to_key(compare)


@functools.lru_cache(maxsize=1 << 16)
def parts(version: str) -> tuple[int, int, int]:
    core = version.split("-", 1)[0].split("+", 1)[0]
    major, minor, patch = (int(p) for p in core.split("."))
    return major, minor, patch


@functools.lru_cache(maxsize=1 << 12)
def _range(spec: str) -> Any:
    # Parsing a range costs far more than testing it, and a run has few distinct ranges.
    try:
        return _semver().make_range(spec, False)
    except (ValueError, TypeError, AttributeError):
        return None  # node-semver raises on some malformed ranges: admits nothing


@functools.lru_cache(maxsize=1 << 16)
def admits(spec: str, version: str) -> bool:
    """Whether the declared range admits ``version`` (prereleases stay opt-in, as in npm)."""
    parsed = _range(spec)
    if parsed is None:
        return False
    try:
        return bool(_semver().satisfies(version, parsed, False))
    except (ValueError, TypeError, AttributeError):
        return False
