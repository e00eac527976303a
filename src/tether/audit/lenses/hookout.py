"""What a hook hands back: its final status, the commands jq output drives, its decision JSON.

- The hook's status is its last command's: a last command that can fail (``gh pr comment …``
  as the last line, ``[ -n "$x" ] && echo``) turns that failure into the hook's answer.
  ``exit``, ``true``, ``:``, ``echo``, ``printf``, ``cat`` of a here-document and a
  ``cmd || true``-style list cannot; a called function is followed to its own last command.
- jq output piped straight into ``xargs``, a shell, ``eval``, ``source`` or ``rm`` runs
  whatever the input JSON says; a filtering stage (``grep``, ``sed`` …) in between counts
  as validation.
- A decision document printed as a literal (``echo``/``printf``/here-document) is parsed
  as JSON (one that does not parse, a trailing comma say, is a finding) and its keys and
  decision values are checked against the documented set, a permission decision's
  ``hookEventName`` being exactly ``PreToolUse``; the object built by a literal ``jq -n``
  program is checked the same way from its text.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Any, Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.lenses.jq import jq_call
from tether.audit.shellast import (
    Node,
    argv,
    command,
    command_name,
    functions,
    kind,
    literal,
    walk,
)

_CANNOT_FAIL: Final = {"exit", "return", "true", ":", "echo", "printf"}
_RUNS_INPUT: Final = {"xargs", "sh", "bash", "dash", "zsh", "eval", "source", ".", "rm", "parallel"}

TOP_KEYS: Final = {
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
}
SPECIFIC_KEYS: Final = {
    "hookEventName",
    "decision",  # PermissionRequest: {"behavior": "allow" | "deny", …}
    "permissionDecision",
    "permissionDecisionReason",
    "additionalContext",
    "updatedInput",
}
DECISION_VALUES: Final = {
    "permissionDecision": {"allow", "deny", "ask"},
    "decision": {"approve", "block"},
}
_JQ_KEY: Final = re.compile(r'(?:"([A-Za-z_]\w*)"|\b([A-Za-z_]\w*))\s*:(?!:)')
_JQ_VALUE: Final = re.compile(r'"?(permissionDecision|decision|hookEventName)"?\s*:\s*"([^"]*)"')
_LOOKS_LIKE_JSON: Final = re.compile(r'^\s*\{\s*"')


def check(tree: Node, ctx: LensContext) -> list[Finding]:
    return [*_status_leak(tree, ctx), *_jq_into_commands(tree, ctx), *_decisions(tree, ctx)]


# --- the last command's status ------------------------------------------------------------


def _heredoc(stmt: Node) -> bool:
    return any(r.get("Op") in ("<<", "<<-") for r in stmt.get("Redirs") or [])


def _leaks(stmt: Any, defined: dict[str, Node], seen: frozenset[str]) -> bool:
    """True when the statement's failure status can become the hook's status."""
    if not isinstance(stmt, dict) or stmt.get("Negated"):
        return False
    cmd = command(stmt)
    cmd_type = kind(cmd)
    if cmd_type == "BinaryCmd":
        if cmd.get("Op") == "||":
            return _leaks(cmd.get("Y"), defined, seen)
        if cmd.get("Op") == "&&":
            return True  # a false left side is the list's status
        return _leaks(cmd.get("Y"), defined, seen)  # a pipeline's last stage
    if cmd_type in ("Block", "Subshell"):
        stmts = cmd.get("Stmts") or []
        return bool(stmts) and _leaks(stmts[-1], defined, seen)
    if cmd_type != "CallExpr":
        return False
    name = command_name(cmd)
    if name is None or name in _CANNOT_FAIL or (name == "cat" and _heredoc(stmt)):
        return False
    if name in defined and name not in seen:
        body = command(defined[name].get("Body"))
        stmts = body.get("Stmts") or []
        return bool(stmts) and _leaks(stmts[-1], defined, seen | {name})
    return True


def _status_leak(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    stmts = [s for s in tree.get("Stmts") or [] if kind(command(s)) != "FuncDecl"]
    if stmts and _leaks(stmts[-1], functions(tree), frozenset()):
        yield ctx.finding("hook/status-leak", stmts[-1], "last command's status")


# --- jq output driving commands ------------------------------------------------------------


def _stages(stmt: Any) -> list[Node]:
    cmd = command(stmt)
    if kind(cmd) == "BinaryCmd" and cmd.get("Op") in ("|", "|&"):
        return _stages(cmd.get("X")) + _stages(cmd.get("Y"))
    return [cmd]


def _jq_into_commands(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    receivers: dict[int, tuple[Node, str]] = {}
    for node in walk(tree):
        if "Cmd" not in node or command(node).get("Op") not in ("|", "|&"):
            continue
        stages = _stages(node)
        for left, right in pairwise(stages):
            receiver = command_name(right) if kind(right) == "CallExpr" else None
            if receiver in _RUNS_INPUT and jq_call(left) is not None:
                receivers[int((right.get("Pos") or {}).get("Offset", 0))] = (right, receiver)
    for _, (right, receiver) in sorted(receivers.items()):
        yield ctx.finding("hook/unvalidated-jq-pipe", right, f"jq output piped into `{receiver}`")


# --- decision documents --------------------------------------------------------------------


def _near(key: str, known: set[str]) -> str | None:
    match = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8)
    return match[0] if match else None


def decision_problems(document: dict[str, Any]) -> list[str]:
    """What is wrong with a hook's decision document: unknown keys, undocumented values."""
    problems: list[str] = []
    looks_like_decision = bool(set(document) & TOP_KEYS) or any(
        _near(k, TOP_KEYS) for k in document
    )
    if not looks_like_decision:
        return problems
    problems.extend(_key_problems(document, TOP_KEYS, ""))
    specific = document.get("hookSpecificOutput")
    if isinstance(specific, dict):
        problems.extend(_key_problems(specific, SPECIFIC_KEYS, "hookSpecificOutput."))
        problems.extend(_value_problems(specific))
        problems.extend(_event_problems(specific))
    problems.extend(_value_problems({"decision": document.get("decision")}))
    return problems


