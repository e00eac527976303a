"""The syntax trees the rules of this area read, made once per test process and shared by
the rules that read the same files (the package's modules, the suite's own).

Parsing the whole package and walking its trees is most of what each rule costs, and several
rules read every file: each text is parsed once, each tree walked once. A module reading
trees does so inside ``reading()`` (the fixture ``reading_syntax_trees`` of ``conftest.py``):
syntax trees hold no reference cycles, so the collector finds nothing in them, but while
hundreds of thousands of nodes are made it would run again and again, each full collection
walking every node made so far; and kept after the module, the trees would be walked at each
full collection of the rest of the run.
"""

from __future__ import annotations

import ast
import functools
import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

Fact = TypeVar("Fact")


@contextmanager
def _no_cyclic_collection() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def reading() -> Iterator[None]:
    """No cyclic collection inside; the trees and what was read from them let go after."""
    with _no_cyclic_collection():
        try:
            yield
        finally:
            forget()


@functools.cache
def parsed(text: str) -> ast.Module:
    """The syntax tree of a module's text."""
    with _no_cyclic_collection():
        return ast.parse(text)


_FORGOTTEN: list[Callable[[], None]] = [parsed.cache_clear]


def of_each_tree(read: Callable[[ast.AST], Fact]) -> Callable[[ast.AST], Fact]:
    """``read`` (which only reads the tree it is given) run once per tree, its answer kept
    as long as the trees are."""
    kept = functools.cache(read)
    _FORGOTTEN.append(kept.cache_clear)
    return kept


@of_each_tree
def _walked(tree: ast.AST) -> tuple[list[ast.AST], dict[type, list[int]]]:
    """Every node of ``tree`` in ``ast.walk``'s order (breadth first, each node's children
    in the order of its fields), and where each kind of node stands. Walked here without
    ``ast.walk``'s generators, which take twice as long."""
    every = [tree]
    where: dict[type, list[int]] = {}
    with _no_cyclic_collection():
        for index, node in enumerate(every):  # the list grows as it is read: a queue
            where.setdefault(type(node), []).append(index)
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    every.append(value)
                elif isinstance(value, list):
                    every.extend(item for item in value if isinstance(item, ast.AST))
    return every, where


def nodes(tree: ast.AST, *kinds: type[ast.AST]) -> Sequence[ast.AST]:
    """The nodes of ``tree`` in ``ast.walk``'s order: all of them, or those of ``kinds`` (a
    rule looking at imports need not look at the other nodes, most of any tree)."""
    every, where = _walked(tree)
    if not kinds:
        return every
    return [every[index] for index in sorted(i for kind in kinds for i in where.get(kind, ()))]


def forget() -> None:
    """Let the trees go, and what was read from them (the next reader parses again)."""
    for clear in _FORGOTTEN:
        clear()
