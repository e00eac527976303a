"""Repository-relative paths: no path into one person's machine, no reliance on the caller's cwd.

- a literal path under ``/Users/NAME`` or ``/home/NAME`` names the author's machine (a
  word that starts with an expansion, ``"$BATS_TEST_TMPDIR/home/…"``, is under that
  variable instead, and a placeholder account, ``/Users/you``, names nobody's);
- ``cd``/``pushd`` into a literal absolute directory (other than ``/`` and ``/tmp``)
  assumes a layout the next machine does not have;
- ``source``/``.`` of a relative literal path, or ``bash``/``sh`` running one, resolves
  against whatever directory the caller happens to be in, unless the script first
  anchors itself: a ``cd``, or a location derived with ``dirname``, ``$BASH_SOURCE`` or
  ``git rev-parse --show-toplevel``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.shellast import Node, argv, command, command_name, kind, line_of, walk

_MACHINE_PATH: Final = re.compile(r"(?:^|[\s:=\"'])(/(?:Users|home)/([A-Za-z0-9._-]+))")
# Account names documentation and fixtures use for "somebody": a path under one of them
# is an example, never the author's machine (`/Users/you/work/…` in a test payload).
_PLACEHOLDER_ACCOUNTS: Final = {
    "you",
    "me",
    "user",
    "username",
    "someone",
    "somebody",
    "example",
    "name",
    "yourname",
    "your-name",
    "your_name",
}
_HARMLESS_DIRS: Final = {"/", "/tmp"}
_RUNNERS: Final = {"bash", "sh", "dash", "source", "."}


def check(tree: Node, ctx: LensContext) -> list[Finding]:
    return [
        *_machine_paths(tree, ctx),
        *_absolute_cds(tree, ctx),
        *_caller_cwd(tree, ctx),
        *_library_cds(tree, ctx),
    ]


_LIBRARY_TOP: Final = {"source", ".", "set", "shopt", "export", "readonly", "return", ":", "true"}
_DIRECTORY_CHANGERS: Final = {"cd", "pushd", "popd"}


def _load_guard(cmd: Node) -> bool:
    """``[ -n "${_LOADED:-}" ] && return`` or ``if [ -n "${_LOADED:-}" ]; then return 0; fi``:
    a second ``source`` of the file returns before doing anything."""
    if kind(cmd) == "BinaryCmd":
        return command_name(command(cmd.get("Y"))) == "return"
    if kind(cmd) == "IfClause" and not cmd.get("Else"):
        arms = cmd.get("Then") or []
        return bool(arms) and all(command_name(command(stmt)) == "return" for stmt in arms)
    return False


def is_library(tree: Node) -> bool:
    """A file made to be sourced: function definitions, and at the top level only
    assignments, declarations, sourcing and option setting (an include guard too)."""
    stmts = tree.get("Stmts") or []
    if not any(kind(command(stmt)) == "FuncDecl" for stmt in stmts):
        return False
    for stmt in stmts:
        cmd = command(stmt)
        cmd_type = kind(cmd)
        if cmd_type in ("FuncDecl", "DeclClause") or _load_guard(cmd):
            continue
        if cmd_type == "CallExpr" and (not cmd.get("Args") or command_name(cmd) in _LIBRARY_TOP):
            continue
        return False
    return True


def _library_cds(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    """A ``cd`` in a sourced library moves its caller: a hook chain or script goes on in
    another directory. One inside ``( … )`` or ``$( … )`` stays in that subshell."""
    if not is_library(tree):
        return
    contained: set[int] = set()
    for node in walk(tree):
        if kind(node) in ("Subshell", "CmdSubst", "ProcSubst"):
            contained.update(id(inner) for inner in walk(node) if inner is not node)
    for node in walk(tree):
        if kind(node) != "CallExpr" or id(node) in contained:
            continue
        name = command_name(node)
        if name in _DIRECTORY_CHANGERS:
            yield ctx.finding("paths/library-cd", node, f"`{name}` in a sourced library")


def _after_expansion(tree: Node) -> set[int]:
    """ids of the literal pieces that continue a word after an expansion
    (``"$BATS_TEST_TMPDIR/home/…"``): a path there is under the variable, not the machine."""
    marked: set[int] = set()
    for node in walk(tree):
        parts = node.get("Parts")
        if not isinstance(parts, list):
            continue
        for before, part in pairwise(parts):
            if kind(before) not in ("Lit", "SglQuoted") or id(before) in marked:
                marked.add(id(part))
                inner = part.get("Parts") if kind(part) == "DblQuoted" else None
                if inner:
                    marked.add(id(inner[0]))
    return marked


def _machine_paths(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    lines: set[int] = set()
    continued = _after_expansion(tree)
    for node in walk(tree):
        text = str(node.get("Value")) if kind(node) in ("Lit", "SglQuoted") else ""
        starts = [
            m.start(1)
            for m in _MACHINE_PATH.finditer(text)
            if m.group(2).lower() not in _PLACEHOLDER_ACCOUNTS
        ]
        if any(at or id(node) not in continued for at in starts) and line_of(node) not in lines:
            lines.add(line_of(node))
            yield ctx.finding("paths/machine-path", node, "path under /Users or /home")


def _absolute_cds(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    for node in walk(tree):
        words = argv(node) if kind(node) == "CallExpr" else []
        if len(words) > 1 and words[0] in ("cd", "pushd"):
            target = words[-1]
            if (
                target
                and target.startswith("/")
                and (target.rstrip("/") or "/") not in _HARMLESS_DIRS
            ):
                yield ctx.finding("paths/absolute-cd", node, f"`{words[0]} {target}`")


def _anchors(node: Node) -> bool:
    """True for a statement that fixes where relative paths resolve."""
    if kind(node) == "ParamExp":
        return (node.get("Param") or {}).get("Value") == "BASH_SOURCE"
    if kind(node) != "CallExpr":
        return False
    words = argv(node)
    name = command_name(node)
    return name in ("cd", "pushd", "dirname", "realpath") or (
        name == "git" and "--show-toplevel" in words
    )


def _relative_script(words: list[str | None]) -> str | None:
    if len(words) < 2 or words[0] not in _RUNNERS:
        return None
    operands = [w for w in words[1:] if not (w and w.startswith("-"))]
    target = operands[0] if operands else None
    if target is None or target.startswith(("/", "~")):
        return None
    if words[0] in ("bash", "sh", "dash") and "/" not in target:
        return None  # `bash script` with no folder is rare; `bash -c` has an option
    return target


def _caller_cwd(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    anchored_at: int | None = None
    for node in sorted(walk(tree), key=lambda n: (line_of(n), kind(n) != "ParamExp")):
        if anchored_at is None and _anchors(node):
            anchored_at = line_of(node)
        words = argv(node) if kind(node) == "CallExpr" else []
        target = _relative_script(words)
        if target is not None and (anchored_at is None or anchored_at > line_of(node)):
            yield ctx.finding("paths/caller-cwd", node, f"relative `{words[0]} {target}`")
