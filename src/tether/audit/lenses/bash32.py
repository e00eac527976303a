"""bash 3.2 compatibility: constructs macOS's /bin/bash rejects or misreads."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.shellast import Node, argv, command_name, kind, literal, walk

_DECLARERS: Final = {"declare", "typeset", "local", "readonly"}
_CASE_OPS: Final = {"^", "^^", ",", ",,"}
# shopt options bash 3.2 does not have: `shopt -s` fails and the behaviour is off.
NEW_SHOPTS: Final = {
    "globstar",
    "lastpipe",
    "autocd",
    "checkjobs",
    "dirspell",
    "direxpand",
    "globasciiranges",
    "inherit_errexit",
    "localvar_inherit",
    "localvar_unset",
    "assoc_expand_once",
    "patsub_replacement",
    "complete_fullquote",
    "compat31",
    "compat32",
    "compat40",
    "compat41",
    "compat42",
    "compat43",
    "compat44",
}
NEW_VARIABLES: Final = {"EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM", "BASH_ARGV0"}
_PRINTF_TIME: Final = re.compile(r"%(?:[-0-9.]*)\([^)]*\)T")


def check(tree: Node, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    for node in walk(tree):
        found.extend(_node_findings(node, ctx))
    return found


def _node_findings(node: Node, ctx: LensContext) -> Iterator[Finding]:
    node_type = kind(node)
    if node_type == "DeclClause":
        yield from _declaration(node, ctx)
    elif node_type == "CallExpr":
        yield from _call(node, ctx)
    elif node_type == "ParamExp":
        yield from _expansion(node, ctx)
    elif node_type == "BinaryCmd" and node.get("Op") == "|&":
        yield ctx.finding("bash32/pipe-both", node, "`|&` pipe")
    elif node_type == "CoprocClause":
        yield ctx.finding("bash32/coproc", node, "coproc clause")
    elif node_type in ("ArithmExp", "ArithmCmd"):
        yield from _arithmetic_variables(node, ctx)
    elif node_type == "UnaryTest" and node.get("Op") == "-v":
        yield ctx.finding("bash32/test-v", node, "`[[ -v … ]]` test")
    elif node_type == "CaseClause":
        for item in node.get("Items") or []:
            if item.get("Op") in (";;&", ";&"):
                yield ctx.finding("bash32/case-fallthrough", item, f"`{item['Op']}` case arm")
    if node.get("Op") == "&>>" and "Word" in node:  # a redirection
        yield ctx.finding("bash32/append-both-redirect", node, "`&>>` redirection")
    if "Cmd" in node:
        for redirect in node.get("Redirs") or []:
            fd = str((redirect.get("N") or {}).get("Value") or "")
            if fd.startswith("{") and fd.endswith("}"):
                yield ctx.finding("bash32/named-fd", node, f"`{fd}` redirection")
    if "Index" in node and "Name" in node and node.get("Naked") is not True:
        yield from _negative_index(node, node["Index"], ctx)  # an array element assignment


def _declaration_flags(node: Node) -> Iterator[str]:
    for assign in node.get("Args") or []:
        if assign.get("Naked") and "Value" in assign:
            flag = literal(assign["Value"])
            if flag and flag.startswith("-"):
                yield flag[1:]


def _declaration(node: Node, ctx: LensContext) -> Iterator[Finding]:
    variant = (node.get("Variant") or {}).get("Value")
    if variant not in _DECLARERS:
        return
    flags = "".join(_declaration_flags(node))
    if "A" in flags:
        yield ctx.finding("bash32/assoc-array", node, f"`{variant} -A`")
    if "n" in flags and variant != "readonly":
        yield ctx.finding("bash32/nameref", node, f"`{variant} -n`")
    if ("l" in flags or "u" in flags) and variant != "readonly":
        yield ctx.finding("bash32/case-modification", node, f"`{variant} -l/-u`")
    if "g" in flags:
        yield ctx.finding("bash32/declare-global", node, f"`{variant} -g`")


def _call(node: Node, ctx: LensContext) -> Iterator[Finding]:
    name = command_name(node)
    if name in ("mapfile", "readarray"):
        yield ctx.finding("bash32/mapfile", node, f"`{name}` command")
    elif name == "wait" and any(_short_flag(word, "n") for word in argv(node)[1:]):
        yield ctx.finding("bash32/wait-n", node, "`wait -n` command")
    elif name == "shopt":
        words = argv(node)[1:]
        if any(_short_flag(w, "s") for w in words):
            for option in sorted({w for w in words if w in NEW_SHOPTS}):
                title = f"`shopt -s {option}` needs bash 4 or later"
                yield ctx.finding("bash32/shopt", node, f"`shopt -s {option}`", title=title)
    elif name == "printf" and any(w and _PRINTF_TIME.search(w) for w in argv(node)[1:]):
        yield ctx.finding("bash32/printf-time", node, "`printf '%(…)T'`")


def _short_flag(word: str | None, flag: str) -> bool:
    return bool(word and word.startswith("-") and not word.startswith("--") and flag in word[1:])


def _expansion(node: Node, ctx: LensContext) -> Iterator[Finding]:
    operator = (node.get("Exp") or {}).get("Op")
    if operator in _CASE_OPS:
        yield ctx.finding("bash32/case-modification", node, f"`${{…{operator}}}` expansion")
    elif operator == "@":
        yield ctx.finding("bash32/param-transform", node, "`${…@…}` expansion")
    param = (node.get("Param") or {}).get("Value")
    if param == "BASHPID":
        yield ctx.finding("bash32/bashpid", node, "`$BASHPID` expansion")
    elif param in NEW_VARIABLES:
        title = f"${param} needs bash 5"
        yield ctx.finding("bash32/new-variable", node, f"`${param}` expansion", title=title)
    if "Index" in node:
        yield from _negative_index(node, node["Index"], ctx)
    length = (node.get("Slice") or {}).get("Length")
    if isinstance(length, dict) and _negative(length):
        yield ctx.finding("bash32/negative-length", node, "`${…:off:-n}` expansion")


def _negative(expr: Node) -> bool:
    if kind(expr) == "UnaryArithm":
        return expr.get("Op") == "-"
    text = literal(expr) if kind(expr) == "Word" else None
    return text is not None and text.startswith("-")


def _negative_index(node: Node, index: Node, ctx: LensContext) -> Iterator[Finding]:
    negative = kind(index) == "UnaryArithm" and index.get("Op") == "-"
    text = literal(index) if kind(index) == "Word" else None
    if negative or (text is not None and text.startswith("-")):
        yield ctx.finding("bash32/negative-index", node, "negative array index")


def _arithmetic_variables(node: Node, ctx: LensContext) -> Iterator[Finding]:
    """``$((EPOCHSECONDS - t))`` names the variable bare, without a ``$``."""
    for item in walk(node.get("X")):
        if kind(item) == "Lit" and item.get("Value") in NEW_VARIABLES:
            param = item["Value"]
            title = f"${param} needs bash 5"
            yield ctx.finding("bash32/new-variable", item, f"`{param}` in arithmetic", title=title)
