"""Fixtures shared by the tests of one area:
release lifecycles, migrations and the GAIA profile (src/tether/profiles).
"""

from collections.abc import Iterator

import pytest

from tests.lifecycle.builders import keep_builds


@pytest.fixture(scope="session", autouse=True)
def kept_builds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What ``built_once`` builds is kept here for the run and copied when asked again."""
    keep_builds(tmp_path_factory.mktemp("kept-builds"))
    yield
    keep_builds(None)
