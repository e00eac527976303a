"""Fixtures shared by the tests of one area:
the rules the whole code base and its documents are held to.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.architecture import syntax_trees


@pytest.fixture(scope="module")
def reading_syntax_trees() -> Iterator[None]:
    """For a module whose rules read syntax trees (``syntax_trees``): no cyclic collection
    while its tests run, and the trees dropped once they are done."""
    with syntax_trees.reading():
        yield
