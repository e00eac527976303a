"""Compute an update plan: read B, A and L for every path and decide, writing nothing."""

from __future__ import annotations

import functools
import os
import time

from tether import progress
from tether.engine.decide import (
    Comparison,
    Row,
    bucket_for_row,
    decide_dropped,
    decide_row,
    row_ignores_adopter_bytes,
)
from tether.engine.eol import in_style_of, same_text
from tether.engine.patches import (
    markers_would_break_first_line,
    unified_patch,
    whole_file_markers,
)
from tether.flows.artifacts import artifact_path, patch_conflict
from tether.flows.baseline import Baseline
from tether.flows.conflicts import conflict_is_unresolved
from tether.flows.project import Project, Release
from tether.flows.regions_plan import RegionPlan
from tether.flows.renames import carry_rename, find_renames
from tether.flows.safety import PathGuard
from tether.flows.structured_step import structured_action, whole_file_conflict
from tether.flows.syntax_step import check_clean_merge
from tether.fsio import read_bytes, sha256_bytes
from tether.model.manifest import FileClass
from tether.model.plan import (
    AUTO_CHOICES,
    CONFLICT_STYLES,
    HUNK_CHOICES,
    WHOLE_FILE_CHOICES,
    YOURS,
    Bucket,
    FieldMergeRow,
    FileAction,
    MergeNote,
    Op,
    RowCode,
    RowWhy,
    UpdatePlan,
)
from tether.state.statcache import StatCache
from tether.state.store import Leftover
from tether.valueclass import replace, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:  # the region engine: only for a path a release declares a region in
    from tether.engine.regions import RegionComparison
    from tether.engine.syntaxcheck import MergeCheck

LOCAL_EDIT_KEPT = "local-edit-kept"


@valueclass(frozen=True)
class UpdateOptions:
    """How this run settles what it finds: the conflict style, ``--auto``, ``--delete-removed``."""

    conflict_style: str = "markers"
    auto: str | None = None
    delete_removed: bool = False
    no_regions: bool = False
    # Read files upstream left alone to tell an edited copy from an untouched one (a
    # refresh reports that); an update leaves both alone and need not read them.
    classify_local_edits: bool = False
    # A refresh's --auto: how every locally-modified file is settled (flows/refresh.py).
    local_edits: str | None = None
    host_deleted: str | None = None  # restore | drop, for every host-deleted file


class _Unreadable(Exception):
    pass


@valueclass()
class AdopterFile:
    """The adopter's copy of a path. Its hash is worked out when first asked for: from the
    stat cache when the file did not change since tether last hashed it, else by reading
    it (and a path whose decision does not depend on its bytes is never read at all)."""

    path: str
    info: os.stat_result | None  # None: the file is absent
    rel: str = ""
    stats: StatCache | None = None
    data: bytes | None = None
    _sha: str | None = None
    _read_from_ns: int | None = None  # when ``read`` began: what the stat cache may vouch for

    @property
    def present(self) -> bool:
        return self.info is not None

    @property
    def sha(self) -> str | None:
        if self.info is None:
            return None
        if self._sha is None and self.stats is not None:
            self._sha = self.stats.lookup(self.rel, self.info)
        if self._sha is None:
            self._sha = sha256_bytes(self.read())
            if self.stats is not None:
                self.stats.record(self.rel, self.info, self._sha, self._read_from_ns)
        return self._sha

    def read(self) -> bytes:
        if self.data is None:
            self._read_from_ns = time.time_ns()
            try:
                self.data = read_bytes(self.path)
            except OSError as error:
                raise _Unreadable(f"cannot read ({error.strerror})") from None
        return self.data


@valueclass()
class AdopterReader:
    """Reads the adopter's files for one plan: one path guard and one stat cache."""

    project: Project
    stats: StatCache
    guard: PathGuard

    @classmethod
    def for_project(cls, project: Project) -> AdopterReader:
        return cls(project, project.stat_cache(), PathGuard(project.root))

    def read(self, rel: str) -> AdopterFile:
        return read_adopter(self.project, rel, self.stats, self.guard)


