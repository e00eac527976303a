"""Edit a YAML document without reformatting it.

Two candidates per edit, tried in order by the caller, each verified afterwards:
1. ruamel.yaml round trip, but only when loading and dumping the untouched file gives back
   the very same bytes (otherwise ruamel would rewrite lines nobody asked it to touch);
2. splicing new value text at the span the composer reports for the old value.
The ruamel candidate must keep every character outside that span (a comment sharing the
value's line included), so it can only differ from the splice in how the value is written.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from tether.engine.structured.model import AddEntry, AppendItem, Op, SetValue
from tether.engine.structured.textspan import (
    Rewrite,
    line_end,
    newline_of,
    splice,
)
from tether.engine.structured.values import key_text

# (mapping indent, sequence indent, sequence dash offset) layouts worth trying for a faithful
# round trip; ruamel cannot guess them reliably, so each one is tried against the file.
_LAYOUTS = ((2, 2, 0), (2, 4, 2), (4, 4, 2), (4, 6, 4), (4, 4, 0), (3, 3, 0), (2, 3, 1))

# Plain scalars a YAML 1.1 reader (still common) would not read back as strings.
_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
_NUMBER_LIKE = re.compile(
    r"[-+]?(?:[\d_]*\.?[\d_]+(?:[eE][-+]?\d+)?|\.(?:inf|nan)|0x[\da-f_]+|0o[0-7_]+|0b[01_]+"
    r"|[\d_]+(?::[0-5]?\d)+(?:\.\d*)?)",
    re.IGNORECASE,
)
_PLAIN_BAD_START = (*"#&*!|>'\"%@`[]{},", "- ", "? ", ": ")


def rewrites(text: str, op: Op) -> list[Rewrite]:
    from ruamel.yaml import YAML

    root = YAML(typ="rt").compose(text)
    if root is None:
        return []
    spliced = _splice(text, root, op)
    if spliced is None:
        return []
    candidates: list[Rewrite] = []
    round_tripped = _round_trip(text, op)
    if round_tripped is not None and round_tripped != spliced.text:
        candidates.append(Rewrite(round_tripped, spliced.allowed, frame=spliced.frame))
    candidates.append(spliced)
    return candidates


# ---------------------------------------------------------------------------------------
# Scalars and small renderings


def _resolves_to_itself(candidate: str, flow: bool) -> bool:
    """Whether a YAML 1.2 loader reads ``candidate`` written plain back as that string."""
    return _load_plain(candidate, flow) == candidate


@lru_cache(maxsize=512)
def _load_plain(candidate: str, flow: bool) -> object:
    from ruamel.yaml import YAML

    document = f"k: [{candidate}]" if flow else f"k: {candidate}"
    try:
        loaded = YAML(typ="safe", pure=True).load(document)
    except Exception:  # any parser complaint just means "cannot be written plain"
        return None
    value = loaded.get("k") if isinstance(loaded, dict) else None
    if flow:
        return value[0] if isinstance(value, list) and len(value) == 1 else None
    return value


def _plain_ok(value: str, flow: bool, relaxed: bool) -> bool:
    if not value or value != value.strip() or any(char in value for char in "\n\r\t"):
        return False
    if value.startswith(_PLAIN_BAD_START) or value in ("-", "?", ":"):
        return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    if flow and any(char in value for char in ",[]{}"):
        return False
    # ``relaxed``: the file already wrote such a value plain, so its readers cope with it.
    if not relaxed and _ambiguous_for_old_readers(value):
        return False
    return _resolves_to_itself(value, flow)


def _ambiguous_for_old_readers(value: str) -> bool:
    """Plain text a YAML 1.1 reader would take for a boolean, null or number."""
    return value.lower() in _YAML11_WORDS or _NUMBER_LIKE.fullmatch(value) is not None


def _scalar(value: Any, style: str | None = None, flow: bool = False, relaxed: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = value if isinstance(value, str) else str(value)
    if style == "'" and "\n" not in text:
        return "'" + text.replace("'", "''") + "'"
    if style != '"' and _plain_ok(text, flow, relaxed):
        return text
    return json.dumps(text, ensure_ascii=False)  # JSON strings are YAML double-quoted scalars


@dataclass
class _Habits:
    """How the file quotes strings: per exact value, and per owning key (``globs:`` items)."""

    by_value: dict[str, str | None] = field(default_factory=dict)
    by_key: dict[str, str | None] = field(default_factory=dict)

    def style(self, value: str, key: str | None) -> str | None:
        if value in self.by_value:
            return self.by_value[value]
        return self.by_key.get(key) if key is not None else None


def _scalar_in(value: Any, habits: _Habits, key: str | None, flow: bool) -> str:
    if isinstance(value, str):
        style = habits.style(value, key)
        return _scalar(value, style, flow=flow, relaxed=style is None and value in habits.by_value)
    return _scalar(value, flow=flow)


def _flow(
    value: Any, flow: bool = False, habits: _Habits | None = None, key: str | None = None
) -> str:
    """One-line rendering; ``flow`` says whether we are inside brackets already."""
    habits = habits or _Habits()
    if isinstance(value, dict):
        pairs = (
            f"{_scalar(key_text(k), flow=True)}: {_flow(v, True, habits, key_text(k))}"
            for k, v in value.items()
        )
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item, True, habits, key) for item in value) + "]"
    return _scalar_in(value, habits, key, flow)


@dataclass(frozen=True)
class _Layout:
    map_indent: int = 2  # child key column minus parent key column
    seq_indent: int = 2  # dash column minus the owning key's column
    item_offset: int = 2  # item content column minus dash column
    habits: _Habits = field(default_factory=_Habits)


def _block_lines(value: Any, layout: _Layout, key: str | None = None) -> list[str]:
    """Block rendering, first line at the node's own column, later lines relative to it."""
    habits = layout.habits
    if isinstance(value, dict) and value:
        lines: list[str] = []
        for raw_key, item in value.items():
            name = key_text(raw_key)
            rendered_name = _scalar(name)
            if isinstance(item, dict) and item:
                lines.append(f"{rendered_name}:")
                lines += _shift(_block_lines(item, layout, name), layout.map_indent)
            elif isinstance(item, list) and item:
                lines.append(f"{rendered_name}:")
                lines += _shift(_block_lines(item, layout, name), layout.seq_indent)
            else:
                lines.append(f"{rendered_name}: {_flow(item, False, habits, name)}")
        return lines
    if isinstance(value, list) and value:
        lines = []
        dash = "-" + " " * (layout.item_offset - 1)
        for item in value:
            if isinstance(item, dict) and item:
                sub = _block_lines(item, layout, key)
                lines.append(dash + sub[0])
                lines += _shift(sub[1:], layout.item_offset)
            else:
                lines.append(dash + _flow(item, False, habits, key))
        return lines
    return [_flow(value, False, habits, key)]


