"""After an update's writes: record the release as the new baseline, state last."""

from __future__ import annotations

from collections.abc import Callable

from tether import progress
from tether.flows.apply import ApplyOutcome, RunContext
from tether.flows.baseline import Baseline
from tether.flows.conflicts import conflict_is_unresolved
from tether.flows.project import Project, Release, utc_now
from tether.flows.safety import check_own_paths
from tether.flows.version_markers import write_version_markers
from tether.model.plan import SETTLED_DECISIONS, Bucket, Op
from tether.state.store import (
    AppliedMigration,
    ConflictRecord,
    FileRecord,
    Leftover,
    State,
    save_state,
)


def _conflict_records(
    project: Project, baseline: Baseline, outcome: ApplyOutcome, version: str
) -> dict[str, ConflictRecord]:
    """Conflicts a person still has to resolve: earlier unresolved ones plus this run's."""
    records: dict[str, ConflictRecord] = {}
    if baseline.state is not None:
        for path, record in baseline.state.conflicts.items():
            if conflict_is_unresolved(project, path, record):
                records[path] = record
    for action in outcome.actions:
        unresolved = action.decision not in SETTLED_DECISIONS
        if action.decision == "held":
            continue  # its earlier record stays as it was
        if action.bucket is Bucket.CONFLICT and unresolved and action.artifact is not None:
            records[action.path] = ConflictRecord(action.decision, action.artifact, version)
        elif action.bucket not in (Bucket.SKIP, Bucket.REMOVED):
            records.pop(action.path, None)
    return records


def _leftovers(baseline: Baseline, latest: Release, outcome: ApplyOutcome) -> dict[str, Leftover]:
    """Files left here after upstream dropped them ("Delete?"), this run's and earlier ones,
    until they are deleted, taken over or shipped again: ``status`` and ``check --strict``
    list them, every update offers them again."""
    earlier = baseline.state.leftovers if baseline.state is not None else {}
    kept: dict[str, Leftover] = {}
    for action in outcome.actions:
        if action.bucket not in (Bucket.DELETE, Bucket.FAILED):
            continue
        record = earlier.get(action.path)
        base = baseline.files.get(action.path)
        if record is None and base is not None and action.bucket is Bucket.DELETE:
            record = Leftover(base.sha256, latest.version)
        if record is not None:
            kept[action.path] = record
    return kept


def _remember_written(project: Project, outcome: ApplyOutcome) -> None:
    """Files this run wrote go into the stat cache, so the next status need not read them."""
    stats = project.stat_cache()
    for action in outcome.actions:
        if action.op in (Op.WRITE, Op.MARKERS) and action.content is not None:
            # Hashed from the disk, not from the plan: a resumed run keeps what the
            # interrupted one wrote when its replan wants other bytes (a rewritten conflict).
            stats.record_on_disk(action.path, project.path(action.path))
    stats.save()


def _dropped(outcome: ApplyOutcome) -> frozenset[str]:
    """Host deletions that stand, by this run's choice or an earlier one (gbrain's record)."""
    return frozenset(a.path for a in outcome.actions if a.decision in ("drop", "dropped"))


def finalize(
    ctx: RunContext,
    baseline: Baseline,
    latest: Release,
    outcome: ApplyOutcome,
    known: dict[str, str] | None = None,
    *,
    applied_migrations: dict[str, AppliedMigration] | None = None,
    after_marker: Callable[[], None] | None = None,
) -> None:
    """Record L as the new baseline. The version is written last, so an interrupted
    run is resumed by running the same command again."""
    project = ctx.project
    # A regeneration program may have run since the run began: the folders the cache, state
    # and markers go to must still be tether's own, not links it would write through.
    check_own_paths(project.root, project.profile)
    known = known or {}
    # Trees tether extracted into its own cache are never rewritten: link, don't copy.
    ours = project.releases_cache.resolve() in latest.root.resolve().parents
    ctx.journal.finalize_started(ctx.run_id)
    files: dict[str, FileRecord] = {}
    pristine = project.pristine
    with pristine.pack_writer() as pack:
        for rel in progress.tracked("finalizing", latest.manifest.managed_paths()):
            digest = known.get(rel)
            base = baseline.files.get(rel)
            installed = base is not None and base.sha256 == digest  # B's bytes are cached
            if digest is None:
                data, digest = latest.verified(rel)  # hashed once, for the check and the pack
                pack.add(data, digest)
            elif not installed and ours:
                pristine.adopt(latest.file_path(rel), digest, may_link=True)
            elif not installed and (checked := latest.checked_bytes(rel, digest)) is not None:
                pack.add(checked, digest)  # the bytes the plan read and checked: not read again
            elif not installed:
                pack.adopt(latest.file_path(rel), digest)  # skipped when cached already
            # Bytes tether did not change keep their recorded mode (a mode-only change
            # upstream is not applied either): no stat of the release file.
            if installed and base is not None and rel not in latest.manifest.modes:
                mode = base.mode
            else:
                mode = latest.mode_of(rel)
            files[rel] = FileRecord(latest.manifest.files[rel], digest, mode)
        pack.add(latest.manifest_bytes)
    held = [a.path for a in outcome.actions if a.decision == "held" and a.path in baseline.files]
    for rel in held:
        files[rel] = baseline.files[rel]
    previous = baseline.state
    state = State(
        profile=project.profile.name,
        upstream=latest.manifest.name,
        source=baseline.source_to_record,
        version=latest.version,
        manifest_sha256=latest.manifest_sha256,
        files=files,
        sentinels=list(latest.manifest.sentinels),
        customised_at_install=list(previous.customised_at_install) if previous else [],
        conflicts=_conflict_records(project, baseline, outcome, latest.version),
        held=held,
        installed_at=previous.installed_at if previous else utc_now(),
        updated_at=utc_now(),
        applied_migrations={
            **(previous.applied_migrations if previous else {}),
            **(applied_migrations or {}),
        },
        leftovers=_leftovers(baseline, latest, outcome),
    )
    save_state(project.state_path, state)
    _remember_written(project, outcome)
    write_version_markers(project, latest, dropped=_dropped(outcome))
    ctx.journal.state_written(ctx.run_id)
    outcome.state_written = True
    if after_marker is not None:
        after_marker()  # journals its own steps: a rerun does not repeat a finished one
    ctx.journal.run_complete(ctx.run_id)
