"""Comparing and normalising parsed values, whatever parser produced them."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from typing import Any

from tether.engine.structured.model import (
    MISSING,
    AddEntry,
    AppendItem,
    DataPath,
    Op,
    SetValue,
)


def same(left: Any, right: Any) -> bool:
    """Equality of parsed data: mapping key order ignored, list order kept.

    Stricter than ``==`` where that would lie: ``True == 1`` in Python but not in JSON/YAML.
    """
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        if left.keys() != right.keys():
            return False
        return all(same(left[key], right[key]) for key in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, Mapping | list | tuple) or isinstance(right, Mapping | list | tuple):
        return False
    if isinstance(left, str) != isinstance(right, str):
        return False
    return bool(left == right)


def key_text(key: Any) -> str:
    """A mapping key as text. YAML allows ``1:`` or ``true:`` keys; rules address keys by text."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def plain(value: Any) -> Any:
    """Round-trip parser objects (ruamel, tomlkit) as plain JSON-shaped Python values."""
    if isinstance(value, bool):
        return bool(value)
    # ruamel keeps anchored booleans as an int subclass; the class name avoids importing ruamel.
    if type(value).__name__ == "ScalarBoolean":
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if value is None:
        return None
    if isinstance(value, datetime.date | datetime.time):
        # Dates must survive a JSON report; ISO text is what the file said, near enough.
        return value.isoformat()
    if isinstance(value, Mapping):
        return {key_text(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    unwrap = getattr(value, "unwrap", None)
    if callable(unwrap):
        return plain(unwrap())
    inner = getattr(value, "value", MISSING)  # ruamel TaggedScalar and friends
    if inner is not MISSING and inner is not value:
        return plain(inner)
    return str(value)


def get_path(data: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` following mapping keys, or MISSING."""
    node = data
    for segment in path:
        if not isinstance(node, Mapping) or segment not in node:
            return MISSING
        node = node[segment]
    return node


def _walk(data: Any, path: DataPath) -> Any:
    node = data
    for segment in path:
        if isinstance(segment, int):
            if not isinstance(node, list) or not 0 <= segment < len(node):
                return MISSING
        elif not isinstance(node, dict) or segment not in node:
            return MISSING
        node = node[segment]
    return node


def apply_op(data: Any, op: Op) -> Any:
    """``data`` with ``op`` carried out, as a new value; MISSING when the op does not fit.

    This is the expected result every text writer is checked against.
    """
    result = copy.deepcopy(data)
    if isinstance(op, SetValue):
        if not op.path:
            return copy.deepcopy(op.value)
        parent = _walk(result, op.path[:-1])
        last = op.path[-1]
        if isinstance(last, int):
            if not isinstance(parent, list) or not 0 <= last < len(parent):
                return MISSING
        elif not isinstance(parent, dict) or last not in parent:
            return MISSING
        parent[last] = copy.deepcopy(op.value)
        return result
    container = _walk(result, op.path)
    if isinstance(op, AddEntry):
        if not isinstance(container, dict) or op.key in container:
            return MISSING
        container[op.key] = copy.deepcopy(op.value)
        return result
    if isinstance(op, AppendItem) and isinstance(container, list):
        container.append(copy.deepcopy(op.value))
        return result
    return MISSING
