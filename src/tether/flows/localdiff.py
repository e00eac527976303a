"""``tether diff``: the adopter's changes to shipped files, against the installed release.

Which files differ is decided exactly as ``tether status`` decides it (its drift
classification is reused), so the two never disagree; this module only says how they differ.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tether.errors import UsageError
from tether.flows.baseline import Baseline, load_baseline
from tether.flows.project import Project, merge_rules, open_project
from tether.flows.safety import PathGuard
from tether.flows.status import StatusReport, classify_drift
from tether.fsio import NOT_REGULAR, file_mode, is_special_file, read_regular
from tether.model.manifest import FileClass
from tether.templates import TemplateOptions, read_only_options

if TYPE_CHECKING:
    from tether.engine.regions import RegionDecl
    from tether.flows.notes import NoLongerRegular, Note, NotRead
    from tether.flows.regions_plan import RegionPlan
    from tether.model.plan import SideProblem

FileStatus = Literal["modified", "deleted"]
DEV_NULL = "/dev/null"


@dataclass(frozen=True)
class ManagedNotCompared:
    """Why a structured file's managed keys were not compared, worded by
    ``report/diff.managed_error``: ``rule``, the file's merge entry is not usable (the rule
    reader's own message); ``unread``, the sides that do not parse."""

    rule: str = ""
    unread: tuple[SideProblem, ...] = ()


@dataclass
class FileDiff:
    path: str
    status: FileStatus
    owned: bool
    added: int | None = None  # lines; None for a binary file
    removed: int | None = None
    binary: bool = False
    sizes: tuple[int, int] | None = None  # a binary file's bytes: (release, yours)
    region: str | None = None  # the generated region whose body was masked on both sides
    region_fallback: str | None = None  # why a declared region could not be masked
    patch: bytes = b""  # git-style: "diff --git" header, then hunks (or "Binary files …")
    managed_changes: list[dict[str, Any]] | None = None  # structured files only
    not_compared: ManagedNotCompared | None = None  # structured files only: why no managed_changes
    # Why the file was not read (a link, a FIFO, a folder now): report/notes.py words it.
    unread: NotRead | NoLongerRegular | None = None

    @property
    def region_masked(self) -> bool:
        return self.region is not None

    def to_json(
        self, with_text: bool, note: str | None = None, managed_error: str | None = None
    ) -> dict[str, Any]:
        """``note``: the words of ``unread``; ``managed_error``: the words of
        ``not_compared`` (both from report/diff.diff_document)."""
        doc: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "owned": self.owned,
            "binary": self.binary,
            "added": self.added,
            "removed": self.removed,
            "region_masked": self.region_masked,
            "region": self.region,
        }
        if self.sizes is not None:
            doc["old_bytes"], doc["new_bytes"] = self.sizes
        if self.region_fallback:
            doc["region_fallback"] = self.region_fallback
        if note:
            doc["note"] = note
        if self.managed_changes is not None or self.not_compared is not None:
            doc["managed_changes"] = self.managed_changes
            doc["managed_error"] = managed_error
        if with_text:
            doc["diff"] = self.patch.decode("utf-8", "replace")
        return doc


@dataclass
class RegionOnly:
    """A file that differs from the release only inside a generated region's body."""

    path: str
    region: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "region": self.region}


@dataclass
class DiffReport:
    profile: str
    upstream: str
    source: str
    installed_version: str
    selection: list[str] = field(default_factory=list)  # the PATH arguments, normalised
    files: list[FileDiff] = field(default_factory=list)
    region_only: list[RegionOnly] = field(default_factory=list)
    stat_only: bool = False
    # How the baseline was made, where a person should know (a template hook not run).
    notes: list[Note] = field(default_factory=list)  # worded by report/notes.py

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)

    def to_json(
        self,
        file_notes: Mapping[str, str] | None = None,
        managed_errors: Mapping[str, str] | None = None,
    ) -> dict[str, object]:
        """``file_notes``: path -> the words of why a file was not read; ``managed_errors``:
        path -> the words of why its managed keys were not compared (report/diff.py)."""
        notes, errors = file_notes or {}, managed_errors or {}
        return {
            "profile": self.profile,
            "upstream": self.upstream,
            "source": self.source,
            "installed_version": self.installed_version,
            "paths": self.selection,
            "files": [
                f.to_json(not self.stat_only, notes.get(f.path), errors.get(f.path))
                for f in self.files
            ],
            "region_only": [r.to_json() for r in self.region_only],
            "totals": {"files": len(self.files), "added": self.added, "removed": self.removed},
        }


