"""The syntax check of a large line merge, run in a child Python process that can be
stopped: a wall-clock limit (the parsers are pure Python, and nothing inside the process
could interrupt them from a worker thread) and an address-space limit.

Every call of the child interpreter goes through this module, and through the process
edge (``tether.process``), which kills it with its group at the deadline. The child runs
``tether.engine.syntaxcheck.merge_breaks_syntax`` on the bytes it reads from stdin and
writes one JSON line; it is started with ``-P`` so the working folder (the project, whose
files tether does not trust) is never on its import path.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from tether import process
from tether.engine.syntaxcheck import MergeCheck, merge_breaks_syntax

_OUT_OF_MEMORY = 3


def check_in_child(
    path: str, sides: Sequence[bytes], seconds: float, memory_bytes: int
) -> MergeCheck | None:
    """``merge_breaks_syntax(path, *sides)`` in a child process; a check the limits stop
    comes back as an unchecked ``MergeCheck`` saying which limit."""
    if not sys.executable:
        return MergeCheck("no Python interpreter to run the check in", checked=False)
    header = json.dumps({"path": path, "sizes": [len(side) for side in sides]})
    payload = header.encode() + b"\n" + b"".join(sides)
    command = [sys.executable, "-P", "-m", "tether.syntax_child", str(memory_bytes)]
    # Pure computation, nothing to clean up: killed at the deadline without the graces.
    result = process.run(command, input=payload, timeout=seconds, at_once=True)
    if not result.started:
        return MergeCheck(f"cannot start {command[0]} ({result.error})", checked=False)
    if result.timed_out:
        return MergeCheck(f"parsing took longer than {seconds:g} s", checked=False)
    if result.exit_code == _OUT_OF_MEMORY:
        limit = memory_bytes >> 20
        return MergeCheck(f"parsing needed more than {limit} MiB of memory", checked=False)
    try:
        answer = json.loads(result.stdout)
        problem, checked = answer["problem"], answer["checked"]
    except (ValueError, KeyError, TypeError):
        return MergeCheck(f"the check stopped (exit status {result.exit_code})", checked=False)
    return None if problem is None else MergeCheck(str(problem), bool(checked))


def _limit_memory(memory_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # not on this platform: the time limit still holds
        return
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _child(argv: list[str]) -> int:
    _limit_memory(int(argv[0]))
    try:
        header, _, body = sys.stdin.buffer.read().partition(b"\n")
        request = json.loads(header)
        sides: list[bytes] = []
        offset = 0
        for size in request["sizes"]:
            sides.append(body[offset : offset + size])
            offset += size
        base, ours, theirs, merged = sides
        found = merge_breaks_syntax(str(request["path"]), base, ours, theirs, merged)
    except MemoryError:
        return _OUT_OF_MEMORY
    answer: dict[str, object] = {"problem": None, "checked": True}
    if found is not None:
        answer = {"problem": found.problem, "checked": found.checked}
    sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
