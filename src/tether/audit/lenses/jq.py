"""How a simple command runs jq: its filter word, whether it reads input, whether ``-e``.

Shared by the hook lens (fields read without a default, values pasted into a program) and
its output checks (jq output driving a command, a ``jq -n`` decision document).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tether.audit.shellast import Node, command_name, kind, literal, unwrap

_JQ_TWO_VALUES: Final = {"--arg", "--argjson", "--slurpfile", "--rawfile"}
_JQ_ONE_VALUE: Final = {"--indent", "-L", "-f", "--from-file"}


@dataclass(frozen=True)
class JqCall:
    null_input: bool
    exit_status: bool
    filter_word: Node | None
    files: int


def jq_call(cmd: Node) -> JqCall | None:
    """How a simple command runs jq, or None when it does not."""
    if kind(cmd) != "CallExpr" or command_name(cmd) != "jq":
        return None
    words = list(cmd.get("Args") or [])
    values = [literal(word) for word in words]
    start = len(words) - len(unwrap(values)) + 1
    null_input = exit_status = from_file = False
    operands: list[Node] = []
    i = start
    while i < len(words):
        value = values[i]
        if value in _JQ_TWO_VALUES:
            i += 3
            continue
        if value in _JQ_ONE_VALUE:
            from_file = from_file or value in ("-f", "--from-file")
            i += 2
            continue
        if value in ("--args", "--jsonargs"):
            break  # what follows are positional values, never input files
        if value is not None and value.startswith("-") and len(value) > 1:
            letters = "" if value.startswith("--") else value[1:]
            null_input = null_input or value == "--null-input" or "n" in letters
            exit_status = exit_status or value == "--exit-status" or "e" in letters
        else:
            operands.append(words[i])
        i += 1
    filter_word = None if from_file or not operands else operands[0]
    files = len(operands) - (0 if from_file else min(1, len(operands)))
    return JqCall(null_input, exit_status, filter_word, files)
