"""Fixtures shared by the tests of one area:
the edge modules: processes, git, the file system (src/tether/*.py).
"""

from __future__ import annotations

import pytest

from tether import process


@pytest.fixture
def short_graces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graces between SIGINT, SIGTERM and SIGKILL cut short, for the tests whose stand-in
    programs ignore the first two."""
    monkeypatch.setattr(process, "INTERRUPT_GRACE", 0.3)
    monkeypatch.setattr(process, "TERMINATE_GRACE", 0.3)
