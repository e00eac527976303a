"""Fixtures shared by the tests of one area:
tether deps (src/tether/deps).
"""

from collections.abc import Iterator

import pytest

from fixtures.deps.kit import PRIVATE_WIDGET
from fixtures.deps.loopback import LoopbackRegistry


@pytest.fixture
def private(request: pytest.FixtureRequest) -> Iterator[LoopbackRegistry]:
    """A private registry: it serves @private/widget only to a request that carries the test
    module's ``TOKEN``, as a private npm registry answers."""
    packuments = {"@private/widget": PRIVATE_WIDGET}
    with LoopbackRegistry(packuments=packuments, token=request.module.TOKEN) as registry:
        yield registry
