"""What ``deps --timeout`` and ``--retries`` do, as docs/deps.md states it: ``--timeout`` is
the longest wait for one step of a request (connecting, one read), not a bound on the whole
answer, which the total time of one network read bounds; a value that is no wait, or a
number of retries outside 0 to 10, is a usage error before any registry is asked; the waits
between tries double and stop growing at 30 s. The registry is a real HTTP server on
127.0.0.1 (``fixtures.deps.loopback``, or one that trickles its answer)."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.registries import MAX_BACKOFF, FetchError, HttpClient, NpmRegistry
from tether.sources import limits

PACKUMENT = (
    b'{"name": "x", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {}},'
    b' "time": {"1.0.0": "2020-01-01T00:00:00.000Z"}}'
)


@pytest.fixture
def trickling() -> Iterator[str]:
    """A registry answering ``PACKUMENT`` in 20 pieces, 100 ms apart (2 s in all)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(PACKUMENT)))
            self.end_headers()
            step = -(-len(PACKUMENT) // 20)
            with contextlib.suppress(OSError):  # the client gave up: the bound test
                for start in range(0, len(PACKUMENT), step):
                    self.wfile.write(PACKUMENT[start : start + step])
                    self.wfile.flush()
                    time.sleep(0.1)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_timeout_bounds_each_wait_not_the_whole_answer(trickling: str) -> None:
    """An answer that takes 2 s, no step of which waits anywhere near 1 s, is read whole."""
    client = HttpClient(timeout=1.0, retries=0, sleep=lambda s: None)
    started = time.monotonic()
    info = NpmRegistry(trickling, client).fetch("x")
    assert info is not None and info.latest == "1.0.0"
    assert time.monotonic() - started > 1.0  # longer than --timeout, and not cut short


def test_the_whole_answer_is_bounded_by_the_network_time_and_not_retried(
    trickling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(limits.NETWORK_SECONDS, "0.3")
    tries: list[float] = []
    client = HttpClient(timeout=5, retries=3, sleep=tries.append)
    with pytest.raises(FetchError, match=r"took longer than 0\.3 s"):
        NpmRegistry(trickling, client).fetch("x")
    assert tries == []  # asked once: asking again would take as long again


def test_the_waits_between_tries_double_and_stop_growing() -> None:
    waited: list[float] = []
    client = HttpClient(timeout=0.5, retries=9, sleep=waited.append)
    with pytest.raises(FetchError):
        NpmRegistry("http://127.0.0.1:9", client).fetch("x")  # nothing listens on port 9
    assert waited == [0.5, 1, 2, 4, 8, 16, MAX_BACKOFF, MAX_BACKOFF, MAX_BACKOFF]


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--timeout", "-1", "--timeout must be a number of seconds above 0, not -1"),
        ("--timeout", "0", "--timeout must be a number of seconds above 0, not 0"),
        ("--timeout", "nan", "--timeout must be a number of seconds above 0, not nan"),
        ("--timeout", "inf", "--timeout must be a number of seconds above 0, not inf"),
        ("--retries", "-1", "--retries must be between 0 and 10, not -1"),
        ("--retries", "100000", "--retries must be between 0 and 10, not 100000"),
    ],
)
@pytest.mark.parametrize("action", ["scan", "plan"])
def test_a_timeout_or_retries_that_make_no_sense_are_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str, flag: str, value: str, words: str
) -> None:
    setup_cli(monkeypatch, tmp_path)
    root = project(tmp_path / "p", {"package.json": {"dependencies": {"alpha": "^1.0.0"}}})
    before = (root / "package.json").read_bytes()
    reg = registry_file(tmp_path / "projects.json", {"p": root})
    with LoopbackRegistry() as registry:
        code, out, err = run_cli(
            "deps", action, "--level", "minor", "--registry", str(reg),
            "--npm-registry", registry.url, f"{flag}={value}",
        )  # fmt: skip
        asked = sum(registry.counts.values())
    assert (code, out, err) == (2, "", f"tether: {words}\n")
    assert asked == 0
    assert (root / "package.json").read_bytes() == before
