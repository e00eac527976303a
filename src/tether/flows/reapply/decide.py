"""Deciding one saved file: the outcome of merging the user's copy into the installed one on
its baseline, computed without touching the disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tether.engine.patches import markers_would_break_first_line, unified_patch
from tether.engine.textfmt import eol_style, is_binary
from tether.engine.twoway import TwoWay, compare_two_way
from tether.engine.verify import verify_preserved
from tether.flows.merging import merge_sides
from tether.flows.reapply.baseline import Found
from tether.flows.reapply.report import (
    CONFLICT,
    FAILED,
    INCORPORATED,
    MERGED,
    FileResult,
    Reason,
    Why,
    record_verification_failure,
)


@dataclass
class Decision:
    """What reapply does for one file: the result, the bytes the target should end with
    (None: leave the installed version), and what the verification gate needs."""

    result: FileResult
    theirs: bytes | None = None  # the installed version
    write: bytes | None = None
    base: bytes | None = None
    ours: bytes | None = None
    gate: bool = False  # a clean merge the verifier must pass
    artifact: bytes | None = None
    restore: bool = False  # put the installed version back over an interrupted run's write
    saved: bytes | None = None  # the user's saved copy
    on_disk: bytes | None = None  # what the target holds now
    # A dropped file the user drops after an interrupted run had kept it: its copy goes.
    remove: bool = False
    # What the verifier holds the written merge to, when not all of ``ours``: a conflict
    # settled ``theirs`` keeps only the changes of yours that did not clash.
    must_keep: bytes | None = None

    @property
    def kept_side(self) -> bytes | None:
        """The "ours" of the verification and of the hunk table."""
        return self.must_keep if self.must_keep is not None else self.ours


def decide_saved_file(
    rel: str,
    ours: bytes,
    theirs: bytes | None,
    found: Found,
    style: str,
    patch: Path,
    *,
    home: str = "",
    release_hint: str = "",
) -> Decision:
    """The outcome for one saved file, computed without touching the disk. ``release_hint``:
    the option that makes the release the patches were saved from the baseline."""
    origin = found.origin
    if theirs is None:
        reason = Reason(Why.DROPPED, str(patch))
        return Decision(FileResult(rel, CONFLICT, reason, origin))
    if ours == theirs:
        return Decision(FileResult(rel, INCORPORATED, Reason(Why.IDENTICAL), origin), theirs)
    if found.drifted:
        drifted = FileResult(rel, FAILED, baseline_notes=found.notes, drifted=True)
        drifted.pristine_is_installed = found.copy == theirs
        return Decision(drifted, theirs)
    if found.accepted and found.data == theirs:
        # GSD 1.42 and later fill gsd-pristine/ from the new release: with it as the base the
        # merge is the saved copy itself, every upstream change undone.
        reason = Reason(Why.ACCEPTED_IS_INSTALLED, other=release_hint)
        return Decision(FileResult(rel, FAILED, reason, "pristine"), theirs)
    if found.data is None:
        decision = _no_baseline(rel, ours, theirs, style, patch)
        decision.result.baseline_notes, decision.result.no_baseline = found.notes, True
        if decision.result.status == CONFLICT and not is_binary(ours + theirs):
            _describe_two_way(decision.result, compare_two_way(ours, theirs, home))
        return decision
    decision = _merge(rel, found.data, ours, theirs, found, style, patch)
    decision.result.user_commits = list(found.commits)
    return decision


def _describe_two_way(result: FileResult, compared: TwoWay) -> None:
    """A conflict without a baseline names the user's edits, or, when every difference is
    mechanical drift, asks whether the file was customised on purpose; it stays a conflict
    either way, since the file was saved because it differed from what was installed."""
    result.user_edits = list(compared.edits)
    result.two_way = "drift-only" if compared.drift_only else "edits"


def _no_baseline(rel: str, ours: bytes, theirs: bytes, style: str, patch: Path) -> Decision:
    """Without a baseline no line can be attributed to either side: show both, decide nothing."""
    if is_binary(ours) or is_binary(theirs):
        reason = Reason(Why.BINARY_NO_BASELINE, str(patch))
        return Decision(FileResult(rel, CONFLICT, reason), theirs)
    both = both_versions(ours, theirs)
    if style == "patch" or markers_would_break_first_line(both, ours, theirs):
        reason = Reason(Why.PATCH_NO_BASELINE, first_line=style != "patch")
        decision = Decision(FileResult(rel, CONFLICT, reason), theirs)
        decision.artifact = unified_patch(rel, theirs, ours)
        return decision
    reason = Reason(Why.BOTH_VERSIONS)
    return Decision(FileResult(rel, CONFLICT, reason), theirs, write=both)


def both_versions(ours: bytes, theirs: bytes) -> bytes:
    """The whole file as one conflict without a base section (there is none to show)."""
    eol = b"\r\n" if eol_style(theirs) == "crlf" else b"\n"

    def block(data: bytes) -> bytes:
        return data if not data or data.endswith(b"\n") else data + eol

    return (
        b"<<<<<<< yours (saved copy)"
        + eol
        + block(ours)
        + b"======="
        + eol
        + block(theirs)
        + b">>>>>>> installed"
        + eol
    )


def _merge(
    rel: str, base: bytes, ours: bytes, theirs: bytes, found: Found, style: str, patch: Path
) -> Decision:
    """The merge on a baseline; the decision keeps both sides for the hunk table."""
    decision = _merge_outcome(rel, base, ours, theirs, found, style, patch)
    decision.base, decision.ours = base, ours
    return decision


def _merge_outcome(
    rel: str, base: bytes, ours: bytes, theirs: bytes, found: Found, style: str, patch: Path
) -> Decision:
    origin, notes = found.origin, found.notes
    if ours == base:
        # sha256(ours) is then the pristine hash: the backup step should never have saved it.
        reason = Reason(Why.SAVED_IS_BASELINE)
        return Decision(FileResult(rel, FAILED, reason, origin), theirs)
    labels = ("yours (saved copy)", f"baseline ({origin})", "installed")
    merged, not_merged = merge_sides(base, ours, theirs, labels=labels)
    if merged.conflicts == 0 and merged.merged == theirs:
        # Nothing is written, so the writer's gate never sees this file: check it here.
        verdict = verify_preserved(base, ours, theirs)
        if not verdict.preserved:
            failed = FileResult(rel, FAILED, Reason(), origin)
            record_verification_failure(failed, verdict, patch, written=False)
            return Decision(failed, theirs)
        if found.verified:
            reason = Reason(Why.ALREADY_IN_RELEASE)
            return Decision(FileResult(rel, INCORPORATED, reason, origin, notes), theirs)
        reason = Reason(Why.MERGE_IS_INSTALLED)
        return Decision(FileResult(rel, MERGED, reason, origin, notes), theirs)
    if merged.conflicts == 0:
        result = FileResult(rel, MERGED, Reason(), origin, notes)
        return Decision(result, theirs, merged.merged, base, ours, gate=True)
    if merged.binary:
        reason = Reason(Why.BINARY_CONFLICT, str(patch), note=not_merged)
        return Decision(FileResult(rel, CONFLICT, reason, origin, notes), theirs)
    first_line = markers_would_break_first_line(merged.merged, base, ours, theirs)
    if style == "patch" or first_line:
        reason = Reason(Why.CONFLICT_PATCH, count=merged.conflicts, first_line=first_line)
        decision = Decision(FileResult(rel, CONFLICT, reason, origin, notes), theirs)
        decision.artifact = unified_patch(rel, base, ours)
        return decision
    reason = Reason(Why.CONFLICT_MARKERS, count=merged.conflicts)
    return Decision(FileResult(rel, CONFLICT, reason, origin, notes), theirs, merged.merged)
