"""The words of ``tether verify``: the verdict as a JSON document and as text."""

from __future__ import annotations

from typing import Any

from tether.engine.verify import VerifyResult


def to_json(verdict: VerifyResult) -> dict[str, Any]:
    return {
        "preserved": verdict.preserved,
        "missing": [{"line": line, "text": text} for line, text in verdict.missing],
        "readded": [{"line": line, "text": text} for line, text in verdict.readded],
    }


def render(verdict: VerifyResult, *, ours: str, base: str, result: str) -> str:
    if verdict.preserved:
        return f"preserved: {result} keeps every line {ours} added or changed"
    lines = [f"not preserved: {result} lost changes made in {ours}"]
    if verdict.missing:
        lines.append(f"  missing (line in {ours}):")
        lines.extend(f"    {number}: {text}" for number, text in verdict.missing)
    if verdict.readded:
        lines.append(f"  deleted in {ours} but back (line in {base}):")
        lines.extend(f"    {number}: {text}" for number, text in verdict.readded)
    return "\n".join(lines)
