"""The words of ``tether reapply``: each file's status, and what ``--save`` kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from tether.engine.twoway import DRIFT_KINDS
from tether.flows.reapply import (
    BY_HAND,
    CONFLICT,
    FAILED,
    INCORPORATED,
    MERGED,
    RESOLVED,
    FileResult,
    ReapplyReport,
    SaveReport,
)
from tether.flows.reapply.baseline import BaselineNote, BaselineNoteCode
from tether.flows.reapply.patches import META_FILE
from tether.flows.reapply.report import KeptBecause, Reason, Why, release_baseline_option
from tether.report.reasons import merge_note
from tether.report.update import backup_edited

# Asked at the prompt about a conflict whose copies differ beyond drift.
DIFFERS = "your saved copy and the installed file both changed here."
# Asked about a saved file the new release no longer ships.
DROPPED_QUESTION = "the new release no longer ships this file (the diff shows your copy)."
# Asked of a file without a baseline whose every difference is mechanical drift.
DRIFT_QUESTION = (
    "only path, quoting or whitespace differences were found between your saved copy and "
    "the installed file: did you customise this file on purpose?"
)
# Why --auto ours/theirs cannot settle a conflict without a baseline.
NO_HUNKS = (
    "no baseline to tell the clashing lines from the others: settle it with keep-mine or "
    "take-theirs, or by hand"
)
DROPPED = "the installed release no longer has this file"
# Why a file that would get conflict markers at line 1 gets a patch instead.
FIRST_LINE = (
    "no conflict markers at line 1: they would break the file's front matter; the file is "
    "left as installed"
)


def reapply_document(report: ReapplyReport) -> dict[str, Any]:
    """The ``--json`` document: the report's data with its words."""
    kept = report.backups_kept_because
    document = report.to_json(
        [result_document(result) for result in report.results],
        drift_remedies(report),
        kept_because(kept) if kept is not None else None,
    )
    return {**document, "notes": reapply_notes(report)}


def reapply_notes(report: ReapplyReport) -> list[str]:
    """What a resumed run found that a person must know, in an update's words."""
    backups = str(report.backup_dir) if report.backup_dir is not None else None
    return [backup_edited(path, backups) for path in report.backups_edited]


def drift_remedies(report: ReapplyReport) -> list[str]:
    """What to do about pristine drift, the way that works first (none without it).
    Accepting the drifted copy is offered only when it is not the installed release."""
    if not report.drifted_files:
        return []
    remedies = [
        "use the release the patches were saved from as the baseline, fetched from the npm "
        f"registry: rerun with {release_baseline_option(report.from_version)}",
        "re-anchor the pristine copy: put the bytes whose sha256 is the recorded pristine hash "
        "at <pristine>/<path> (or give --git / --baseline-source where they can be found)",
        "restore from the patch and merge by hand: your copy is <patches>/<path>",
    ]
    if report.accept_offered:
        remedies.append(
            "accept the new pristine hash: rerun with --accept-pristine <path> to merge on the "
            "current pristine copy"
        )
    return remedies


def kept_because(kept: KeptBecause) -> str:
    """Why ``--remove-backups`` kept the patches."""
    kind = kept.kind
    if kind == "dry-run":
        return "dry run"
    if kind == "failed":
        return f"{kept.count} file(s) failed; your copies are needed to merge by hand"
    if kind == "conflicts":
        return f"{kept.count} conflict(s) left; your copies are needed to settle them"
    if kind == "settled-theirs":
        named = ", ".join(f"{file}: {resolution}" for file, resolution in kept.settled)
        return (
            f"{len(kept.settled)} file(s) settled toward the installed release ({named}): "
            "the saved copy is the only copy of the change of yours it dropped"
        )
    if kind == "folder-is-link":
        return f"{kept.folder} is a link; tether removes no folder through a link"
    if kind == "holds-install":
        return f"{kept.folder} holds the installed release {kept.target}; not removing it"
    if kind == "unlisted":
        return (
            f"{kept.folder} holds {kept.path}, which {META_FILE} does not list; "
            "not removing a file that may be the only copy"
        )
    if kind == "error":
        return kept.message
    assert_never(kind)


