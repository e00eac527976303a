"""The hook contract, for files under the configured hook globs.

A hook reads one JSON document on stdin and answers allow (exit 0) or block (exit 2,
or a permission-decision JSON document). The contract: stdin is read once and its fields
are parsed with a ``// default`` fallback; JSON output is built with ``jq -n --arg``,
never by pasting values into a string; and no internal error (a missing jq, malformed
input) ends the hook with some other status by accident.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext, hookout
from tether.audit.lenses.jq import jq_call
from tether.audit.lenses.paths import is_library
from tether.audit.shellast import (
    Node,
    argv,
    command,
    command_name,
    functions,
    has_expansion,
    kind,
    line_of,
    literal,
    literal_text,
    unwrap,
    walk,
)

Words = list[str | None]

_JSON_KEY: Final = re.compile(r'"[A-Za-z_][\w-]*"\s*:')
_FIELD: Final = re.compile(r'\.(?:[A-Za-z_]\w*|"[^"]*"|\[\s*"[^"]*"\s*\])')
_STDIN_REDIRECTS: Final = {"<", "<<", "<<-", "<<<", "<&", "<>"}
_GUARDS: Final = {"command", "type", "hash", "which"}
_DECISIONS: Final = {"0", "2"}  # allow, block
# Programs a hook may not find on a contributor's machine.
DEPENDENCIES: Final = {"jq", "gh", "git", "node", "python3", "python", "curl", "yq", "npx"}
_COMPUTED_EXIT: Final = "hook exits with a computed status that is not 0 or 2 by construction"


def check(tree: Node, ctx: LensContext, first_line: str = "") -> list[Finding]:
    return [
        *_stdin_rereads(tree, ctx),
        *_unguarded_fields(tree, ctx),
        *_interpolated_json(tree, ctx),
        *_errexit(tree, ctx, first_line),
        *_dependencies(tree, ctx, first_line),
        *_exits(tree, ctx),
        *hookout.check(tree, ctx),
    ]


# --- stdin is read once -------------------------------------------------------------------


def _operands(words: Words, with_value: set[str]) -> Words:
    found: Words = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return found + words[i + 1 :]
        if word is not None and word.startswith("-") and len(word) > 1:
            i += 2 if word in with_value else 1
            continue
        found.append(word)
        i += 1
    return found


def _has_option(words: Words, *options: str) -> bool:
    return any(w is not None and any(w.startswith(o) for o in options) for w in words)


def _reads_stdin(cmd: Node) -> bool:
    """True when the command, as written, reads its standard input."""
    jq = jq_call(cmd)
    if jq is not None:
        return not jq.null_input and jq.files == 0
    words = unwrap(argv(cmd))
    name, rest = (words[0], words[1:]) if words else (None, [])
    if name in ("tr", "tee"):
        return True
    if name in ("read", "mapfile", "readarray"):
        return not _has_option(rest, "-u")
    if name in ("cat", "head", "tail"):
        return not [w for w in _operands(rest, {"-n", "-c"}) if w != "-"]
    if name in ("sed", "grep", "awk"):
        return _filter_reads_stdin(name, rest)
    return False


def _filter_reads_stdin(name: str, rest: Words) -> bool:
    with_value = {
        "sed": {"-e", "-f", "-l"},
        "grep": {"-e", "-f", "-m", "-A", "-B", "-C"},
        "awk": {"-f", "-v", "-F"},
    }[name]
    if name == "grep" and _has_option(rest, "-r", "-R"):
        return False
    operands = [w for w in _operands(rest, with_value) if not (name == "awk" and w and "=" in w)]
    program_given = _has_option(rest, "-e", "-f", "--expression", "--file")
    return len(operands) <= (0 if program_given else 1)


def _takes_other_stdin(stmt: Node) -> bool:
    for redirect in stmt.get("Redirs") or []:
        fd = (redirect.get("N") or {}).get("Value")
        if redirect.get("Op") in _STDIN_REDIRECTS and fd in (None, "0"):
            return True
    return False


def _child_statements(node: object) -> Iterator[Node]:
    """Statements directly inside a command (not inside another statement)."""
    if isinstance(node, dict):
        if "Cmd" in node and "Pos" in node:
            yield node
            return
        for value in node.values():
            yield from _child_statements(value)
    elif isinstance(node, list):
        for item in node:
            yield from _child_statements(item)


@dataclass(frozen=True)
class _ReadScan:
    """Where stdin reads are counted: a function's body counts where it is called, once
    per call (a sourced library of stdin filters that only defines them reads nothing)."""

    defined: dict[str, Node]
    out: list[tuple[int, int]]
    calling: frozenset[str] = frozenset()


def _scan_reads(stmt: Node, from_script: bool, in_loop: bool, scan: _ReadScan) -> None:
    from_script = from_script and not _takes_other_stdin(stmt)
    cmd = command(stmt)
    cmd_type = kind(cmd)
    if cmd_type == "FuncDecl":
        return  # a definition runs nothing; its reads count at each call
    if cmd_type == "BinaryCmd" and cmd.get("Op") in ("|", "|&"):
        _scan_reads(cmd.get("X") or {}, from_script, in_loop, scan)
        _scan_reads(cmd.get("Y") or {}, False, in_loop, scan)  # reads the pipe, not stdin
        return
    if cmd_type == "CallExpr" and from_script and _reads_stdin(cmd):
        scan.out.append((line_of(stmt), 2 if in_loop else 1))
    name = command_name(cmd) if cmd_type == "CallExpr" else None
    if from_script and name in scan.defined and name not in scan.calling:
        inner = _ReadScan(scan.defined, [], scan.calling | {name})
        _scan_reads(scan.defined[name].get("Body") or {}, True, in_loop, inner)
        scan.out.extend((line_of(stmt), weight) for _, weight in inner.out)
    looping = in_loop or cmd_type in ("WhileClause", "ForClause")
    for child in _child_statements(list(cmd.values())):
        _scan_reads(child, from_script, looping, scan)


def _stdin_rereads(tree: Node, ctx: LensContext) -> list[Finding]:
    reads: list[tuple[int, int]] = []
    scan = _ReadScan(functions(tree), reads)
    for stmt in tree.get("Stmts") or []:
        _scan_reads(stmt, True, False, scan)
    if sum(weight for _, weight in reads) <= 1:
        return []
    line = reads[1][0] if len(reads) > 1 else reads[0][0]
    return [ctx.finding("hook/stdin-reread", line, f"{len(reads)} reads of stdin")]


# --- fields and JSON output ---------------------------------------------------------------


def _unguarded_fields(tree: Node, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    for node in walk(tree):
        jq = jq_call(node) if kind(node) == "CallExpr" else None
        if jq is None or jq.null_input or jq.exit_status:
            continue
        text = literal(jq.filter_word)
        if text and _FIELD.search(text) and "//" not in text:
            found.append(ctx.finding("hook/unguarded-field", node, "jq filter " + repr(text)))
    return found


def _words_of(node: Node) -> Iterator[Node]:
    if kind(node) == "CallExpr":
        yield from node.get("Args") or []
        yield from (a["Value"] for a in node.get("Assigns") or [] if a.get("Value"))
    elif kind(node) == "DeclClause":
        yield from (a["Value"] for a in node.get("Args") or [] if a.get("Value"))
    elif "Op" in node and "Word" in node and "OpPos" in node:  # a redirection
        yield from (node[key] for key in ("Word", "Hdoc") if node.get(key))


def _printf_format(node: Node) -> str | None:
    words = unwrap(argv(node))
    if not words or words[0] != "printf":
        return None
    operands = _operands(words[1:], {"-v"})
    return operands[0] if operands else None


_PLAIN_PARAM_KEYS: Final = {"Type", "Pos", "End", "Dollar", "Rbrace", "Param", "Short"}
_INERT_VALUE: Final = re.compile(r"^[A-Za-z0-9_.:/@+=,-]*$")
_READS_INTO: Final = {"read", "readarray", "mapfile", "getopts", "printf"}


def constants(tree: Node) -> set[str]:
    """Variables whose every assignment in the file is an inert literal (letters, digits,
    ``_.:/@+=,-``): pasted into a jq program or a JSON text they cannot change its
    syntax, so they carry no value from outside. A variable ``read`` (or ``for``,
    ``getopts``, ``printf -v``) fills, or one the file never assigns, is not one."""
    values: dict[str, list[str | None]] = {}
    filled: set[str] = set()
    for node in walk(tree):
        node_type = kind(node)
        if node_type == "CallExpr":
            for assign in node.get("Assigns") or []:
                name = (assign.get("Name") or {}).get("Value")
                values.setdefault(str(name), []).append(literal(assign.get("Value")))
            words = argv(node)
            if words and words[0] in _READS_INTO:
                filled.update(w for w in words[1:] if w)
        elif node_type == "DeclClause":
            for assign in node.get("Args") or []:
                name = (assign.get("Name") or {}).get("Value")
                if name and assign.get("Value") is not None:
                    values.setdefault(str(name), []).append(literal(assign.get("Value")))
        elif node_type == "ForClause":
            loop = node.get("Loop") or {}
            filled.add(str((loop.get("Name") or {}).get("Value")))
    return {
        name
        for name, assigned in values.items()
        if name not in filled and all(v is not None and _INERT_VALUE.match(v) for v in assigned)
    }


def _pastes_only_constants(word: Node | None, inert: set[str]) -> bool:
    """True when every expansion in ``word`` is a plain ``$name`` of an inert constant."""
    for node in walk(word):
        node_type = kind(node)
        if node_type in ("CmdSubst", "ArithmExp", "ProcSubst"):
            return False
        if node_type == "ParamExp":
            name = (node.get("Param") or {}).get("Value")
            if set(node) - _PLAIN_PARAM_KEYS or name not in inert:
                return False
    return True


def _interpolated_json(tree: Node, ctx: LensContext) -> list[Finding]:
    lines: dict[int, Node] = {}
    inert = constants(tree)
    for node in walk(tree):
        jq = jq_call(node) if kind(node) == "CallExpr" else None
        if (
            jq is not None
            and has_expansion(jq.filter_word)
            and not _pastes_only_constants(jq.filter_word, inert)
        ):
            lines.setdefault(line_of(node), node)  # a value pasted into the jq program
        fmt = _printf_format(node) if kind(node) == "CallExpr" else None
        if fmt and _JSON_KEY.search(fmt) and re.search(r"%[-0-9.]*[sb]", fmt):
            lines.setdefault(line_of(node), node)
        for word in _words_of(node):
            if has_expansion(word) and _JSON_KEY.search(literal_text(word)):
                lines.setdefault(line_of(node), node)
    return [
        ctx.finding("hook/interpolated-json", node, "JSON text with a value pasted in")
        for _, node in sorted(lines.items())
    ]


# --- internal errors ----------------------------------------------------------------------


def sets_errexit(words: Words) -> bool:
    if not words or words[0] != "set":
        return False
    rest = words[1:]
    if "errexit" in rest and "-o" in rest:
        return True
    return any(w and w.startswith("-") and not w.startswith("--") and "e" in w[1:] for w in rest)


_EXIT_ZERO: Final = re.compile(r"(?:^|[;&|{(\s])exit\s+0(?:$|[;&|})\s])")


def _exits_zero(node: Node) -> bool:
    return any(kind(n) == "CallExpr" and argv(n)[:2] == ["exit", "0"] for n in walk(node))


def trap_allows(words: Words, defined: dict[str, Node]) -> bool:
    """True for an ERR/EXIT trap whose action ends the script with ``exit 0``.

    A cleanup-only trap (``trap 'rm -f "$tmp"' EXIT``) leaves the failing status in place,
    so it guards nothing; the action may be a literal or the name of a function.
    """
    if not words or words[0] != "trap" or len(words) < 3 or words[1] in (None, "-"):
        return False
    if not any(signal in ("ERR", "EXIT", "0", "SIGEXIT") for signal in words[2:]):
        return False
    action = words[1].strip()
    if _EXIT_ZERO.search(action):
        return True
    handler = defined.get(action.split()[0]) if action.split() else None
    return handler is not None and _exits_zero(handler)


def _reads_options(node: Any) -> bool:
    return any(
        kind(item) == "ParamExp" and (item.get("Param") or {}).get("Value") == "-"
        for item in walk(node)
    )


def _restores(tree: Node) -> set[int]:
    """ids of the ``set -e`` calls that put back the caller's errexit: in a function (or
    file) that reads ``$-``, a ``set -e`` under a condition runs only when errexit was
    on before (``case $- in *e*) was=1;; esac; set +e; …; [ "$was" = 1 ] && set -e``),
    so it turns nothing on."""
    bodies: list[Node] = [
        node["Body"]
        for node in walk(tree)
        if kind(node) == "FuncDecl" and isinstance(node.get("Body"), dict)
    ]
    restored: set[int] = set()
    for scope in [tree, *bodies]:
        if not _reads_options(scope):
            continue
        # the scope's own statements: a File lists them, a function body is one block
        stmts = scope.get("Stmts") or command(scope).get("Stmts") or []
        top = {id(command(stmt)) for stmt in stmts}
        for node in walk(scope):
            if kind(node) == "CallExpr" and id(node) not in top and sets_errexit(argv(node)):
                restored.add(id(node))
    return restored


@dataclass(frozen=True)
class _Failure:
    """How the hook ends on a command's failure: the line errexit is turned on (None when
    it never is), and the signals (ERR, EXIT) whose trap forces ``exit 0``."""

    errexit_line: int | None
    allowing: frozenset[str]

    @property
    def degrades(self) -> bool:
        """True when any failure ends the hook with ``exit 0``: an ERR trap runs on every
        failing command; an EXIT trap does once errexit ends the script."""
        return "ERR" in self.allowing or (self.errexit_line is not None and "EXIT" in self.allowing)


_SIGNALS: Final = {"ERR": "ERR", "EXIT": "EXIT", "0": "EXIT", "SIGEXIT": "EXIT"}


def _failure(tree: Node, first_line: str) -> _Failure:
    errexit_line: int | None = 1 if re.match(r"#!.*\s-\w*e", first_line) else None
    allowing: set[str] = set()
    defined = functions(tree)
    restores = _restores(tree)
    for node in walk(tree):
        if kind(node) != "CallExpr":
            continue
        words = unwrap(argv(node))
        if errexit_line is None and sets_errexit(words) and id(node) not in restores:
            errexit_line = line_of(node)
        if trap_allows(words, defined):
            allowing.update(_SIGNALS[w] for w in words[2:] if w in _SIGNALS)
    return _Failure(errexit_line, frozenset(allowing))


def _errexit(tree: Node, ctx: LensContext, first_line: str) -> list[Finding]:
    failure = _failure(tree, first_line)
    if failure.errexit_line is None or failure.allowing:
        return []
    where = failure.errexit_line
    return [ctx.finding("hook/errexit-exit", where, "errexit with no ERR/EXIT trap")]


def tolerated(tree: Node) -> set[int]:
    """ids of the nodes whose failure is handled where they run, so a missing program
    there is a decision the hook made: the left side of ``||`` (``x=$(jq …) || x=""``,
    ``gh … || true``), a process substitution, and a ``$( … )`` anywhere but the value of
    a bare assignment (only ``x=$(cmd)`` takes the substitution's status; an argument or
    ``local x=$(cmd)`` does not). An ``if``/``while`` condition or the left of ``&&`` is
    not: there a missing program reads as a "no" nobody decided."""
    tolerant: set[int] = set()
    carries_status: set[int] = set()
    for node in walk(tree):
        if kind(node) == "CallExpr" and not node.get("Args"):
            for assign in node.get("Assigns") or []:
                carries_status.update(id(n) for n in walk(assign.get("Value")))
    for node in walk(tree):
        node_type = kind(node)
        if node_type == "BinaryCmd" and node.get("Op") == "||":
            tolerant.update(id(n) for n in walk(node.get("X")))
        elif node_type == "ProcSubst" or (
            node_type == "CmdSubst" and id(node) not in carries_status
        ):
            tolerant.update(id(n) for n in walk(node))
    return tolerant


def _leaves(stmt: Any) -> bool:
    """True for ``exit …``/``return …``, alone or ending a ``{ …; }`` block."""
    cmd = command(stmt) if isinstance(stmt, dict) else {}
    if kind(cmd) == "Block":
        stmts = cmd.get("Stmts") or []
        return bool(stmts) and _leaves(stmts[-1])
    return command_name(cmd) in ("exit", "return")


def guard_lines(tree: Node) -> dict[str, int]:
    """The first line from which each tool is known to be there: a ``command -v``
    (``type``, ``hash``, ``which``) naming it, or a use whose failure leaves the hook or
    the function (``root=$(git rev-parse --show-toplevel) || exit 0``)."""
    guards: dict[str, int] = {}

    def note(tool: str, line: int) -> None:
        guards[tool] = min(guards.get(tool, line), line)

    for node in walk(tree):
        if kind(node) == "BinaryCmd" and node.get("Op") == "||" and _leaves(node.get("Y")):
            for inner in walk(node.get("X")):
                name = command_name(inner) if kind(inner) == "CallExpr" else None
                if name in DEPENDENCIES:
                    note(str(name), line_of(inner))
        words = argv(node) if kind(node) == "CallExpr" else []
        if words and words[0] in _GUARDS:
            for tool in (w for w in words[1:] if w in DEPENDENCIES):
                note(tool, line_of(node))
    return guards


def unguarded_uses(tree: Node, first_line: str = "") -> dict[str, Node]:
    """Each tool's first use whose failure nothing handles, when no guard comes before it.
    None in a hook whose trap turns every failure into ``exit 0`` (a missing tool then
    degrades to an allow, the contract's own answer)."""
    if _failure(tree, first_line).degrades:
        return {}
    guards = guard_lines(tree)
    tolerant = tolerated(tree)
    first_use: dict[str, Node] = {}
    for node in walk(tree):
        if kind(node) != "CallExpr" or id(node) in tolerant:
            continue
        words = argv(node)
        if words and words[0] in _GUARDS:
            continue
        name = command_name(node)
        if name in DEPENDENCIES and (
            name not in first_use or line_of(node) < line_of(first_use[name])
        ):
            first_use[name] = node
    return {
        tool: node
        for tool, node in first_use.items()
        if tool not in guards or guards[tool] > line_of(node)
    }


def _dependencies(tree: Node, ctx: LensContext, first_line: str) -> list[Finding]:
    """Each external tool's first use must come after a ``command -v`` (or type/hash)
    guard, unless its failure is handled where it runs (``tolerated``). A guard in a
    sourced library, or in the hooks that source this library, is weighed afterwards,
    across files (audit/dependencies.py)."""
    found = []
    uses = unguarded_uses(tree, first_line)
    for tool, node in sorted(uses.items(), key=lambda item: line_of(item[1])):
        title = f"{tool} is used without checking that it is installed"
        found.append(
            ctx.finding("hook/unguarded-dependency", node, f"first {tool} use", title=title)
        )
    return found


@dataclass(frozen=True)
class DependencyFacts:
    """What judging a hook file's dependency checks across files needs to know of it.

    ``unguarded`` are the lines of its ``hook/unguarded-dependency`` findings by tool;
    ``guards`` the first ``command -v`` line by tool; ``guard_functions`` the functions
    it defines whose body checks a tool (``gaia_require_jq``); ``calls`` the first line
    each command name runs at; ``sources`` the first line each file name is sourced at.
    """

    library: bool
    unguarded: dict[str, int]
    guards: dict[str, int]
    guard_functions: dict[str, tuple[str, ...]]
    calls: dict[str, int]
    sources: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["guard_functions"] = {k: list(v) for k, v in self.guard_functions.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DependencyFacts:
        functions_ = {str(k): tuple(str(t) for t in v) for k, v in data["guard_functions"].items()}
        return cls(
            library=bool(data["library"]),
            unguarded={str(k): int(v) for k, v in data["unguarded"].items()},
            guards={str(k): int(v) for k, v in data["guards"].items()},
            guard_functions=functions_,
            calls={str(k): int(v) for k, v in data["calls"].items()},
            sources={str(k): int(v) for k, v in data["sources"].items()},
        )


def dependency_facts(tree: Node, first_line: str = "") -> DependencyFacts:
    calls: dict[str, int] = {}
    sources: dict[str, int] = {}
    for node in walk(tree):
        if kind(node) != "CallExpr":
            continue
        name = command_name(node)
        if name is None:
            continue
        calls.setdefault(name, line_of(node))
        operands = list(node.get("Args") or [])[1:]
        if name in ("source", ".") and operands:
            sourced = posixpath.basename(literal_text(operands[0]))
            if sourced:
                sources.setdefault(sourced, line_of(node))
    checking = {
        name: tuple(sorted(guard_lines(body.get("Body") or {})))
        for name, body in functions(tree).items()
    }
    return DependencyFacts(
        library=is_library(tree),
        unguarded={tool: line_of(n) for tool, n in unguarded_uses(tree, first_line).items()},
        guards=guard_lines(tree),
        guard_functions={name: tools for name, tools in checking.items() if tools},
        calls=calls,
        sources=sources,
    )


def _exits(tree: Node, ctx: LensContext) -> list[Finding]:
    """``exit N`` with N other than 0 or 2, and ``exit "$var"``/``exit $?`` (any status)."""
    found: list[Finding] = []
    for node in walk(tree):
        words = argv(node) if kind(node) == "CallExpr" else []
        if len(words) < 2 or words[0] != "exit":
            continue
        status = words[1]
        if status is None:
            what = "`exit` with a computed status"
            found.append(ctx.finding("hook/non-block-exit", node, what, title=_COMPUTED_EXIT))
        elif status not in _DECISIONS:
            found.append(ctx.finding("hook/non-block-exit", node, f"`exit {status}`"))
    return found
