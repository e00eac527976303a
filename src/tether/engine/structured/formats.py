"""Decoding and parsing the three formats into plain data, with one-line error messages.

Parsers are imported inside the functions: the CLI must start fast and most commands never
touch a structured file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tether.engine.structured.model import Format
from tether.engine.structured.values import plain
from tether.parselimits import (
    NESTED_TOO_DEEPLY,
    JSONTooDeep,
    depth_problem,
    json_loads,
    shape_problem,
)

BOM = "\ufeff"

_EXTENSIONS: dict[str, Format] = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
}


class ParseProblem(Exception):
    """A side that is not valid text of its format. The message is one line."""


class ParseLimit(ParseProblem):
    """A side that may be valid but is beyond what tether parses: nested too deeply, or
    YAML whose aliases expand too far (see ``tether.parselimits``)."""


@dataclass(frozen=True)
class Text:
    """A decoded file: the body without a byte-order mark, and whether it had one."""

    body: str
    bom: bool = False

    def encode(self, body: str) -> bytes:
        return ((BOM if self.bom else "") + body).encode("utf-8")


def format_for_path(path: str) -> Format | None:
    name = path.rsplit("/", 1)[-1].lower()
    for extension, fmt in _EXTENSIONS.items():
        if name.endswith(extension):
            return fmt
    return None


def decode(data: bytes) -> Text:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ParseProblem(f"not UTF-8 text (byte {error.start})") from None
    if text.startswith(BOM):
        return Text(text[len(BOM) :], bom=True)
    return Text(text)


def parse(fmt: Format, body: str) -> dict[str, Any]:
    """Plain data of a document whose top level must be a mapping."""
    if fmt == "json":
        data = _parse_json(body)
    elif fmt == "yaml":
        data = _parse_yaml(body)
    else:
        data = _parse_toml(body)
    if not isinstance(data, dict):
        raise ParseProblem(f"the top level is a {_type_name(data)}, not a mapping")
    return data


def _type_name(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return type(value).__name__


def _parse_json(body: str) -> Any:
    from tether.engine.structured.jsonspan import duplicate_key

    try:
        data = json_loads(body)
    except JSONTooDeep:
        raise ParseLimit(_beyond("JSON", NESTED_TOO_DEEPLY)) from None
    except json.JSONDecodeError as error:
        raise ParseProblem(
            f"invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    _refuse(depth_problem(data), "JSON")
    # json.loads keeps the last of duplicate keys silently; the other tools reading the
    # file may keep the first, so a duplicate means nobody can say what the file says.
    duplicate = duplicate_key(body)
    if duplicate is not None:
        raise ParseProblem(f"invalid JSON: {duplicate}")
    return data


def _parse_yaml(body: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = YAML(typ="rt").load(body)
    except MarkedYAMLError as error:
        raise ParseProblem(f"invalid YAML: {_marked_message(error)}") from None
    except YAMLError as error:
        raise ParseProblem(f"invalid YAML: {_one_line(str(error))}") from None
    except RecursionError:
        raise ParseLimit(_beyond("YAML", NESTED_TOO_DEEPLY)) from None
    _refuse(shape_problem(data), "YAML")
    # An empty document is an empty mapping: nothing managed is present.
    return {} if data is None else plain(data)


def _refuse(problem: str | None, name: str) -> None:
    if problem is not None:
        raise ParseLimit(_beyond(name, problem))


def _beyond(name: str, problem: str) -> str:
    return f"{name} beyond parsing limits: {problem}"


def _marked_message(error: Any) -> str:
    problem = error.problem or error.context or "parse error"
    mark = error.problem_mark or error.context_mark
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{_one_line(str(problem))}{where}"


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _parse_toml(body: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(body)
        data = document.unwrap()
    except TOMLKitError as error:
        message = _one_line(str(error))
        if "nested more than" in message:  # tomlkit's own depth bound
            raise ParseLimit(_beyond("TOML", message)) from None
        raise ParseProblem(f"invalid TOML: {message}") from None
    except RecursionError:
        raise ParseLimit(_beyond("TOML", NESTED_TOO_DEEPLY)) from None
    _refuse(depth_problem(data), "TOML")
    return plain(data)