def result_document(result: FileResult) -> dict[str, Any]:
    """One file's part of the document: its data, its reason and the drift question."""
    return result.to_json(file_reason(result), question(result))


def question(result: FileResult) -> str | None:
    """What to ask a person about the file, when only mechanical drift differs."""
    return DRIFT_QUESTION if result.two_way == "drift-only" else None


def file_reason(result: FileResult) -> str:
    """A file's reason: what happened ("no baseline (...)" first when there was none), the
    baseline's notes, what a comparison without one found and what --auto could not do."""
    notes = "; ".join(baseline_note(note) for note in result.baseline_notes)
    outcome = _OUTCOME[result.reason.code](result.reason, result)
    parts = [outcome, notes]
    if result.no_baseline:
        parts = ["no baseline" + (f" ({notes})" if notes else ""), outcome]
    if result.two_way == "drift-only":
        parts.append(f"only mechanical drift ({', '.join(DRIFT_KINDS)}) differs")
    elif result.two_way == "edits":
        parts.append(f"{len(result.user_edits)} edit(s) of yours beyond mechanical drift")
    if result.auto_left is not None:
        parts.append(f"--auto {result.auto_left} left it: {NO_HUNKS}")
    return "; ".join(part for part in parts if part)


def _first_line(reason: Reason) -> str:
    return f" ({FIRST_LINE})" if reason.first_line else ""


def _favored(reason: Reason) -> str:
    side = "your side" if reason.other == "ours" else "the installed release's side"
    hunks = "hunk" if reason.count == 1 else "hunks"
    said = f" ({merge_note(reason.note)})" if reason.note is not None else ""
    return f"{reason.count} clashing {hunks} took {side}; every other change merged{said}"


def _verification_failed(reason: Reason, result: FileResult) -> str:
    parts = []
    if result.missing:
        parts.append(f"{len(result.missing)} of your line(s) missing")
    if result.readded:
        parts.append(f"{len(result.readded)} line(s) you deleted came back")
    state = (
        "the installed version is back" if reason.written else "the installed file is left as it is"
    )
    return f"verification failed ({', '.join(parts)}): {state}, your copy stays at {reason.patch}"


# What happened to a saved file, in words, by its reason's code.
_OUTCOME: dict[Why, Callable[[Reason, FileResult], str]] = {
    Why.NOTHING: lambda r, _: "",
    Why.DROPPED: lambda r, _: f"{DROPPED}; your copy stays at {r.patch}",
    Why.IDENTICAL: lambda r, _: "your copy is identical to the installed file",
    Why.ACCEPTED_IS_INSTALLED: lambda r, _: (
        "the pristine copy accepted with --accept-pristine is the installed release "
        "itself: merging on it would undo every upstream change; use the release the "
        f"patches were saved from as the baseline ({r.other})"
    ),
    Why.BINARY_NO_BASELINE: lambda r, _: f"binary file left as installed, your copy is {r.patch}",
    Why.PATCH_NO_BASELINE: lambda r, _: (
        "the patch turns the installed file into your copy" + _first_line(r)
    ),
    Why.BOTH_VERSIONS: lambda r, _: "both versions written into the file",
    Why.SAVED_IS_BASELINE: lambda r, _: (
        "your saved copy equals its baseline: the backup is inconsistent, nothing merged"
    ),
    Why.ALREADY_IN_RELEASE: lambda r, _: "your change is already in the installed release",
    Why.MERGE_IS_INSTALLED: lambda r, _: "nothing to write: the merge equals the installed file",
    Why.BINARY_CONFLICT: lambda r, _: (
        f"{merge_note(r.note) if r.note else 'binary file changed on both sides'}: left as "
        f"installed, your copy is {r.patch}"
    ),
    Why.CONFLICT_PATCH: lambda r, _: (
        f"{r.count} conflicting hunk(s); the patch is your change to the baseline" + _first_line(r)
    ),
    Why.CONFLICT_MARKERS: lambda r, _: f"{r.count} conflicting hunk(s) marked in the file",
    Why.UNSAFE_PATH: lambda r, _: f"unsafe path: {r.text}",
    Why.SAME_FILE: lambda r, _: (
        f"the same file on disk as {r.other} (through a link); merge it by hand from {r.patch}"
    ),
    Why.SAVED_MISSING: lambda r, _: f"the saved copy {r.patch} is missing",
    Why.ERROR: lambda r, _: r.text,
    Why.EARLIER_REAPPLIED: lambda r, _: "already reapplied by an earlier run",
    Why.EARLIER_UNRESOLVED: lambda r, _: (
        "conflict markers from an earlier run are still unresolved"
    ),
    Why.EARLIER_EDITED: lambda r, _: (
        "already reapplied by an earlier run and edited since; left as it is"
    ),
    Why.EARLIER_MARKERS_EDITED: lambda r, _: (
        "the conflict of an earlier run is edited but still has conflict markers"
    ),
    Why.BY_HAND: lambda r, _: "you resolved the conflict of an earlier run by hand",
    Why.CHANGED_SINCE: lambda r, _: "the file changed since the interrupted run; left as it is",
    Why.KEPT_DROPPED: lambda r, _: f"{DROPPED}; you kept it as your own file (your saved copy)",
    Why.DROPPED_TOO: lambda r, _: (
        f"{DROPPED}; you dropped it (your copy stays in the patches folder)"
    ),
    Why.KEPT_MINE: lambda r, _: (
        "you kept your whole saved copy (the installed version is backed up)"
    ),
    Why.TOOK_THEIRS: lambda r, _: (
        "you took the installed file whole; your copy stays in the patches folder"
    ),
    Why.FAVORED: lambda r, _: _favored(r),
    Why.VERIFICATION_FAILED: _verification_failed,
    Why.NOT_WRITTEN: lambda r, _: f"not written: {r.text}",
}