def local_diff(
    root: Path,
    paths: list[str] | None = None,
    profile: str | None = None,
    source: str | None = None,
    stat_only: bool = False,
    no_regions: bool = False,
    template: TemplateOptions | None = None,
) -> DiffReport:
    project = open_project(root, profile, read_only_options(template))
    baseline = load_baseline(project, source)
    report = DiffReport(project.profile.name, baseline.upstream, baseline.source, baseline.version)
    report.notes = list(baseline.notes)
    report.stat_only = stat_only
    report.selection = [selected_path(project, baseline, arg) for arg in paths or []]
    drift = StatusReport(report.profile, report.upstream, report.source, report.installed_version)
    # Whole-file here: region masking is done per file below, so a difference confined to a
    # generated region can be named instead of silently left out.
    classify_drift(project, baseline, drift, no_regions=True)
    chosen = [
        rel for rel in sorted(drift.modified + drift.deleted) if _selected(report.selection, rel)
    ]
    if chosen:
        _DiffMaker(project, baseline, no_regions).fill(report, chosen, set(drift.deleted))
    return report


def selected_path(project: Project, baseline: Baseline, arg: str) -> str:
    """A PATH argument as a project-relative path naming shipped files; UsageError otherwise."""
    spelled = os.path.relpath(arg, project.root) if os.path.isabs(arg) else arg
    rel = posixpath.normpath(spelled.replace(os.sep, "/"))
    if rel == ".." or rel.startswith("../"):
        raise UsageError(f"{arg}: outside the project {project.root}")
    if rel == ".":
        return rel
    if rel in baseline.sentinels:
        raise UsageError(f"{arg}: a sentinel file, the project's own; it has no diff")
    shipped = (p for p in baseline.files if p not in baseline.sentinels)
    if not any(_selected([rel], p) for p in shipped):
        raise UsageError(
            f"{arg}: no file of {baseline.upstream} {baseline.version} is at or under this path"
        )
    return rel


def _selected(selection: list[str], rel: str) -> bool:
    """Is ``rel`` at or under one of the selected paths (all are, without a selection)?"""
    if not selection:
        return True
    return any(s in (".", rel) or rel.startswith(s + "/") for s in selection)


