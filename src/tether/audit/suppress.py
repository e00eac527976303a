"""In-file suppression of lens findings: ``# tether-audit: allow RULE -- REASON``.

Like shellcheck's ``disable`` directive, it sits on the finding's line or the line above
it; unlike it, the reason is required and nothing disappears: the finding stays in the
report and the sidecar, lowered to a suggestion and marked ``suppressed`` with the reason,
so a reviewer sees every exception the code grants itself. A directive naming no lens
class, or giving no reason, suppresses nothing and is itself a warning. shellcheck's
findings keep shellcheck's own directive; a file that cannot be analysed is never
suppressed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from tether.audit.findings import RULES, Finding, Suppression, rule

DIRECTIVE: Final = re.compile(r"#\s*tether-audit:\s*allow\b(.*)$")
_BODY: Final = re.compile(r"^\s+(\S+)\s*(?:--\s*(.*?))?\s*$")
_NOT_SUPPRESSIBLE: Final = {"audit/cannot-analyse", "audit/invalid-suppression"}


def directives(data: bytes) -> dict[int, tuple[str, str]]:
    """(class, reason) per line holding a directive; a malformed one has an empty part."""
    found: dict[int, tuple[str, str]] = {}
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        match = DIRECTIVE.search(text)
        if match is None:
            continue
        body = _BODY.match(match.group(1))
        found[number] = (body.group(1), body.group(2) or "") if body else ("", "")
    return found


def apply(
    path: str, data: bytes, found: list[Finding], *, report_invalid: bool = True
) -> list[Finding]:
    """``found`` with each suppressed lens finding lowered and marked, plus (unless the
    file's own analysis already said so) a warning for every directive that cannot
    suppress anything."""
    allowed = directives(data)
    if not allowed:
        return found
    out: list[Finding] = []
    for finding in found:
        line = next(
            (
                at
                for at in (finding.line, finding.line - 1)
                if _valid(*allowed.get(at, ("", ""))) and allowed[at][0] == finding.finding_class
            ),
            None,
        )
        if line is None or finding.finding_class in _NOT_SUPPRESSIBLE:
            out.append(finding)
            continue
        mark = Suppression(line, allowed[line][1].strip(), finding.severity)
        out.append(replace(finding, severity="suggestion", suppression=mark))
    for line, (name, reason) in sorted(allowed.items()) if report_invalid else []:
        if not _valid(name, reason):
            what = "no reason after `--`" if name in RULES else f"unknown class {name!r}"
            title = f"`# tether-audit: allow` suppresses nothing: {what}"
            verified = f"read the directive at line {line}"
            out.append(rule("audit/invalid-suppression").at(path, line, verified, title=title))
    return out


def _valid(name: str, reason: str) -> bool:
    return name in RULES and name not in _NOT_SUPPRESSIBLE and bool(reason.strip())