def baseline_note(note: BaselineNote) -> str:
    """What the search for a file's baseline found, in words."""
    code = note.code
    if code is BaselineNoteCode.NO_PRISTINE_COPY:
        return f"no pristine copy at {note.where}"
    if code is BaselineNoteCode.PRISTINE_UNCHECKED:
        return "the pristine copy cannot be checked: no pristine hash recorded"
    if code is BaselineNoteCode.PRISTINE_DRIFT:
        return (
            f"pristine drift: {note.where} has sha256 {note.sha256}, "
            f"the backup recorded {note.recorded}"
        )
    if code is BaselineNoteCode.PRISTINE_ACCEPTED:
        return f"pristine copy accepted, sha256 {note.sha256}"
    if code is BaselineNoteCode.NO_HASH:
        return "no pristine hash recorded for this file"
    if code is BaselineNoteCode.RELEASE_UNCHECKED:
        return (
            f"no pristine hash recorded: release {note.version} used unchecked, "
            "so the change is never claimed as incorporated"
        )
    if code is BaselineNoteCode.FROM_GIT:
        return f"baseline from git blob {note.blob[:12]}"
    if code is BaselineNoteCode.FROM_RELEASE:
        if note.prefix:
            return (
                f"baseline from release {note.version}, its paths rewritten to {note.prefix} "
                "as GSD's installer wrote them"
            )
        return f"baseline from release {note.version}"
    if code is BaselineNoteCode.RELEASE_MISMATCH:
        rewritten = " (nor with the installer's path rewriting)" if note.rewritten else ""
        return f"release {note.version}'s copy does not match the pristine hash{rewritten}"
    if code is BaselineNoteCode.NOT_FOUND:
        return "no version with the recorded pristine hash was found"
    if code is BaselineNoteCode.BEFORE_YOUR_COMMITS:
        named = ", ".join(f"{commit[:12]} {subject!r}" for commit, subject in note.commits)
        return f"baseline: the file before your commits {named}"
    assert_never(code)


