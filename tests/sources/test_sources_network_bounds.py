"""Every network read is bounded in total time and total bytes: a tarball download and a
registry answer that trickle in stop at the time bound, one that never ends stops at the
byte bound (nothing past it reaches the disk or the memory), an announced size over the
bound is refused before the body is read. Served by a real HTTP server on 127.0.0.1 whose
hostile answers give up on their own after a few seconds, so that a client without the
bounds fails these tests instead of hanging them; the bounds are set small through their
environment variables."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from builders import run_tether
from helpers_sources import listing
from tether.deps.engines import NodeIndex
from tether.deps.registries import FetchError, HttpClient
from tether.errors import TetherError
from tether.sources import limits
from tether.sources.tarball import fetch_url

GIVE_UP = 4.0  # seconds a hostile answer goes on at most
ENDLESS_CAP = 16 << 20  # bytes an endless answer sends at most


class _Hostile(http.server.BaseHTTPRequestHandler):
    """``/trickle``: one byte every 50 ms of an announced 1,000. ``/endless``: bytes
    without end (no length). ``/announced``: claims 10 GiB. ``/slow-headers``: the status
    line one byte at a time. ``/short``: 10 of an announced 1,000 bytes. ``/ok``: JSON."""

    protocol_version = "HTTP/1.0"
    requests: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        kind = self.path.strip("/").split("/")[0]
        with contextlib.suppress(OSError):
            getattr(self, f"_{kind.replace('-', '_')}")()

    def _ok(self) -> None:
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self._slowly(b"x" * 1000)

    def _slow_headers(self) -> None:
        self._slowly(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")

    def _slowly(self, data: bytes) -> None:
        stop = time.monotonic() + GIVE_UP
        for byte in data:
            if time.monotonic() > stop:
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.05)

    def _endless(self) -> None:
        self.send_response(200)
        self.end_headers()
        chunk = b"{" * 65536
        for _ in range(ENDLESS_CAP // len(chunk)):
            self.wfile.write(chunk)

    def _announced(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(10 << 30))
        self.end_headers()
        self.wfile.write(b"x" * 1024)

    def _short(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"x" * 10)


@pytest.fixture
def server() -> Iterator[str]:
    _Hostile.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(limits.NETWORK_SECONDS, "0.4")
    monkeypatch.setenv(limits.DOWNLOAD_BYTES, "256K")
    monkeypatch.setenv(limits.ANSWER_BYTES, "64K")


TIME_WORDS = "took longer than 0.4 s (TETHER_LIMIT_NETWORK_SECONDS sets it)"
DOWNLOAD_WORDS = (
    "the answer is larger than 262,144 bytes (256 KiB) (TETHER_LIMIT_DOWNLOAD_BYTES sets it)"
)
ANSWER_WORDS = "the answer is larger than 65,536 bytes (64 KiB) (TETHER_LIMIT_ANSWER_BYTES sets it)"


def _init(project: Path, url: str) -> tuple[int, str, float]:
    project.mkdir()
    started = time.monotonic()
    result = run_tether("init", "--source", url, "--to", "1.0.0", "-C", str(project))
    return result.returncode, result.stderr, time.monotonic() - started


@pytest.mark.usefixtures("small_bounds")
@pytest.mark.parametrize("kind", ["trickle", "slow-headers"])
def test_a_trickling_tarball_download_stops_at_the_time_bound(
    server: str, tmp_path: Path, kind: str
) -> None:
    project = tmp_path / "app"
    code, stderr, took = _init(project, f"{server}/{kind}/kit-{{version}}.tgz")
    assert code == 1
    assert stderr == f"tether: cannot download {server}/{kind}/kit-1.0.0.tgz: {TIME_WORDS}\n"
    assert took < 2.0  # the bound (0.4 s) and the start of tether, not the server's 4 s
    assert listing(project) == []


@pytest.mark.usefixtures("small_bounds")
def test_an_endless_tarball_download_stops_at_the_byte_bound(server: str, tmp_path: Path) -> None:
    project = tmp_path / "app"
    code, stderr, _took = _init(project, f"{server}/endless/kit-{{version}}.tgz")
    assert code == 1
    assert stderr == f"tether: cannot download {server}/endless/kit-1.0.0.tgz: {DOWNLOAD_WORDS}\n"
    assert listing(project) == []


@pytest.mark.usefixtures("small_bounds")
def test_the_download_file_never_grows_past_the_bound(server: str, tmp_path: Path) -> None:
    out = tmp_path / "download"
    with pytest.raises(TetherError, match="larger than 262,144 bytes"):
        fetch_url(f"{server}/endless/x.tgz", out, missing="none")
    assert out.stat().st_size <= 256 << 10


@pytest.mark.usefixtures("small_bounds")
def test_an_announced_size_over_the_bound_is_refused_before_reading(
    server: str, tmp_path: Path
) -> None:
    out = tmp_path / "download"
    with pytest.raises(TetherError) as caught:
        fetch_url(f"{server}/announced/x.tgz", out, missing="none")
    assert str(caught.value) == f"cannot download {server}/announced/x.tgz: {DOWNLOAD_WORDS}"
    assert out.stat().st_size == 0


def test_an_answer_shorter_than_announced_is_an_error(server: str, tmp_path: Path) -> None:
    with pytest.raises(TetherError) as caught:
        fetch_url(f"{server}/short/x.tgz", tmp_path / "download", missing="none")
    assert str(caught.value) == (
        f"cannot download {server}/short/x.tgz: the answer ended after 10 of 1,000 bytes"
    )


@pytest.mark.usefixtures("small_bounds")
@pytest.mark.parametrize(
    ("kind", "words"),
    [("trickle", TIME_WORDS), ("slow-headers", TIME_WORDS), ("endless", ANSWER_WORDS)],
)
def test_a_registry_answer_is_bounded_and_not_asked_again(
    server: str, kind: str, words: str
) -> None:
    client = HttpClient(retries=2, sleep=lambda _seconds: None)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught:
        client.get_json(f"{server}/{kind}/left-pad")
    assert str(caught.value) == f"{server}/{kind}/left-pad: {words}"
    assert time.monotonic() - started < 2.0
    assert _Hostile.requests == [f"/{kind}/left-pad"]  # a passed bound is not retried


@pytest.mark.usefixtures("small_bounds")
def test_the_node_release_index_is_read_through_the_same_bounds(server: str) -> None:
    with pytest.raises(FetchError, match="larger than 65,536 bytes"):
        NodeIndex(f"{server}/endless/index.json", HttpClient(retries=0)).fetch()


@pytest.mark.usefixtures("small_bounds")
def test_an_answer_within_the_bounds_is_read(server: str) -> None:
    assert HttpClient().get_json(f"{server}/ok/left-pad") == {"ok": True}


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        (limits.DOWNLOAD_BYTES, "lots", "not a size (a whole number of bytes above 0, or with"),
        (limits.DOWNLOAD_BYTES, "0", "not a size"),
        (limits.NETWORK_SECONDS, "-1", "not a number of seconds above 0"),
        (limits.NETWORK_SECONDS, "nan", "not a number of seconds above 0"),
    ],
)
def test_a_bound_set_to_nonsense_is_a_one_line_error(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, words: str
) -> None:
    monkeypatch.setenv(name, value)
    project = tmp_path / "app"
    code, stderr, _took = _init(project, f"{server}/ok/kit-{{version}}.tgz")
    assert code == 1
    assert stderr.startswith(f"tether: {name}={value!r}: {words}")
    assert len(stderr.splitlines()) == 1
    assert _Hostile.requests == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1048576", 1 << 20),
        ("512K", 512 << 10),
        ("64M", 64 << 20),
        ("2G", 2 << 30),
        ("3 MiB", 3 << 20),
    ],
)
def test_sizes_read_in_powers_of_1024(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int
) -> None:
    monkeypatch.setenv(limits.DOWNLOAD_BYTES, value)
    assert limits.byte_limit(limits.DOWNLOAD_BYTES, 1) == expected
    monkeypatch.delenv(limits.DOWNLOAD_BYTES)
    assert limits.byte_limit(limits.DOWNLOAD_BYTES, 7) == 7


# --- gh: a stand-in for the gh program (the real one needs the network and an account) ---

# A shell script, not Python: a shell starts in about 1 ms of CPU, an interpreter in 10 ms.
GH_STAND_IN = r"""#!/bin/sh
endless() {{  # x without end (until the cap)
    head -c {cap} /dev/zero | tr '\0' x
}}
if [ "$1 $2 $3" = "api --paginate repos/owner/repo/tags" ]; then
    echo v1.0.0
