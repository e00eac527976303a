"""HTTP GET for release downloads and registry documents: every network read tether makes
goes through ``read_url`` (into memory) or ``download_url`` (streamed to a file), both
bounded in total time and total bytes (``sources.limits``).

A per-read socket timeout alone bounds nothing: a server sending one byte every few seconds
never trips it, and an answer that never ends fills the disk or the memory. So the total
time of a request (connecting, the headers, the body) has a deadline that every read of
the connection's socket checks, and waits no longer than, and the body's bytes are counted
as they arrive (an announced ``Content-Length`` over the bound is refused before reading).
"""

from __future__ import annotations

import functools
import http.client
import io
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from tether import progress
from tether.sources import limits
from tether.sources.limits import shown_bytes

CHUNK = 1 << 20


@dataclass(frozen=True)
class ReadBounds:
    """The bounds of one request: ``seconds`` in all, ``max_bytes`` of body, and no single
    wait on the socket longer than ``read_timeout`` (a host that stops answering fails
    early). ``settings`` name the variables that change the first two, for messages."""

    seconds: float
    max_bytes: int
    read_timeout: float
    seconds_setting: str = ""
    bytes_setting: str = ""


class BoundExceeded(Exception):
    """A read passed one of its bounds; the message says which, in words for a person."""


def _too_slow(bounds: ReadBounds) -> BoundExceeded:
    how = f" ({bounds.seconds_setting} sets it)" if bounds.seconds_setting else ""
    return BoundExceeded(f"took longer than {bounds.seconds:g} s{how}")


def _too_large(bounds: ReadBounds) -> BoundExceeded:
    how = f" ({bounds.bytes_setting} sets it)" if bounds.bytes_setting else ""
    return BoundExceeded(f"the answer is larger than {shown_bytes(bounds.max_bytes)}{how}")


class _Deadline:
    def __init__(self, bounds: ReadBounds) -> None:
        self.bounds = bounds
        self.at = time.monotonic() + bounds.seconds

    def wait(self) -> float:
        """How long the next socket operation may wait; BoundExceeded once time is up."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise _too_slow(self.bounds)
        return min(self.bounds.read_timeout, left)


class _DeadlineReader(io.RawIOBase):
    """The socket's reads for ``http.client``, each waiting at most what the deadline leaves."""

    def __init__(self, sock: Any, deadline: _Deadline) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(self._deadline.wait())
        try:
            count: int = self._raw.readinto(buffer)
        except TimeoutError:
            self._deadline.wait()  # time is up: say so, not "timed out"
            raise
        return count

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """A connected socket whose files (the answer ``http.client`` reads) obey the deadline."""

    def __init__(self, sock: Any, deadline: _Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = self._deadline.wait()
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = self._deadline.wait()
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_HTTPConnection, deadline=self._deadline)
        return self.do_open(connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = functools.partial(_HTTPSConnection, deadline=self._deadline)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


class _Answer:
    """An answer being read: its announced size and its body as it arrives."""

    def __init__(self, response: http.client.HTTPResponse, bounds: ReadBounds) -> None:
        self._response = response
        self._bounds = bounds
        length = response.headers.get("Content-Length", "")
        self.size = int(length) if length.isdigit() else None
        if self.size is not None and self.size > bounds.max_bytes:
            raise _too_large(bounds)

    def chunks(self) -> Iterator[bytes]:
        received = 0
        while chunk := self._response.read1(CHUNK):
            received += len(chunk)
            if received > self._bounds.max_bytes:
                raise _too_large(self._bounds)
            yield chunk
        if self.size is not None and received < self.size:
            raise ConnectionError(f"the answer ended after {received:,} of {self.size:,} bytes")


@contextmanager
def _answer(request: urllib.request.Request, bounds: ReadBounds) -> Iterator[_Answer]:
    """The answer to ``request``. The opener is built for this request, so the proxy
    variables (and the hosts they exempt) are read from the environment now: ``urlopen``'s
    own opener reads them once per process, and a process that runs tether many times (an
    agent using it as a library) would keep the proxies of its first download. HTTP errors
    are raised as ``urllib`` raises them; a passed bound as ``BoundExceeded``."""
    deadline = _Deadline(bounds)
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
    with opener.open(request, timeout=deadline.wait()) as response:
        yield _Answer(response, bounds)


def answer_bounds(read_timeout: float) -> ReadBounds:
    """The bounds of a registry answer, read into memory (docs/security.md, "Bounded
    inputs"); ``read_timeout`` is the caller's per-read wait."""
    return ReadBounds(
        seconds=limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        max_bytes=limits.byte_limit(limits.ANSWER_BYTES, limits.DEFAULT_ANSWER_BYTES),
        read_timeout=read_timeout,
        seconds_setting=limits.NETWORK_SECONDS,
        bytes_setting=limits.ANSWER_BYTES,
    )


def download_bounds(read_timeout: float) -> ReadBounds:
    """The bounds of a release download, streamed to disk (docs/security.md)."""
    return ReadBounds(
        seconds=limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS),
        max_bytes=limits.byte_limit(limits.DOWNLOAD_BYTES, limits.DEFAULT_DOWNLOAD_BYTES),
        read_timeout=read_timeout,
        seconds_setting=limits.NETWORK_SECONDS,
        bytes_setting=limits.DOWNLOAD_BYTES,
    )


def read_url(request: urllib.request.Request, bounds: ReadBounds) -> bytes:
    """The whole answer to ``request``, within ``bounds``."""
    with _answer(request, bounds) as answer:
        return b"".join(answer.chunks())


def download_url(request: urllib.request.Request, out: BinaryIO, bounds: ReadBounds) -> None:
    """Write the answer to ``request`` into ``out`` as it arrives, within ``bounds`` (a
    ``downloading`` progress phase in bytes): nothing past the byte bound reaches the file."""
    with (
        _answer(request, bounds) as answer,
        progress.phase("downloading", answer.size, unit="bytes") as step,
    ):
        for chunk in answer.chunks():
            out.write(chunk)
            step.advance(len(chunk))
