"""A real shell parser for the lenses: shfmt's typed JSON syntax tree.

shfmt (mvdan/sh) parses bash, POSIX sh and bats; ``--to-json`` prints the tree. Nodes are
plain dicts: commands carry ``Type`` (``CallExpr``, ``IfClause`` …), statements carry
``Cmd``, ``Negated`` and ``Redirs``, positions are ``{"Line", "Col"}``. A file shfmt cannot
parse is reported as "cannot analyse", never as clean.
"""

from __future__ import annotations

import json
import posixpath
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from tether import process
from tether.audit.tools import Tool
from tether.errors import TetherError
from tether.sources.limits import SHFMT_TIME

Node = dict[str, Any]

# Commands that run the command named by their operands; the lenses look through them.
_WRAPPER_OPTIONS_WITH_VALUE: Final = {
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    "nohup": set(),
    "time": set(),
    "env": {"-u", "-C", "-S"},
    "sudo": {"-u", "-g", "-C", "-h", "-p", "-U"},
    "nice": {"-n"},
}


@dataclass(frozen=True)
class Parsed:
    tree: Node | None
    error: str | None = None
    error_line: int = 1


def parse(tool: Tool, data: bytes, dialect: str) -> Parsed:
    """Parse with shfmt in ``dialect`` (bash, posix or bats)."""
    if not tool.available or tool.path is None:
        return Parsed(None, "shfmt not available")
    try:
        seconds = SHFMT_TIME.seconds()
    except TetherError as error:
        return Parsed(None, f"shfmt could not run: {error}")
    result = process.run(
        [tool.path, "--to-json", "-ln", dialect],
        input=data,
        timeout=seconds,
        limit=SHFMT_TIME.variable,
    )
    if result.timed_out:
        return Parsed(None, f"shfmt {result.end_words()}")
    if not result.started:
        return Parsed(None, f"shfmt could not run: {result.error}")
    if result.exit_code != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        first = message[0] if message else f"exit status {result.exit_code}"
        return Parsed(None, f"shfmt could not parse it ({first})", _error_line(first))
    try:
        tree = json.loads(result.stdout)
    except ValueError:
        return Parsed(None, "shfmt printed no syntax tree")
    if not isinstance(tree, dict):
        return Parsed(None, "shfmt printed no syntax tree")
    if any(isinstance(node.get("Op"), int) for node in walk(tree)):
        # Before 3.14 shfmt printed operators as enum numbers: every lens would miss them.
        return Parsed(None, f"shfmt {tool.version} prints operators as numbers; need 3.14 or later")
    return Parsed(tree)


def _error_line(message: str) -> int:
    # shfmt reports "<file>:LINE:COL: message" (stdin has no file part: "LINE:COL: …").
    for part in message.split(":"):
        if part.strip().isdigit():
            return int(part.strip())
    return 1


def line_of(node: Node) -> int:
    pos = node.get("Pos")
    return int(pos.get("Line", 1)) if isinstance(pos, dict) else 1


_LAST_FILE = threading.local()  # one parsed file per worker thread


def walk(node: Any) -> Iterator[Node]:
    """Every dict in the tree, parents before children, in document order.

    Every lens walks the whole file, so a file root's node list is kept (one per thread)
    and later walks of the same root read it instead of walking again.
    """
    if isinstance(node, dict) and node.get("Type") == "File":
        if getattr(_LAST_FILE, "root", None) is not node:
            _LAST_FILE.root, _LAST_FILE.nodes = node, list(_walk(node))
        return iter(_LAST_FILE.nodes)
    return _walk(node)


def _walk(node: Any) -> Iterator[Node]:
    # An explicit stack: nested generators cost a frame per level for every node.
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed([v for v in item.values() if isinstance(v, dict | list)]))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def statements(node: Any) -> Iterator[Node]:
    return (item for item in walk(node) if "Cmd" in item and "Pos" in item)


def command(stmt: Node | None) -> Node:
    cmd = stmt.get("Cmd") if isinstance(stmt, dict) else None
    return cmd if isinstance(cmd, dict) else {}


def kind(node: Node | None) -> str | None:
    return node.get("Type") if isinstance(node, dict) else None


def _unescape(text: str, quoted: bool) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and (not quoted or text[i + 1] in '"\\$`\n'):
            out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _part_literal(part: Node, quoted: bool) -> str | None:
    part_type = part.get("Type")
    if part_type == "Lit":
        return _unescape(str(part.get("Value", "")), quoted)
    if part_type == "SglQuoted":
        return str(part.get("Value", ""))
    if part_type == "DblQuoted":
        pieces = [_part_literal(p, True) for p in part.get("Parts") or []]
        return None if any(p is None for p in pieces) else "".join(p or "" for p in pieces)
    return None


def literal(word: Node | None) -> str | None:
    """The word's value when it has no expansion in it, else None."""
    if not isinstance(word, dict):
        return None
    pieces = [_part_literal(part, False) for part in word.get("Parts") or []]
    return None if any(p is None for p in pieces) else "".join(p or "" for p in pieces)


def has_expansion(word: Node | None) -> bool:
    """True when the word holds a parameter, command or arithmetic expansion."""
    expanding = {"ParamExp", "CmdSubst", "ArithmExp", "ProcSubst"}
    return any(kind(node) in expanding for node in walk(word))


def literal_text(word: Node | None) -> str:
    """The literal pieces of a word joined, expansions left out (for pattern checks)."""
    pieces = [
        _unescape(str(node.get("Value", "")), True)
        if kind(node) == "Lit"
        else str(node.get("Value", ""))
        for node in walk(word)
        if kind(node) in ("Lit", "SglQuoted")
    ]
    return "".join(pieces)


def args(cmd: Node) -> list[Node]:
    return list(cmd.get("Args") or []) if kind(cmd) == "CallExpr" else []


def argv(cmd: Node) -> list[str | None]:
    """The literal arguments of a simple command (None for a dynamic word)."""
    return [literal(word) for word in args(cmd)]


def unwrap(words: list[str | None]) -> list[str | None]:
    """The command a wrapper runs (``env X=1 sudo sed …`` → ``sed …``), basename first."""
    while words and words[0] is not None:
        name = posixpath.basename(words[0])
        lookup = name == "command" and any(w in ("-v", "-V") for w in words[1:2])
        if name not in _WRAPPER_OPTIONS_WITH_VALUE or lookup:
            return [name, *words[1:]]  # `command -v jq` asks about jq, it does not run it
        words = _skip_options(words[1:], _WRAPPER_OPTIONS_WITH_VALUE[name], name == "env")
    return words


def _skip_options(
    words: list[str | None], with_value: set[str], assignments: bool
) -> list[str | None]:
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return words[i + 1 :]
        if word is not None and assignments and "=" in word and not word.startswith("-"):
            i += 1
        elif word is not None and word.startswith("-") and len(word) > 1:
            i += 2 if word in with_value else 1
        else:
            break
    return words[i:]


def command_name(cmd: Node) -> str | None:
    words = unwrap(argv(cmd))
    return words[0] if words else None


def functions(tree: Node) -> dict[str, Node]:
    """The script's function definitions by name."""
    return {
        str((node.get("Name") or {}).get("Value")): node
        for node in walk(tree)
        if kind(node) == "FuncDecl"
    }
