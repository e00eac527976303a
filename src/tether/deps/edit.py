"""Change version strings in place: only the value's own text, nothing re-serialised.

package.json, pnpm-workspace.yaml and pyproject.toml go through the structured writers
(JSON span splices, YAML splices, tomlkit), which prove every edit: the new text must parse
to exactly the expected data and differ from the old only inside the value. Plain-text
version files (``.nvmrc``, ``.tool-versions``) have their one line replaced. Each value is
checked against what the scan read, so a file edited since the scan is refused, not
clobbered; a value that already reads as the target is left as it is (a second run in the
worktree an earlier run made finds its edits there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.deps.model import Locus
from tether.flows.safety import PathGuard
from tether.fsio import cannot_read, read_bytes, remove_stale_temps


class EditError(Exception):
    """A file that cannot be edited safely; nothing of the project was written."""


@dataclass(frozen=True)
class Change:
    locus: Locus
    old: str  # the stored string the scan read
    new: str


def prepare(root: Path, changes: Sequence[Change]) -> dict[str, bytes]:
    """The new bytes of every file ``changes`` touch (files left unchanged are omitted)."""
    by_file: dict[str, list[Change]] = {}
    for change in changes:
        if change.old != change.new:
            by_file.setdefault(change.locus.source_file, []).append(change)
    out: dict[str, bytes] = {}
    for rel, file_changes in by_file.items():
        old_bytes = _read(root, rel)
        new_bytes = _edit(rel, old_bytes, file_changes)
        if new_bytes != old_bytes:
            out[rel] = new_bytes
    return out


def write(
    root: Path, files: dict[str, bytes], written: Callable[[str], None] = lambda rel: None
) -> None:
    """Write every prepared file atomically (mode kept), through the project's path guard:
    never through a link, never into a folder that leads out of the project. ``written`` is
    told of each file once it is durably in place."""
    guard = PathGuard(root)
    for rel, data in files.items():
        guard.write(rel, data)
        written(rel)


def sweep_temps(root: Path, changes: Sequence[Change]) -> None:
    """Remove what an interrupted write of these files left beside them (a run killed
    between writing a file's new bytes and putting them in place)."""
    guard = PathGuard(root)
    for rel in dict.fromkeys(change.locus.source_file for change in changes):
        if guard.problem(rel) is None:  # never through a link out of the project
            remove_stale_temps(root / rel)


def _read(root: Path, rel: str) -> bytes:
    try:
        return read_bytes(root / rel)
    except OSError as error:
        raise EditError(cannot_read(rel, error)) from None


def _edit(rel: str, data: bytes, changes: list[Change]) -> bytes:
    from tether.engine.structured.formats import ParseProblem, decode

    try:
        text = decode(data)
    except ParseProblem as problem:
        raise EditError(f"{rel}: {problem}") from None
    fmt = changes[0].locus.fmt
    if fmt == "text":
        return text.encode(_edit_lines(rel, text.body, changes))
    return text.encode(_edit_structured(rel, fmt, text.body, changes))


def _edit_lines(rel: str, body: str, changes: list[Change]) -> str:
    lines = body.split("\n")
    for change in changes:
        index = int(change.locus.data_path[0])
        line = lines[index] if index < len(lines) else None
        carriage = "\r" if line is not None and line.endswith("\r") else ""
        if line is None or line.removesuffix("\r") not in (change.old, change.new):
            raise EditError(f"{rel}: line {index + 1} changed since the scan")
        lines[index] = change.new + carriage
    return "\n".join(lines)


def _edit_structured(rel: str, fmt: Any, body: str, changes: list[Change]) -> str:
    from tether.engine.structured.formats import ParseProblem, parse
    from tether.engine.structured.model import PlannedEdit, SetValue
    from tether.engine.structured.writing import write_edits

    try:
        data = parse(fmt, body)
    except ParseProblem as problem:
        raise EditError(f"{rel}: {problem}") from None
    pending = []
    for change in changes:
        value = _value_at(data, change.locus.data_path)
        if value not in (change.old, change.new):
            raise EditError(f"{rel}: {change.locus.location} changed since the scan")
        if value == change.old:
            pending.append(change)
    if not pending:
        return body
    edits = [PlannedEdit(SetValue(c.locus.data_path, c.new), ()) for c in pending]
    new_body, refused = write_edits(fmt, body, data, edits)
    if refused:
        where = ", ".join(_where(edit.op.path) for edit in refused)
        raise EditError(f"{rel}: cannot change {where} without reformatting the file")
    return new_body


def _value_at(data: Any, path: tuple[str | int, ...]) -> Any:
    node = data
    for segment in path:
        if isinstance(segment, int):
            if not isinstance(node, list) or not 0 <= segment < len(node):
                return None
        elif not isinstance(node, dict) or segment not in node:
            return None
        node = node[segment]
    return node


def _where(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path)
