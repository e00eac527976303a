"""Fixtures shared by the tests of one area:
the rules the whole code base and its documents are held to.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.architecture import syntax_trees


@pytest.fixture(scope="package", autouse=True)
def syntax_trees_forgotten() -> Iterator[None]:
    """The trees the area's rules share are dropped once its tests are done."""
    yield
    syntax_trees.forget()
