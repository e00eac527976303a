"""Fixtures shared by the tests of one area:
tether audit (src/tether/audit).
"""

from pathlib import Path

import pytest

from tests.audit.builders import make_repo


@pytest.fixture
def repo(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose main holds the test module's ``BASE`` files and whose branch
    ``feature`` commits its ``BRANCH`` files (a module whose repository differs defines its
    own ``repo``)."""
    return make_repo(tmp_path, monkeypatch, request.module.BASE, request.module.BRANCH)
