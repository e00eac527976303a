"""What the JSON documents tether defines have in common: a schema version, first.

Each document's schema is in ``schemas/`` (docs/cli.md, "JSON documents"). The documents a
specification fixes (GAIA's merge reports and region oracle) keep that shape instead and
carry no version.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

# Bumped when a document changes incompatibly (a key renamed, removed or retyped).
SCHEMA_VERSION = 1


def versioned(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document with ``schema_version`` as its first key."""
    return {"schema_version": SCHEMA_VERSION, **document}
