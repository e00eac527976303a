import os
import sys
from pathlib import Path

# An environment that asks Python not to write bytecode (container images often do) would
# make every test worker rewrite every test module and every tether child process compile
# tether from source: seconds per worker, a third of a second per child. The caches are
# ignored by git; the suite writes them as an ordinary run of Python would.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

sys.path.insert(0, str(Path(__file__).parent))

from builders import GIT_TEST_ENV

os.environ.update(GIT_TEST_ENV)

# The suite runs the same on a laptop and on a CI runner: tests that need CI behaviour set
# these variables themselves (audit sidecars are declined under CI).
for _ci_variable in ("CI", "GITHUB_ACTIONS"):
    os.environ.pop(_ci_variable, None)


def _memory_backed_tmp() -> None:
    """Temporary folders on the memory file system when there is room (at least 4 GiB free
    in /dev/shm): every test writes real files through the same calls, fsync included, but
    a sync costs nothing there, and the crash tests kill processes, not the machine's power
    (docs/performance.md). Elsewhere the system's temporary folder is used."""
    import tempfile

    shm = Path("/dev/shm")
    try:
        room = os.statvfs(shm)
    except OSError:
        return
    if room.f_bavail * room.f_frsize < 4 << 30 or not os.access(shm, os.W_OK):
        return
    root = shm / f"tether-tests-{os.getuid()}"
    root.mkdir(exist_ok=True)
    root.chmod(0o1777)  # as /tmp: the tests that drop privileges make their folders here
    os.environ["TMPDIR"] = str(root)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


_memory_backed_tmp()
