"""Failure discipline of scripts that are not hooks: errexit, and failing closed.

A script that mutates state or gates a merge should stop on a failed command: with
errexit but without pipefail, a pipeline whose first command fails goes on with the last
stage's output (a warning at the first such pipeline). Without
``set -e`` (or ``-o errexit``, or ``-e`` on the shebang) and without any explicit status
handling (``|| exit``/``|| return``, a ``$?`` test, ``if ! cmd``), a failure flows on
silently (a suggestion). A gate script fails closed: an ERR/EXIT trap that forces
``exit 0`` turns every internal error into a pass, the hook discipline in the wrong role.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.lenses.hooks import sets_errexit, trap_allows
from tether.audit.shellast import (
    Node,
    argv,
    command,
    command_name,
    functions,
    kind,
    line_of,
    unwrap,
    walk,
)

_QUIET: Final = {
    "echo",
    "printf",
    "exit",
    "return",
    "true",
    ":",
    "set",
    "local",
    "export",
    "trap",
    "shift",
}


# A first stage that cannot fail in a way that matters: its text is the script's own.
_PRODUCERS: Final = {"echo", "printf", "cat", "true", ":"}


def check(tree: Node, ctx: LensContext, first_line: str = "") -> list[Finding]:
    return [*_no_errexit(tree, ctx, first_line), *_fail_open(tree, ctx), *_no_pipefail(tree, ctx)]


def _sets_pipefail(words: list[str | None]) -> bool:
    """``set -o pipefail``, ``set -euo pipefail``: pipefail after an option holding ``o``."""
    if not words or words[0] != "set":
        return False
    return any(
        word == "pipefail" and (option or "").startswith("-") and "o" in (option or "")[1:]
        for option, word in pairwise(words[1:])
    )


def _no_pipefail(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    """errexit without pipefail, ahead of a pipeline whose first command can fail: its
    failure is dropped and the script goes on with the last stage's (partial) output."""
    errexit_at: int | None = None
    for node in sorted(walk(tree), key=line_of):
        words = unwrap(argv(node)) if kind(node) == "CallExpr" else []
        if _sets_pipefail(words) or (kind(node) == "CallExpr" and words[:2] == ["set", "+e"]):
            return
        if errexit_at is None and kind(node) == "CallExpr" and sets_errexit(words):
            errexit_at = line_of(node)
        if errexit_at is not None and kind(node) == "BinaryCmd" and node.get("Op") == "|":
            first = command(node.get("X"))
            if kind(first) == "CallExpr" and command_name(first) not in _PRODUCERS:
                what = f"pipeline after `set -e` (line {errexit_at}) without pipefail"
                yield ctx.finding("discipline/no-pipefail", node, what)
                return


def _handles_status(node: Node) -> bool:
    if kind(node) == "ParamExp":
        return (node.get("Param") or {}).get("Value") == "?"
    if kind(node) == "BinaryCmd" and node.get("Op") == "||":
        words = argv(command(node.get("Y")))
        return bool(words) and words[0] in ("exit", "return", "die", "fail")
    if kind(node) in ("IfClause", "WhileClause"):
        return any(stmt.get("Negated") for stmt in node.get("Cond") or [])
    return False


def _no_errexit(tree: Node, ctx: LensContext, first_line: str) -> Iterator[Finding]:
    if re.match(r"#!.*\s-\w*e", first_line):
        return
    first_act: Node | None = None
    for node in walk(tree):
        if kind(node) == "CallExpr" and sets_errexit(unwrap(argv(node))):
            return
        if _handles_status(node):
            return
        name = command_name(node) if kind(node) == "CallExpr" else None
        if first_act is None and name is not None and name not in _QUIET:
            first_act = node
    if first_act is not None:
        what = "first command, with no errexit and no status handling"
        yield ctx.finding("discipline/no-errexit", first_act, what)


def _fail_open(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    defined = functions(tree)
    for node in walk(tree):
        if kind(node) == "CallExpr" and trap_allows(unwrap(argv(node)), defined):
            yield ctx.finding("discipline/fail-open-trap", node, "trap forcing `exit 0`")
