"""Hollow @test bodies beyond set -e: checks whose result nothing can turn into a failure.

Each rule reads one @test body (a Block) in any position, final or not:

- a check (``[``, ``test``, ``[[ ]]``, an ``(( comparison ))``, ``grep``, ``diff``, ``cmp``,
  ``assert_*``/``refute_*``) followed by ``|| true``, ``|| :``, ``|| echo …``,
  ``|| printf …``, ``|| return 0`` or ``|| exit 0`` can never fail the test (inside
  ``$( … )`` the status captures a value and decides nothing);
- a ``run`` (not ``run !`` or ``run -N``, which check the status themselves) whose
  ``$status``, ``$output``, ``$lines`` or ``$stderr`` nothing reads, and no ``assert_*`` or
  ``refute_*`` follows, before the next ``run`` or the end of the body;
- an ``if``/``while`` whose condition checks a ``run`` result (or greps, diffs, asserts)
  while no arm fails, checks, returns or skips and no check follows it in the body: the
  condition's verdict is dropped (one that only prints diagnostics before the real
  assertion is fine, the real assertion being a check or, after arms that only print, a
  call to a helper that may hold one);
- statements after an unconditional ``return``/``exit`` never run;
- ``[[ $x == * ]]``, ``[[ $x =~ .* ]]``, ``=~ ^`` and ``grep ''``/``grep '.*'`` match
  every input;
- an unconditional ``skip`` (in the body, or in ``setup``) retires the test, and so does
  one whose guard holds on every CI run (``[ -n "$CI" ] && skip``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.shellast import (
    Node,
    argv,
    command,
    command_name,
    kind,
    literal,
    statements,
    walk,
)

SETUPS: Final = {"setup", "setup_file"}
RUN_RESULTS: Final = {"status", "output", "lines", "stderr", "stderr_lines"}
_CHECK_COMMANDS: Final = {"[", "test", "grep", "egrep", "fgrep", "diff", "cmp"}
_SWALLOWERS: Final = {"true", ":", "echo", "printf"}
_BAILERS: Final = {"false", "fail", "flunk"}
_ALWAYS_REGEX: Final = {"", ".*", "^", "$", "^.*", ".*$", "^.*$"}
_ENDERS: Final = {"return", "exit", "skip"}
_ARITH_COMPARISONS: Final = {"<", ">", "<=", ">=", "==", "!="}


@dataclass(frozen=True)
class Helpers:
    """The suite's own functions: all of them, and those whose body holds a check."""

    defined: frozenset[str] = frozenset()
    checking: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tree: Node) -> Helpers:
        bodies = {
            str((node.get("Name") or {}).get("Value")): node.get("Body")
            for node in walk(tree)
            if kind(node) == "FuncDecl"
        }
        checking = {
            name
            for name, body in bodies.items()
            if any("Cmd" in n and is_check(n) for n in walk(body))
        }
        return cls(frozenset(bodies), frozenset(checking))

    def may_check(self, name: str | None) -> bool:
        """True for a call that can be the real assertion: a suite function holding a
        check, or a name neither the suite defines nor a common program or builtin (a
        helper from a sourced file, ``has_line "…"``)."""
        if name is None or name in self.checking:
            return name is not None
        return name not in self.defined and name not in _PLAIN_COMMANDS


# Commands that print, set up or clean up, never assert: after an `if` that only prints
# diagnostics, one of these is not the check the diagnostics precede.
_PLAIN_COMMANDS: Final = frozenset(
    {
        "echo",
        "printf",
        "cat",
        ":",
        "true",
        "cd",
        "pushd",
        "popd",
        "mkdir",
        "rm",
        "rmdir",
        "cp",
        "mv",
        "touch",
        "ln",
        "chmod",
        "chown",
        "export",
        "local",
        "declare",
        "typeset",
        "readonly",
        "unset",
        "shift",
        "set",
        "source",
        ".",
        "eval",
        "exec",
        "trap",
        "wait",
        "sleep",
        "kill",
        "run",
        "load",
        "bats_load_library",
        "skip",
        "sed",
        "awk",
        "tr",
        "sort",
        "uniq",
        "wc",
        "head",
        "tail",
        "cut",
        "find",
        "xargs",
        "mktemp",
        "date",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "env",
        "bash",
        "sh",
        "git",
        "jq",
        "tee",
        "read",
        "mapfile",
        "readarray",
        "let",
        "pwd",
        "umask",
        "command",
        "type",
        "hash",
        "which",
        "ls",
        "stat",
        "du",
        "tar",
        "curl",
        "python",
        "python3",
        "node",
        "npm",
        "pnpm",
        "npx",
        "yq",
        "od",
        "seq",
        "ps",
    }
)
_PRINTERS: Final = {"echo", "printf", "cat", ":", "true"}


