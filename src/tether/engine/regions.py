"""Generated regions: declarations, marker scan, masking and the region-aware comparison.

Some shipped files carry a marker-delimited block whose body a shipped program rewrites
from the adopter's own configuration. Comparing such files byte for byte calls every
regeneration "drift", so they are compared with the block's body masked out.

Pure: bytes and plain values in, plain values out. Text is handled as bytes split on
``\\n`` so a file's encoding and line endings survive masking untouched.
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass
from typing import Final, Literal

from tether.parselimits import json_loads
from tether.pathrules import project_path_problem

ScanKind = Literal["absent", "region", "malformed"]
MalformedReason = Literal["duplicate-start", "duplicate-end", "unbalanced", "inverted"]
Verdict = Literal["no-upstream-change", "no-adopter-drift", "already-latest", "conflict"]
Side = Literal["baseline", "latest", "current"]

SIDES: Final[tuple[Side, ...]] = ("baseline", "latest", "current")
# One line standing in for the whole body; chosen so it cannot be mistaken for content.
PLACEHOLDER: Final = "<<tether: generated region body masked>>"
FALLBACK_MALFORMED: Final = "malformed-markers"


# --- declarations -------------------------------------------------------------------------


@dataclass(frozen=True)
class RegenSpec:
    """The program that rewrites a region: ``interpreter operand args…`` from the project root."""

    interpreter: str
    operand: str
    args: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return (self.interpreter, self.operand, *self.args)

    @property
    def command_line(self) -> str:
        """The literal command, shell-quoted, to run by hand from the project root."""
        return shlex.join(self.argv)


@dataclass(frozen=True)
class RegionDecl:
    id: str
    start_marker: str
    end_marker: str
    paths: tuple[str, ...]
    regenerate: RegenSpec | None = None
    # Files the region is derived from: when one of them is left in a whole-file conflict,
    # the region is not regenerated (its source is not the merged one).
    inputs: tuple[str, ...] = ()


class _Malformed(Exception):
    """One declaration is unusable; the message says why."""


def marker_problem(marker: str) -> str | None:
    """Why ``marker`` cannot delimit a region, or None when it can."""
    if not marker.strip():
        return "blank marker"
    if "\n" in marker or "\r" in marker:
        return "marker spans more than one line"
    return None


def parse_region_declarations(raw: object) -> tuple[list[RegionDecl], list[str]]:
    """Declarations from a manifest's ``regions`` value, and one problem string per skipped entry.

    Defensive on purpose: a broken declaration must never stop an update, it only loses
    its masking (its paths fall back to the whole-file comparison). Keys may be GAIA's
    camelCase (``startMarker``) or snake_case (``start_marker``). For a duplicate id the
    first declaration wins.
    """
    entries, problems = _entries(raw)
    decls: list[RegionDecl] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        label = _label(index, entry)
        try:
            decl = _parse_one(entry)
        except _Malformed as error:
            problems.append(f"{label}: {error}; skipped")
            continue
        if decl.id in seen:
            problems.append(f"{label}: duplicate id, the first declaration wins; skipped")
            continue
        seen.add(decl.id)
        decls.append(decl)
    return decls, problems


def dropped_declarations(base_decls: list[RegionDecl], latest_decls: list[RegionDecl]) -> list[str]:
    """Ids declared by the baseline release but no longer by the latest, in baseline order."""
    kept = {decl.id for decl in latest_decls}
    return [decl.id for decl in base_decls if decl.id not in kept]


def _entries(raw: object) -> tuple[list[object], list[str]]:
    if raw is None:
        return [], []
    if isinstance(raw, str | bytes):
        # A manifest read as text elsewhere may hand us the raw JSON of the field.
        if not raw.strip():
            return [], []
        try:
            raw = json_loads(raw)
        except ValueError:
            return [], ["regions: not valid JSON; no region declarations loaded"]
    if not isinstance(raw, list):
        return [], [f"regions: expected a list, got {type(raw).__name__}; none loaded"]
    return list(raw), []


def _label(index: int, entry: object) -> str:
    if isinstance(entry, dict):
        ident = entry.get("id")
        if isinstance(ident, str) and ident.strip():
            return f"regions[{index}] ({ident})"
    return f"regions[{index}]"


def _field(entry: dict[str, object], camel: str, snake: str) -> object:
    if camel in entry:
        return entry[camel]
    if snake in entry:
        return entry[snake]
    raise _Malformed(f"missing field {camel!r}")


def _text(entry: dict[str, object], camel: str, snake: str | None = None) -> str:
    value = _field(entry, camel, snake or camel)
    if not isinstance(value, str):
        raise _Malformed(f"field {camel!r} is not a string")
    if not value.strip():
        raise _Malformed(f"field {camel!r} is blank")
    return value


def _marker(entry: dict[str, object], camel: str, snake: str) -> str:
    value = _text(entry, camel, snake)
    problem = marker_problem(value)
    if problem:
        raise _Malformed(f"{camel}: {problem}")
    return value


def _string_list(value: object, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Malformed(f"field {name!r} is not a list of strings")
    return list(value)


def _paths(entry: dict[str, object]) -> tuple[str, ...]:
    paths = _string_list(_field(entry, "paths", "paths"), "paths")
    if not paths:
        raise _Malformed("field 'paths' is empty")
    for path in paths:
        problem = project_path_problem(path)
        if problem:
            raise _Malformed(f"path {path!r}: {problem}")
    return tuple(dict.fromkeys(paths))


def _regenerate(entry: dict[str, object]) -> RegenSpec | None:
    value = entry.get("regenerate")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Malformed("field 'regenerate' is not an object")
    # The runner decides whether the command is safe to run; here we only check its shape,
    # so an unsafe command is reported as "refused" with its literal text, not lost.
    args = _string_list(value.get("args", []), "regenerate.args")
    return RegenSpec(
        interpreter=_text(value, "interpreter"),
        operand=_text(value, "operand"),
        args=tuple(args),
    )


def _parse_one(entry: object) -> RegionDecl:
    if not isinstance(entry, dict):
        raise _Malformed(f"not an object ({type(entry).__name__})")
    start = _marker(entry, "startMarker", "start_marker")
    end = _marker(entry, "endMarker", "end_marker")
    if start == end:
        raise _Malformed("startMarker and endMarker are the same line")
    return RegionDecl(
        id=_text(entry, "id"),
        start_marker=start,
        end_marker=end,
        paths=_paths(entry),
        regenerate=_regenerate(entry),
        inputs=_inputs(entry),
    )


def _inputs(entry: dict[str, object]) -> tuple[str, ...]:
    raw = entry.get("inputs", [])
    if not isinstance(raw, list) or not all(isinstance(p, str) and p for p in raw):
        raise _Malformed("'inputs' must be a list of paths")
    return tuple(raw)


# --- marker scan and masking ---------------------------------------------------------------


@dataclass(frozen=True)
class Scan:
    """Where the markers are. Line numbers are 1-based and point at the marker lines."""

    kind: ScanKind
    start_line: int | None = None
    end_line: int | None = None
    reason: MalformedReason | None = None


def _as_bytes(text: bytes | str) -> bytes:
    # surrogateescape round-trips text that was decoded from undecodable bytes.
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their endings kept; only ``\\n`` ends a line (a lone ``\\r`` does not)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _bare(line: bytes) -> bytes:
    """The line without its ending; a CRLF ending counts as an ending, so CRLF files match."""
    return line.removesuffix(b"\n").removesuffix(b"\r")


def _check_markers(start: str, end: str) -> None:
    for marker in (start, end):
        problem = marker_problem(marker)
        if problem:
            raise ValueError(f"{problem}: {marker!r}")
    if start == end:
        raise ValueError("start and end markers are the same line")


def scan_markers(text: bytes | str, start: str, end: str) -> Scan:
    """Find the region. A marker matches only a whole line equal to it (no surrounding
    whitespace), so a marker quoted in indented prose or a code block is not a region."""
    _check_markers(start, end)
    start_b, end_b = _as_bytes(start), _as_bytes(end)
    bare = [_bare(line) for line in split_lines(_as_bytes(text))]
    starts = [number for number, line in enumerate(bare, 1) if line == start_b]
    ends = [number for number, line in enumerate(bare, 1) if line == end_b]
    if not starts and not ends:
        return Scan("absent")
    if len(starts) > 1:
        return Scan("malformed", reason="duplicate-start")
    if len(ends) > 1:
        return Scan("malformed", reason="duplicate-end")
    if not starts or not ends:
        return Scan("malformed", reason="unbalanced")
    if ends[0] < starts[0]:
        return Scan("malformed", reason="inverted")
    return Scan("region", start_line=starts[0], end_line=ends[0])


def mask_region(text: bytes | str, scan: Scan) -> bytes:
    """Replace the lines strictly between the markers with one placeholder line.

    Always one line, even for an empty body, so an empty and a filled region compare
    equal. The placeholder takes the start marker's line ending to keep CRLF files whole.
    """
    data = _as_bytes(text)
    if scan.kind != "region" or scan.start_line is None or scan.end_line is None:
        return data
    lines = split_lines(data)
    start_line = lines[scan.start_line - 1]
    eol = b"\r\n" if start_line.endswith(b"\r\n") else b"\n"
    kept_head = lines[: scan.start_line]
    kept_tail = lines[scan.end_line - 1 :]
    return b"".join([*kept_head, PLACEHOLDER.encode() + eol, *kept_tail])


def region_body(text: bytes | str, scan: Scan) -> bytes:
    """The lines strictly between the markers (what ``mask_region`` holds out)."""
    if scan.kind != "region" or scan.start_line is None or scan.end_line is None:
        return b""
    return b"".join(split_lines(_as_bytes(text))[scan.start_line : scan.end_line - 1])


def fill_placeholder(merged: bytes, body: bytes | None) -> bytes | None:
    """``merged`` (a line merge of masked texts) with its placeholder line put back as
    ``body``. Without a placeholder it is returned as it is (the merge dropped the region);
    None when it cannot be filled: more than one placeholder line, or one and no body."""
    lines = split_lines(merged)
    at = [i for i, line in enumerate(lines) if _bare(line) == PLACEHOLDER.encode()]
    if not at:
        return merged
    if len(at) > 1 or body is None:
        return None
    return b"".join([*lines[: at[0]], body, *lines[at[0] + 1 :]])


# --- comparison ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SideScan:
    scan: Scan
    masked: bool
    normalized: bytes

    def document(self) -> dict[str, object]:
        doc: dict[str, object] = {"scan": self.scan.kind, "masked": self.masked}
        if self.scan.reason:
            doc["detail"] = self.scan.reason
        return doc


@dataclass(frozen=True)
class RegionComparison:
    verdict: Verdict
    baseline: SideScan
    latest: SideScan
    current: SideScan
    bailed: bool

    def side(self, name: Side) -> SideScan:
        return {"baseline": self.baseline, "latest": self.latest, "current": self.current}[name]

    @property
    def fallback(self) -> str | None:
        """``malformed-markers`` when a malformed side forced a whole-file comparison."""
        return FALLBACK_MALFORMED if self.bailed else None

    @property
    def absent_markers(self) -> tuple[Side, ...]:
        """Sides without markers (a pre-region copy): informational, they compare raw."""
        return tuple(name for name in SIDES if self.side(name).scan.kind == "absent")

    def markers_document(self) -> dict[str, object]:
        doc: dict[str, object] = {"bailed": self.bailed}
        for name in SIDES:
            doc[name] = self.side(name).document()
        return doc

    def document(self) -> dict[str, object]:
        """The ``region-compare --json`` document."""
        normalized = {name: self.side(name).normalized.decode("utf-8", "replace") for name in SIDES}
        return {
            "verdict": self.verdict,
            "markers": self.markers_document(),
            "normalized": normalized,
        }


def _verdict(baseline: bytes, latest: bytes, current: bytes) -> Verdict:
    # Same order as the per-file decision table, so the verdicts land in its buckets.
    if baseline == latest:
        return "no-upstream-change"
    if current == baseline:
        return "no-adopter-drift"
    if current == latest:
        return "already-latest"
    return "conflict"


def compare_region_file(
    baseline: bytes | str,
    latest: bytes | str,
    current: bytes | str,
    start: str,
    end: str,
) -> RegionComparison:
    """Compare the three copies of a region file with each region body masked.

    If any side's markers are malformed none is masked: masking only some sides would
    make them differ for a reason nobody can act on. Raises ValueError for unusable markers.
    """
    texts = [_as_bytes(text) for text in (baseline, latest, current)]
    scans = [scan_markers(text, start, end) for text in texts]
    bailed = any(scan.kind == "malformed" for scan in scans)
    sides = [
        SideScan(
            scan=scan,
            masked=not bailed and scan.kind == "region",
            normalized=text if bailed else mask_region(text, scan),
        )
        for text, scan in zip(texts, scans, strict=True)
    ]
    verdict = _verdict(*(side.normalized for side in sides))
    return RegionComparison(verdict, sides[0], sides[1], sides[2], bailed)


def _patch_lines(data: bytes) -> list[str]:
    # Split on "\n" only (as the scanner does); UTF-8 never splits a character at "\n".
    lines = [line.decode("utf-8", "replace") for line in split_lines(data)]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def conflict_patch(comparison: RegionComparison, path: str) -> str:
    """A unified diff from the current copy to the latest, both normalized.

    When the sides were masked the patch shows the placeholder, never a region body, so
    the adopter reads only the divergence they caused by hand. Empty when they are equal.
    """
    diff = difflib.unified_diff(
        _patch_lines(comparison.current.normalized),
        _patch_lines(comparison.latest.normalized),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(diff)
