"""Fixtures shared by the tests of one area:
the edge modules: processes, git, the file system (src/tether/*.py).
"""

from __future__ import annotations

import pytest

from tether import process


@pytest.fixture
def short_graces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graces between SIGINT, SIGTERM and SIGKILL cut short, for the tests whose stand-in
    programs ignore the first two (each grace is then waited out in full). A test about what
    a program does in its handler makes that grace long itself."""
    monkeypatch.setattr(process, "INTERRUPT_GRACE", 0.05)
    monkeypatch.setattr(process, "TERMINATE_GRACE", 0.05)
