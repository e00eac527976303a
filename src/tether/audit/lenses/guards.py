"""Branches guarded by a platform or version test, where a GNU-only or bash-4 form is meant.

A construct inside an ``if``/``elif``/``else`` arm, a ``case`` arm or the right side of
``&&``/``||`` whose condition asks ``uname``, ``$OSTYPE``, ``$BASH_VERSINFO``/
``$BASH_VERSION``, ``command -v``/``type``/``hash``/``which``, or a ``--version`` probe was
written for one platform on purpose: its portability finding becomes a suggestion. So is
either side of a fallback chain ``cmd -gnu … || cmd -bsd …`` (the same command twice):
the other flavour's form runs when the first fails.
"""

from __future__ import annotations

from typing import Any, Final

from tether.audit.shellast import Node, argv, command, command_name, kind, walk

_PLATFORM_PARAMS: Final = {"OSTYPE", "BASH_VERSINFO", "BASH_VERSION", "MACHTYPE"}
_PROBES: Final = {"command", "type", "hash", "which", "uname", "sw_vers"}


def _probes_platform(node: Any) -> bool:
    for item in walk(node):
        if kind(item) == "ParamExp" and (item.get("Param") or {}).get("Value") in _PLATFORM_PARAMS:
            return True
        if kind(item) == "CallExpr" and (
            command_name(item) in _PROBES or "--version" in argv(item)
        ):
            return True
    return False


def _lines(stmts: list[Node]) -> set[int]:
    found: set[int] = set()
    for stmt in stmts:
        first = int((stmt.get("Pos") or {}).get("Line", 0))
        last = int((stmt.get("End") or {}).get("Line", first))
        found.update(range(first, last + 1))
    return found


def _if_arms(clause: Any) -> list[Node]:
    arms: list[Node] = []
    while isinstance(clause, dict):
        arms.extend(clause.get("Then") or [])
        clause = clause.get("Else")
    return arms


def _guarded_list(node: Node) -> bool:
    """``probe && cmd`` / ``probe || cmd``: the right side runs on the probe's answer."""
    if kind(node) != "BinaryCmd" or node.get("Op") not in ("&&", "||"):
        return False
    return isinstance(node.get("Y"), dict) and _probes_platform(command(node.get("X")))


def _fallback_chain(node: Node) -> bool:
    """``stat -c … || stat -f …``: the first form is tried, the other flavour's form
    runs when it fails, so the script works on both."""
    if kind(node) != "BinaryCmd" or node.get("Op") != "||":
        return False
    first, other = command(node.get("X")), command(node.get("Y"))
    if kind(first) != "CallExpr" or kind(other) != "CallExpr":
        return False
    name = command_name(first)
    return name is not None and name == command_name(other)


def guarded_lines(tree: Node) -> set[int]:
    """The lines inside branches taken on a platform or version test."""
    lines: set[int] = set()
    for node in walk(tree):
        node_type = kind(node)
        if node_type == "IfClause" and _probes_platform(node.get("Cond")):
            lines |= _lines(_if_arms(node))
        elif node_type == "CaseClause" and _probes_platform(node.get("Word")):
            lines |= _lines(
                [s for item in node.get("Items") or [] for s in item.get("Stmts") or []]
            )
        elif _guarded_list(node):
            lines |= _lines([node["Y"]])
        elif _fallback_chain(node):
            lines |= _lines([node["X"], node["Y"]])
    return lines
