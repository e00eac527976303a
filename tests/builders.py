"""Builders for real release shelves and adopter projects in tmp dirs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tether.cli.main import main as tether_main

Files = dict[str, "bytes | str"]


def write_files(root: Path, files: Files) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def make_release(
    shelf: Path,
    version: str,
    files: Files,
    classes: dict[str, str] | None = None,
    *,
    name: str = "acme-kit",
    sentinels: Files | None = None,
    extra: dict[str, object] | None = None,
    profile: str = "native",
) -> Path:
    """A release folder ``shelf/<version>`` with its manifest; classes default to shared."""
    root = shelf / version
    write_files(root, files)
    write_files(root, sentinels or {})
    classes = classes or {}
    file_classes = {p: classes.get(p, "shared") for p in files}
    if profile == "gaia":
        manifest: dict[str, object] = {"version": version, "files": file_classes}
        manifest.update(extra or {})
        write_files(root, {".gaia/manifest.json": json.dumps(manifest, indent=2) + "\n"})
    else:
        manifest = {"schema": 1, "name": name, "version": version, "files": file_classes}
        if sentinels:
            manifest["sentinels"] = sorted(sentinels)
        manifest.update(extra or {})
        write_files(root, {".tether/manifest.json": json.dumps(manifest, indent=2) + "\n"})
    return root


def tree_digest(root: Path) -> dict[str, bytes]:
    """Every file under root (including hidden ones) with its bytes."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = Path(dirpath) / name
            out[str(full.relative_to(root))] = full.read_bytes()
    return out


# tether as the interpreter running the tests runs it: no console script on PATH needed.
TETHER = (sys.executable, "-m", "tether")


def default_sigint() -> None:
    """For ``Popen(preexec_fn=...)`` in tests that send SIGINT: a shell starting the test run
    in the background gives its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler; a person's terminal never does that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_tether(
    *args: str, cwd: Path | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The real console script in a real process."""
    return subprocess.run(
        [*TETHER, *args], cwd=cwd, capture_output=True, text=True, input=input, timeout=120
    )


def run_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI's entry point called in this process, stdout and stderr captured, stdin empty
    (not a terminal): the same result as ``run_tether`` without starting an interpreter. For
    tests about what a command decides; tests about the process itself (signals, terminals,
    the console script, environment) use ``run_tether``."""
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = tether_main(list(args))
    finally:
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["tether", *args], code, out.getvalue(), err.getvalue())


def call(*args: str) -> int:
    """In-process CLI call (fast), for tests that only need the exit code and files."""
    return tether_main(list(args))


# Test repositories never depend on the developer's git configuration or identity. conftest.py
# puts these in the environment of the whole test run, so tether's own git calls see them too.
GIT_TEST_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    """The one way tests run git: in ``repo``, failing loudly, returning stdout."""
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_TEST_ENV},
    ).stdout
