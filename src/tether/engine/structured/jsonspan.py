"""Where each value of a JSON document sits in its original text.

Re-serialising a hand-formatted package.json rewrites lines nobody touched, so writers splice
new value text into the original at the spans found here. The scanner assumes text that
``json.loads`` already accepted; it only records positions (character offsets).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

_WHITESPACE = " \t\r\n"
_SCALAR = re.compile(r"-?(?:Infinity|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|true|false|null|NaN")


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


@dataclass
class Node:
    kind: Literal["object", "array", "scalar"]
    start: int
    end: int  # one past the last character
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def member(self, key: str) -> Member | None:
        # json.loads keeps the last duplicate; duplicates are rejected before writing anyway.
        found = None
        for member in self.members:
            if member.key == key:
                found = member
        return found


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.duplicate: str | None = None

    def skip(self, index: int) -> int:
        text = self.text
        while index < len(text) and text[index] in _WHITESPACE:
            index += 1
        return index

    def value(self, index: int) -> Node:
        char = self.text[index]
        if char == "{":
            return self.object(index)
        if char == "[":
            return self.array(index)
        if char == '"':
            return Node("scalar", index, self.string_end(index))
        match = _SCALAR.match(self.text, index)
        if match is None:
            raise ValueError(f"unexpected character at offset {index}")
        return Node("scalar", index, match.end())

    def string_end(self, index: int) -> int:
        text = self.text
        index += 1
        while True:
            char = text[index]
            if char == "\\":
                index += 2
            elif char == '"':
                return index + 1
            else:
                index += 1

    def object(self, start: int) -> Node:
        node = Node("object", start, start)
        seen: set[str] = set()
        index = self.skip(start + 1)
        while self.text[index] != "}":
            key_start = index
            key_end = self.string_end(index)
            key = json.loads(self.text[key_start:key_end])
            if key in seen and self.duplicate is None:
                where = _where(self.text, key_start)
                self.duplicate = f"duplicate key {json.dumps(key)} ({where})"
            seen.add(key)
            index = self.skip(self.skip(key_end) + 1)  # past the colon
            value = self.value(index)
            node.members.append(Member(key, key_start, value))
            index = self.skip(value.end)
            if self.text[index] == ",":
                index = self.skip(index + 1)
        node.end = index + 1
        return node

    def array(self, start: int) -> Node:
        node = Node("array", start, start)
        index = self.skip(start + 1)
        while self.text[index] != "]":
            item = self.value(index)
            node.items.append(item)
            index = self.skip(item.end)
            if self.text[index] == ",":
                index = self.skip(index + 1)
        node.end = index + 1
        return node


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def locate(text: str) -> Node:
    """The span tree of a valid JSON document."""
    scanner = _Scanner(text)
    return scanner.value(scanner.skip(0))


def duplicate_key(text: str) -> str | None:
    """A description of the first duplicated key in any object, or None."""
    scanner = _Scanner(text)
    try:
        scanner.value(scanner.skip(0))
    except (ValueError, IndexError, RecursionError):
        return None  # not our job: json.loads reports syntax problems
    return scanner.duplicate