class _DiffMaker:
    """Builds one FileDiff per differing file (made only when some file differs: it reads
    the installed manifest, which a fresh clone must fetch)."""

    def __init__(self, project: Project, baseline: Baseline, no_regions: bool) -> None:
        from tether.flows.regions_plan import plan_regions, regions_disabled

        self.project = project
        self.guard = PathGuard(project.root)
        self.baseline = baseline
        manifest = baseline.manifest()
        self.regions: RegionPlan = plan_regions(None, manifest, regions_disabled(no_regions))
        # A manifest read back from the pristine cache lacks the profile's default presets.
        self.merge_rules = merge_rules(project.profile, manifest.merge)

    def fill(self, report: DiffReport, chosen: list[str], deleted: set[str]) -> None:
        for rel in chosen:
            owned = self.baseline.files[rel].cls is FileClass.OWNED
            if rel in deleted:
                report.files.append(self.deletion(rel, owned))
                continue
            made = self.modification(rel, owned)
            if isinstance(made, RegionOnly):
                report.region_only.append(made)
            else:
                report.files.append(made)

    def base_bytes(self, rel: str) -> bytes:
        return self.baseline.read(rel) or b""

    def deletion(self, rel: str, owned: bool, status: FileStatus = "deleted") -> FileDiff:
        """The whole file removed (also for a path that is no longer a regular file)."""
        from tether.engine.patches import git_header, line_diff
        from tether.engine.textfmt import is_binary

        base = self.base_bytes(rel)
        header = git_header(rel, base, None, self.baseline.files[rel].mode)
        result = FileDiff(rel, status, owned)
        if is_binary(base):
            result.binary, result.sizes = True, (len(base), 0)
            result.patch = header + f"Binary files a/{rel} and {DEV_NULL} differ\n".encode()
            return result
        lines = line_diff(base, b"", f"a/{rel}", DEV_NULL)
        result.added, result.removed = lines.added, lines.removed
        result.patch = header + lines.text
        return result

    def modification(self, rel: str, owned: bool) -> FileDiff | RegionOnly:
        from tether.engine.patches import git_header, line_diff
        from tether.engine.textfmt import is_binary

        # A link (at the path or on the way out of the project) is never followed.
        problem, _ = self.guard.inspect_for_reading(rel)
        current = None if problem else _read_current(self.project.path(rel))
        if current is None:
            from tether.flows.notes import NoLongerRegular, NotRead

            gone = self.deletion(rel, owned, "modified")
            if problem:
                gone.unread = NotRead(rel, problem)
            elif is_special_file(self.project.path(rel)):
                gone.unread = NotRead(rel, NOT_REGULAR)
            else:
                gone.unread = NoLongerRegular(rel)
            return gone
        base = self.base_bytes(rel)
        result = FileDiff(rel, "modified", owned)
        mode = file_mode(self.project.path(rel))
        if is_binary(base) or is_binary(current):
            result.binary, result.sizes = True, (len(base), len(current))
            header = git_header(rel, base, current, mode)
            result.patch = header + f"Binary files a/{rel} and b/{rel} differ\n".encode()
            return result
        old, new = comparable_text(base, current)
        decl = self.regions.by_path.get(rel)
        if decl is not None:
            masked = self.mask(result, decl, old, new)
            if masked is None:
                return RegionOnly(rel, decl.id)
            old, new = masked
        lines = line_diff(old, new, f"a/{rel}", f"b/{rel}")
        result.added, result.removed = lines.added, lines.removed
        result.patch = git_header(rel, old, new, mode) + lines.text
        self.add_managed_changes(result, base, current)
        return result

    def mask(
        self, result: FileDiff, decl: RegionDecl, old: bytes, new: bytes
    ) -> tuple[bytes, bytes] | None:
        """Both sides with the region body masked; None when nothing else differs."""
        from tether.engine.regions import compare_region_file

        compared = compare_region_file(old, old, new, decl.start_marker, decl.end_marker)
        if compared.fallback:
            result.region_fallback = compared.fallback
            return old, new
        if not (compared.baseline.masked or compared.current.masked):
            return old, new
        masked_old, masked_new = compared.baseline.normalized, compared.current.normalized
        if masked_old == masked_new:
            return None
        result.region = decl.id
        return masked_old, masked_new

    def add_managed_changes(self, result: FileDiff, base: bytes, current: bytes) -> None:
        spec = self.merge_rules.get(result.path)
        if spec is None:
            return
        from tether.engine.structured import rules_for
        from tether.engine.structured.changes import managed_changes

        try:
            found = managed_changes(result.path, rules_for(result.path, spec), base, current)
        except ValueError as error:
            result.not_compared = ManagedNotCompared(rule=str(error))
            return
        if found.unread:
            result.not_compared = ManagedNotCompared(unread=found.unread)
            return
        result.managed_changes = [change.to_json() for change in found.changes]


def comparable_text(base: bytes, current: bytes) -> tuple[bytes, bytes]:
    """The two texts with a CRLF checkout's line endings out of the way, as status ignores
    them (tether.flows.status._crlf_checkout_of): the release is shown in the checkout's
    endings, so the diff applies to the file on disk; a file with mixed endings is shown
    with LF endings.
    """
    from tether.engine.eol import in_style_of
    from tether.engine.textfmt import eol_style, to_lf

    if b"\r\n" not in current:
        return base, current  # status compared the bytes: so does the diff
    if eol_style(current) == "crlf" and eol_style(base) in ("lf", "crlf"):
        return in_style_of(base, current), current
    return to_lf(base), to_lf(current)


def _read_current(path: Path) -> bytes | None:
    """The file's bytes; None when it is no longer a readable regular file (a FIFO or
    device is not opened)."""
    try:
        return read_regular(path)
    except OSError:
        return None
