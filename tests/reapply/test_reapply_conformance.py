"""docs/conformance/gsd-reapply.md and gbrain-refresh.md stay true: each row has one of the
four statuses, a done row names a test that exists, a different row names the page that
says why, and the count line matches the table."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("gsd-reapply.md", "gbrain-refresh.md")
STATUSES = ("done", "different", "partial", "missing")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
_CELL = re.compile(r"(?<!\\)\|")  # a cell border: a pipe not escaped inside a cell


def rows(page: str) -> list[list[str]]:
    text = (ROOT / "docs" / "conformance" / page).read_text()
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in _CELL.split(line.strip())[1:-1]] for line in lines[1:]]


@pytest.mark.parametrize("page", PAGES)
def test_every_row_has_a_status_and_its_evidence(page: str) -> None:
    assert rows(page)
    for ref, requirement, status, how in rows(page):
        assert ref and requirement and status in STATUSES, (ref, requirement)
        if status == "done":
            assert _TEST.search(how), f"done without a test: {requirement}"
        if status == "different":
            assert re.search(r"\]\(\.\./[\w-]+\.md\)", how), (
                f"different without a page: {requirement}"
            )


@pytest.mark.parametrize("page", PAGES)
def test_every_named_test_exists(page: str) -> None:
    for *_, how in rows(page):
        for path, name in _TEST.findall(how):
            source = (ROOT / path).read_text()
            assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{path}::{name}"


@pytest.mark.parametrize("page", PAGES)
def test_the_count_line_matches_the_table(page: str) -> None:
    counts = Counter(status for _, _, status, _ in rows(page))
    numbers = ", ".join(f"{counts[status]} {status}" for status in STATUSES)
    line = f"**Count:** {sum(counts.values())} rows: {numbers}."
    assert line in (ROOT / "docs" / "conformance" / page).read_text()
