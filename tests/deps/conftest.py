"""Fixtures shared by the tests of one area:
tether deps (src/tether/deps).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.deps.deep import deep_world
from fixtures.deps.kit import PRIVATE_WIDGET, setup_cli
from fixtures.deps.loopback import LoopbackRegistry


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The deep scenario (fixtures/deps/deep.py: two projects and the projects registry naming
    them; returns the registry file) with the commands set up in ``tmp_path``. A module whose
    projects are others defines its own ``world``; the registry serves what the module's
    ``SERVED`` names (the deep packuments and pages, for this one)."""
    setup_cli(monkeypatch, tmp_path)
    return deep_world(tmp_path)


@pytest.fixture
def private(request: pytest.FixtureRequest) -> Iterator[LoopbackRegistry]:
    """A private registry: it serves @private/widget only to a request that carries the test
    module's ``TOKEN``, as a private npm registry answers."""
    packuments = {"@private/widget": PRIVATE_WIDGET}
    with LoopbackRegistry(packuments=packuments, token=request.module.TOKEN) as registry:
        yield registry
