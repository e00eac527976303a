"""The keyed three-way verdict: which managed keys and entries to apply, flag or suggest.

For every rule, entries are read from the baseline (B), latest (L) and adopter (A) data and
only keys(B) ∪ keys(L) are visited, so an adopter-only key is never looked at:

    in B and L, B == L              no-op
    in B and L, A == B              apply L
    in B and L, A == L              no-op (already at the latest value)
    in B and L, A differs from both conflict, A kept
    in B and L, A lacks it          suggestion "removed-then-changed" (never re-added)
    only in L, A == L               no-op
    only in L                       suggestion "added"; with ``added: apply`` it is applied
                                    when A lacks it, a conflict when A has another value
    only in B                       no-op

``added: apply`` adds to the adopter's container (a list, a mapping); when the adopter has
none, it is created only if the baseline had none either (the adopter's file predates the
section: GAIA's roster reaching a file from before it had one). A container the baseline had
and the adopter lacks was removed by the adopter: its entries stay suggestions.

With ``settle="latest"`` (``--auto theirs`` or ``take-theirs``) a conflict is settled toward
the latest value: written like an applied item and reported as ``settled``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tether.engine.structured.model import (
    MISSING,
    REASON_ADDED,
    REASON_REMOVED_THEN_CHANGED,
    AddEntry,
    AppendItem,
    Item,
    Op,
    PlannedEdit,
    Rule,
    RuleSet,
    SetValue,
)
from tether.engine.structured.values import get_path, same

Verdict = Literal["noop", "apply", "conflict", "added", "removed-then-changed"]
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Entry:
    value: Any  # what the report shows
    compare: Any  # what equality is decided on
    raw: Any  # what gets written when this side's value is applied
    index: int = -1  # position in the list (list, requirements) or string (tokens)
    display: str = ""  # the key as this side spells it


@dataclass(frozen=True)
class Side:
    container: bool  # the rule's container exists with the right type
    entries: dict[str, Entry] = field(default_factory=dict)


@dataclass
class Verdicts:
    applied: list[Item] = field(default_factory=list)
    conflicts: list[Item] = field(default_factory=list)
    suggestions: list[Item] = field(default_factory=list)
    settled: list[Item] = field(default_factory=list)  # conflicts written toward latest
    edits: list[PlannedEdit] = field(default_factory=list)


def decide_key(
    base: Entry | None,
    latest: Entry | None,
    adopter: Entry | None,
    rule: Rule,
    container: bool,
    base_container: bool = True,
) -> Verdict:
    """The verdict for one key or entry: the table at the top of this module, row by row.
    ``container``: the adopter has the rule's container; ``base_container``: the baseline
    had it (an ``added: apply`` entry creates it only when neither had it)."""
    if base is not None and latest is not None:
        if same(base.compare, latest.compare):
            return "noop"
        if adopter is None:
            return "removed-then-changed"
        if same(adopter.compare, base.compare):
            return "apply"
        if same(adopter.compare, latest.compare):
            return "noop"
        return "conflict"
    if latest is None:
        return "noop"
    if adopter is not None and same(adopter.compare, latest.compare):
        return "noop"
    if rule.added == "apply":
        if adopter is not None:
            return "conflict"  # the adopter has its own value under that key: keep it
        if container or not base_container:
            return "apply"
    # The adopter removed the section the baseline had: never recreate it, only suggest.
    return "added"


def compute(
    rules: RuleSet, base: Any, latest: Any, adopter: Any, settle: str | None = None
) -> Verdicts:
    """Verdicts for every managed key; ``settle="latest"`` writes conflicts toward L."""
    verdicts = Verdicts()
    for rule in rules.rules:
        for path in expand(rule.path, base, latest):
            _judge_path(rule, path, (base, latest, adopter), verdicts, settle)
    return verdicts


def expand(pattern: tuple[str, ...], base: Any, latest: Any) -> list[tuple[str, ...]]:
    """Concrete paths for a pattern; ``*`` takes the keys present in B or L at that level."""
    paths: list[tuple[str, ...]] = [()]
    for segment in pattern:
        if segment != "*":
            paths = [(*path, segment) for path in paths]
            continue
        expanded: list[tuple[str, ...]] = []
        for path in paths:
            keys: dict[str, None] = {}
            for data in (base, latest):
                found = get_path(data, path)
                if isinstance(found, dict):
                    keys.update(dict.fromkeys(found))
            expanded += [(*path, key) for key in keys]
        paths = expanded
    return paths


def _judge_path(
    rule: Rule,
    path: tuple[str, ...],
    datas: tuple[Any, Any, Any],
    verdicts: Verdicts,
    settle: str | None = None,
) -> None:
    base, latest, adopter = (_read(rule, path, data) for data in datas)
    keys = dict.fromkeys([*base.entries, *latest.entries])
    token_changes: list[tuple[Item, Entry, Entry | None]] = []
    created: list[tuple[Item, Entry]] = []  # entries of a container the adopter lacks
    for key in keys:
        b, new, a = base.entries.get(key), latest.entries.get(key), adopter.entries.get(key)
        verdict = decide_key(b, new, a, rule, adopter.container, base.container)
        if verdict == "noop":
            continue
        item = _item(rule, path, key, b, new, a)
        if verdict == "conflict" and settle != "latest":
            verdicts.conflicts.append(item)
        elif verdict in ("added", "removed-then-changed"):
            reason = REASON_ADDED if verdict == "added" else REASON_REMOVED_THEN_CHANGED
            verdicts.suggestions.append(_with_reason(item, reason))
        else:
            assert new is not None  # "apply" and "conflict" always have a latest entry
            (verdicts.settled if verdict == "conflict" else verdicts.applied).append(item)
            if rule.merge == "tokens":
                token_changes.append((item, new, a))
            elif not adopter.container and rule.merge in ("list", "entries"):
                created.append((item, new))
            else:
                verdicts.edits.append(PlannedEdit(_op(rule, path, key, new, a), (item,)))
    if created:
        verdicts.edits.append(_create_container(rule, path, created))
    if token_changes:
        current = get_path(datas[2], path)
        new_text = edit_tokens(current, token_changes, rule.fold)
        items = tuple(item for item, _, _ in token_changes)
        verdicts.edits.append(PlannedEdit(SetValue(path, new_text), items))


def _with_reason(item: Item, reason: str) -> Item:
    return replace(item, reason=reason)


def _item(
    rule: Rule,
    path: tuple[str, ...],
    key: str,
    base: Entry | None,
    latest: Entry | None,
    adopter: Entry | None,
) -> Item:
    if rule.merge == "value":
        section = ".".join(path[:-1]) or None
        kind: Literal["key", "entry"] = "key"
    else:
        section = ".".join(path)
        kind = "entry"
    if rule.merge == "tokens":
        # Show the login as the latest release spells it, else as the baseline did.
        key = (latest or base or adopter or Entry(None, None, None, display=key)).display
    return Item(
        kind=kind,
        key=key,
        section=section,
        baseline=base.value if base is not None else MISSING,
        latest=latest.value if latest is not None else MISSING,
        adopter=adopter.value if adopter is not None else MISSING,
    )


def _create_container(
    rule: Rule, path: tuple[str, ...], created: list[tuple[Item, Entry]]
) -> PlannedEdit:
    """One edit adding the whole container, holding every new entry in the latest order."""
    value: Any
    if rule.merge == "list":
        value = [entry.raw for _, entry in created]
    else:
        value = {entry.display: entry.raw for _, entry in created}
    items = tuple(item for item, _ in created)
    return PlannedEdit(AddEntry(path[:-1], path[-1], value), items)


def _op(rule: Rule, path: tuple[str, ...], key: str, latest: Entry, adopter: Entry | None) -> Op:
    if rule.merge == "value":
        if adopter is not None:
            return SetValue(path, latest.raw)
        return AddEntry(path[:-1], path[-1], latest.raw)
    if rule.merge == "entries":
        if adopter is not None:
            return SetValue((*path, key), latest.raw)
        return AddEntry(path, key, latest.raw)
    # list and requirements: members are addressed by their position in the adopter's list
    if adopter is not None:
        return SetValue((*path, adopter.index), latest.raw)
    return AppendItem(path, latest.raw)


# ---------------------------------------------------------------------------------------
# Reading one side


def _read(rule: Rule, path: tuple[str, ...], data: Any) -> Side:
    if rule.merge == "value":
        parent = get_path(data, path[:-1])
        if not isinstance(parent, dict):
            return Side(False)
        if path[-1] not in parent:
            return Side(True)
        value = parent[path[-1]]
        return Side(True, {path[-1]: Entry(value, value, value, display=path[-1])})
    found = get_path(data, path)
    if rule.merge == "entries":
        if not isinstance(found, dict):
            return Side(False)
        return Side(True, {k: Entry(v, v, v, display=k) for k, v in found.items()})
    if rule.merge == "list":
        return _read_list(found, rule.by or "name")
    if rule.merge == "tokens":
        if not isinstance(found, str):
            return Side(False)
        return Side(True, {key: entry for key, entry in _tokens(found, rule.fold)})
    return _read_requirements(found)


def _read_list(found: Any, by: str) -> Side:
    """Members keyed by ``by`` (exact match, first wins); malformed members are skipped."""
    if not isinstance(found, list):
        return Side(False)
    entries: dict[str, Entry] = {}
    for index, member in enumerate(found):
        if not isinstance(member, dict):
            continue
        name = member.get(by)
        if isinstance(name, str) and name not in entries:
            rest = {k: v for k, v in member.items() if k != by}
            entries[name] = Entry(rest, rest, member, index, name)
    return Side(True, entries)


def _tokens(text: str, fold: bool) -> Iterator[tuple[str, Entry]]:
    """``login=mode`` tokens; ones without a login or a mode are ignored; first wins."""
    seen: set[str] = set()
    for match in _TOKEN.finditer(text):
        token = match.group()
        equals = token.find("=")
        if equals <= 0 or equals == len(token) - 1:
            continue
        login, mode = token[:equals], token[equals + 1 :]
        key = login.lower() if fold else login
        if key in seen:
            continue
        seen.add(key)
        yield key, Entry(mode, mode, mode, match.start(), login)


def edit_tokens(text: str, changes: list[tuple[Item, Entry, Entry | None]], fold: bool) -> str:
    """``text`` with each changed login's ``=mode`` rewritten in place; new logins appended."""
    by_key = {
        (latest.display.lower() if fold else latest.display): (latest, adopter)
        for _, latest, adopter in changes
    }
    pieces: list[str] = []
    cursor = 0
    for key, entry in _tokens(text, fold):
        if key not in by_key or by_key[key][1] is None:
            continue
        mode_start = entry.index + len(entry.display) + 1
        pieces += [text[cursor:mode_start], by_key[key][0].raw]
        cursor = mode_start + len(entry.raw)
    pieces.append(text[cursor:])
    result = "".join(pieces)
    for latest, adopter in by_key.values():
        if adopter is None:
            separator = "" if not result or result[-1].isspace() else " "
            result += f"{separator}{latest.display}={latest.raw}"
    return result


def _read_requirements(found: Any) -> Side:
    """PEP 508 strings keyed by their PEP 503 normalised name; unparsable ones skipped."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    if not isinstance(found, list):
        return Side(False)
    entries: dict[str, Entry] = {}
    for index, text in enumerate(found):
        if not isinstance(text, str):
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(requirement.name)
        if name in entries:
            continue
        # Compare meaning, not spelling: "Foo >= 1.0" and "foo>=1" are the same pin
        # (SpecifierSet equality canonicalises versions and ignores order).
        extras = tuple(sorted(canonicalize_name(extra) for extra in requirement.extras))
        marker = str(requirement.marker) if requirement.marker is not None else ""
        compare = (name, extras, requirement.specifier, requirement.url or "", marker)
        entries[name] = Entry(text, compare, text, index, name)
    return Side(True, entries)