def read_adopter(
    project: Project, rel: str, stats: StatCache, guard: PathGuard | None = None
) -> AdopterFile:
    """The adopter's file at ``rel``, looked at but not yet read. The guard's lstat is the
    file's stat: a link or a folder is refused before anything is read."""
    try:
        problem, info = (guard or PathGuard(project.root)).inspect(rel)
    except OSError as error:  # a folder on the way that cannot be looked into
        raise _Unreadable(f"cannot read ({error.strerror})") from None
    if problem:
        raise _Unreadable(problem)
    return AdopterFile(os.path.join(project.root, rel), info, rel, stats)


# A binary conflict left for a person: the adopter's file stays, the release's copy is
# stored beside it (``<path>.theirs``).
THEIRS_COPY = "theirs-copy"


def settle_conflict(
    project: Project,
    rel: str,
    cls: FileClass,
    ours: bytes,
    theirs: bytes,
    merged: bytes | None,
    mode: int,
    choice: str,
) -> FileAction:
    """Turn an unresolved merge into the action a whole-file choice (``keep-mine``,
    ``take-theirs``) or a conflict style (``markers``, ``patch``) asks for.

    ``merged`` is the text with conflict markers, None for a binary file (which can
    only be kept, taken, or have the release's copy stored beside it).
    """
    if choice == "take-theirs":
        return FileAction(rel, cls, Bucket.CONFLICT, Op.WRITE, theirs, mode, decision=choice)
    if choice == "keep-mine" or merged is None:
        artifact = artifact_path(project, rel, ".theirs")
        return FileAction(
            rel,
            cls,
            Bucket.CONFLICT,
            Op.THEIRS,
            None,
            mode,
            artifact,
            theirs,
            decision="keep-mine" if choice == "keep-mine" else THEIRS_COPY,
            why=RowWhy(RowCode.BINARY) if merged is None else None,
        )
    if choice == "markers" and markers_would_break_first_line(merged, ours, theirs):
        # Markers at line 1 would hide the front matter (or the #! line) from whatever
        # reads the file: the adopter's file stays whole and the clash goes to a patch.
        patch = unified_patch(rel, ours, theirs)
        return patch_conflict(project, rel, cls, patch, mode, RowWhy(RowCode.FRONT_MATTER))
    if choice == "patch":
        return patch_conflict(project, rel, cls, unified_patch(rel, ours, theirs), mode)
    return FileAction(rel, cls, Bucket.CONFLICT, Op.MARKERS, merged, mode, rel, decision="markers")


def settle_clashes(
    project: Project,
    rel: str,
    cls: FileClass,
    sides: tuple[bytes, bytes, bytes],
    mode: int,
    choice: str,
    style: str,
) -> FileAction:
    """``ours``/``theirs``: the line merge with every clashing hunk taking that side's lines
    and every other change of both sides kept (``git merge-file --ours/--theirs``). A
    binary file is one clashing hunk (kept, or the release's taken, whole); a result that
    does not parse as its format is not written: the conflict is left in ``style``."""
    from tether.flows.merging import merge_sides

    base, ours, theirs = sides
    result, note = merge_sides(base, ours, theirs, favor=choice)
    if result.binary:  # no lines: the whole file is the one clashing hunk
        whole = "keep-mine" if choice == "ours" else "take-theirs"
        action = settle_conflict(project, rel, cls, ours, theirs, None, mode, whole)
        why = RowWhy(RowCode.NO_LINES, side=whole, note=note)
        return replace(action, sides=sides, reason="", why=why)
    broken = check_clean_merge(rel, base, ours, theirs, result.merged)
    if broken is not None:
        plain, _ = merge_sides(base, ours, theirs)
        marked = plain.merged if plain.conflicts else whole_file_markers(base, ours, theirs)
        action = settle_conflict(project, rel, cls, ours, theirs, marked, mode, style)
        return replace(action, sides=sides, reason="", why=_broken(broken, choice))
    if result.settled == 0:  # nothing clashed: the plain merge
        return FileAction(
            rel, cls, Bucket.MERGED, Op.WRITE, result.merged, mode, sides=sides, decision=choice
        )
    why = RowWhy(RowCode.HUNKS_SETTLED, count=result.settled, side=choice, note=note)
    return FileAction(
        rel,
        cls,
        Bucket.CONFLICT,
        Op.WRITE,
        result.merged,
        mode,
        decision=choice,
        sides=sides,
        why=why,
    )


