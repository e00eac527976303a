"""The syntax trees the rules of this area read, made once per test process and shared by
the modules that read the same files (the package's modules, the suite's own).

Parsing the whole package and walking its trees is most of what each rule costs, and several
rules of several modules read every file: each text is parsed once, each tree walked once.
The trees are forgotten when the area's tests are done (``conftest.py``): kept, the
collector would walk their million objects at each full collection of the rest of the run.
"""

from __future__ import annotations

import ast
import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

Fact = TypeVar("Fact")


@contextmanager
def _no_cyclic_collection() -> Iterator[None]:
    """Syntax trees hold no reference cycles, so the collector finds nothing in them; while
    hundreds of thousands of nodes are made it would otherwise run again and again, each
    full collection walking every node made so far."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
def nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree``, in ``ast.walk``'s order."""
    with _no_cyclic_collection():
        return tuple(ast.walk(tree))


def forget() -> None:
    """Let the trees go, and what was read from them (the next reader parses again)."""
    for clear in _FORGOTTEN:
        clear()
