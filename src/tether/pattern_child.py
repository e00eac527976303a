"""Regular expressions a release supplies (a notice's or a hand-off's ``matches``, a
migration's ``summary_pattern``), matched in a child Python process that is stopped at a
deadline. Python's ``re`` backtracks: ``^(x+x+)+y$`` on forty ``x`` runs for longer than the
universe has existed, and nothing inside the process can interrupt it from a worker thread
(``tether fleet`` plans in threads). A child can be killed; it also gets an address-space
limit.

Every call of the child interpreter goes through this module, and through the process edge
(``tether.process``), which kills it with its group at the deadline. The child is a bare
interpreter (``-I -S``: no site packages, no environment variables, the working folder not
on its import path) running ``_CHILD`` below, which imports nothing of tether's, so it
starts in a few milliseconds; it reads the requests as one JSON document on stdin and
answers one JSON line per request, flushed as it goes, so the answers given before the
deadline are kept.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from tether import process

SEARCH = "search"  # does the pattern match anywhere (multiline)?
CAPTURE = "capture"  # the first group of the first match (the whole match without groups)


@dataclass(frozen=True)
class PatternAnswer:
    """``decided`` False: the deadline (or the memory limit) stopped the match first."""

    decided: bool
    matched: bool = False
    captured: str | None = None


UNDECIDED = PatternAnswer(decided=False)


def match_in_child(
    requests: Sequence[tuple[str, str, str]], seconds: float, memory_bytes: int
) -> list[PatternAnswer]:
    """One answer per ``(pattern, text, SEARCH or CAPTURE)``, all matched in one child
    process within ``seconds`` in total; those the deadline stopped are ``UNDECIDED``."""
    if not requests:
        return []
    if not sys.executable:
        return [UNDECIDED] * len(requests)
    payload = json.dumps([list(request) for request in requests]).encode()
    command = [sys.executable, "-I", "-S", "-c", _CHILD, str(memory_bytes)]
    # A backtracking match is pure computation, nothing to clean up: killed at the deadline
    # without the graces. What it wrote before then is kept (the answers it gave).
    output = process.run(command, input=payload, timeout=seconds, at_once=True).stdout
    answers: list[PatternAnswer] = []
    for line in output.splitlines()[: len(requests)]:
        try:
            found = json.loads(line)
            answers.append(PatternAnswer(True, bool(found["matched"]), found["captured"]))
        except (ValueError, KeyError, TypeError):
            break
    return answers + [UNDECIDED] * (len(requests) - len(answers))


# The child's whole program: an address-space limit, then one answer per request.
_CHILD = """
import json, re, sys
try:
    import resource
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
except (ImportError, ValueError, OSError):
    pass
for pattern, text, mode in json.loads(sys.stdin.buffer.read()):
    match = re.search(pattern, text, re.MULTILINE)
    captured = None
    if match is not None and mode == "capture":
        captured = match.group(1) if match.groups() else match.group(0)
    sys.stdout.write(json.dumps({"matched": match is not None, "captured": captured}) + "\\n")
    sys.stdout.flush()
"""