def _broken(check: MergeCheck, side: str = "") -> RowWhy:
    """Why a clean line merge is not written: it does not parse, or a limit stopped the
    check; ``side``: the side the clashing hunks took."""
    return RowWhy(
        RowCode.MERGE_BROKEN, side=side, detail=check.problem, unchecked=not check.checked
    )


def _noted(
    action: FileAction, sides: tuple[bytes, bytes, bytes], note: MergeNote | None
) -> FileAction:
    """Why the merge did not go line by line, when it did not, is the row's reason."""
    if note is None:
        return replace(action, sides=sides)
    return replace(action, sides=sides, reason="", why=RowWhy(RowCode.MERGE_NOTE, note=note))


def merge_action(
    project: Project,
    rel: str,
    cls: FileClass,
    base: bytes,
    ours: bytes,
    theirs: bytes,
    mode: int,
    options: UpdateOptions,
) -> FileAction:
    from tether.flows.merging import merge_sides

    result, note = merge_sides(base, ours, theirs)
    sides = (base, ours, theirs)
    if options.auto in HUNK_CHOICES and (result.conflicts or result.binary):
        return settle_clashes(project, rel, cls, sides, mode, options.auto, options.conflict_style)
    if result.binary:
        action = settle_conflict(project, rel, cls, ours, theirs, None, mode, options.auto or "")
        return _noted(action, sides, note)
    if result.conflicts == 0:
        broken = check_clean_merge(rel, base, ours, theirs, result.merged)
        if broken is None:
            return FileAction(rel, cls, Bucket.MERGED, Op.WRITE, result.merged, mode, sides=sides)
        # The line merge is clean but the document is not: let a person decide.
        whole = whole_file_markers(base, ours, theirs)
        choice = options.auto if options.auto in WHOLE_FILE_CHOICES else options.conflict_style
        action = settle_conflict(project, rel, cls, ours, theirs, whole, mode, choice)
        return replace(action, sides=sides, reason="", why=_broken(broken))
    action = settle_conflict(
        project, rel, cls, ours, theirs, result.merged, mode, options.auto or options.conflict_style
    )
    return _noted(action, sides, note)


def resettle(project: Project, action: FileAction, choice: str) -> FileAction:
    """Settle a line-merge conflict another way (a person's choice at the prompt)."""
    from tether.flows.merging import merge_sides

    assert action.sides is not None
    mode = action.mode or 0o644
    cls = action.cls or FileClass.SHARED
    if choice in HUNK_CHOICES:
        style = action.decision if action.decision in CONFLICT_STYLES else "markers"
        return settle_clashes(project, action.path, cls, action.sides, mode, choice, style)
    base, ours, theirs = action.sides
    result, _note = merge_sides(base, ours, theirs)
    markers = None if result.binary else result.merged
    if markers is not None and not result.conflicts:  # clean, but not a valid document
        markers = whole_file_markers(base, ours, theirs)
    settled = settle_conflict(project, action.path, cls, ours, theirs, markers, mode, choice)
    return replace(settled, sides=action.sides)


def can_resettle(action: FileAction) -> bool:
    return (
        action.bucket is Bucket.CONFLICT
        and action.sides is not None
        and action.decision in (*CONFLICT_STYLES, THEIRS_COPY, *AUTO_CHOICES)
    )


def _plan_latest_path(
    project: Project,
    baseline: Baseline,
    latest: Release,
    rel: str,
    options: UpdateOptions,
    regions: RegionPlan,
    plan: UpdatePlan,
    reader: AdopterReader,
) -> FileAction:
    cls = latest.manifest.files[rel]
    held = _held_by_markers(project, baseline, rel, cls)
    if held is not None:
        return held
    try:
        adopter = reader.read(rel)
        return _decide_latest_path(
            project, baseline, latest, rel, cls, adopter, options, regions, plan
        )
    except _Unreadable as problem:
        return FileAction(rel, cls, Bucket.FAILED, reason=str(problem))


