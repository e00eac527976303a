"""fsio learns the umask at import to give new files the mode any other program would. It must
not set it to read it where the kernel shows it: a program that imports tether as a library may
have other threads creating files at that moment, and they would get mode 0666."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tether import fsio

# Run in a fresh interpreter, so the import is the first one: os.umask is replaced by a recorder
# before tether.fsio is imported, then the recorded calls and the mode fsio chose are printed.
IMPORT_AND_RECORD = textwrap.dedent(
    """
    import os
    os.umask(0o027)
    calls = []
    real_umask = os.umask
    def recording_umask(mask):
        calls.append(mask)
        return real_umask(mask)
    os.umask = recording_umask
    import tether.fsio
    os.umask = real_umask
    print(len(calls), oct(tether.fsio.NEW_FILE_MODE), oct(real_umask(0o027)))
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel shows the umask on Linux only")
def test_import_never_changes_the_umask_on_linux() -> None:
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_RECORD], capture_output=True, text=True, check=True
    )
    calls, new_file_mode, umask_after = run.stdout.split()
    assert calls == "0"  # os.umask was never called, so never set to 0
    assert new_file_mode == oct(0o640)  # 0666 less the 027 set before the import
    assert umask_after == oct(0o027)


def test_a_status_file_without_the_umask_line_falls_back_to_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = tmp_path / "status"
    status.write_bytes(b"Name:\tpython3\nState:\tR (running)\n")  # a kernel older than 4.7
    old = fsio.os.umask(0o022)
    try:
        assert fsio._current_umask(str(status)) == 0o022
        assert fsio._current_umask(str(tmp_path / "absent")) == 0o022
        status.write_bytes(b"Umask:\t0077\n")
        expected = 0o077 if sys.platform == "linux" else 0o022
        assert fsio._current_umask(str(status)) == expected
    finally:
        fsio.os.umask(old)
