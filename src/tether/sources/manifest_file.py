"""A release's manifest file, read through the one safe reader (``fsio.read_regular``: a
FIFO, socket or device is refused unread, behind a link too) and parsed by
``model/manifest.py``, which reads nothing."""

from __future__ import annotations

from pathlib import Path

from tether.fsio import cannot_read, read_regular
from tether.model.manifest import Manifest, ManifestError, ManifestFormat, manifest_from_bytes
from tether.pathrules import NOTHING_RESERVED, ReservedPaths


def load_manifest(
    path: Path,
    fmt: ManifestFormat = ManifestFormat.NATIVE,
    reserved: ReservedPaths = NOTHING_RESERVED,
) -> Manifest:
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        raise ManifestError(f"{path}: manifest not found") from None
    except OSError as error:
        raise ManifestError(cannot_read(path, error, "manifest")) from None
    return manifest_from_bytes(raw, str(path), fmt, reserved)
