"""HTTP GET for release downloads and registry documents."""

from __future__ import annotations

import urllib.request
from http.client import HTTPResponse


def open_url(request: urllib.request.Request, timeout: float) -> HTTPResponse:
    """``urlopen`` with an opener built for this request: the proxy variables (and the hosts
    they exempt) are read from the environment now. ``urlopen``'s own opener reads them once
    per process, so a process that runs tether many times (an agent using it as a library)
    would keep the proxies of its first download."""
    response: HTTPResponse = urllib.request.build_opener().open(request, timeout=timeout)
    return response
