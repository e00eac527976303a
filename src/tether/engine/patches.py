"""Unified diffs: git's hunk alignment and text format, for patches people read or apply.
Pure."""

from __future__ import annotations

import hashlib
from itertools import count

from tether.engine.diff import Change, diff_lines
from tether.valueclass import valueclass

NO_NEWLINE = b"\\ No newline at end of file\n"


@valueclass(frozen=True)
class LineDiff:
    """A unified diff (``---``/``+++`` lines and hunks; empty when equal) and its line counts."""

    text: bytes
    added: int
    removed: int


def line_diff(old: bytes, new: bytes, old_label: str, new_label: str, context: int = 3) -> LineDiff:
    """The diff turning ``old`` into ``new``, hunk for hunk as ``git diff`` aligns and
    groups them (its Myers alignment, ``context`` lines around, hunks closer than twice
    that joined). A last line without a newline differs from the same text with one."""
    old_lines, new_lines = _records(old), _records(new)
    table: dict[bytes, int] = {}
    ids = count()
    changes = diff_lines(
        list(map(table.setdefault, old_lines, ids)), list(map(table.setdefault, new_lines, ids))
    )
    if not changes:
        return LineDiff(b"", 0, 0)
    out = bytearray(f"--- {old_label}\n+++ {new_label}\n".encode())
    heading, searched = b"", 0
    for group in _hunk_groups(changes, context):
        header, body, start = _hunk(group, old_lines, new_lines, context)
        heading = _heading(old_lines, searched, start) or heading
        searched = start
        out += header + (b" " + heading if heading else b"") + b"\n" + body
    added = sum(change.b_count for change in changes)
    removed = sum(change.a_count for change in changes)
    return LineDiff(bytes(out), added, removed)


def git_header(path: str, old: bytes, new: bytes | None, mode: int) -> bytes:
    """git's extended header for one file: ``diff --git``, ``deleted file mode`` when
    ``new`` is None, and the ``index`` line naming both sides by git's blob ids."""
    git_mode = "100755" if mode & 0o111 else "100644"
    old_id = _blob_id(old)[:7]
    lines = [f"diff --git a/{path} b/{path}"]
    if new is None:
        lines += [f"deleted file mode {git_mode}", f"index {old_id}..0000000"]
    else:
        lines.append(f"index {old_id}..{_blob_id(new)[:7]} {git_mode}")
    return "".join(line + "\n" for line in lines).encode()


def _blob_id(data: bytes) -> str:
    # The id git gives the file's bytes, so `git apply --3way` can find the blob.
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def unified_patch(path: str, ours: bytes, theirs: bytes, context: int = 3) -> bytes:
    """A ``git apply``-able diff turning the adopter's file into the release's."""
    return line_diff(ours, theirs, f"a/{path}", f"b/{path}", context).text


def _records(data: bytes) -> list[bytes]:
    """Lines as git sees them: only ``\\n`` ends one (a lone ``\\r`` is text)."""
    lines = data.split(b"\n")
    last = lines.pop()
    records = [line + b"\n" for line in lines]
    if last:
        records.append(last)
    return records


def _hunk_groups(changes: list[Change], context: int) -> list[list[Change]]:
    groups = [[changes[0]]]
    for change in changes[1:]:
        last = groups[-1][-1]
        if change.a_start - (last.a_start + last.a_count) <= 2 * context:
            groups[-1].append(change)
        else:
            groups.append([change])
    return groups


def _heading(old: list[bytes], floor: int, start: int) -> bytes:
    """git's default hunk heading: the nearest line above the hunk that starts with a
    letter, ``_`` or ``$`` (an identifier: a function or section), cut to 80 bytes."""
    for line in reversed(old[floor:start]):
        if line[:1].isalpha() or line[:1] in (b"_", b"$"):
            return line[:80].rstrip(b" \t\n\v\f\r")
    return b""


def _hunk(
    group: list[Change], old: list[bytes], new: list[bytes], context: int
) -> tuple[bytes, bytes, int]:
    """The hunk's ``@@`` line (no heading, no newline), its lines, and where it starts in old."""
    first, last = group[0], group[-1]
    lead = min(context, first.a_start)
    old_lo, new_lo = first.a_start - lead, first.b_start - lead
    trail = min(context, len(old) - (last.a_start + last.a_count))
    old_hi, new_hi = last.a_start + last.a_count + trail, last.b_start + last.b_count + trail
    header = f"@@ -{_range(old_lo, old_hi - old_lo)} +{_range(new_lo, new_hi - new_lo)} @@"
    body = bytearray()
    at = old_lo
    for change in group:
        body += _lines(b" ", old[at : change.a_start])
        body += _lines(b"-", old[change.a_start : change.a_start + change.a_count])
        body += _lines(b"+", new[change.b_start : change.b_start + change.b_count])
        at = change.a_start + change.a_count
    body += _lines(b" ", old[at:old_hi])
    return header.encode(), bytes(body), old_lo


def _range(start: int, length: int) -> str:
    # git's spelling: an empty range names the line before it, a one-line range has no count.
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _lines(prefix: bytes, lines: list[bytes]) -> bytes:
    out = bytearray()
    for line in lines:
        out += prefix + line
        if not line.endswith(b"\n"):
            out += b"\n" + NO_NEWLINE
    return bytes(out)


# A first line that must stay what it is for the file to be read at all: YAML front matter
# (``---``, read by the tools that load agent, command and page files) and a ``#!`` line.
_FIRST_LINE_STARTS = (b"---\n", b"---\r\n", b"#!")
_UTF8_BOM = b"\xef\xbb\xbf"


def markers_would_break_first_line(marked: bytes, *sides: bytes) -> bool:
    """Whether conflict markers in ``marked`` start at its first line while a side's first
    line must stay parseable (front matter, a ``#!`` line): such a file gets no markers at
    line 1 (the caller leaves a patch beside it instead)."""
    if not marked.removeprefix(_UTF8_BOM).startswith(b"<<<<<<<"):
        return False
    return any(side.removeprefix(_UTF8_BOM).startswith(_FIRST_LINE_STARTS) for side in sides)


def whole_file_markers(base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """The whole file as one diff3-style conflict, for a merge that must not be trusted."""

    def block(data: bytes) -> bytes:
        return data if not data or data.endswith(b"\n") else data + b"\n"

    return (
        b"<<<<<<< ours\n"
        + block(ours)
        + b"||||||| base\n"
        + block(base)
        + b"=======\n"
        + block(theirs)
        + b">>>>>>> theirs\n"
    )