def body_findings(body: Node, ctx: LensContext, helpers: Helpers | None = None) -> list[Finding]:
    return [
        *_swallowed_checks(body, ctx),
        *_unchecked_runs(body, ctx),
        *_condition_only(body, ctx, helpers or Helpers()),
        *_unreachable(body, ctx),
        *_always_matching(body, ctx),
        *unconditional_skips(body, ctx, "@test"),
        *ci_skips(body, ctx),
    ]


def _offset(node: Node, key: str) -> int:
    pos = node.get(key)
    return int(pos.get("Offset", 0)) if isinstance(pos, dict) else 0


def _name(cmd: Node) -> str | None:
    return command_name(cmd) if kind(cmd) == "CallExpr" else None


def is_check(stmt: Any) -> bool:
    """True when the statement is a test or an assertion command."""
    if not isinstance(stmt, dict):
        return False
    cmd = command(stmt)
    cmd_type = kind(cmd)
    if cmd_type == "TestClause":
        return True
    if cmd_type == "ArithmCmd":
        expr = cmd.get("X") or {}
        return kind(expr) == "BinaryArithm" and expr.get("Op") in _ARITH_COMPARISONS
    if cmd_type == "BinaryCmd" and cmd.get("Op") in ("&&", "||"):
        return is_check(cmd.get("X")) or is_check(cmd.get("Y"))
    name = _name(cmd) or ""
    return name in _CHECK_COMMANDS or name.startswith(("assert", "refute"))


def bails(stmt: Any) -> bool:
    """True when the statement fails the test: return/exit non-zero, false, fail, flunk."""
    if not isinstance(stmt, dict) or stmt.get("Negated"):
        return False
    cmd = command(stmt)
    if kind(cmd) == "Block":
        stmts = cmd.get("Stmts") or []
        return bool(stmts) and bails(stmts[-1])
    words = argv(cmd)
    if not words:
        return False
    if words[0] in ("return", "exit"):
        return len(words) == 1 or words[1] != "0"
    return words[0] in _BAILERS


def _swallows(stmt: Any) -> bool:
    words = argv(command(stmt)) if isinstance(stmt, dict) else []
    if not words or stmt.get("Negated"):
        return False
    if words[0] in ("return", "exit"):
        return len(words) > 1 and words[1] == "0"
    return words[0] in _SWALLOWERS


def _inside_substitutions(body: Node) -> set[int]:
    """ids of the nodes inside a ``$( … )``: there a command's status decides no test."""
    return {
        id(inner)
        for node in walk(body)
        if kind(node) == "CmdSubst"
        for inner in walk(node)
        if inner is not node
    }


def _swallowed_checks(body: Node, ctx: LensContext) -> Iterator[Finding]:
    # `count=$(grep -c x file || true)` captures a value (grep -c prints 0 and fails on
    # no match); the check is the assertion on the value, not the grep's status.
    captured = _inside_substitutions(body)
    for node in walk(body):
        if id(node) in captured:
            continue
        if kind(node) == "BinaryCmd" and node.get("Op") == "||":
            left, right = node.get("X"), node.get("Y")
            if is_check(left) and _swallows(right):
                yield ctx.finding("bats/swallowed-check", node, "check ending in `|| true`")


def _is_self_checking_run(words: list[str | None]) -> bool:
    flag = words[1] if len(words) > 1 else None
    return flag == "!" or bool(flag and flag.startswith("-") and flag[1:].isdigit())


def _reads_run_result(node: Node) -> bool:
    if kind(node) == "ParamExp":
        return (node.get("Param") or {}).get("Value") in RUN_RESULTS
    name = _name(node) or ""
    return name.startswith(("assert", "refute"))


def _unchecked_runs(body: Node, ctx: LensContext) -> Iterator[Finding]:
    nodes = list(walk(body))
    runs = [n for n in nodes if kind(n) == "CallExpr" and _name(n) == "run"]
    runs.sort(key=lambda n: _offset(n, "Pos"))
    for index, run in enumerate(runs):
        if _is_self_checking_run(argv(run)):
            continue
        start = _offset(run, "End")
        stop = _offset(runs[index + 1], "Pos") if index + 1 < len(runs) else 1 << 62
        readers = (n for n in nodes if start <= _offset(n, "Pos") < stop)
        if not any(_reads_run_result(n) for n in readers):
            yield ctx.finding("bats/unchecked-run", run, "`run` with no check of its result")


