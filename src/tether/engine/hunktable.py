"""The hunk verification table: per hunk the user added (base → their copy), its first
significant line, its size, and whether that line is in the final file; and the user's
changes in a few words (every hunk, deletions included), for the "changes preserved"
column of a report.

This is the readable companion of the preservation verifier (``engine.verify``), which is
the binding check: a row says where to look, the verifier decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from tether.engine.diff import diff_lines
from tether.engine.textfmt import split_bom, to_lf

# Lines that only comment (a Markdown heading starts with "#" too, so "#" is not one of them).
_COMMENT_PREFIXES = ("<!--", "//", "/*", "*/")


@dataclass(frozen=True)
class HunkRow:
    hunk_id: int  # 1, 2, 3 … per file
    signature_line: str  # the first non-blank, non-comment added line
    line_count: int  # lines the hunk adds
    verified: bool  # the signature line is a line of the final file

    def to_json(self) -> dict[str, object]:
        return {
            "hunk_id": self.hunk_id,
            "signature_line": self.signature_line,
            "line_count": self.line_count,
            "verified": self.verified,
        }


def hunk_table(base: bytes, ours: bytes, final: bytes) -> list[HunkRow]:
    """One row per hunk that adds lines to ``base`` in ``ours``, checked against ``final``."""
    base_lines, ours_lines = _lines(base), _lines(ours)
    present = {line.strip() for line in _lines(final)}
    rows: list[HunkRow] = []
    for change in diff_lines(base_lines, ours_lines):
        added = ours_lines[change.b_start : change.b_start + change.b_count]
        if not any(line.strip() for line in added):
            continue
        signature = _signature(added)
        verified = signature.strip() in present
        rows.append(HunkRow(len(rows) + 1, signature, len(added), verified))
    return rows


@dataclass(frozen=True)
class ChangeRow:
    """One change of the user's (a hunk of base → their copy), told by its first line."""

    kind: str  # "added" (lines only added), "changed" (some replaced), "deleted" (only removed)
    text: str  # the first significant line added; for a deletion, the first one deleted
    added: int  # lines the hunk adds
    removed: int  # base lines it removes

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "text": self.text, "added": self.added, "removed": self.removed}


def user_changes(base: bytes, ours: bytes) -> list[ChangeRow]:
    """Every hunk of base → ours (blank-only ones aside), deletion-only hunks included."""
    base_lines, ours_lines = _lines(base), _lines(ours)
    rows: list[ChangeRow] = []
    for change in diff_lines(base_lines, ours_lines):
        added = ours_lines[change.b_start : change.b_start + change.b_count]
        removed = base_lines[change.a_start : change.a_start + change.a_count]
        if any(line.strip() for line in added):
            kind = "changed" if any(line.strip() for line in removed) else "added"
            rows.append(ChangeRow(kind, _signature(added), len(added), len(removed)))
        elif any(line.strip() for line in removed):
            rows.append(ChangeRow("deleted", _signature(removed), len(added), len(removed)))
    return rows


def _signature(added: list[str]) -> str:
    stripped = [line for line in added if line.strip()]
    significant = [line for line in stripped if not line.lstrip().startswith(_COMMENT_PREFIXES)]
    return (significant or stripped)[0]


def _lines(data: bytes) -> list[str]:
    text = to_lf(split_bom(data)[1]).decode("utf-8", errors="replace")
    return text.splitlines()
