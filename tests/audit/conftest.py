"""Fixtures shared by the tests of one area:
tether audit (src/tether/audit).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.audit.builders import keep_built_repositories, make_repo


@pytest.fixture(scope="session", autouse=True)
def built_repositories(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each repository make_repo builds is kept here for the run and copied when a test
    asks for the same files again."""
    keep_built_repositories(tmp_path_factory.mktemp("built-repositories"))
    yield
    keep_built_repositories(None)


@pytest.fixture
def repo(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose main holds the test module's ``BASE`` files and whose branch
    ``feature`` commits its ``BRANCH`` files (a module whose repository differs defines its
    own ``repo``)."""
    return make_repo(tmp_path, monkeypatch, request.module.BASE, request.module.BRANCH)
