"""Published ``.sha256`` files beside release tarballs: write the line, read it back, and
check a tarball against it. Shared by ``release pack`` and the tarball sources."""

from __future__ import annotations

import re
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import cannot_read, read_regular, sha256_file

_HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
_BSD_LINE = re.compile(r"^SHA256 ?\((?P<name>.+)\) ?= ?(?P<digest>[0-9a-fA-F]{64})$")


def checksum_line(digest: str, filename: str) -> str:
    """One line in the format ``sha256sum`` writes and ``sha256sum -c`` reads."""
    return f"{digest}  {filename}\n"


def _checksum_rows(text: str) -> list[tuple[str, str]] | None:
    rows: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        bsd = _BSD_LINE.match(line)
        if bsd:
            rows.append((bsd.group("digest").lower(), bsd.group("name")))
            continue
        digest, _, name = line.partition(" ")
        if not _HEX_DIGEST.fullmatch(digest):
            return None
        rows.append((digest.lower(), name.strip().lstrip("*")))
    return rows


def expected_digest(text: str, filename: str) -> str | None:
    """The sha256 a checksum file gives for ``filename``; None when it gives none.

    Accepts ``<hex>  <name>`` (text or ``*``binary mode), a bare ``<hex>``, and the BSD
    ``SHA256 (<name>) = <hex>``. A file with a single digest vouches for the tarball beside
    it whatever name it records: tarballs get renamed on download.
    """
    rows = _checksum_rows(text)
    if not rows:
        return None
    named = [digest for digest, name in rows if name.rsplit("/", 1)[-1] == filename]
    if named:
        return named[0]
    return rows[0][0] if len(rows) == 1 else None


def verify_tarball_checksum(tarball: Path) -> bool | None:
    """Check ``tarball`` against ``<tarball>.sha256`` beside it.

    None when there is no such file, False when it does not vouch for these bytes
    (mismatch, or a checksum file that names no digest for it), True when it matches.
    """
    side = tarball.with_name(tarball.name + ".sha256")
    try:
        text = read_regular(side).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(side, error)) from None
    expected = expected_digest(text, tarball.name)
    return expected is not None and expected == sha256_file(tarball)