def _asserts_result(stmts: list[Node]) -> bool:
    for stmt in stmts:
        for node in walk(stmt):
            if kind(node) == "ParamExp" and (node.get("Param") or {}).get("Value") in RUN_RESULTS:
                return True
            name = _name(node) or ""
            if name in _CHECK_COMMANDS - {"[", "test"} or name.startswith(("assert", "refute")):
                return True
    return False


def _arms(clause: Node) -> list[Node]:
    if kind(clause) == "WhileClause":
        return list(clause.get("Do") or [])
    arms: list[Node] = []
    current: Any = clause
    while isinstance(current, dict):
        arms.extend(current.get("Then") or [])
        current = current.get("Else")
    return arms


def _arm_decides(arms: list[Node]) -> bool:
    """True when an arm can change the verdict: it fails, checks, returns or skips."""
    for stmt in arms:
        for node in walk(stmt):
            if "Cmd" not in node:
                continue
            if bails(node) or is_check(node) or _name(command(node)) in _ENDERS:
                return True
    return False


def _prints_only(arms: list[Node]) -> bool:
    """True when every statement of the arms only prints (diagnostics)."""
    return bool(arms) and all(
        kind(command(stmt)) == "CallExpr" and _name(command(stmt)) in _PRINTERS for stmt in arms
    )


def _checked_later(body: Node, node: Node, helpers: Helpers) -> bool:
    """True when a check follows ``node`` in the body: an ``if`` that only prints
    diagnostics before the real assertion drops no verdict. After one whose arms only
    print, a call to a helper that may hold the assertion (``Helpers.may_check``) counts."""
    after = _offset(node, "End")
    later = [stmt for stmt in statements(body) if _offset(stmt, "Pos") >= after]
    if any(is_check(stmt) for stmt in later):
        return True
    if not _prints_only(_arms(node)):
        return False
    return any(
        helpers.may_check(_name(n))
        for stmt in later
        for n in walk(command(stmt))
        if kind(n) == "CallExpr"
    )


def _condition_only(body: Node, ctx: LensContext, helpers: Helpers) -> Iterator[Finding]:
    for node in walk(body):
        if kind(node) not in ("IfClause", "WhileClause"):
            continue
        cond = list(node.get("Cond") or [])
        if (
            cond
            and _asserts_result(cond)
            and not _arm_decides(_arms(node))
            and not _checked_later(body, node, helpers)
        ):
            yield ctx.finding("bats/condition-only-check", node, "check used only as a condition")


def _unconditional_exit(stmt: Node) -> bool:
    words = argv(command(stmt))
    return bool(words) and words[0] in ("return", "exit") and not stmt.get("Negated")


def _unreachable(body: Node, ctx: LensContext) -> Iterator[Finding]:
    for node in walk(body):
        for key in ("Stmts", "Then", "Do"):
            stmts = node.get(key)
            if not isinstance(stmts, list) or kind(node) == "CmdSubst":
                continue
            for index, stmt in enumerate(stmts[:-1]):
                if _unconditional_exit(stmt):
                    following = stmts[index + 1]
                    yield ctx.finding("bats/unreachable-code", following, "code after `return`")
                    break


def _unquoted_literal(word: Any) -> str | None:
    parts = word.get("Parts") if isinstance(word, dict) else None
    if not parts or any(kind(part) != "Lit" for part in parts):
        return None
    return literal(word)


def _always_matches_test(node: Node) -> bool:
    op, pattern = node.get("Op"), _unquoted_literal(node.get("Y"))
    if pattern is None:
        return False
    if op in ("==", "="):
        return pattern != "" and set(pattern) == {"*"}
    return op == "=~" and pattern in _ALWAYS_REGEX


def _grep_pattern(words: list[str | None]) -> tuple[bool, str | None]:
    """(inverted, the literal pattern) of a grep call."""
    inverted, pattern, i = False, None, 1
    while i < len(words):
        word = words[i]
        if word in ("-e", "--regexp"):
            return inverted, words[i + 1] if i + 1 < len(words) else None
        if word is not None and word.startswith("-") and len(word) > 1:
            inverted = inverted or (not word.startswith("--") and "v" in word) or word == "--invert"
            i += 1
            continue
        pattern = word
        break
    return inverted, pattern


