"""A bats suite against its previous version: coverage a change retires.

The document asks for the diff's removals to be read, not only its additions. Per
``@test`` (matched by name between the base and the branch):

- a test the base had and the branch has not, nor under another name with the same
  checks, was dropped (``bats/dropped-test``);
- a test with fewer checks than at the base lost an assertion (``bats/removed-assertion``);
- a test whose exact comparisons of a run result (``[ "$output" = … ]``, ``-eq``,
  ``assert_output "…"``) gave way to looser ones (``grep``, ``=~``, a glob,
  ``--partial``/``--regexp``) was weakened (``bats/weakened-assertion``);
- a test that ran unskipped at the base and has a ``skip`` now, guarded or not, retires
  coverage (``bats/added-skip``).

Each is a warning: a justified change is acknowledged with its reason.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from tether.audit.findings import Finding
from tether.audit.lenses import LensContext
from tether.audit.lenses.batsbody import is_check
from tether.audit.shellast import Node, command, command_name, kind, line_of, literal, walk

_RESULT: Final = re.compile(r"\$\{?(output|status|lines|stderr)\b")
_EQUALITY: Final = re.compile(r"\s(=|==|-eq)\s")
_GLOB: Final = re.compile(r"\s(=|==)\s+(?![\"'])\S*\*")
_ASSERT_EXACT: Final = re.compile(r"^assert_(output|equal|line)\b")
_LOOSE_FLAGS: Final = re.compile(r"\s(--partial|-p|--regexp|-e)\b")
_LOOSE: Final = re.compile(r"\bgrep\b|=~")


def _exact(check: str) -> bool:
    """An exact comparison of a run result: ``[ "$output" = "x" ]``, ``assert_output x``."""
    if _ASSERT_EXACT.match(check):
        return not _LOOSE_FLAGS.search(check)
    return bool(_RESULT.search(check) and _EQUALITY.search(check) and not _GLOB.search(check))


def _loose(check: str) -> bool:
    """A match that admits more: ``grep``, ``=~``, a glob, ``--partial``/``--regexp``."""
    if _exact(check):
        return False
    partial = check.startswith("assert_") and _LOOSE_FLAGS.search(check)
    return bool(_LOOSE.search(check) or _GLOB.search(check) or partial)


@dataclass(frozen=True)
class _Test:
    name: str
    line: int
    checks: tuple[str, ...]  # the text of each top-level check, whitespace collapsed
    skips: int


def _text(data: bytes, node: Node) -> str:
    start = int((node.get("Pos") or {}).get("Offset", 0))
    end = int((node.get("End") or {}).get("Offset", start))
    return " ".join(data[start:end].decode("utf-8", "replace").split())


def _tests(tree: Node, data: bytes) -> dict[str, _Test]:
    found: dict[str, _Test] = {}
    for node in walk(tree):
        if kind(node) != "TestDecl":
            continue
        name = literal(node.get("Description")) or _text(data, node.get("Description") or {})
        body = command(node.get("Body"))
        checks = [stmt for stmt in walk(body) if "Cmd" in stmt and is_check(stmt)]
        spans = [(_offset(s, "Pos"), _offset(s, "End")) for s in checks]
        outer = [
            s
            for s, (start, end) in zip(checks, spans, strict=True)
            if not any(a <= start and end <= b and (a, b) != (start, end) for a, b in spans)
        ]
        skips = sum(1 for n in walk(body) if kind(n) == "CallExpr" and command_name(n) == "skip")
        found[name] = _Test(name, line_of(node), tuple(_text(data, s) for s in outer), skips)
    return found


def _offset(node: Node, key: str) -> int:
    return int((node.get(key) or {}).get("Offset", 0))


def compare(
    before: Node, before_data: bytes, after: Node, after_data: bytes, ctx: LensContext
) -> list[Finding]:
    old, new = _tests(before, before_data), _tests(after, after_data)
    found: list[Finding] = []
    renamed = {tuple(sorted(t.checks)) for n, t in new.items() if t.checks and n not in old}
    for name, test in old.items():
        if name in new:
            found.extend(_changed(test, new[name], ctx))
        elif not test.checks or tuple(sorted(test.checks)) not in renamed:
            title = f"@test {name!r} was dropped ({len(test.checks)} checks no longer run)"
            found.append(ctx.finding("bats/dropped-test", 1, f"@test {name!r}", title=title))
    return found


def _changed(old: _Test, new: _Test, ctx: LensContext) -> list[Finding]:
    found: list[Finding] = []
    gone = Counter(old.checks) - Counter(new.checks)
    exact_before, exact_after = (sum(map(_exact, t.checks)) for t in (old, new))
    loose_before, loose_after = (sum(map(_loose, t.checks)) for t in (old, new))
    where = f"@test {old.name!r}"
    if exact_after < exact_before and loose_after > loose_before:
        dropped = next((c for c in gone if _exact(c)), "")
        title = f"{where}: an exact check became a looser match (was `{dropped}`)"
        found.append(ctx.finding("bats/weakened-assertion", new.line, where, title=title))
    elif len(new.checks) < len(old.checks):
        first = next(iter(gone), "")
        title = f"{where} has {len(old.checks) - len(new.checks)} fewer checks (`{first}`)"
        found.append(ctx.finding("bats/removed-assertion", new.line, where, title=title))
    if new.skips and not old.skips:
        title = f"{where} now skips: it ran unskipped at the base"
        found.append(ctx.finding("bats/added-skip", new.line, where, title=title))
    return found