def _key_problems(document: dict[str, Any], known: set[str], prefix: str) -> Iterator[str]:
    for key in document:
        if key not in known:
            near = _near(key, known)
            hint = f" (did you mean `{near}`?)" if near else ""
            yield f"unknown key `{prefix}{key}`{hint}"


def _value_problems(document: dict[str, Any]) -> Iterator[str]:
    for key, allowed in DECISION_VALUES.items():
        value = document.get(key)
        if not isinstance(value, str) or "%" in value or "$" in value:
            continue  # absent, an object (a PermissionRequest decision), or filled in later
        if value not in allowed:
            yield f"`{key}` is {value!r}, not one of {', '.join(sorted(allowed))}"


def _event_problems(specific: dict[str, Any]) -> Iterator[str]:
    """A permission decision is a PreToolUse answer: the runner matches the event name
    exactly, so a decision under any other name (or none) is never applied."""
    if "permissionDecision" not in specific:
        return
    event = specific.get("hookEventName")
    if event is None:
        yield "`hookSpecificOutput.permissionDecision` without `hookEventName: PreToolUse`"
    elif isinstance(event, str) and not set("%$") & set(event) and event != "PreToolUse":
        yield f"`hookEventName` is {event!r}, not 'PreToolUse', beside a permissionDecision"


def _jq_problems(program: str) -> list[str]:
    keys = {a or b for a, b in _JQ_KEY.findall(program)}
    document: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    for key in keys:
        (document if key in TOP_KEYS or not _near(key, SPECIFIC_KEYS) else specific)[key] = 1
    for key, value in _JQ_VALUE.findall(program):
        in_specific = key in ("permissionDecision", "hookEventName")
        (specific if in_specific else document)[key] = value
    if specific or "hookSpecificOutput" in document:
        document["hookSpecificOutput"] = specific
    return decision_problems(document)


def _printed_literals(node: Node) -> Iterator[str]:
    if kind(node) == "CallExpr" and command_name(node) in ("echo", "printf"):
        yield from (w for w in argv(node)[1:] if w and w.lstrip().startswith("{"))
    for redirect in node.get("Redirs") or [] if "Cmd" in node else []:
        text = literal(redirect.get("Hdoc")) if redirect.get("Hdoc") else None
        if text and text.lstrip().startswith("{"):
            yield text


def _decisions(tree: Node, ctx: LensContext) -> Iterator[Finding]:
    for node in walk(tree):
        problems: list[str] = []
        for text in _printed_literals(node):
            try:
                document = json.loads(text.replace("\\n", "\n"), strict=False)
            except ValueError as error:
                if _LOOKS_LIKE_JSON.match(text) and "%" not in text:
                    # A hand-built document the runner cannot parse is no decision at all.
                    why = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
                    problems.append(f"the printed document is not JSON ({why})")
                continue
            if isinstance(document, dict):
                problems.extend(decision_problems(document))
        jq = jq_call(node) if kind(node) == "CallExpr" else None
        program = literal(jq.filter_word) if jq is not None and jq.null_input else None
        if program and "{" in program:
            problems.extend(_jq_problems(program))
        if problems:
            title = "hook decision JSON: " + "; ".join(problems)
            yield ctx.finding("hook/decision-json", node, "decision document", title=title)