def render(report: ReapplyReport) -> str:
    if report.patches is None:
        return _render_nothing_found(report)
    order = (MERGED, INCORPORATED, RESOLVED, CONFLICT, FAILED)
    counts = ", ".join(f"{report.count(s)} {s}" for s in order if report.count(s))
    head = "dry run: " if report.dry_run else ""
    lines = [f"{head}reapply {report.patches} -> {report.target}: {counts or 'nothing to do'}"]
    lines.append(f"backed up from: {_version(report.from_version)}")
    lines.append(f"current version: {_version(report.installed_version)}")
    lines.append(f"files: {len(report.results)}")
    if report.searched:
        lines.append(f"patches found via {report.patches_source}")
    if report.pristine is not None:
        lines.append(f"pristine copies: {report.pristine}")
    for result in report.results:
        strategy = f"  [baseline: {result.baseline}]"
        lines.append(f"  {result.status:<13} {result.file}{strategy}{_verification(result)}")
        if result.resolution:
            lines.append(f"                resolved: {result.resolution}")
        reason = file_reason(result)
        if reason:
            lines.append(f"                {reason}")
        lines.extend(f"                missing {n}: {text}" for n, text in result.missing)
        lines.extend(f"                deleted but back {n}: {text}" for n, text in result.readded)
        if result.artifact:
            lines.append(f"                patch: {result.artifact}")
        lines.extend(_two_way(result))
    lines.extend(_hunk_table(report))
    lines.extend(_preserved_table(report))
    if report.drifted_files:
        lines.append("pristine drift stopped: " + ", ".join(report.drifted_files))
        remedies = drift_remedies(report)
        lines.extend(f"  {number}. {remedy}" for number, remedy in enumerate(remedies, 1))
    if report.backup_dir is not None and report.backup_dir.exists():
        lines.append(f"installed versions backed up in {report.backup_dir}")
    lines.extend(f"note: {note}" for note in reapply_notes(report))
    lines.append(_patches_line(report))
    lines.append(_closing_line(report))
    return "\n".join(lines)


def _closing_line(report: ReapplyReport) -> str:
    """How many files now carry the user's changes, and whether anything still waits."""
    waiting = report.count(CONFLICT) + report.failures
    verb = "would be updated" if report.dry_run else "updated"
    head = f"{report.updated} file(s) {verb}"
    if waiting:
        return f"{head}; {waiting} file(s) still need you (conflicts or failures above)."
    if report.dry_run:
        return f"{head}; nothing written (dry run)."
    return f"{head}. Your local modifications are active again."


def _patches_line(report: ReapplyReport) -> str:
    if report.backups_removed is not None:
        removed = [f"patch backups removed: {report.backups_removed}"]
        removed += [f"  removed {path}" for path in report.removed_files]
        return "\n".join(removed)
    kept = f"patch backups kept in {report.patches}"
    if report.backups_kept_because is not None:
        return f"{kept} ({kept_because(report.backups_kept_because)})"
    return f"{kept} (--remove-backups removes them after a fully verified run)"


def _two_way(result: FileResult) -> list[str]:
    """Without a recorded baseline: the user's commits used, the edits found, the question."""
    indent = "                "
    lines = [f"{indent}your commit {c[:12]}: {subject}" for c, subject in result.user_commits]
    for edit in result.user_edits:
        lines.append(f"{indent}your edit at line {edit.line}:")
        lines.extend(f"{indent}  - {text}" for text in edit.removed)
        lines.extend(f"{indent}  + {text}" for text in edit.added)
    asked = question(result)
    if asked:
        lines.append(f"{indent}? {asked}")
    return lines


def _version(version: str | None) -> str:
    return f"v{version.removeprefix('v')}" if version else "unknown"


def _verification(result: FileResult) -> str:
    """ "(verified)" when every hunk's signature line is in the final file, else a warning."""
    if not result.hunks or result.status not in (MERGED, INCORPORATED, FAILED):
        return ""
    missing = result.hunks_missing
    return f"  (⚠ {missing} hunk(s) missing)" if missing else "  (verified)"


def _hunk_table(report: ReapplyReport) -> list[str]:
    rows = [(result.file, row) for result in report.results for row in result.hunks]
    if not rows:
        return []
    lines = ["hunk verification:", "  file\thunk_id\tsignature_line\tline_count\tverified"]
    for file, row in rows:
        verified = "yes" if row.verified else "no"
        fields = (file, str(row.hunk_id), row.signature_line, str(row.line_count), verified)
        lines.append("  " + "\t".join(fields))
    return lines