def _shift(lines: list[str], columns: int) -> list[str]:
    return [" " * columns + line for line in lines]


# ---------------------------------------------------------------------------------------
# Composed nodes: locating and measuring


def _is_flow(node: Any) -> bool:
    return bool(getattr(node, "flow_style", False))


def _is_mapping(node: Any) -> bool:
    return type(node).__name__ == "MappingNode"


def _is_sequence(node: Any) -> bool:
    return type(node).__name__ == "SequenceNode"


def _is_empty_scalar(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode" and node.start_mark.index == node.end_mark.index


@dataclass(frozen=True)
class _Located:
    node: Any
    key: Any  # the key node when the value sits in a mapping
    in_flow: bool


def _locate(root: Any, path: tuple[str | int, ...]) -> _Located | None:
    node, key, in_flow = root, None, False
    for segment in path:
        in_flow = in_flow or _is_flow(node)
        if isinstance(segment, int):
            if not _is_sequence(node) or not 0 <= segment < len(node.value):
                return None
            node, key = node.value[segment], None
            continue
        if not _is_mapping(node):
            return None
        found = None
        for key_node, value_node in node.value:
            if type(key_node).__name__ == "ScalarNode" and key_node.value == segment:
                found = (key_node, value_node)
        if found is None:
            return None
        key, node = found
    return _Located(node, key, in_flow)


def _after_colon(text: str, key_node: Any) -> int:
    return text.index(":", key_node.end_mark.index) + 1


def _content_end(text: str, node: Any) -> int | None:
    """End of the node's own text: block collections' marks run on over comments and blank
    lines up to the next token, so descend to the last thing actually written."""
    if type(node).__name__ == "ScalarNode":
        end = int(node.end_mark.index)
        if node.style in ("|", ">"):
            while end > node.start_mark.index + 1 and text[end - 1] in "\r\n":
                end -= 1
        return end
    if _is_flow(node) or not node.value:
        return int(node.end_mark.index)
    if _is_mapping(node):
        key_node, value_node = node.value[-1]
        if _is_empty_scalar(value_node):
            return _after_colon(text, key_node)
        return _content_end(text, value_node)
    last = node.value[-1]
    return None if _is_empty_scalar(last) else _content_end(text, last)


def _layout(*roots: Any) -> _Layout:
    """The indentation and quoting habits of the file, preferring what the first root shows."""
    found: dict[str, int] = {}
    habits = _Habits()
    for root in roots:
        _measure(root, found, habits)
    item_offset = found.get("item_offset", 2)
    return _Layout(
        map_indent=found.get("map_indent", 2),
        seq_indent=found.get("seq_indent", 2),
        item_offset=item_offset if item_offset >= 2 else 2,
        habits=habits,
    )


def _note_scalar(node: Any, key: str | None, habits: _Habits) -> None:
    if type(node).__name__ != "ScalarNode" or not str(node.tag).endswith(":str"):
        return
    style = node.style if node.style in ("'", '"') else None
    habits.by_value.setdefault(node.value, style)
    if key is not None:
        habits.by_key.setdefault(key, style)


def _measure(node: Any, found: dict[str, int], habits: _Habits) -> None:
    pending: list[tuple[Any, str | None]] = [(node, None)]
    while pending:
        current, owner = pending.pop(0)
        _note_scalar(current, owner, habits)
        if _is_mapping(current):
            for key_node, value_node in current.value:
                key = str(key_node.value) if type(key_node).__name__ == "ScalarNode" else None
                column = value_node.start_mark.column - key_node.start_mark.column
                block = not _is_flow(current) and not _is_flow(value_node)
                if block and _is_mapping(value_node) and value_node.value:
                    found.setdefault("map_indent", column)
                if block and _is_sequence(value_node) and value_node.value:
                    found.setdefault("seq_indent", column)
                pending.append((value_node, key))
        elif _is_sequence(current):
            for item in current.value:
                if not _is_flow(current) and not _is_empty_scalar(item):
                    column = item.start_mark.column - current.start_mark.column
                    found.setdefault("item_offset", column)
                pending.append((item, owner))


# ---------------------------------------------------------------------------------------
# Splicing


def _splice(text: str, root: Any, op: Op) -> Rewrite | None:
    located = _locate(root, op.path)
    if located is None:
        return None
    if isinstance(op, SetValue):
        return _splice_value(text, root, located, op.value)
    if isinstance(op, AddEntry) and _is_mapping(located.node):
        return _splice_entry(text, root, located.node, op.key, op.value)
    if isinstance(op, AppendItem) and _is_sequence(located.node):
        return _splice_item(text, root, located, op.value)
    return None


def _owner(located: _Located) -> str | None:
    return str(located.key.value) if located.key is not None else None


def _splice_value(text: str, root: Any, located: _Located, value: Any) -> Rewrite | None:
    node, key = located.node, _owner(located)
    layout = _layout(node, root)
    if _is_empty_scalar(node):
        if located.key is None:
            return None
        at = _after_colon(text, located.key)
        return splice(text, at, at, " " + _flow(value, located.in_flow, layout.habits, key))
    end = _content_end(text, node)
    if end is None:
        return None
    start = int(node.start_mark.index)
    block_collection = (_is_mapping(node) or _is_sequence(node)) and not _is_flow(node)
    if located.in_flow:
        rendered = _flow(value, True, layout.habits, key)
    elif block_collection and _same_shape(node, value):
        indent = newline_of(text) + " " * node.start_mark.column
        rendered = indent.join(_block_lines(value, layout, key))
    elif block_collection and located.key is not None:
        # The value changes shape: restart it right after the colon, where any form is
        # valid. A comment sitting between the colon and the old value would be lost.
        colon = _after_colon(text, located.key)
        if text[colon:start].strip():
            return None
        return splice(text, colon, end, _after_key(value, layout, key, located.key, text))
    elif type(node).__name__ == "ScalarNode" and not isinstance(value, dict | list):
        # Keep the old scalar's quoting; a plain one stays plain if it reads back as itself.
        relaxed = node.style is None and _ambiguous_for_old_readers(str(node.value))
        literal = _literal_block(text, node, value) if node.style == "|" else None
        rendered = literal or _scalar(value, node.style, flow=False, relaxed=relaxed)
        if literal is None and node.style in ("|", ">"):
            rendered += _header_comment(text, node)
    else:
        rendered = _flow(value, False, layout.habits, key)
    return splice(text, start, end, rendered)


def _literal_block(text: str, node: Any, value: Any) -> str | None:
    """A new body for a ``|`` block scalar under its old header line (comment included), or
    None when the value cannot be written that way with the same header."""
    if not isinstance(value, str) or "\r" in value:
        return None
    start = int(node.start_mark.index)
    header = text[start : line_end(text, start)]
    indicator = header.split("#", 1)[0].strip()
    if any(char.isdigit() for char in indicator):
        return None  # an explicit indentation indicator: leave it to the quoted fallback
    fits = {
        "|": value.endswith("\n") and not value.endswith("\n\n"),
        "|-": not value.endswith("\n"),
        "|+": value.endswith("\n"),
    }
    if not fits.get(indicator, False):
        return None
    body = value[:-1] if value.endswith("\n") else value
    if body.startswith((" ", "\n")) or not body:
        return None  # leading spaces or blank lines would need an indentation indicator
    old_lines = text[line_end(text, start) :].split("\n")[1:]
    indent = next((len(line) - len(line.lstrip(" ")) for line in old_lines if line.strip()), 2)
    newline = newline_of(text)
    lines = [(" " * indent + line) if line else "" for line in body.split("\n")]
    return header + newline + newline.join(lines)


def _header_comment(text: str, node: Any) -> str:
    """The comment on a block scalar's header line, with the spacing before it."""
    start = int(node.start_mark.index)
    header = text[start : line_end(text, start)]
    if "#" not in header:
        return ""
    before, comment = header.split("#", 1)
    return before[len(before.rstrip()) :] + "#" + comment


def _same_shape(node: Any, value: Any) -> bool:
    if _is_mapping(node):
        return isinstance(value, dict) and bool(value)
    return _is_sequence(node) and isinstance(value, list) and bool(value)


def _after_key(value: Any, layout: _Layout, key: str | None, key_node: Any, text: str) -> str:
    """Text that follows ``key:`` for a value of any shape."""
    if not isinstance(value, dict | list) or not value:
        return " " + _flow(value, False, layout.habits, key)
    step = layout.map_indent if isinstance(value, dict) else layout.seq_indent
    column: int = key_node.start_mark.column + max(step, 1)
    indent = newline_of(text) + " " * column
    return indent + indent.join(_block_lines(value, layout, key))


def _insert_after_line(text: str, end: int, lines: list[str]) -> Rewrite:
    """Insert whole lines after the line holding offset ``end``."""
    newline = newline_of(text)
    stop = line_end(text, end)
    if stop >= len(text):  # the last line has no line break: start the new lines with one
        return splice(text, len(text), len(text), "".join(newline + line for line in lines))
    at = stop + len(newline) if text.startswith("\r\n", stop) else stop + 1
    return splice(text, at, at, "".join(line + newline for line in lines))


def _splice_entry(text: str, root: Any, mapping: Any, key: str, value: Any) -> Rewrite | None:
    name = _scalar(key, flow=_is_flow(mapping))
    layout = _layout(mapping, root)
    if _is_flow(mapping):
        entry = f"{name}: {_flow(value, True, layout.habits, key)}"
        if not mapping.value:
            at = int(mapping.end_mark.index) - 1
            return splice(text, at, at, entry)
        end = _content_end(text, mapping.value[-1][1])
        return None if end is None else splice(text, end, end, ", " + entry)
    if isinstance(value, dict) and value:
        lines = [f"{name}:", *_shift(_block_lines(value, layout, key), layout.map_indent)]
    elif isinstance(value, list) and value:
        lines = [f"{name}:", *_shift(_block_lines(value, layout, key), layout.seq_indent)]
    else:
        lines = [f"{name}: {_flow(value, False, layout.habits, key)}"]
    end = _content_end(text, mapping)
    if end is None:
        return None
    column = mapping.value[0][0].start_mark.column
    return _insert_after_line(text, end, _shift(lines, column))


def _splice_item(text: str, root: Any, located: _Located, value: Any) -> Rewrite | None:
    sequence, key = located.node, _owner(located)
    layout = _layout(sequence, root)
    if _is_flow(sequence):
        rendered = _flow(value, True, layout.habits, key)
        if not sequence.value:
            at = int(sequence.end_mark.index) - 1
            return splice(text, at, at, rendered)
        end = _content_end(text, sequence.value[-1])
        return None if end is None else splice(text, end, end, ", " + rendered)
    dash_column = sequence.start_mark.column
    first = sequence.value[0]
    offset = first.start_mark.column - dash_column
    if not _is_empty_scalar(first) and offset >= 2:
        # Match the neighbours exactly, even an unusual "-   item" spacing.
        layout = replace(layout, item_offset=offset)
    lines = _shift(_block_lines([value], layout, key), dash_column)
    end = _content_end(text, sequence)
    return None if end is None else _insert_after_line(text, end, lines)


# ---------------------------------------------------------------------------------------
# ruamel round trip


def _faithful_yaml(text: str) -> tuple[Any, Any] | None:
    """A configured ruamel instance and loaded data, when a plain round trip is exact."""
    from ruamel.yaml import YAML

    loader = YAML(typ="rt")
    loader.preserve_quotes = True
    try:
        data = loader.load(text)
    except Exception:  # already parsed once; any failure here just rules this strategy out
        return None
    for mapping, sequence, offset in _LAYOUTS:
        dumper = YAML(typ="rt")
        dumper.preserve_quotes = True
        dumper.width = 1 << 30  # never fold long lines
        dumper.indent(mapping=mapping, sequence=sequence, offset=offset)
        dumper.explicit_start = text.startswith("---")
        if _dump(dumper, data) == text:
            return dumper, data
    return None


def _dump(dumper: Any, data: Any) -> str | None:
    buffer = io.StringIO()
    try:
        dumper.dump(data, buffer)
    except Exception:  # a document ruamel cannot write back is not faithful
        return None
    return buffer.getvalue()


def _round_trip(text: str, op: Op) -> str | None:
    faithful = _faithful_yaml(text)
    if faithful is None:
        return None
    dumper, data = faithful
    if not _rt_apply(data, op):
        return None
    return _dump(dumper, data)


def _rt_child(node: Any, segment: str | int) -> Any:
    if isinstance(segment, int):
        return node[segment] if isinstance(node, list) and 0 <= segment < len(node) else None
    if not isinstance(node, dict):
        return None
    for key in node:
        if key_text(key) == segment:
            return node[key]
    return None


def _rt_key(node: Any, segment: str) -> Any:
    for key in node:
        if key_text(key) == segment:
            return key
    return segment


def _rt_apply(data: Any, op: Op) -> bool:
    path = op.path[:-1] if isinstance(op, SetValue) else op.path
    container = data
    for segment in path:
        container = _rt_child(container, segment)
        if container is None:
            return False
    if isinstance(op, SetValue):
        if not op.path:
            return False
        last = op.path[-1]
        if isinstance(last, int):
            if not isinstance(container, list) or not 0 <= last < len(container):
                return False
            container[last] = _rt_value(op.value, container[last])
            return True
        if not isinstance(container, dict):
            return False
        key = _rt_key(container, last)
        container[key] = _rt_value(op.value, container.get(key))
        return True
    # A new entry or member is shaped after its last neighbour.
    if isinstance(op, AddEntry) and isinstance(container, dict):
        neighbour = container[list(container)[-1]] if container else None
        container[op.key] = _rt_value(op.value, neighbour)
        return True
    if isinstance(op, AppendItem) and isinstance(container, list):
        container.append(_rt_value(op.value, container[-1] if container else None))
        return True
    return False


def _rt_value(value: Any, old: Any) -> Any:
    """Plain data as ruamel objects shaped like ``old`` (the value replaced, or a neighbour
    for a new one): same quoting for strings, same flow style for collections."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    if isinstance(value, str):
        if isinstance(old, DoubleQuotedScalarString | SingleQuotedScalarString):
            return type(old)(value)
        if _ambiguous_for_old_readers(value) and not (
            isinstance(old, str) and _ambiguous_for_old_readers(old)
        ):
            return DoubleQuotedScalarString(value)
        return value
    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[key] = _rt_value(item, old.get(key) if isinstance(old, dict) else None)
        if isinstance(old, CommentedMap) and old.fa.flow_style():
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        samples = old if isinstance(old, list) and old else [None]
        sequence = CommentedSeq(
            _rt_value(item, samples[min(index, len(samples) - 1)])
            for index, item in enumerate(value)
        )
        if isinstance(old, CommentedSeq) and old.fa.flow_style():
            sequence.fa.set_flow_style()
        return sequence
    return value
