"""Edit a TOML document through tomlkit, which round-trips TOML byte for byte."""

from __future__ import annotations

from typing import Any

from tether.engine.structured.model import AddEntry, AppendItem, Op, SetValue
from tether.engine.structured.textspan import Rewrite
from tether.engine.structured.values import plain, same


def rewrites(text: str, op: Op) -> list[Rewrite]:
    import tomlkit
    from tomlkit.items import AoT

    document = tomlkit.parse(text)
    path = op.path[:-1] if isinstance(op, SetValue) else op.path
    container: Any = document
    for segment in path:
        container = _child(container, segment)
        if container is None:
            return []
    if isinstance(op, SetValue):
        if not op.path:
            return []
        last = op.path[-1]
        old = _child(container, last)
        if old is None:
            return []
        old_lines = _line_count(old)
        if isinstance(old, dict) and isinstance(op.value, dict):
            _update_table(old, op.value)  # key by key: comments on unchanged keys stay
        else:
            container[last] = _toml_value(op.value, old)
        return [Rewrite(document.as_string(), None, old_lines)]
    if isinstance(op, AddEntry) and _is_table(container):
        container[op.key] = _toml_value(op.value, None)
        return [Rewrite(document.as_string(), None, 1)]
    if isinstance(op, AppendItem) and isinstance(container, list):
        item = op.value
        if isinstance(item, dict) and not isinstance(container, AoT):
            item = _inline_table(item)  # an array holds inline tables, spaced like tomlkit's
        container.append(_toml_value(item, None))
        # An inline array grows on its own line; a multi-line one gains a line.
        return [Rewrite(document.as_string(), None, 1)]
    return []


def _update_table(old: Any, new: dict[str, Any]) -> None:
    for key in [key for key in old if key not in new]:
        del old[key]
    for key, value in new.items():
        current = old.get(key)
        if key in old and same(plain(current), value):
            continue
        if isinstance(current, dict) and isinstance(value, dict):
            _update_table(current, value)
        else:
            old[key] = _toml_value(value, current)


def _inline_table(value: dict[str, Any]) -> Any:
    import tomlkit

    table = tomlkit.inline_table()
    table.update(value)
    return table


def _is_table(node: Any) -> bool:
    return isinstance(node, dict)


def _child(node: Any, segment: str | int) -> Any:
    if isinstance(segment, int):
        return node[segment] if isinstance(node, list) and 0 <= segment < len(node) else None
    if isinstance(node, dict) and segment in node:
        return node[segment]
    return None


def _line_count(item: Any) -> int:
    as_string = getattr(item, "as_string", None)
    if not callable(as_string):
        return 1
    return str(as_string()).strip("\n").count("\n") + 1


def _toml_value(value: Any, old: Any) -> Any:
    """New values keep the old string's literal quoting and the old table's inline form."""
    import tomlkit
    from tomlkit.items import InlineTable, String, StringType

    if isinstance(value, str) and isinstance(old, String):
        literal = old.type in (StringType.SLL, StringType.MLL)
        if literal and "'" not in value and "\n" not in value:
            return tomlkit.string(value, literal=True)
        return value
    if isinstance(value, dict) and isinstance(old, InlineTable):
        return _inline_table(value)
    return value
