"""Deterministic lenses over shfmt's syntax tree: each is a pure function of the tree.

Every lens takes the parsed tree and a ``LensContext`` and returns findings; none runs a
program or reads a file, so each can be tested with a string of shell.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.audit.findings import Finding, rule
from tether.audit.shellast import Node, line_of


@dataclass(frozen=True)
class LensContext:
    path: str
    parser: str  # e.g. "shfmt 3.14.1", for verified_by

    def finding(self, finding_class: str, node: Node | int, what: str, **extra: str) -> Finding:
        line = node if isinstance(node, int) else line_of(node)
        verified = f"{self.parser} syntax tree: {what} at line {line}"
        return rule(finding_class).at(self.path, line, verified, **extra)
