"""Fixtures shared by the tests of one area:
copier and cruft projects (src/tether/templates).
"""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def render_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own cache of rendered template versions, and a home folder holding no
    settings of copier's or cookiecutter's."""
    cache = tmp_path / "render-cache"
    monkeypatch.setenv("TETHER_RENDER_CACHE", str(cache))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user settings of copier's
    return cache
