"""Bounds on parsing data tether did not write in this run: a release's files, the adopter's
files, committed records. Pure: text in, data or a one-line problem out.

A parser given hostile text must not run for minutes, exhaust memory or blow the stack:

- **nesting**: parsers and every walk over parsed data recurse once per level, so a few
  thousand brackets end in ``RecursionError``. ``json_loads`` and ``toml_loads`` turn that
  into the parser's own error type; structured merges refuse data nested more than
  ``MAX_NESTING`` levels before anything walks it;
- **aliases**: a YAML anchor used many times is shared by the loaded data, but every walk
  over that data visits it once per use, so nine aliases of nine aliases of … (a "billion
  laughs") turn a kilobyte into gigabytes. ``shape_problem`` counts the size the data has
  with every alias expanded, sharing-aware and in time linear in the distinct values;
- **size and time**: the limits a structured merge and the syntax check of a line merge
  work within (see ``flows/syntax_step.py``).

docs/security.md ("Parsing limits") states every number here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Set

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

# Levels of mappings and lists in structured data (JSON, YAML, TOML). tomlkit refuses
# more than 100 on its own; the other formats get the same bound.
MAX_NESTING = 100

# What YAML aliases may add to a document, counted once per value plus once per
# character of text: generous for `<<: *defaults` in every job of a CI file, far below
# what makes a walk over the data slow.
MAX_ALIAS_EXPANSION = 1_000_000

# Each side of a field-aware (key-by-key) merge; a larger file is merged line by line.
STRUCTURED_MERGE_MAX_BYTES = 64 * 1024

# The syntax check of a clean line merge runs in-process when every side is at most this
# large, in a child process with a wall-clock and memory limit when one is larger, and
# not at all (the merge goes to a person) when one is larger than the maximum.
SYNTAX_CHECK_INLINE_BYTES = 64 * 1024
SYNTAX_CHECK_MAX_BYTES = 8 * 1024 * 1024
SYNTAX_CHECK_SECONDS = 20.0
SYNTAX_CHECK_MEMORY_BYTES = 2 * 1024 * 1024 * 1024

# Regular expressions a release supplies (a condition's ``matches``, a migration's
# ``summary_pattern``) are matched in a child process stopped after this long (all the
# patterns one step needs, together), with this much address space; a pattern longer than
# the maximum is refused when the manifest is read.
PATTERN_SECONDS = 5.0
PATTERN_MEMORY_BYTES = 1024 * 1024 * 1024
PATTERN_MAX_CHARS = 1000

NESTED_TOO_DEEPLY = "nested too deeply"


class JSONTooDeep(json.JSONDecodeError):
    """JSON nested deeper than the interpreter's stack or a caller's bound: a
    ``JSONDecodeError`` whose text is one short line, so every caller that already handles
    bad JSON handles this too."""

    def __init__(self, doc: str, message: str = NESTED_TOO_DEEPLY) -> None:
        ValueError.__init__(self, message)
        self.msg, self.doc, self.pos, self.lineno, self.colno = message, doc, 0, 1, 1


def json_loads(data: str | bytes | bytearray, max_depth: int | None = None) -> Any:
    """``json.loads`` that raises ``JSONDecodeError`` (never ``RecursionError``) for text
    nested deeper than the interpreter's stack allows, or than ``max_depth`` levels (for
    data that is kept and walked later, such as a release's manifest)."""
    try:
        parsed = json.loads(data)
    except RecursionError:
        raise JSONTooDeep("") from None
    problem = depth_problem(parsed, max_depth) if max_depth is not None else None
    if problem is not None:
        raise JSONTooDeep("", problem)
    return parsed


