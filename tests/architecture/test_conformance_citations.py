"""Every conformance page (docs/conformance/*.md) cites tests that exist.

A page says which test proves a requirement (`tests/test_x.py::test_name`, or
`tests/area/test_x.py::Class::test_name`, a parametrized case as `test_name[case]`); a test
renamed, moved to another file or deleted leaves the page claiming a proof that is gone.
This reads every page, finds every citation anywhere in it (tables, intro, notes), and
checks that the file exists and defines each name it cites (a test function, or a class
and then one of its methods), read with ``ast``, not imported. It also holds every page to
the shape the pages share: a table whose status column holds one of the four statuses, and
a `done` row that cites at least one test, a `different` row that names the docs page
giving the reason (and that page exists), and a count line (`Counts: N requirements; done
…, different …, partial …, missing ….`) that agrees with the table."""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("reading_syntax_trees")

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs" / "conformance").glob("*.md"))
STATUSES = ("done", "different", "partial", "missing")
# A citation: a test file under tests/, then ``::`` and one or more names, the last one
# perhaps with a parametrized case in brackets.
CITATION = re.compile(r"(tests/[\w/.-]+?\.py)((?:::\w+)+)(\[[^\]\s`|]*\])?")
_CELL = re.compile(r"(?<!\\)\|")  # a cell border: a pipe not escaped inside a cell
# The docs page a `different` row names: a path from the repository's root, or a Markdown
# link relative to the conformance folder (`[reapply.md](../reapply.md#anchor)`).
DOC_PAGE = re.compile(r"\b(docs/[\w/.-]+\.md)|\]\(([\w/.-]+\.md)(?:#[\w-]*)?\)")


@functools.cache
def _definitions(path: Path) -> dict[str, frozenset[str]]:
    """Name -> the names defined in it, for the module ("") and each class of ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: dict[str, frozenset[str]] = {}
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            found[node.name] = frozenset(
                item.name
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    found[""] = frozenset(top)
    return found


def citation_problem(file: str, names: list[str]) -> str | None:
    """Why ``file::names`` names no test, or None when it does."""
    path = ROOT / file
    if not path.is_file():
        return f"{file}: no such test file"
    definitions = _definitions(path)
    scope = ""
    for name in names:
        if name not in definitions.get(scope, frozenset()):
            where = f"class {scope}" if scope else file
            return f"{file}::{'::'.join(names)}: {where} defines no {name!r}"
        scope = name if name in definitions else scope
    return None


def citations(text: str) -> list[tuple[str, list[str]]]:
    return [
        (match.group(1), match.group(2).removeprefix("::").split("::"))
        for match in CITATION.finditer(text)
    ]


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of the page's requirement table, by header name."""
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    header = next((line for line in lines if re.match(r"\|\s*ref\s*\|", line)), None)
    if header is None:
        return []
    heads = [cell.strip() for cell in _CELL.split(header)[1:-1]]
    rows = []
    for line in lines[lines.index(header) + 1 :]:
        cells = [cell.strip() for cell in _CELL.split(line)[1:-1]]
        if set("".join(cells)) <= set("-: "):
            continue  # the separator line
        rows.append(dict(zip(heads, cells, strict=False)))
    return rows


def test_there_are_pages_to_check() -> None:
    assert len(PAGES) >= 5
    assert all(citations(page.read_text()) for page in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_cited_test_exists(page: Path) -> None:
    problems = [
        problem
        for file, names in citations(page.read_text())
        if (problem := citation_problem(file, names)) is not None
    ]
    assert problems == [], f"{page.name}: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_row_has_a_status_and_a_done_row_cites_a_test(page: Path) -> None:
    rows = table_rows(page.read_text())
    assert rows, f"{page.name}: no table with a 'ref' column"
    for row in rows:
        label = row.get("ref", "?")
        assert row.get("status") in STATUSES, f"{page.name}: {label}: status {row.get('status')!r}"
        if row["status"] == "done":
            assert citations(" ".join(row.values())), f"{page.name}: {label}: done, no test"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_different_row_names_the_page_that_gives_the_reason(page: Path) -> None:
    for row in table_rows(page.read_text()):
        if row["status"] != "different":
            continue
        named = [
            ROOT / rooted if rooted else page.parent / linked
            for rooted, linked in DOC_PAGE.findall(" ".join(row.values()))
        ]
        assert named, f"{page.name}: {row.get('ref', '?')}: different, no docs page named"
        for doc in named:
            assert doc.is_file(), f"{page.name}: {row.get('ref', '?')}: no {doc}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_count_line_agrees_with_the_table(page: Path) -> None:
    text = page.read_text()
    counts = Counter(row["status"] for row in table_rows(text))
    numbers = ", ".join(f"{status} {counts[status]}" for status in STATUSES)
    assert f"Counts: {sum(counts.values())} requirements; {numbers}." in text, page.name


def test_the_check_finds_what_is_gone(tmp_path: Path) -> None:
    """The check itself: a renamed test, a method outside its class, a missing file."""
    here = "tests/architecture/test_conformance_citations.py"
    assert citation_problem(here, ["test_every_cited_test_exists"]) is None
    assert citation_problem(here, ["test_no_such_test"]) == (
        f"{here}::test_no_such_test: {here} defines no 'test_no_such_test'"
    )
    assert citation_problem("tests/test_gone.py", ["test_x"]) == (
        "tests/test_gone.py: no such test file"
    )
    assert citations("`tests/a/test_b.py::TestC::test_d[x-1]` and tests/e.py::f") == [
        ("tests/a/test_b.py", ["TestC", "test_d"]),
        ("tests/e.py", ["f"]),
    ]
