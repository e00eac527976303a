"""Branches guarded by a platform or version test, where a GNU-only or bash-4 form is meant.

A construct inside an ``if``/``elif``/``else`` arm, a ``case`` arm or the right side of
``&&``/``||`` whose condition asks ``uname``, ``$OSTYPE``, ``$BASH_VERSINFO``/
``$BASH_VERSION``, ``command -v``/``type``/``hash``/``which``, or a ``--version`` probe was
written for one platform on purpose: its portability finding becomes a suggestion. So is
a condition reading a flag set from such a probe (``[ "$(uname)" = Darwin ] && is_mac=1``
… ``if [ "$is_mac" = 1 ]``). And so are both sides of a fallback chain, where the other
flavour's form runs when the first fails: ``cmd -gnu … || cmd -bsd …`` (also inside
``x=$( … )`` on either side, ``x=$(date -d …) || x=$(date -j …)``), a GNU name or a
portable equivalent on the other side (``date … || gdate …``, ``readlink -f … ||
realpath …``), and an ``if`` whose condition tries one form while an ``elif``/``else``
runs the same command (``if stat -f %m f >/dev/null 2>&1; then …; else stat -c %Y f; fi``).
"""

from __future__ import annotations

from typing import Any, Final

from tether.audit.shellast import (
    Node,
    argv,
    command,
    command_name,
    has_expansion,
    kind,
    line_of,
    walk,
)

_PLATFORM_PARAMS: Final = {"OSTYPE", "BASH_VERSINFO", "BASH_VERSION", "MACHTYPE"}
_PROBES: Final = {"command", "type", "hash", "which", "uname", "sw_vers"}


def _probes_platform(node: Any, flags: frozenset[str] = frozenset()) -> bool:
    for item in walk(node):
        param = (item.get("Param") or {}).get("Value") if kind(item) == "ParamExp" else None
        if param in _PLATFORM_PARAMS or param in flags:
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


def _if_chain(clause: Any) -> list[Node]:
    """Every condition and arm of an ``if``/``elif``/``else`` chain."""
    stmts: list[Node] = []
    while isinstance(clause, dict):
        stmts.extend([*(clause.get("Cond") or []), *(clause.get("Then") or [])])
        clause = clause.get("Else")
    return stmts


def _if_arms(clause: Any) -> list[Node]:
    arms: list[Node] = []
    while isinstance(clause, dict):
        arms.extend(clause.get("Then") or [])
        clause = clause.get("Else")
    return arms


def _guarded_list(node: Node, flags: frozenset[str]) -> bool:
    """``probe && cmd`` / ``probe || cmd``: the right side runs on the probe's answer."""
    if kind(node) != "BinaryCmd" or node.get("Op") not in ("&&", "||"):
        return False
    return isinstance(node.get("Y"), dict) and _probes_platform(command(node.get("X")), flags)


# Programs that stand in for one another across GNU and BSD systems; any name also
# stands for its GNU coreutils spelling with a `g` prefix (gdate, gsed, gstat …).
_EQUIVALENTS: Final = ({"readlink", "realpath"},)


def _family(name: str) -> set[str]:
    family = {name, "g" + name}
    if name.startswith("g"):
        family.add(name[1:])  # gdate stands for date (and grep's "rep" harms nothing)
    for group in _EQUIVALENTS:
        if family & group:
            family |= group | {"g" + other for other in group}
    return family


def _commands(node: Any) -> set[str]:
    """The programs a statement runs, in command substitutions too."""
    names = (command_name(item) for item in walk(node) if kind(item) == "CallExpr")
    return {name for name in names if name}


def _alternatives(first: Any, other: Any) -> bool:
    """True when ``other`` runs the program ``first`` runs, or a stand-in for it."""
    theirs = _commands(other)
    return any(_family(name) & theirs for name in _commands(first))


def _fallback_chain(node: Node) -> bool:
    """``stat -c … || stat -f …``: the first form is tried, the other flavour's form
    runs when it fails, so the script works on both."""
    if kind(node) != "BinaryCmd" or node.get("Op") != "||":
        return False
    return _alternatives(node.get("X"), node.get("Y"))


def _tried_condition(node: Node) -> bool:
    """``if stat -f … ; then …; else stat -c …; fi``: the condition tries one flavour
    and an ``elif``/``else`` runs the same program when it fails."""
    return kind(node) == "IfClause" and _alternatives(node.get("Cond"), node.get("Else"))


def _platform_flags(tree: Node) -> frozenset[str]:
    """Variables that hold a platform answer: assigned a probe's output
    (``os=$(uname -s)``), or a literal in a branch taken on a probe
    (``[ "$(uname)" = Darwin ] && is_mac=1``, ``case $OSTYPE in darwin*) bsd=1;; esac``)."""
    flags: set[str] = set()
    while True:
        guarded = _guarded(tree, frozenset(flags))
        found = set(flags)
        for node in walk(tree):
            if kind(node) != "CallExpr" or node.get("Args"):
                continue
            for assign in node.get("Assigns") or []:
                name = (assign.get("Name") or {}).get("Value")
                value = assign.get("Value")
                if not name:
                    continue
                if _probes_platform(value) or (
                    line_of(node) in guarded and not has_expansion(value)
                ):
                    found.add(str(name))
        if found == flags:
            return frozenset(flags)
        flags = found


def _guarded(tree: Node, flags: frozenset[str]) -> set[int]:
    lines: set[int] = set()
    for node in walk(tree):
        node_type = kind(node)
        if node_type == "IfClause" and _probes_platform(node.get("Cond"), flags):
            lines |= _lines(_if_arms(node))
        elif node_type == "CaseClause" and _probes_platform(node.get("Word"), flags):
            lines |= _lines(
                [s for item in node.get("Items") or [] for s in item.get("Stmts") or []]
            )
        elif _guarded_list(node, flags):
            lines |= _lines([node["Y"]])
    return lines


def guarded_lines(tree: Node) -> set[int]:
    """The lines inside branches taken on a platform or version test, and the lines of
    fallback chains."""
    lines = _guarded(tree, _platform_flags(tree))
    for node in walk(tree):
        if _fallback_chain(node):
            lines |= _lines([node["X"], node["Y"]])
        elif _tried_condition(node):
            lines |= _lines(_if_chain(node))
    return lines