def toml_loads(text: str, max_depth: int | None = None) -> dict[str, Any]:
    """``tomllib.loads`` that raises ``TOMLDecodeError`` (never ``RecursionError``), also
    for data nested more than ``max_depth`` levels when that is given."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(NESTED_TOO_DEEPLY) from None
    problem = depth_problem(data, max_depth) if max_depth is not None else None
    if problem is not None:
        raise tomllib.TOMLDecodeError(problem)
    return data


_SCALARS = (str, bytes, int, float, bool, type(None))
# Expanded sizes stop growing here: far above any document's own size, so the difference
# that counts stays exact, while a "billion laughs" never builds huge integers.
_SATURATED = 1 << 64
_KINDS: dict[type, str] = {}  # a type's kind, worked out once (ABC checks are slow)


def _kind(node: Any) -> str:
    kind = _KINDS.get(type(node))
    if kind is None:
        if isinstance(node, _SCALARS):
            kind = "scalar"
        elif isinstance(node, Mapping):
            kind = "mapping"
        elif isinstance(node, list | tuple | Set):
            kind = "collection"
        else:
            kind = "wrapper"  # ruamel TaggedScalar and friends hold their data in .value
        _KINDS[type(node)] = kind
    return kind


def _children(node: Any) -> Iterable[Any] | None:
    """What a walk over parsed data visits inside ``node``; None for a scalar. Mirrors
    ``engine.structured.values.plain``: mapping keys count, they are data too."""
    kind = _kind(node)
    if kind == "scalar":
        return None
    if kind == "mapping":
        return [*node.keys(), *node.values()]
    if kind == "collection":
        return node  # type: ignore[no-any-return]
    inner = getattr(node, "value", None)
    return None if inner is None or inner is node else (inner,)


def _weight(node: Any) -> int:
    return 1 + len(node) if isinstance(node, str | bytes) else 1


def depth_problem(data: Any, max_depth: int = MAX_NESTING) -> str | None:
    """Why plain parsed data (dicts and lists, as ``json.loads`` and ``tomllib`` make
    them) is nested more than ``max_depth`` levels; None when it is not."""
    level = [data]
    for _ in range(max_depth):
        deeper: list[Any] = []
        for node in level:
            if type(node) is dict:
                deeper += [v for v in node.values() if type(v) is dict or type(v) is list]
            elif type(node) is list:
                deeper += [v for v in node if type(v) is dict or type(v) is list]
        if not deeper:
            return None
        level = deeper
    return f"nested more than {max_depth} levels deep"


def shape_problem(data: Any, max_depth: int = MAX_NESTING) -> str | None:
    """Why data a YAML loader made is nested more than ``max_depth`` levels, contains
    itself, or grows by more than ``MAX_ALIAS_EXPANSION`` once every alias is expanded;
    None when it is within bounds.

    Time is linear in the distinct values: a shared value's expanded size is worked out
    once and reused for every further use.
    """
    expanded: dict[int, int] = {}  # id -> expanded size of every shared-able value done
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[Any, Iterable[Any] | None, int]] = [(data, _children(data), 1)]
    while stack:
        node, children, depth = stack.pop()
        key = id(node)
        if depth < 0:  # second visit: every child is done
            on_path.discard(key)
            total = 1 + sum(_expanded_size(child, expanded) for child in children or ())
            expanded[key] = min(total, _SATURATED)
            continue
        if key in expanded:
            continue
        if key in on_path:
            return "a value contains itself"
        if depth > max_depth:
            return f"nested more than {max_depth} levels deep"
        distinct += 1
        on_path.add(key)
        stack.append((node, children, -1))
        for child in children or ():
            grandchildren = _children(child)
            if grandchildren is not None:
                stack.append((child, grandchildren, depth + 1))
                continue
            weight = _weight(child)
            # Small scalars (None, booleans, small numbers, one character) are shared by
            # the interpreter itself: count each occurrence instead of each object.
            if weight <= 2:
                distinct += weight
            elif id(child) not in expanded:
                expanded[id(child)] = weight
                distinct += weight
    growth = _expanded_size(data, expanded) - distinct
    if growth > MAX_ALIAS_EXPANSION:
        return f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} further values"
    return None


def _expanded_size(node: Any, expanded: dict[int, int]) -> int:
    size = expanded.get(id(node))
    return size if size is not None else _weight(node)