elif [ "$1 $2" = "release list" ]; then
    echo v1.0.0
elif [ "$GH_HOSTILE" = slow ]; then
    sleep {give_up}
    echo "gh: gave up" >&2
    exit 1
elif [ "$1" = api ]; then  # the tag's tarball, on stdout
    endless
else  # release download --dir DIR: the asset, a file
    while [ "$1" != --dir ]; do shift; done
    endless > "$2/repo-v1.0.0.tar.gz"
fi
"""


@pytest.fixture
def gh_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = GH_STAND_IN.format(give_up=GIVE_UP, cap=ENDLESS_CAP)
    (bin_dir / "gh").write_text(script)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


@pytest.mark.usefixtures("small_bounds", "gh_stand_in")
@pytest.mark.parametrize("spec", ["gh:owner/repo", "gh-release:owner/repo"])
def test_a_download_through_gh_stops_at_the_byte_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    from tether.sources import open_source

    monkeypatch.setenv("GH_HOSTILE", "endless")
    with pytest.raises(TetherError) as caught:
        open_source(spec, tmp_path / "cache").fetch("1.0.0")
    assert str(caught.value).endswith(
        ": wrote more than 262,144 bytes (TETHER_LIMIT_DOWNLOAD_BYTES sets it)"
    )
    assert listing(tmp_path / "cache") == []


@pytest.mark.usefixtures("small_bounds", "gh_stand_in")
def test_a_download_through_gh_stops_at_the_time_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.sources import open_source

    monkeypatch.setenv("GH_HOSTILE", "slow")
    started = time.monotonic()
    with pytest.raises(TetherError) as caught:
        open_source("gh:owner/repo", tmp_path / "cache").fetch("1.0.0")
    assert str(caught.value) == f"cannot download tag v1.0.0 of gh:owner/repo: {TIME_WORDS}"
    assert time.monotonic() - started < 2.5
