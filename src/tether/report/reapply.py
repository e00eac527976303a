"""The words of ``tether reapply``: each file's status, and what ``--save`` kept."""

from __future__ import annotations

from tether.flows.reapply import (
    CONFLICT,
    FAILED,
    INCORPORATED,
    MERGED,
    RESOLVED,
    FileResult,
    ReapplyReport,
    SaveReport,
)

# Asked at the prompt about a conflict whose copies differ beyond drift.
DIFFERS = "your saved copy and the installed file both changed here."


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
        if result.reason:
            lines.append(f"                {result.reason}")
        lines.extend(f"                missing {n}: {text}" for n, text in result.missing)
        lines.extend(f"                deleted but back {n}: {text}" for n, text in result.readded)
        if result.artifact:
            lines.append(f"                patch: {result.artifact}")
        lines.extend(_two_way(result))
    lines.extend(_hunk_table(report))
    if report.drifted_files:
        lines.append("pristine drift stopped: " + ", ".join(report.drifted_files))
        lines.extend(f"  {number}. {remedy}" for number, remedy in enumerate(report.remedies, 1))
    if report.backup_dir is not None and report.backup_dir.exists():
        lines.append(f"installed versions backed up in {report.backup_dir}")
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
    if report.backups_kept_because:
        return f"{kept} ({report.backups_kept_because})"
    return f"{kept} (--remove-backups removes them after a fully verified run)"


def _two_way(result: FileResult) -> list[str]:
    """Without a recorded baseline: the user's commits used, the edits found, the question."""
    indent = "                "
    lines = [f"{indent}your commit {c[:12]}: {subject}" for c, subject in result.user_commits]
    for edit in result.user_edits:
        lines.append(f"{indent}your edit at line {edit.line}:")
        lines.extend(f"{indent}  - {text}" for text in edit.removed)
        lines.extend(f"{indent}  + {text}" for text in edit.added)
    if result.question:
        lines.append(f"{indent}? {result.question}")
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
