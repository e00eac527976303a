"""docs/conformance/gaia-update.md stays true: its statuses, its count line, its tests, and
the docs pages its `different` rows name (the same rules as the audit page's)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tests.audit.test_audit_conformance import _TEST, STATUSES

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "conformance" / "gaia-update.md"
_DOC = re.compile(r"docs/[\w/.-]+\.md")


def rows() -> list[list[str]]:
    lines = [line for line in PAGE.read_text().splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[1:]]


def test_every_row_has_a_status_and_its_evidence() -> None:
    for ref, requirement, status, how in rows():
        assert ref and requirement and status in STATUSES, (ref, requirement)
        if status == "done":
            assert _TEST.search(how), f"done without a test: {requirement}"
        if status == "different":
            assert _DOC.search(how), f"different without the page that says why: {requirement}"


def test_every_named_test_and_page_exists() -> None:
    for *_, how in rows():
        for path, name in _TEST.findall(how):
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{path}::{name}"
        for page in _DOC.findall(how):
            assert (ROOT / page).is_file(), page


def test_the_count_line_matches_the_table() -> None:
    counts = Counter(status for _, _, status, _ in rows())
    numbers = ", ".join(f"{status} {counts[status]}" for status in STATUSES)
    assert f"Counts: {sum(counts.values())} requirements; {numbers}." in PAGE.read_text()
