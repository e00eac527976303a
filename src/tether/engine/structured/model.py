"""Plain values shared by the structured-merge engine: rules, items, write operations, results.

Everything here is a frozen dataclass or a literal type so results can be compared in tests
and handed across layers without anyone mutating them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from tether.model.plan import SideProblem

Format = Literal["json", "yaml", "toml"]
Role = Literal["baseline", "latest", "current"]
ItemKind = Literal["key", "entry"]
MergeKind = Literal["value", "entries", "list", "tokens", "requirements"]
AddedPolicy = Literal["suggest", "apply"]

# Reasons an item carries. The first two are the suggestions of the verdict table; the last
# marks an item the verdict wanted to apply but no writer could edit without touching other
# lines or producing different data, so it is left alone and reported as a conflict.
REASON_ADDED: Final = "added"
REASON_REMOVED_THEN_CHANGED: Final = "removed-then-changed"
REASON_WRITE_UNSAFE: Final = "write-unsafe"

FORMATS: Final[tuple[Format, ...]] = ("json", "yaml", "toml")
MERGE_KINDS: Final[tuple[MergeKind, ...]] = ("value", "entries", "list", "tokens", "requirements")


class _Missing:
    """The "absent" value: distinct from ``None`` because ``null`` is a legitimate value."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Rule:
    """One managed part of a file.

    ``path`` walks mappings from the document root; a ``"*"`` segment stands for every key
    found at that level in the baseline or the latest file (never the adopter's own keys).
    """

    path: tuple[str, ...]
    merge: MergeKind
    by: str | None = None  # list: the member field that identifies a member
    fold: bool = False  # tokens: compare keys case-insensitively
    added: AddedPolicy = "suggest"  # what to do with an entry that only the latest has


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    format: Format | None = None
    preset: str | None = None


@dataclass(frozen=True)
class Item:
    """One verdict about one managed key or entry. Values are parsed data, or MISSING."""

    kind: ItemKind
    key: str
    section: str | None = None
    baseline: Any = MISSING
    latest: Any = MISSING
    adopter: Any = MISSING
    reason: str | None = None

    def sort_key(self) -> tuple[str, str]:
        # Python compares str by code point, which is the documented order.
        return (self.section or "", self.key)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.section is not None:
            out["section"] = self.section
        out["key"] = self.key
        for name in ("baseline", "latest", "adopter"):
            value = getattr(self, name)
            if value is not MISSING:
                out[name] = value
        if self.reason is not None:
            out["reason"] = self.reason
        return out


DataPath = tuple[str | int, ...]


@dataclass(frozen=True)
class SetValue:
    """Replace the value found at ``path`` (mapping keys and list indexes)."""

    path: DataPath
    value: Any


@dataclass(frozen=True)
class AddEntry:
    """Insert ``key: value`` into the mapping at ``path`` (the key is not there yet)."""

    path: DataPath
    key: str
    value: Any


@dataclass(frozen=True)
class AppendItem:
    """Append ``value`` to the list at ``path``."""

    path: DataPath
    value: Any


Op = SetValue | AddEntry | AppendItem


@dataclass(frozen=True)
class PlannedEdit:
    """A write operation and the applied items it carries out (several tokens share one)."""

    op: Op
    items: tuple[Item, ...]


@dataclass(frozen=True)
class StructuredMergeResult:
    path: str
    applied: tuple[Item, ...]
    conflicts: tuple[Item, ...]
    suggestions: tuple[Item, ...]
    new_text: bytes
    # The sides not read: every side that does not parse, or the first side too large (a
    # fact, worded by report/reasons.side_problems); the file is then left as it is.
    unread: tuple[SideProblem, ...] = ()
    # Conflicts settled toward the latest value (--auto theirs or take-theirs): written, like
    # applied.
    settled: tuple[Item, ...] = ()

    @property
    def error_role(self) -> Role | None:
        """The first side not read, None when every side was."""
        return self.unread[0].role if self.unread else None  # type: ignore[return-value]

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    @property
    def counts(self) -> tuple[int, int, int]:
        return (len(self.applied), len(self.conflicts), len(self.suggestions))

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        doc = {
            "applied": [item.to_json() for item in self.applied],
            "conflicts": [item.to_json() for item in self.conflicts],
            "suggestions": [item.to_json() for item in self.suggestions],
        }
        if self.settled:
            doc["settled"] = [item.to_json() for item in self.settled]
        return doc