def _decide_latest_path(
    project: Project,
    baseline: Baseline,
    latest: Release,
    rel: str,
    cls: FileClass,
    adopter: AdopterFile,
    options: UpdateOptions,
    regions: RegionPlan,
    plan: UpdatePlan,
) -> FileAction:
    # With per-file hashes in the manifest, L's bytes are read only where they are used.
    recorded = latest.manifest.hashes.get(rel)
    loaded: list[bytes] = [] if recorded is not None else [latest.verified_bytes(rel)]
    record = baseline.files.get(rel) if rel not in baseline.sentinels else None
    latest_sha = recorded if recorded is not None else sha256_bytes(loaded[0])
    plan.latest_hashes[rel] = latest_sha
    base_sha = record.sha256 if record is not None else None
    # A file upstream left alone stays as it is: its bytes need not even be read.
    left_alone = (
        adopter.present
        and row_ignores_adopter_bytes(cls, record is not None, True, base_sha == latest_sha)
        and rel not in regions.by_path
        and not options.classify_local_edits
    )
    spec = latest.manifest.merge.get(rel)
    mixed = spec is not None and project.profile.always_merge_fields
    if left_alone:
        row = _left_alone_row(cls, record is not None)
        if mixed and record is not None:
            plan.structured[rel] = FieldMergeRow(rel, "clean-skip")
        return FileAction(rel, cls, bucket_for_row(row, cls), reason=row.value)

    def release_bytes() -> bytes:
        if not loaded:
            loaded.append(latest.verified_bytes(rel, keep=True))
        return loaded[0]

    mode = latest.mode_of(rel)
    ours_sha = adopter.sha
    # A CRLF checkout of LF text is no edit; only a file that matches nothing is read for it.
    crlf = adopter.present and ours_sha not in (base_sha, latest_sha) and b"\r\n" in adopter.read()
    ours = adopter.data if crlf else None
    sides = Comparison(
        base_present=record is not None,
        ours_present=adopter.present,
        base_eq_latest=base_sha == latest_sha,
        ours_eq_base=record is not None
        and (ours_sha == base_sha or (crlf and same_text(ours or b"", baseline.read(rel) or b""))),
        ours_eq_latest=ours_sha == latest_sha or (crlf and same_text(ours or b"", release_bytes())),
    )
    if rel in regions.by_path and record is not None and adopter.present:
        from tether.flows.regions_step import masked_comparison

        ours = adopter.read()
        base = baseline.read(rel) or b""
        sides, masked = masked_comparison(regions, rel, base, ours, release_bytes())
        if decide_row(cls, sides) is Row.MERGE:
            return _region_path_merge(
                project, rel, cls, masked, (base, ours, release_bytes()), mode, options
            )
    row = decide_row(cls, sides)
    if mixed and spec is not None and adopter.present:
        mixed_action = _mixed_file_action(
            project, baseline, rel, cls, spec, adopter, sides, release_bytes(), mode, options, plan
        )
        if mixed_action is not None:
            return mixed_action
    if row is Row.MERGE:
        ours = adopter.read()
        if record is not None and not baseline.known(rel):
            patch = unified_patch(rel, ours, release_bytes())
            return patch_conflict(project, rel, cls, patch, mode, RowWhy(RowCode.HASH_ONLY))
        base = (baseline.read(rel) if record is not None else b"") or b""
        if spec is not None:
            merged = structured_action(
                project, rel, cls, spec, base, ours, release_bytes(), mode, options.auto
            )
            if merged is not None:
                action, summary = merged
                plan.structured[rel] = summary
                if action is not None:
                    return action
        return merge_action(project, rel, cls, base, ours, release_bytes(), mode, options)
    bucket = bucket_for_row(row, cls)
    if bucket in (Bucket.ADD, Bucket.OVERWRITE, Bucket.UPDATE):
        # A CRLF checkout of B keeps its line endings; a byte-identical copy of B takes L as is.
        theirs = release_bytes()
        content = in_style_of(theirs, ours) if crlf and ours is not None else theirs
        return FileAction(rel, cls, bucket, Op.WRITE, content, mode, reason=row.value)
    return FileAction(rel, cls, bucket, reason=skip_reason(row, sides))


