"""Two copies of one structured file compared on their managed keys: what ``tether diff``
lists beside the text diff of a file that has a merge rule.

The keys and entries are the ones the merge visits (same rules, same reading of each side,
same equality), except that both sides' keys count here: an entry the adopter added to a
managed section is a change to that section even though a merge never touches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tether.engine.structured.formats import ParseProblem, decode, format_for_path, parse
from tether.engine.structured.model import MISSING, ItemKind, RuleSet
from tether.engine.structured.values import same
from tether.engine.structured.verdict import _item, _read, expand
from tether.model.plan import SideFault, SideProblem

ChangeKind = Literal["changed", "added", "removed"]


@dataclass(frozen=True)
class ManagedChange:
    """One managed key or entry whose value differs; a value is MISSING on the side that
    lacks it."""

    change: ChangeKind
    kind: ItemKind
    key: str
    section: str | None
    baseline: Any
    current: Any

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"change": self.change, "kind": self.kind}
        if self.section is not None:
            out["section"] = self.section
        out["key"] = self.key
        for name in ("baseline", "current"):
            value = getattr(self, name)
            if value is not MISSING:
                out[name] = value
        return out


@dataclass(frozen=True)
class ManagedChanges:
    changes: tuple[ManagedChange, ...]
    # The sides that do not parse (then nothing was compared); worded by report/
    unread: tuple[SideProblem, ...] = ()


def managed_changes(path: str, rules: RuleSet, baseline: bytes, current: bytes) -> ManagedChanges:
    """The managed keys and entries whose values differ between ``baseline`` and
    ``current``, sorted by section then key. A side that does not parse is reported on
    ``unread``, not raised; a rule set with no format for a path that names none raises
    ValueError, as the merge does (``rules_for`` always gives one)."""
    fmt = rules.format or format_for_path(path)
    if fmt is None:
        raise ValueError(f"{path}: cannot tell the format of a structured file")
    datas: list[dict[str, Any]] = []
    problems: list[SideProblem] = []
    for side, data in (("baseline", baseline), ("current", current)):
        try:
            datas.append(parse(fmt, decode(data).body))
        except ParseProblem as problem:
            problems.append(SideProblem(side, SideFault.NOT_PARSED, str(problem)))
    if problems:
        return ManagedChanges((), tuple(problems))
    return ManagedChanges(_compare(rules, datas[0], datas[1]))


def _compare(rules: RuleSet, base: Any, current: Any) -> tuple[ManagedChange, ...]:
    found: dict[tuple[str, str], ManagedChange] = {}
    for rule in rules.rules:
        for path in expand(rule.path, base, current):
            before, after = _read(rule, path, base), _read(rule, path, current)
            for key in dict.fromkeys([*before.entries, *after.entries]):
                old, new = before.entries.get(key), after.entries.get(key)
                if old is not None and new is not None and same(old.compare, new.compare):
                    continue
                item = _item(rule, path, key, old, None, new)
                change: ChangeKind = (
                    "added" if old is None else "removed" if new is None else "changed"
                )
                found.setdefault(
                    (item.section or "", item.key),
                    ManagedChange(
                        change, item.kind, item.key, item.section, item.baseline, item.adopter
                    ),
                )
    return tuple(found[key] for key in sorted(found))
