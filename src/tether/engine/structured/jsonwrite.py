"""Edit a JSON document by splicing value text into the original, nothing else re-rendered."""

from __future__ import annotations

import json
from typing import Any

from tether.engine.structured.jsonspan import Node, locate
from tether.engine.structured.model import AddEntry, AppendItem, DataPath, Op, SetValue
from tether.engine.structured.textspan import (
    Rewrite,
    indentation,
    newline_of,
    splice,
    starts_line,
)


def rewrites(text: str, op: Op) -> list[Rewrite]:
    root = locate(text)
    target = _find(root, op.path)
    if target is None:
        return []
    style = _Style(text, root)
    if isinstance(op, SetValue):
        return [_replace(text, target, op.value, style)]
    if isinstance(op, AddEntry) and target.kind == "object":
        return [_add_member(text, target, op.key, op.value, style)]
    if isinstance(op, AppendItem) and target.kind == "array":
        return [_append_item(text, target, op.value, style)]
    return []


class _Style:
    """The file's indent unit and line break, read from the document itself."""

    def __init__(self, text: str, root: Node) -> None:
        self.newline = newline_of(text)
        self.unit = _indent_unit(text, root) or "  "

    def render(self, value: Any, base: str, multiline: bool) -> str:
        if not multiline or not isinstance(value, dict | list) or not value:
            return json.dumps(value, ensure_ascii=False)
        dumped = json.dumps(value, ensure_ascii=False, indent=self.unit)
        return dumped.replace("\n", self.newline + base)


def _indent_unit(text: str, node: Node) -> str | None:
    """Extra indentation of the first container whose children sit on their own lines."""
    children = [member.value for member in node.members] + node.items
    starts = [member.key_start for member in node.members] + [item.start for item in node.items]
    if starts and starts_line(text, starts[0]):
        outer = indentation(text, node.start)
        inner = indentation(text, starts[0])
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer) :]
    for child in children:
        found = _indent_unit(text, child)
        if found:
            return found
    return None


def _find(root: Node, path: DataPath) -> Node | None:
    node: Node | None = root
    for segment in path:
        if node is None:
            return None
        if isinstance(segment, int):
            node = node.items[segment] if 0 <= segment < len(node.items) else None
        else:
            member = node.member(segment) if node.kind == "object" else None
            node = member.value if member is not None else None
    return node


def _replace(text: str, node: Node, value: Any, style: _Style) -> Rewrite:
    old = text[node.start : node.end]
    # Keep the old layout: a value written across lines stays across lines, an inline
    # object stays inline; a scalar growing into a collection gets the file's block layout.
    multiline = "\n" in old or (node.kind == "scalar" and starts_line_of_member(text, node))
    base = indentation(text, node.start)
    return splice(text, node.start, node.end, style.render(value, base, multiline))


def starts_line_of_member(text: str, node: Node) -> bool:
    """True when the value's line holds nothing else before it but its key."""
    start = text.rfind("\n", 0, node.start) + 1
    return text[start : node.start].lstrip(" \t").startswith('"')


def _sorted_position(keys: list[str], key: str) -> int | None:
    """Where ``key`` goes if the existing keys are sorted (plainly or ignoring case)."""
    for order in (str, str.lower):
        if keys == sorted(keys, key=order):
            position = 0
            while position < len(keys) and order(keys[position]) <= order(key):
                position += 1
            return position
    return None


def _add_member(text: str, obj: Node, key: str, value: Any, style: _Style) -> Rewrite:
    nl = style.newline
    if not obj.members:
        base = indentation(text, obj.start)
        inner = base + style.unit
        entry = f"{json.dumps(key, ensure_ascii=False)}: {style.render(value, inner, True)}"
        return splice(text, obj.start, obj.end, "{" + nl + inner + entry + nl + base + "}")
    own_lines = all(starts_line(text, member.key_start) for member in obj.members)
    last = obj.members[-1]
    if not own_lines:
        entry = f"{json.dumps(key, ensure_ascii=False)}: {style.render(value, '', False)}"
        return splice(text, last.value.end, last.value.end, ", " + entry)
    indent = indentation(text, last.key_start)
    entry = f"{json.dumps(key, ensure_ascii=False)}: {style.render(value, indent, True)}"
    position = _sorted_position([member.key for member in obj.members], key)
    if position is not None and position < len(obj.members):
        # A line of its own before the next key: no existing line changes at all.
        before = obj.members[position].key_start
        at = before - len(indentation(text, before))
        return splice(text, at, at, indent + entry + "," + nl)
    return splice(text, last.value.end, last.value.end, "," + nl + indent + entry)


def _append_item(text: str, array: Node, value: Any, style: _Style) -> Rewrite:
    nl = style.newline
    if not array.items:
        if "\n" not in text[array.start : array.end]:
            return splice(text, array.start, array.end, "[" + style.render(value, "", False) + "]")
        base = indentation(text, array.start)
        inner = base + style.unit
        rendered = style.render(value, inner, True)
        return splice(text, array.start, array.end, "[" + nl + inner + rendered + nl + base + "]")
    last = array.items[-1]
    if starts_line(text, last.start):
        indent = indentation(text, last.start)
        return splice(
            text, last.end, last.end, "," + nl + indent + style.render(value, indent, True)
        )
    return splice(text, last.end, last.end, ", " + style.render(value, "", False))
