"""The set of lifecycle declarations a release or a profile makes (docs/lifecycle.md), and
the names of their kinds. The declarations themselves and their parser are in
``model.lifecycle_declarations``, loaded only for a manifest or profile that declares any:
most releases declare none, and ``status`` and ``check`` should not pay for building those
types on every run (docs/performance.md, "Small projects").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

    from tether.model.lifecycle_declarations import (
        Migration,
        Notice,
        OwnershipRule,
        PostUpdateWrite,
        TemplateFile,
        TrailerCheck,
    )

LIFECYCLE_KEYS = (
    "migrations",
    "ownership",
    "templates",
    "notices",
    "post_update",
    "trailer_invalidations",
)

# A migration that ended so leaves an action item a person must settle (update, status,
# check, migrations --rerun).
BLOCKING = ("conflict", "error", "refused")


def declares_any(data: dict[str, Any]) -> bool:
    """Whether a manifest's (or ``tether.toml``'s) keys hold any lifecycle declaration."""
    return any(key in data for key in LIFECYCLE_KEYS)


def blocking_items(migrations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The action items of migration results (their JSON form): one per migration that
    ended blocking, never for a dry run's."""
    return [
        {
            "kind": "migration",
            "id": m["id"],
            "status": m["status"],
            "command": m["command"],
            "reason": m["reason"],
            "stderr": m["stderr"],
            **({"why": m["why"]} if "why" in m else {}),  # worded by report/
        }
        for m in migrations
        if m["status"] in BLOCKING and not m.get("dry_run")
    ]


@valueclass(frozen=True)
class Lifecycle:
    """What a release or a profile declares besides its files, kind by kind (empty: none)."""

    migrations: tuple[Migration, ...] = ()
    ownership: tuple[OwnershipRule, ...] = ()
    templates: tuple[TemplateFile, ...] = ()
    notices: tuple[Notice, ...] = ()
    post_update: tuple[PostUpdateWrite, ...] = ()
    trailer_invalidations: tuple[TrailerCheck, ...] = ()

    def __bool__(self) -> bool:
        return bool(
            self.migrations
            or self.ownership
            or self.templates
            or self.notices
            or self.post_update
            or self.trailer_invalidations
        )

    def joined(self, other: Lifecycle) -> Lifecycle:
        """This lifecycle's declarations, then ``other``'s (a profile's, then a release's);
        a migration id or notice id declared by both is taken once, from the first."""
        ids = {m.id for m in self.migrations}
        notice_ids = {n.id for n in self.notices}
        return Lifecycle(
            self.migrations + tuple(m for m in other.migrations if m.id not in ids),
            self.ownership + other.ownership,
            self.templates + other.templates,
            self.notices + tuple(n for n in other.notices if n.id not in notice_ids),
            self.post_update + other.post_update,
            self.trailer_invalidations + other.trailer_invalidations,
        )

    def to_json(self) -> dict[str, Any]:
        """Only the kinds declared, in a fixed order (the manifest's bytes stay stable)."""
        doc: dict[str, Any] = {}
        for key in LIFECYCLE_KEYS:
            entries = getattr(self, key)
            if entries:
                doc[key] = [entry.to_json() for entry in entries]
        return doc
