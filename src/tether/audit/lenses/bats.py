"""Hollow bats assertions: checks inside a @test body that cannot fail the test.

bats runs each @test body as a function under ``set -e``, so a check fails the test
only when set -e acts on it or when it is the body's last command (whose status is the
test's). The rules, per @test body:

- the body's last statement is final; inside if/case/brace bodies the last statement is
  final when the enclosing statement is; a loop body is never final (the loop goes on);
  a subshell's last statement is final (its status is the subshell's);
- a non-final bare ``[[ … ]]`` or ``(( comparison ))``, alone or as the right side of
  ``&&``/``||``, is hollow on bash < 4.1, whose set -e ignores both (macOS /bin/bash is 3.2);
- a non-final ``! cmd`` is hollow on every bash: set -e ignores negated commands
  (``run ! cmd`` is bats' own negation and is fine);
- a check followed by ``|| return 1`` (``|| exit``, ``|| false``, ``|| fail …``) bails out
  and is never hollow; a non-final ``cond && return 1`` is a deliberate guard;
- a final ``cond && return 1`` fails the passing case: when cond is false, its status is
  the test's;
- any other non-final ``A && B`` is advisory: a false A is ignored, which is often meant.

Beyond set -e, in any position of a @test body: a check swallowed by ``|| true`` (``|| :``,
``|| echo …``, ``|| return 0``); a ``run`` whose ``$status``/``$output``/``$lines`` nothing
reads before the next ``run`` or the end; a check whose only use is an ``if``/``while``
condition with no failing arm; statements after an unconditional ``return``/``exit``;
a pattern that always matches; and an unconditional ``skip``.
"""

from __future__ import annotations

from typing import Any, Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.lenses.batsbody import (
    SETUPS,
    Helpers,
    bails,
    body_findings,
    ci_skips,
    unconditional_skips,
)
from tether.audit.shellast import Node, argv, command, kind, walk

_COMPARISONS: Final = {"<", ">", "<=", ">=", "==", "!=", "&&", "||"}

_OLD_BASH = "set -e on bash < 4.1 (macOS /bin/bash is 3.2) ignores its failure"
_TITLE_TEST = f"non-final `[[ … ]]` cannot fail the test: {_OLD_BASH}"
_TITLE_ARITH = f"non-final `(( comparison ))` cannot fail the test: {_OLD_BASH}"
_TITLE_RIGHT = f"`[[ … ]]`/`(( … ))` ending a non-final `&&`/`||` list: {_OLD_BASH}"
_TITLE_BANG = "non-final `! cmd` cannot fail the test: set -e ignores negated commands"


def check(tree: Node, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    helpers = Helpers.of(tree)
    for node in walk(tree):
        if kind(node) == "TestDecl":
            body = command(node.get("Body"))
            stmts = body.get("Stmts") or []
            found.extend(_statements(stmts, True, ctx))
            found.extend(body_findings(body, ctx, helpers))
        elif kind(node) == "FuncDecl" and (node.get("Name") or {}).get("Value") in SETUPS:
            setup = command(node.get("Body"))
            found.extend(unconditional_skips(setup, ctx, "setup"))
            found.extend(ci_skips(setup, ctx))
    return found


def _statements(stmts: list[Node], final: bool, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    for index, stmt in enumerate(stmts):
        found.extend(_statement(stmt, final and index == len(stmts) - 1, ctx))
    return found


def _statement(stmt: Node, final: bool, ctx: LensContext) -> list[Finding]:
    cmd = command(stmt)
    cmd_type = kind(cmd)
    if stmt.get("Negated"):
        return [] if final else [_hollow(ctx, stmt, _TITLE_BANG, "negated command")]
    if cmd_type == "TestClause":
        return [] if final else [_hollow(ctx, stmt, _TITLE_TEST, "`[[ … ]]`")]
    if cmd_type == "ArithmCmd":
        if final or not _comparison(cmd.get("X")):
            return []
        return [_hollow(ctx, stmt, _TITLE_ARITH, "`(( … ))` comparison")]
    if cmd_type == "BinaryCmd" and cmd.get("Op") in ("&&", "||"):
        return _and_or(stmt, cmd, final, ctx)
    return _compound(cmd, cmd_type, final, ctx)


def _compound(cmd: Node, cmd_type: str | None, final: bool, ctx: LensContext) -> list[Finding]:
    if cmd_type == "IfClause":
        found: list[Finding] = []
        clause: Any = cmd
        while isinstance(clause, dict):  # elif/else arms are nested clauses
            found.extend(_statements(clause.get("Then") or [], final, ctx))
            clause = clause.get("Else")
        return found
    if cmd_type == "CaseClause":
        items = cmd.get("Items") or []
        return [f for item in items for f in _statements(item.get("Stmts") or [], final, ctx)]
    if cmd_type == "Block":
        return _statements(cmd.get("Stmts") or [], final, ctx)
    if cmd_type == "Subshell":
        return _statements(cmd.get("Stmts") or [], True, ctx)
    if cmd_type in ("WhileClause", "ForClause"):
        return _statements(cmd.get("Do") or [], False, ctx)
    return []


def _and_or(stmt: Node, cmd: Node, final: bool, ctx: LensContext) -> list[Finding]:
    op, right = cmd.get("Op"), cmd.get("Y") or {}
    if op == "||" and bails(right):
        return []  # `check || return 1`: the failure is handled
    if final:
        if op == "&&" and bails(right):
            return [ctx.finding("bats/final-guard-fails", stmt, "final `cond && return 1`")]
        return []
    if op == "&&" and (bails(right) or _is_skip(right)):
        return []  # a non-final guard: fail (or skip) when cond holds, go on otherwise
    if right.get("Negated"):
        return [_hollow(ctx, stmt, _TITLE_BANG, "negated command ending a list")]
    right_cmd = command(right)
    if kind(right_cmd) == "TestClause" or (
        kind(right_cmd) == "ArithmCmd" and _comparison(right_cmd.get("X"))
    ):
        return [_hollow(ctx, stmt, _TITLE_RIGHT, "test ending a `&&`/`||` list")]
    if op == "&&":
        return [ctx.finding("bats/and-list-assertion", stmt, "non-final `A && B`")]
    return []


def _is_skip(stmt: Node) -> bool:
    words = argv(command(stmt))
    return bool(words) and words[0] == "skip"


def _comparison(expr: Any) -> bool:
    expr_type = kind(expr)
    if expr_type == "BinaryArithm":
        return expr.get("Op") in _COMPARISONS
    if expr_type == "UnaryArithm":
        return bool(expr.get("Op") == "!")
    if expr_type == "ParenArithm":
        return _comparison(expr.get("X"))
    return False


def _hollow(ctx: LensContext, stmt: Node, title: str, what: str) -> Finding:
    return ctx.finding("bats/hollow-assertion", stmt, f"{what} in a @test body", title=title)
