"""shellcheck as an oracle: pinned arguments, mapped levels, and no silent clean results.

The arguments are fixed so a result depends only on the file and the shellcheck version:
``--norc`` (no project or home rc file), an explicit dialect, ``json1`` output, extended
analysis on where the version has the switch, and the bytes on stdin. SHELLCHECK_OPTS
is removed from the environment for the same reason. ``# shellcheck disable=``
directives in the file are honoured, as shellcheck honours them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from tether import process
from tether.audit.findings import Finding, rule
from tether.audit.result_cache import ResultCache, cache_key
from tether.audit.tools import Tool
from tether.errors import TetherError
from tether.fsio import sha256_bytes
from tether.sources.limits import SHELLCHECK_TIME

LEVELS: Final = {
    "error": "error",
    "warning": "warning",
    "info": "suggestion",
    "style": "suggestion",
}
# Codes shellcheck emits when its parser gave up: nothing after them was analysed.
PARSE_STOP_CODES: Final = frozenset({1009, 1072, 1073, 1088})
WIKI: Final = "https://www.shellcheck.net/wiki/SC"


@dataclass(frozen=True)
class CheckResult:
    comments: tuple[dict[str, Any], ...] = ()
    cannot: str | None = None  # why the file could not be analysed
    cannot_line: int = 1
    cached: bool = False


def arguments(tool: Tool, dialect: str) -> list[str]:
    args = ["--norc", f"--shell={dialect}", "--format=json1"]
    if tool.version_tuple() >= (0, 10):  # the switch arrived in 0.10
        args.append("--extended-analysis=true")
    return [*args, "-"]


def run_shellcheck(tool: Tool, data: bytes, dialect: str, cache: ResultCache) -> CheckResult:
    if not tool.available:
        return CheckResult(cannot="shellcheck not available")
    args = arguments(tool, dialect)
    key = cache_key("shellcheck", tool.version or "", *args, sha256_bytes(data))
    stored = cache.get(key)
    if isinstance(stored, dict) and isinstance(stored.get("comments"), list):
        return _interpret(stored["comments"], cached=True)
    outcome = _invoke(tool, args, data)
    if isinstance(outcome, str):
        return CheckResult(cannot=outcome)
    cache.put(key, {"comments": outcome})
    return _interpret(outcome, cached=False)


def _invoke(tool: Tool, args: list[str], data: bytes) -> list[dict[str, Any]] | str:
    """The comments, or why shellcheck produced none we can trust."""
    assert tool.path is not None
    try:
        seconds = SHELLCHECK_TIME.seconds()
    except TetherError as error:
        return f"shellcheck could not run: {error}"
    result = process.run(
        [tool.path, *args],
        input=data,
        env=process.child_env(drop=["SHELLCHECK_OPTS"]),
        timeout=seconds,
        limit=SHELLCHECK_TIME.variable,
    )
    if result.timed_out:
        return f"shellcheck {result.end_words()}"
    if not result.started:
        return f"shellcheck could not run: {result.error}"
    if result.exit_code not in (0, 1):
        detail = result.stderr.decode(errors="replace").strip().splitlines()
        return f"shellcheck exit status {result.exit_code}" + (f": {detail[0]}" if detail else "")
    try:
        comments = json.loads(result.stdout)["comments"]
    except (ValueError, KeyError, TypeError):
        return "shellcheck output is not json1"
    return comments if isinstance(comments, list) else "shellcheck output is not json1"


def _interpret(comments: list[dict[str, Any]], *, cached: bool) -> CheckResult:
    stops = [c for c in comments if c.get("code") in PARSE_STOP_CODES and c.get("level") == "error"]
    if stops:
        messages = "; ".join(f"line {c.get('line')}: {c.get('message')}" for c in stops)
        line = int(stops[0].get("line") or 1)
        return CheckResult(
            cannot=f"shellcheck could not parse it ({messages})", cannot_line=line, cached=cached
        )
    return CheckResult(comments=tuple(comments), cached=cached)


def findings_for(path: str, result: CheckResult, tool: Tool, dialect: str) -> list[Finding]:
    ran = f"shellcheck {tool.version} ({tool.source}) {' '.join(arguments(tool, dialect))}"
    if result.cannot:
        return [cannot_analyse(path, result.cannot, result.cannot_line, ran)]
    return [_finding(path, comment, ran) for comment in result.comments]


def cannot_analyse(path: str, reason: str, line: int, verified_by: str) -> Finding:
    return rule("audit/cannot-analyse").at(
        path, line, verified_by, title=f"cannot analyse this file: {reason}"
    )


def _finding(path: str, comment: dict[str, Any], ran: str) -> Finding:
    code = int(comment.get("code") or 0)
    message = str(comment.get("message") or "").strip()
    line, column = int(comment.get("line") or 1), comment.get("column")
    return Finding(
        finding_class=f"shellcheck/SC{code}",
        severity=LEVELS.get(str(comment.get("level")), "warning"),
        path=path,
        line=max(line, 1),
        title=f"SC{code}: {message}",
        failure_mode=f"{message} (see {WIKI}{code})",
        verified_by=f"{ran} reported it at line {line}, column {column}",
        suggested_fix=_fix_text(comment) or f"follow {WIKI}{code}",
    )


def _fix_text(comment: dict[str, Any]) -> str | None:
    fix = comment.get("fix")
    if not isinstance(fix, dict) or not fix.get("replacements"):
        return None
    inserts = [str(r.get("replacement")) for r in fix["replacements"] if isinstance(r, dict)]
    return "apply shellcheck's fix: insert/replace " + ", ".join(repr(t) for t in inserts)
