"""The command modules (``src/tether/cli/*_cmd.py``) parse, make one library call and render
through ``report/`` (docs/architecture.md). Read with ``ast``, two things must not appear in
them:

- **writing a file**: ``open(...)`` with a mode that writes (``w``, ``a``, ``x`` or ``+``),
  any ``.write_text(...)`` or ``.write_bytes(...)``, or a writer of ``tether.fsio``
  (``atomic_write``, ...). Files are written by the library that decides to write them.
- **wording text**: a ``print(...)`` given a string literal or an f-string. A command prints
  what ``print_json`` or a ``report/`` renderer returns, never words of its own.

The rule is syntactic on purpose: simple to state and to obey. A printed variable or call
result passes; that it came from a renderer is left to review.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "src" / "tether" / "cli"
COMMAND_MODULES = sorted(CLI.glob("*_cmd.py"))

FILE_WRITING_METHODS = {"write_text", "write_bytes"}
FSIO_WRITERS = {
    "atomic_write",
    "remove_stale_temps",
    "remove_stale_temps_beside",
    "remove_stale_temps_under",
    "flush_to_disk",
}
WRITING_MODE_LETTERS = set("wax+")


def _called_name(call: ast.Call) -> str | None:
    """``f`` for ``f(...)``, ``m`` for ``anything.m(...)``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _open_mode(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value
    return call.args[1] if len(call.args) > 1 else None


def _writes_a_file(call: ast.Call) -> bool:
    name = _called_name(call)
    if name in FILE_WRITING_METHODS or name in FSIO_WRITERS:
        return True
    if name == "open" and isinstance(call.func, ast.Name):
        mode = _open_mode(call)
        if mode is None:
            return False
        # A mode the source does not spell out cannot be checked: it counts as writing.
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
            return True
        return bool(WRITING_MODE_LETTERS & set(mode.value))
    return False


def _prints_own_words(call: ast.Call) -> bool:
    if not (isinstance(call.func, ast.Name) and call.func.id == "print"):
        return False
    return any(
        isinstance(arg, ast.JoinedStr)
        or (isinstance(arg, ast.Constant) and isinstance(arg.value, str))
        for arg in call.args
    )


def violations(source: str) -> list[str]:
    """``line: what`` for each file write and each printed literal in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if _writes_a_file(node):
            found.append(f"{node.lineno}: writes a file ({_called_name(node)})")
        elif _prints_own_words(node):
            found.append(f"{node.lineno}: prints its own words (render them in report/)")
    return found


def test_there_are_command_modules() -> None:
    assert len(COMMAND_MODULES) > 20


@pytest.mark.parametrize("module", COMMAND_MODULES, ids=lambda path: path.name)
def test_a_command_module_neither_writes_files_nor_words_text(module: Path) -> None:
    assert violations(module.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "line",
    [
        'open(path, "w")',
        'open(path, mode="a")',
        'open(path, "r+b")',
        "open(path, chosen_mode)",
        "Path(out).write_text(text)",
        "out.write_bytes(data)",
        "atomic_write(path, data)",
        "fsio.atomic_write(path, data)",
        'print("wrote the manifest")',
        'print(f"wrote {path}")',
        'print(render(report), "done")',
    ],
)
def test_the_rule_catches(line: str) -> None:
    assert len(violations(line)) == 1


@pytest.mark.parametrize(
    "line",
    [
        "open(path)",
        'open(path, "rb")',
        "print(render_update(report))",
        "print(text)",
        "print()",
        'print_json({"path": path})',
        "path.read_text()",
    ],
)
def test_the_rule_lets_through(line: str) -> None:
    assert violations(line) == []