def _always_matching(body: Node, ctx: LensContext) -> Iterator[Finding]:
    for node in walk(body):
        if kind(node) == "BinaryTest" and _always_matches_test(node):
            yield ctx.finding("bats/always-matches", node, "pattern that matches everything")
        elif kind(node) == "CallExpr" and _name(node) in ("grep", "egrep"):
            inverted, pattern = _grep_pattern(argv(node))
            if not inverted and pattern in _ALWAYS_REGEX - {"$"}:
                yield ctx.finding("bats/always-matches", node, "grep pattern matching any line")


_CI_VARIABLES: Final = {
    "CI",
    "GITHUB_ACTIONS",
    "CONTINUOUS_INTEGRATION",
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "TF_BUILD",
}
_FALSE_WORDS: Final = {"", "0", "false"}


def _reads_ci(word: Any) -> bool:
    return any(
        kind(node) == "ParamExp" and (node.get("Param") or {}).get("Value") in _CI_VARIABLES
        for node in walk(word)
    )


def _compare_ci(left: Any, op: str | None, right: Any) -> bool | None:
    """Whether ``left op right`` holds on a CI runner, when one side reads a CI variable
    and the other is a literal; None otherwise."""
    if _reads_ci(right):
        left, right = right, left
    value = literal(right)
    if not _reads_ci(left) or value is None:
        return None
    set_like = value.strip() not in _FALSE_WORDS  # CI=true on every runner
    if op in ("==", "=", "=~"):
        return set_like
    if op == "!=":
        return not set_like
    return None


def _test_holds_in_ci(expr: Any) -> bool | None:
    expr_type = kind(expr)
    if expr_type == "ParenTest":
        return _test_holds_in_ci(expr.get("X"))
    if expr_type == "UnaryTest" and expr.get("Op") in ("-n", "-z") and _reads_ci(expr.get("X")):
        return bool(expr.get("Op") == "-n")
    if expr_type == "BinaryTest":
        return _compare_ci(expr.get("X"), expr.get("Op"), expr.get("Y"))
    return None


def _holds_in_ci(stmt: Any) -> bool | None:
    """Whether a guard condition is true on a CI runner (None when it cannot tell)."""
    if not isinstance(stmt, dict):
        return None
    cmd = command(stmt)
    verdict: bool | None = None
    if kind(cmd) == "TestClause":
        verdict = _test_holds_in_ci(cmd.get("X"))
    elif _name(cmd) in ("[", "test"):
        words = list(cmd.get("Args") or [])[1:]
        if _name(cmd) == "[" and words and literal(words[-1]) == "]":
            words = words[:-1]
        if len(words) == 2 and literal(words[0]) in ("-n", "-z") and _reads_ci(words[1]):
            verdict = literal(words[0]) == "-n"
        elif len(words) == 3:
            verdict = _compare_ci(words[0], literal(words[1]), words[2])
    if verdict is None:
        return None
    return not verdict if stmt.get("Negated") else verdict


def _skips(stmts: Any) -> bool:
    return any(
        kind(node) == "CallExpr" and _name(node) == "skip"
        for stmt in stmts or []
        for node in walk(stmt)
    )


def ci_skips(body: Node, ctx: LensContext) -> Iterator[Finding]:
    """A ``skip`` whose guard holds on every CI run: coverage retired where it counts."""
    for node in walk(body):
        node_type = kind(node)
        if node_type == "BinaryCmd" and node.get("Op") in ("&&", "||") and _skips([node.get("Y")]):
            skip_when = node.get("Op") == "&&"
            if _holds_in_ci(node.get("X")) is skip_when:
                yield ctx.finding("bats/ci-skip", node, "`skip` guarded by a CI variable")
        elif node_type == "IfClause":
            cond = list(node.get("Cond") or [])
            holds = _holds_in_ci(cond[-1]) if cond else None
            taken = node.get("Then") if holds else (node.get("Else") or {}).get("Then")
            if holds is not None and _skips(taken):
                yield ctx.finding("bats/ci-skip", node, "`skip` in an arm taken on CI")


def unconditional_skips(body: Node, ctx: LensContext, where: str) -> Iterator[Finding]:
    for stmt in body.get("Stmts") or []:
        if _name(command(stmt)) == "skip":
            yield ctx.finding("bats/unconditional-skip", stmt, f"`skip` at the top of a {where}")