def _region_path_merge(
    project: Project,
    rel: str,
    cls: FileClass,
    masked: RegionComparison,
    sides: tuple[bytes, bytes, bytes],
    mode: int,
    options: UpdateOptions,
) -> FileAction:
    """A declared path both sides changed outside its region: the masked merge; what is
    left a conflict is settled by ``--auto`` as any other file is (the whole-file choices on
    the whole file, the hunk choices on the whole file too when its markers are malformed),
    else left as the patch without region bodies."""
    from tether.flows.regions_step import region_conflict, region_merge

    favor = options.auto if options.auto in HUNK_CHOICES else None
    merged = region_merge(rel, cls, masked, sides, mode, favor)
    if merged is not None:
        return merged
    _base, ours, theirs = sides
    if options.auto in WHOLE_FILE_CHOICES:
        # No markers are written for a whole-file choice: b"" only says the file is text.
        return replace(
            settle_conflict(project, rel, cls, ours, theirs, b"", mode, options.auto), sides=sides
        )
    if favor is not None and masked.bailed:
        return settle_clashes(project, rel, cls, sides, mode, favor, "patch")
    return region_conflict(project, rel, cls, masked, mode)


def _mixed_file_action(
    project: Project,
    baseline: Baseline,
    rel: str,
    cls: FileClass,
    spec: dict[str, object],
    adopter: AdopterFile,
    sides: Comparison,
    theirs: bytes,
    mode: int,
    options: UpdateOptions,
    plan: UpdatePlan,
) -> FileAction | None:
    """A mixed file under a profile that always merges it key by key (GAIA's package.json,
    pnpm-workspace.yaml, .gaia/audit-ci.yml), once the adopter's copy exists: never
    replaced whole. None: the ordinary table decides (the rule is unusable, or a side is
    too large to merge key by key)."""
    nothing_to_merge = sides.base_eq_latest if sides.base_present else sides.ours_eq_latest
    if nothing_to_merge:
        plan.structured[rel] = FieldMergeRow(rel, "clean-skip")
        row = decide_row(cls, sides)
        return FileAction(rel, cls, bucket_for_row(row, cls), reason=row.value)
    ours = adopter.read()
    if not sides.base_present:
        action, summary = whole_file_conflict(project, rel, cls, ours, theirs, mode)
        plan.structured[rel] = summary
        return action
    base = baseline.read(rel) or b""
    merged = structured_action(project, rel, cls, spec, base, ours, theirs, mode, options.auto)
    if merged is None or merged[0] is None:
        if merged is not None:
            plan.structured[rel] = merged[1]
        return None
    plan.structured[rel] = merged[1]
    return merged[0]


@functools.cache
def _left_alone_row(cls: FileClass, base_present: bool) -> Row:
    """The table's row for a present file whose bytes do not matter (asked once per kind)."""
    return decide_row(cls, Comparison(base_present, True, True))


def skip_reason(row: Row, sides: Comparison) -> str:
    """Why nothing is done, in the words a refresh reports."""
    if row is Row.NO_UPSTREAM_CHANGE and sides.ours_present and not sides.ours_eq_base:
        return LOCAL_EDIT_KEPT
    return row.value


def _held_by_markers(
    project: Project, baseline: Baseline, rel: str, cls: FileClass
) -> FileAction | None:
    """A file still holding conflict markers from an earlier update is not merged again
    (that would nest conflicts); it keeps its baseline until a person resolves it."""
    record = baseline.state.conflicts.get(rel) if baseline.state else None
    if record is None or record.style != "markers":
        return None
    if not conflict_is_unresolved(project, rel, record):
        return None
    why = RowWhy(RowCode.HELD, record.version)
    return FileAction(rel, cls, Bucket.CONFLICT, artifact=record.artifact, decision="held", why=why)


def _carry(
    project: Project,
    baseline: Baseline,
    latest: Release,
    old: str,
    action: FileAction,
    options: UpdateOptions,
) -> FileAction:
    cls = action.cls or FileClass.SHARED
    mode = action.mode or 0o644

    def merge(base: bytes, ours: bytes, theirs: bytes) -> FileAction:
        merged = merge_action(project, action.path, cls, base, ours, theirs, mode, options)
        # Nothing stands at the new path yet, so a conflict left as a patch or a .theirs
        # copy must still put a file there, or the next update would see it as deleted.
        if merged.op is Op.PATCH:
            return replace(merged, op=Op.WRITE, content=theirs)
        if merged.op is Op.THEIRS:
            return replace(merged, op=Op.WRITE, content=ours)
        return merged

    return carry_rename(project, baseline, old, action, merge)


