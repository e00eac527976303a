"""The words of ``tether diff``: each file's patch against the installed release, and git's
``--stat`` view of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.notes import note_words, unread_words, worded_notes
from tether.report.reasons import side_problems

if TYPE_CHECKING:
    from tether.flows.localdiff import DiffReport, FileDiff, ManagedNotCompared


_STAT_WIDTH = 80  # git's width when stdout is not a terminal
_COLOURS = {"meta": "\033[1m", "frag": "\033[36m", "old": "\033[31m", "new": "\033[32m"}
_RESET = "\033[m"


def render_diff(report: DiffReport, color: bool = False) -> str:
    """The patch (or with --stat the per-file counts), notes as ``#`` lines that ``git
    apply`` and ``patch`` skip. Empty when nothing differs, as ``git diff`` prints nothing."""
    notes = [f"# note: {n}" for n in worded_notes(report.notes)]
    if report.stat_only:
        lines = notes + _stat_lines(report, color)
    else:
        lines = list(notes)
        for item in report.files:
            lines += _file_notes(item)
            lines += _patch_lines(item.patch.decode("utf-8", "surrogateescape"), color)
    lines += [
        f"# {r.path}: differs only inside its generated region {r.region!r}; not shown"
        for r in report.region_only
    ]
    return "".join(line + "\n" for line in lines)


def _file_notes(item: FileDiff) -> list[str]:
    notes = []
    if item.unread is not None:
        notes.append(f"# {note_words(item.unread)}")
    if item.region is not None:
        notes.append(f"# {item.path}: generated region {item.region!r} masked on both sides")
    if item.region_fallback:
        notes.append(f"# {item.path}: region markers are malformed; compared whole")
    if item.not_compared is not None:
        notes.append(
            f"# {item.path}: managed keys not compared: {managed_error(item.not_compared)}"
        )
    elif item.managed_changes:
        keys = ", ".join(_managed_key(change) for change in item.managed_changes)
        notes.append(f"# {item.path}: managed keys changed: {keys}")
    return notes


def managed_error(why: ManagedNotCompared) -> str:
    """Why a structured file's managed keys were not compared: the merge entry's problem
    as the rule reader gave it, or the sides that do not parse."""
    return why.rule or side_problems(why.unread)


def _managed_key(change: dict[str, object]) -> str:
    section, key = change.get("section"), change["key"]
    name = f"{section}.{key}" if section else str(key)
    return name if change["change"] == "changed" else f"{name} ({change['change']})"


def _patch_lines(patch: str, color: bool) -> list[str]:
    lines = patch.split("\n")[:-1]  # only "\n" ends a line: a CRLF line keeps its "\r"
    if not color:
        return lines
    return [_coloured(line) for line in lines]


def _coloured(line: str) -> str:
    if line.startswith(("diff --git ", "deleted file mode ", "--- ", "+++ ")):
        kind = "meta"
    elif line.startswith("@@"):
        end = line.find("@@", 2) + 2
        return _COLOURS["frag"] + line[:end] + _RESET + line[end:]
    elif line.startswith("-"):
        kind = "old"
    elif line.startswith("+"):
        kind = "new"
    else:
        return line
    return _COLOURS[kind] + line + _RESET


def _stat_lines(report: DiffReport, color: bool) -> list[str]:
    """git's --stat layout: name, count and a +/- graph scaled to fit 80 columns."""
    if not report.files:
        return []
    rows = [(item.path, _stat_count(item)) for item in report.files]
    max_change = max((f.added or 0) + (f.removed or 0) for f in report.files)
    number_width = max(len(str(max_change)), 3 if any(f.binary for f in report.files) else 0)
    name_width, graph_width = _stat_widths(report, max_change, number_width)
    lines = []
    for item, (path, count) in zip(report.files, rows, strict=True):
        name = _fit_name(path, name_width)
        if item.binary:
            lines.append(f" {name} | {'Bin':>{number_width}} {count}".rstrip())
            continue
        added, removed = item.added or 0, item.removed or 0
        if max_change > graph_width:
            added = _scale(added, graph_width, max_change)
            removed = _scale(removed, graph_width, max_change)
        plus, minus = "+" * added, "-" * removed
        if color:
            plus = _COLOURS["new"] + plus + _RESET if plus else ""
            minus = _COLOURS["old"] + minus + _RESET if minus else ""
        lines.append(f" {name} | {count:>{number_width}} {plus}{minus}".rstrip())
    lines.append(_stat_summary(report))
    return lines


def _stat_count(item: FileDiff) -> str:
    if item.binary:
        return "" if item.sizes is None else f"{item.sizes[0]} -> {item.sizes[1]} bytes"
    return str((item.added or 0) + (item.removed or 0))


def _stat_widths(report: DiffReport, max_change: int, number_width: int) -> tuple[int, int]:
    # git's rule: the name takes what it needs unless the line would pass the width; then
    # the graph gets at most 3/8 of it (never fewer than 6 columns) and the name the rest.
    width = max(_STAT_WIDTH, 16 + 6 + number_width)
    name_width = max(len(f.path) for f in report.files)
    graph_width = max_change
    if name_width + number_width + 6 + graph_width > width:
        if graph_width > width * 3 // 8 - number_width - 6:
            graph_width = max(width * 3 // 8 - number_width - 6, 6)
        if name_width > width - number_width - 6 - graph_width:
            name_width = width - number_width - 6 - graph_width
        else:
            graph_width = width - number_width - 6 - name_width
    return name_width, graph_width


def _fit_name(path: str, width: int) -> str:
    if len(path) <= width:
        return path.ljust(width)
    tail = path[len(path) - max(width - 3, 0) :]
    slash = tail.find("/")
    return ("..." + (tail[slash:] if slash >= 0 else tail)).ljust(width)


def _scale(count: int, width: int, max_change: int) -> int:
    # At least one mark for any change: scale as if one column shorter, then add one.
    return 0 if not count else 1 + count * (width - 1) // max_change


def _stat_summary(report: DiffReport) -> str:
    files = len(report.files)
    added, removed = report.added, report.removed
    parts = [f" {files} file{'s' if files != 1 else ''} changed"]
    if added or not removed:
        parts.append(f"{added} insertion{'s' if added != 1 else ''}(+)")
    if removed or not added:
        parts.append(f"{removed} deletion{'s' if removed != 1 else ''}(-)")
    return ", ".join(parts)


def diff_document(report: DiffReport) -> dict[str, object]:
    """A diff's JSON document, with why each file not read was not and why a structured
    file's managed keys were not compared."""
    unread = {f.path: unread_words(f.unread) for f in report.files if f.unread is not None}
    errors = {
        f.path: managed_error(f.not_compared) for f in report.files if f.not_compared is not None
    }
    return report.to_json(unread, errors)
