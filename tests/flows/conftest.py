"""Fixtures shared by the tests of one area:
the project commands: init, status, check, diff, own, snapshot, pr, the writer.
"""

from pathlib import Path

import pytest

from builders import run_tether


@pytest.fixture
def project(tmp_path: Path, shelf: Path) -> Path:
    """A project installed at 1.0.0 from the test module's ``shelf`` (a module whose project
    needs more defines its own)."""
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    return project
