"""Listing a ``gh:`` source's tags, a ``gh-release:`` source's releases, and reading a
release's notes through gh are network reads like any other: bounded in total time
(``TETHER_LIMIT_NETWORK_SECONDS``) and in the bytes of the answer
(``TETHER_LIMIT_ANSWER_BYTES``), one line naming the source and the variable, nothing
written.

gh itself needs the network and an account, so a stand-in program takes its place on PATH:
it records its arguments and answers the call named in ``GH_SLOW``
only after ``GIVE_UP`` seconds (then normally, so that tether without the bound goes on and
fails these tests with other words instead of hanging them), and the call named in
``GH_ENDLESS`` with 2 MiB of tag names. GitHub's REST API, the fallback of a
``gh-release:`` source, points at a closed port on 127.0.0.1: it is never to be asked, but
in the last test, where gh is missing and the API is a server on 127.0.0.1 trickling its
answer (that bound predates these tests: the test holds it in place).
"""

from __future__ import annotations

import contextlib
import http.server
import sys
import threading
import time
from pathlib import Path

import pytest

from builders import run_tether
from helpers_sources import listing
from tether.errors import TetherError
from tether.sources import limits, open_source

GIVE_UP = 8.0  # seconds the stand-in keeps a slow call waiting
ENDLESS = 2 << 20  # bytes of tag names an endless answer holds

# A shell script, not Python: a shell starts in about 1 ms of CPU, an interpreter in 10 ms.
# Each call is recorded as its arguments, one per line, ending in a line holding "--end".
GH_STAND_IN = r"""#!/bin/sh
printf '%s\n' "$@" --end >> "$GH_LOG"
call="$1 $2"
if [ "$call" = "$GH_SLOW" ]; then
    sleep {give_up}
fi
if [ "$call" = "$GH_ENDLESS" ]; then
    yes v1.0.0 | head -c {endless}
elif [ "$call" = "api --paginate" ] || [ "$call" = "release list" ]; then
    echo v1.0.0
elif [ "$call" = "release view" ]; then
    echo "notes of 1.0.0"
else
    echo "gh stand-in: no answer for $*" >&2
    exit 1
fi
"""


@pytest.fixture
def gh_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = GH_STAND_IN.format(give_up=GIVE_UP, endless=ENDLESS)
    (bin_dir / "gh").write_text(script)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # never to be asked
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    monkeypatch.setenv(limits.ANSWER_BYTES, "64K")
    log = tmp_path / "gh.log"
    monkeypatch.setenv("GH_LOG", str(log))
    return log


def _calls(log: Path) -> list[str]:
    """The first two arguments of each call the stand-in recorded."""
    calls = log.read_text().split("--end\n")[:-1]
    return [" ".join(call.splitlines()[:2]) for call in calls]


TIME_WORDS = f"took longer than 1 s ({limits.NETWORK_SECONDS} sets it)"
BYTES_WORDS = f"wrote more than 65,536 bytes ({limits.ANSWER_BYTES} sets it)"


LISTINGS = [
    ("gh:owner/repo", "api --paginate", "cannot read the tags of gh:owner/repo"),
    ("gh-release:owner/repo", "release list", "cannot list the releases of gh-release:owner/repo"),
]
HOSTILE = [("GH_SLOW", TIME_WORDS), ("GH_ENDLESS", BYTES_WORDS)]


@pytest.mark.parametrize(("spec", "call", "what"), LISTINGS)
@pytest.mark.parametrize(("hostile", "words"), HOSTILE)
def test_a_listing_through_gh_is_bounded_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gh_log: Path,
    spec: str,
    call: str,
    what: str,
    hostile: str,
    words: str,
) -> None:
    monkeypatch.setenv(hostile, call)
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--source", spec, "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 1, done.stdout
    assert done.stderr == f"tether: {what}: {words}\n"
    assert _calls(gh_log) == [call]  # listed once; no download, no fallback
    assert listing(project) == []


def test_a_releases_notes_through_gh_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh_log: Path
) -> None:
    """Notes are best effort: past the bound there are none (and the API, which would take
    as long again, is not asked)."""
    monkeypatch.setenv("GH_SLOW", "release view")
    source = open_source("gh-release:owner/repo", tmp_path / "cache")
    # Without the bound the stand-in answers after GIVE_UP seconds, and there are notes.
    assert source.release_body("1.0.0") is None  # type: ignore[attr-defined]
    assert _calls(gh_log) == ["release list", "release view"]


def test_a_listing_within_the_bounds_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gh_log: Path
) -> None:
    monkeypatch.setenv(limits.NETWORK_SECONDS, "30")
    source = open_source("gh-release:owner/repo", tmp_path / "cache")
    assert source.release_body("1.0.0") == "notes of 1.0.0\n"  # type: ignore[attr-defined]
    assert list(source._offered()) == ["1.0.0"]  # type: ignore[attr-defined]


class _Trickling(http.server.BaseHTTPRequestHandler):
    """GitHub's REST API, answering every request one byte every 50 ms (GIVE_UP s at most)."""

    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"[]" + b" " * 998
        with contextlib.suppress(OSError):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            stop = time.monotonic() + GIVE_UP
            for byte in body:
                if time.monotonic() > stop:
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)


def test_the_rest_fallback_listing_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without gh, a ``gh-release:`` source lists its releases through GitHub's REST API,
    here a server on 127.0.0.1 that trickles its answer."""
    only = tmp_path / "no-gh-bin"
    only.mkdir()
    monkeypatch.setenv("PATH", str(only))
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickling)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        api = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("GITHUB_API_URL", api)
        source = open_source("gh-release:owner/repo", tmp_path / "cache")
        with pytest.raises(TetherError) as caught:
            source.available_versions()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert str(caught.value).startswith(
        "cannot list the releases of gh-release:owner/repo: gh: not installed; GitHub's API: "
    )
    assert str(caught.value).endswith(f"took longer than 1 s ({limits.NETWORK_SECONDS} sets it)")