def _plan_dropped_path(
    project: Project, baseline: Baseline, rel: str, options: UpdateOptions, reader: AdopterReader
) -> FileAction:
    record = baseline.files[rel]
    try:
        adopter = reader.read(rel)
        ours_eq_base = adopter.sha == record.sha256
    except _Unreadable as problem:
        return FileAction(rel, record.cls, Bucket.FAILED, reason=str(problem))
    bucket = decide_dropped(adopter.present, ours_eq_base, options.delete_removed)
    op = Op.REMOVE if bucket is Bucket.DELETED else Op.NONE
    kept = bucket is Bucket.DELETE and not ours_eq_base
    return FileAction(
        rel, record.cls, bucket, op, why=RowWhy(RowCode.MODIFIED_HERE) if kept else None
    )


def build_plan(
    project: Project,
    baseline: Baseline,
    latest: Release,
    options: UpdateOptions,
    regions: RegionPlan | None = None,
) -> UpdatePlan:
    regions = regions or RegionPlan(disabled=True)
    plan = UpdatePlan(latest.manifest.name, baseline.version, latest.version)
    latest_paths = latest.manifest.managed_paths()
    latest_set = set(latest_paths)
    latest_sentinels = set(latest.manifest.sentinels)
    yours = project.yours
    renamed_to = {
        new: old
        for old, new in find_renames(baseline, latest)
        if old not in yours and new not in yours  # a file taken over is carried nowhere
    }
    reader = AdopterReader.for_project(project)
    for rel in progress.tracked("planning", sorted(latest_paths)):
        if rel in yours:  # taken over (tether own): never read, never written
            plan.actions.append(
                FileAction(rel, latest.manifest.files[rel], Bucket.SKIP, reason=YOURS)
            )
            continue
        action = _plan_latest_path(project, baseline, latest, rel, options, regions, plan, reader)
        if rel in renamed_to:
            action = _carry(project, baseline, latest, renamed_to[rel], action, options)
        plan.actions.append(action)
    for rel in sorted(baseline.files):
        if rel in latest_set or rel in latest_sentinels or rel in baseline.sentinels:
            continue
        if rel in yours:
            plan.actions.append(FileAction(rel, baseline.files[rel].cls, Bucket.SKIP, reason=YOURS))
            continue
        plan.actions.append(_plan_dropped_path(project, baseline, rel, options, reader))
    shipped = latest_set | latest_sentinels | set(baseline.files) | yours
    leftovers = baseline.state.leftovers if baseline.state is not None else {}
    for rel, left in sorted(leftovers.items()):
        if rel not in shipped:
            offered = _plan_leftover(project, rel, left, options, reader)
            if offered is not None:
                plan.actions.append(offered)
    reader.stats.save()
    return plan


def _plan_leftover(
    project: Project, rel: str, left: Leftover, options: UpdateOptions, reader: AdopterReader
) -> FileAction | None:
    """A file an earlier update left here after upstream dropped it: listed again ("Delete?")
    on every update, removed by ``--delete-removed`` while unmodified. None once it is gone."""
    try:
        adopter = reader.read(rel)
        if not adopter.present:
            return None
        unmodified = adopter.sha == left.sha256
    except _Unreadable as problem:
        return FileAction(rel, FileClass.SHARED, Bucket.FAILED, reason=str(problem))
    bucket = decide_dropped(True, unmodified, options.delete_removed)
    return leftover_action(rel, left, unmodified, bucket)


def leftover_action(
    rel: str, left: Leftover, unmodified: bool, bucket: Bucket = Bucket.DELETE
) -> FileAction:
    """The row of a leftover: its fact names the release that dropped it and whether it
    was edited here (only an unmodified one is removed on request)."""
    op = Op.REMOVE if bucket is Bucket.DELETED else Op.NONE
    why = RowWhy(RowCode.LEFTOVER, left.version, modified=not unmodified)
    return FileAction(rel, FileClass.SHARED, bucket, op, why=why)