_RESULT_WORDS = {
    MERGED: "merged",
    INCORPORATED: "incorporated",
    RESOLVED: "conflict resolved",
    CONFLICT: "conflict",
    FAILED: "failed",
}
_SHOWN_CHANGES = 3  # per file; the rest are counted


def _preserved_table(report: ReapplyReport) -> list[str]:
    """The closing table: every file, its result and the changes of yours it keeps."""
    if not report.results:
        return []
    width = max(len(result.file) for result in report.results)
    verb = "would keep" if report.dry_run else "kept"
    lines = [f"your changes, file by file (what the file {verb}):"]
    for number, result in enumerate(report.results, 1):
        outcome = _RESULT_WORDS[result.status]
        if result.resolution:
            outcome += f" ({result.resolution})"
        lines.append(f"  {number:>2}  {result.file:<{width}}  {outcome:<28} {_preserved(result)}")
    return lines


def _preserved(result: FileResult) -> str:
    """The seed's "User Changes Preserved", in a few words."""
    changes = _changes(result)
    if result.status == CONFLICT:
        return "none yet: the conflict is yours to settle (your copy is in the patches)"
    if result.status == FAILED:
        return "none written: your copy stays in the patches"
    if result.resolution == BY_HAND:
        return "as you resolved the conflict by hand"
    if result.resolution == "take-theirs":
        return "none in the file: you took the installed file; your copy stays in the patches"
    if result.resolution == "drop":
        return "none: the new release dropped the file and so did you; your copy is in the patches"
    if result.resolution == "keep":
        return "your whole saved copy, now a file of your own" + (f": {changes}" if changes else "")
    if result.resolution == "keep-mine":
        return "your whole saved copy" + (f": {changes}" if changes else "")
    if result.resolution in ("ours", "theirs"):
        side = "your side" if result.resolution == "ours" else "the installed side"
        hunks = "hunk" if result.settled_hunks == 1 else "hunks"
        settled = f"{result.settled_hunks} clashing {hunks} took {side}"
        return f"{changes or 'none of yours'} ({settled})"
    if result.status == INCORPORATED:
        if result.preserved is None:
            return "all: your copy is the installed file"
        return "already in the installed release" + (f": {changes}" if changes else "")
    if result.preserved is None:
        return "already reapplied by an earlier run"
    return changes or "nothing but blank lines"


def _changes(result: FileResult) -> str:
    rows = result.preserved or []
    words = []
    for row in rows[:_SHOWN_CHANGES]:
        text = row.text.strip()
        text = text if len(text) <= 40 else text[:37] + "..."
        if row.kind == "deleted":
            many = f" (+{row.removed - 1} more line(s))" if row.removed > 1 else ""
            words.append(f'deleted "{text}"{many}')
        else:
            words.append(f'{row.kind} "{text}"')
    if len(rows) > _SHOWN_CHANGES:
        words.append(f"{len(rows) - _SHOWN_CHANGES} more change(s)")
    return "; ".join(words)


def _render_nothing_found(report: ReapplyReport) -> str:
    lines = ["No local patches found. Nothing to reapply.", "Searched:"]
    lines.extend(f"  {place}" for place in report.searched)
    lines.append("Patches are saved when an install replaces files you had changed.")
    return "\n".join(lines)


def render_pending(table: list[tuple[str, str]]) -> str:
    """Before the first question: every file with where it stands (a conflict is pending)."""
    width = max((len(file) for file, _ in table), default=4)
    lines = [f"  #  {'file':<{width}}  status", f"  -  {'-' * width}  ------"]
    for number, (file, status) in enumerate(table, 1):
        shown = "pending (conflict)" if status == CONFLICT else status
        lines.append(f"{number:>3}  {file:<{width}}  {shown}")
    return "\n".join(lines)


def render_save(report: SaveReport) -> str:
    if report.folder is None:
        return f"nothing to save: none of {report.checked} files differs from the manifest"
    lines = [f"saved {len(report.files)} customised file(s) to {report.folder}"]
    lines.extend(f"  {rel}" for rel in report.files)
    if report.absent:
        lines.append(f"{len(report.absent)} file(s) in the manifest are gone from the target")
    return "\n".join(lines)
