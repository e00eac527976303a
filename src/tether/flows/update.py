"""``tether update``: move a project from its installed release (B) to a newer one (L)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from tether.errors import TetherError
from tether.flows.apply import (
    ApplyOutcome,
    ResumeInfo,
    RunContext,
    execute_plan,
    holds_run_writes,
    resume_info,
)
from tether.flows.backups import prune_backups, prune_cached_releases, remove_empty_merge_folder
from tether.flows.baseline import (
    Baseline,
    BaselineUnavailable,
    compare_by_hand,
    load_baseline,
    require_an_install,
)
from tether.flows.fetch import fetch_release
from tether.flows.finalize import finalize
from tether.flows.lifecycle_plan import LifecyclePlan, programs_off_switch, skipped_by
from tether.flows.plan import LOCAL_EDIT_KEPT, UpdateOptions, build_plan, leftover_action
from tether.flows.preflight import (
    BranchPlan,
    GitOptions,
    branch_for_update,
    plan_branch,
    refuse_dirty,
    refuse_linked_worktree,
)
from tether.flows.project import (
    Project,
    Release,
    check_tree_version,
    open_project,
    read_tree_release,
    utc_now,
)
from tether.flows.regions_plan import RegionPlan, plan_regions, regions_off_switch
from tether.flows.release_notes import ReleaseNotes, release_notes, with_release_page
from tether.flows.replay import checked_unfinished_run
from tether.flows.runtime_paths import check_runtime_paths
from tether.flows.update_report import (
    RunEnd,
    RunEndCode,
    UncommittedMarker,
    UpdateReport,
    UpdateStatus,
)
from tether.model.plan import YOURS, Bucket, FileAction, Op, UpdatePlan
from tether.state.journal import STEP_RUN_STARTED, Journal, RunRecord, new_run_id
from tether.state.lock import ProjectLock
from tether.templates import TemplateOptions, fetch_once_per_command
from tether.valueclass import field, replace, valueclass
from tether.versions import compare_versions, is_version, release_version, same_release

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from tether.flows.ping import Ping
    from tether.flows.refresh import RefreshLog
    from tether.flows.regen import RegenOutcome


@valueclass(frozen=True)
class UpdateRequest:
    """One ``tether update`` as asked: the project, the target, the source and the switches."""

    root: Path
    to: str | None = None
    source: str | None = None
    profile: str | None = None
    dry_run: bool = False
    options: UpdateOptions = field(default_factory=UpdateOptions)
    command: str = "update"
    git: GitOptions = field(default_factory=GitOptions)
    skip_migrations: bool = False
    # Run no program the release ships (migrations, region regeneration); --no-regions
    # implies it (docs/lifecycle.md).
    no_programs: bool = False
    # A project copier or cruft generated: --answers-file, --data, --trust (templates/).
    template: TemplateOptions | None = None
    # A --source whose release names another upstream is meant (the project moves to it).
    switch_upstream: bool = False

    def template_options(self) -> TemplateOptions:
        """The template options with this run's switches: a dry run, ``--no-programs`` and
        ``--no-regions`` (or their variables) run none of the template's programs."""
        options = self.template or TemplateOptions()
        off = programs_off_switch(self.no_programs, self.options.no_regions) is not None
        return replace(
            options,
            no_programs=options.no_programs or off,
            dry_run=options.dry_run or self.dry_run,
        )


@valueclass()
class PreparedUpdate:
    """Everything decided before anything is written: the plan a person confirms."""

    request: UpdateRequest
    project: Project
    baseline: Baseline
    latest: Release
    plan: UpdatePlan
    journal: Journal
    unfinished: RunRecord | None
    resume: ResumeInfo
    regions: RegionPlan
    notes: ReleaseNotes = field(default_factory=ReleaseNotes)
    lifecycle: LifecyclePlan = field(default_factory=LifecyclePlan)
    ping: Ping | None = None  # the ecosystem's update ping (flows/ping.py)
    branch: str | None = None  # the branch it switches to once confirmed (None: stays)

    def report(self, status: UpdateStatus) -> UpdateReport:
        unfinished = self.unfinished
        # A resumed run names the versions the interrupted run set out between, even when
        # that run got as far as recording its new state.
        from_version = (
            unfinished.from_version
            if unfinished is not None and unfinished.from_version
            else self.plan.from_version
        )
        lifecycle = self.lifecycle
        profile = self.project.profile
        gate = profile.quality_gate
        return UpdateReport(
            profile=self.project.profile.name,
            upstream=self.plan.upstream,
            from_version=from_version,
            to_version=self.plan.to_version,
            status=status,
            dry_run=self.request.dry_run,
            actions=list(self.plan.actions),
            merge_dir=self.project.profile.merge_dir,
            notes=self.baseline.notes + lifecycle.notes,
            migrations=[r.to_json() for r in lifecycle.migration_results()],
            migrations_skipped=lifecycle.skip_migrations and bool(lifecycle.migrations),
            programs_off=lifecycle.programs_off or None,
            notices=lifecycle.notice_documents(),
            # Before anything ran, what each post-update write will do; then what it did.
            post_update=list(
                lifecycle.post_planned
                if status in (UpdateStatus.PLAN, UpdateStatus.DRY_RUN)
                else lifecycle.post_updated
            ),
            trailer_invalidations=list(lifecycle.trailers),
            resumed=unfinished is not None,
            run_id=unfinished.run_id if unfinished is not None else None,
            regions=self.regions.to_json(),
            release_notes=[s.to_json() for s in self.notes.sections],
            adopter_actions=[a.to_json() for a in self.notes.actions],
            structured=[self.plan.structured[path] for path in sorted(self.plan.structured)],
            commit_message=profile.update_title(self.plan.upstream, self.plan.to_version),
            ping=self.ping.to_json() if self.ping is not None else None,
            # Shown before the question and in a dry run; never deleted (GAIA Step 4b).
            earlier_artifacts=_earlier_artifacts(self.project),
            quality_gate=gate if gate is not None and self.project.path(gate).is_file() else None,
            region_check=profile.region_check,
            branch=self.branch if status == UpdateStatus.PLAN else None,
        )


def resolve_target(project: Project, baseline: Baseline, wanted: str | None) -> str:
    from tether.sources import open_source

    if project.template is not None:
        from tether.flows.template_project import resolve_template_target

        return resolve_template_target(project, wanted)
    if project.profile.source_is_tree:
        tree = read_tree_release(Path(baseline.source), baseline.source, project.profile)
        check_tree_version(tree.version, wanted, baseline.source)
        return tree.version
    if wanted:
        return release_version(wanted)  # --to v2.0.0 names release 2.0.0
    source = open_source(baseline.source, project.releases_cache)
    try:
        versions = source.available_versions()
    except TetherError as error:
        # GAIA Step 2: when no listing works, the person names the version.
        raise TetherError(f"{error}; name the release to install with --to VERSION") from None
    baseline.notes += source.notes
    if not versions:
        raise TetherError(f"source {baseline.source} offers no versions")
    return versions[-1]


def _older(version: str, than: str) -> bool:
    return is_version(version) and is_version(than) and compare_versions(version, than) < 0


def _check_direction(project: Project, installed: str, target: str) -> None:
    if _older(target, installed):
        raise TetherError(
            f"refusing to downgrade from {installed} to {target}: an update only moves forward; "
            f"to go back to {target}, revert the commit that recorded {installed} (find it "
            f"with 'git log -- {project.version_record}', then 'git revert' it)"
        )


def _ahead(
    project: Project, baseline: Baseline, newest: str, request: UpdateRequest
) -> UpdateReport:
    """The newest release is older than the installed one (GAIA Step 3): a warning, not an
    error, and never a downgrade. Asked for by name (``--to``) it is refused instead."""
    return UpdateReport(
        project.profile.name,
        baseline.upstream,
        baseline.version,
        newest,
        UpdateStatus.AHEAD,
        dry_run=request.dry_run,
        merge_dir=project.profile.merge_dir,
        notes=list(baseline.notes),
    )


def _refuse_other_unfinished(unfinished: RunRecord, target: str) -> None:
    raise TetherError(
        f"an interrupted update to {unfinished.to_version} (run {unfinished.run_id}) "
        "is unfinished; "
        f"rerun 'tether update --to {unfinished.to_version}' to finish it, or "
        f"'tether update --abandon' to restore its files, before updating to {target}"
    )


def _refuse_other_choices(unfinished: RunRecord, command: str) -> None:
    """A resumed run finishes with the choices it started with (a refresh's --auto and
    --deleted are part of its command): never silently with others."""
    verb = command.split(" ", 1)[0]
    if not unfinished.command or unfinished.command.split(" ", 1)[0] != verb:
        return
    if unfinished.command != command:
        raise TetherError(
            f"an interrupted 'tether {unfinished.command}' (run {unfinished.run_id}) is "
            f"unfinished; rerun 'tether {unfinished.command}' to finish it with the choices it "
            f"started with, or 'tether {verb} --abandon' to restore its files, before "
            f"'tether {command}'"
        )


def _mark_resumed(plan: UpdatePlan, resume: ResumeInfo, deleted: frozenset[str]) -> None:
    """A path an interrupted run already wrote replans as a skip; report it as what it was,
    with the decision that settled it, as the uninterrupted run would have."""
    for index, action in enumerate(plan.actions):
        done = resume.done.get(action.path)
        if done and action.bucket is Bucket.SKIP and done[0].bucket:
            first = next((d for d in done if d.target == action.path), done[0])
            # A conflict left as a patch wrote its artifact, not the path: it stays the
            # conflict's record, or the resumed run would forget the conflict.
            artifact = next((d.target for d in done if d.target != action.path), None)
            plan.actions[index] = replace(
                action,
                bucket=Bucket(first.bucket),
                op=Op.NONE,
                decision=first.decision,
                reason=first.reason,
                why=first.why,
                artifact=action.artifact or artifact,
            )
        elif action.path in deleted and action.bucket is Bucket.REMOVED:
            plan.actions[index] = replace(action, bucket=Bucket.DELETED, op=Op.NONE)


def prepare_update(request: UpdateRequest) -> PreparedUpdate | UpdateReport:
    """Compute the plan (or say why there is nothing to do). Writes nothing outside the cache."""
    project = open_project(request.root, request.profile, request.template_options())
    try:
        baseline = load_baseline(project, request.source)
    except BaselineUnavailable as error:
        raise compare_by_hand(project, error, request.to) from None
    journal = project.journal()
    unfinished = checked_unfinished_run(project, journal)
    if unfinished is not None and unfinished.abandon_started:
        # Someone chose to roll this run back; finishing it now would undo half of that.
        verb = unfinished.command.split(" ", 1)[0] or "update"
        raise TetherError(
            f"the abandon of the {verb} to {unfinished.to_version} (run {unfinished.run_id}) "
            f"was interrupted; run 'tether {verb} --abandon' again to finish it"
        )
    target = resolve_target(project, baseline, request.to)
    if unfinished is not None and not same_release(unfinished.to_version, target):
        _refuse_other_unfinished(unfinished, target)
    if unfinished is not None and not unfinished.state_written:
        _refuse_other_choices(unfinished, request.command)
    tree = project.profile.source_is_tree  # a recipe folder: content moves without a version
    if (unfinished is None or unfinished.state_written) and not tree:
        if request.to is None and _older(target, baseline.version):
            return _ahead(project, baseline, target, request)
        _check_direction(project, baseline.version, target)
        if (
            same_release(target, baseline.version)
            and not _held_and_resolved(project, baseline)
            and not _answers_change(project)
            and not (request.options.delete_removed and _unmodified_leftovers(project, baseline))
        ):
            return _up_to_date(project, baseline, unfinished, request)
    latest = fetch_release(project, baseline.source, target, baseline.exclude())
    baseline.notes += [note for note in latest.notes if note not in baseline.notes]
    if request.source:
        _check_same_upstream(baseline, latest, request.switch_upstream)
    if project.template is not None:
        from tether.flows.template_project import (
            baseline_facts,
            check_template_update,
            exclude_as_the_release,
        )

        exclude_as_the_release(project, baseline, latest)
        baseline.notes += check_template_update(
            project,
            baseline_facts(baseline.manifest()),
            latest,
            unfinished is not None,
            request.dry_run,
            request.git.allow_dirty,
        )
    off = regions_off_switch(request.options.no_regions, project.profile.no_regions_variable)
    regions = plan_regions(baseline.manifest(), latest.manifest, off is not None)
    regions.disabled_by = off or ""
    variable = project.profile.no_regions_variable
    regions.off_switch = f"{variable}=1" if variable else "--no-regions"
    plan = build_plan(project, baseline, latest, request.options, regions)
    _settle_local_edits(project, baseline, latest, plan, request.options)
    if tree and unfinished is None and _nothing_moved(plan, baseline, latest):
        quiet = _up_to_date(project, baseline, None, request)
        quiet.actions = list(plan.actions)  # every file is still classified (a host edit shows)
        return quiet
    lifecycle = _plan_lifecycle(project, baseline, latest, request, journal, unfinished)
    resume = ResumeInfo()
    if unfinished is not None:
        resume = resume_info(journal, unfinished.run_id)
    _lifecycle_into_plan(project, baseline, latest, lifecycle, plan, resume, unfinished)
    notes = release_notes(
        project.root, latest.root / latest.manifest.changelog, baseline.version, target
    )
    if project.template is None and not tree:
        notes = with_release_page(
            notes, baseline.source, project.releases_cache, baseline.version, target
        )
    if notes.from_release_page:
        from tether.flows.notes import ReleasePageShown

        baseline.notes.append(ReleasePageShown(target, baseline.version))
    ping = None
    if project.profile.update_ping:  # the ping's module only for a profile that has one
        from tether.flows.ping import plan_ping

        ping = plan_ping(project, latest, lifecycle.from_version, lifecycle.programs_off or None)
    return PreparedUpdate(
        request,
        project,
        baseline,
        latest,
        plan,
        journal,
        unfinished,
        resume,
        regions,
        notes,
        lifecycle,
        ping,
    )


def _plan_lifecycle(
    project: Project,
    baseline: Baseline,
    latest: Release,
    request: UpdateRequest,
    journal: Journal,
    unfinished: RunRecord | None,
) -> LifecyclePlan:
    """The lifecycle steps of this run. Where neither the profile nor the release declares
    one (most releases), a new run has none to plan and the steps' module is not loaded
    (docs/performance.md, "Small projects"); a resumed run reads its journal whatever."""
    from_version = unfinished.from_version or baseline.version if unfinished else baseline.version
    programs_off = programs_off_switch(request.no_programs, request.options.no_regions)
    declared = project.profile.lifecycle.joined(latest.manifest.lifecycle)
    if not declared and unfinished is None:
        return LifecyclePlan(
            declared=declared,
            from_version=from_version,
            to_version=latest.version,
            skipped_by=skipped_by(request.skip_migrations, programs_off),
            programs_off=programs_off or "",
        )
    from tether.flows.lifecycle_steps import plan_lifecycle

    return plan_lifecycle(
        project,
        baseline,
        latest,
        from_version,
        skip_migrations=request.skip_migrations,
        programs_off=programs_off,
        journal=journal if unfinished is not None else None,
        run_id=unfinished.run_id if unfinished is not None else None,
    )


def _lifecycle_into_plan(
    project: Project,
    baseline: Baseline,
    latest: Release,
    lifecycle: LifecyclePlan,
    plan: UpdatePlan,
    resume: ResumeInfo,
    unfinished: RunRecord | None,
) -> None:
    """Hand-offs and template-installed files become ordinary actions of the file plan, so
    apply, the journal and the report treat them as every other path."""
    if lifecycle.declared:
        from tether.flows.lifecycle_steps import hand_over, plan_templates

        hand_over(plan, lifecycle.owned)
        plan_templates(project, baseline, latest, lifecycle, plan, written_before=set(resume.done))
    if unfinished is not None:
        _mark_resumed(plan, resume, unfinished.deleted)


def _settle_local_edits(
    project: Project, baseline: Baseline, latest: Release, plan: UpdatePlan, options: UpdateOptions
) -> None:
    """A refresh's decisions taken up front (--auto, recorded drops), before any question.
    Most updates take neither: the refresh's module is then not loaded."""
    if options.local_edits:
        from tether.flows.refresh import settle_local_edits

        settle_local_edits(project, latest, plan, options.local_edits)
    if project.profile.source_record:
        from tether.flows.refresh import settle_host_deletions

        settle_host_deletions(project, baseline, latest, plan, options.host_deleted)


def _nothing_moved(plan: UpdatePlan, baseline: Baseline, latest: Release) -> bool:
    state = baseline.state
    from tether.engine.decide import Row

    unchanged = state is not None and state.manifest_sha256 == latest.manifest_sha256
    quiet = (Row.NO_UPSTREAM_CHANGE.value, LOCAL_EDIT_KEPT, YOURS)
    leftovers = state.leftovers if state is not None else {}
    return unchanged and all(
        (a.bucket is Bucket.REMOVED and a.decision not in ("restore", "drop"))
        or (a.bucket is Bucket.SKIP and a.reason in quiet)
        or (a.bucket is Bucket.DELETE and a.path in leftovers)  # listed already, kept
        for a in plan.actions
    )


def _check_same_upstream(baseline: Baseline, latest: Release, switch: bool) -> None:
    """A ``--source`` whose release names another upstream than the installed one moves the
    project to that upstream: refused unless ``--switch-upstream`` says it is meant. Only
    names a manifest declares count (a release without one is named after its source)."""
    from tether.model.implicit import IMPLICIT_KEY

    named = latest.manifest.name
    installed = baseline.upstream
    declared = not latest.manifest.extra.get(IMPLICIT_KEY) and not baseline.manifest().extra.get(
        IMPLICIT_KEY
    )
    if not declared or named == installed:
        return
    if not switch:
        raise TetherError(
            f"{latest.source}: release {latest.version} is {named}, not {installed} (the "
            f"upstream this project installed); pass --switch-upstream to move the project to "
            f"{named} (nothing was written)"
        )
    from tether.flows.notes import UpstreamSwitched

    baseline.notes.append(UpstreamSwitched(installed, named, latest.source))


def _leftover_actions(project: Project, baseline: Baseline) -> list[FileAction]:
    """The "Delete?" rows of files earlier updates left here after upstream dropped them:
    an update with nothing newer still lists them, and removes the unmodified ones when
    asked (``--delete-removed``)."""
    from tether.flows.status import current_digest, present_leftovers

    stats = project.stat_cache()
    return [
        leftover_action(rel, left, current_digest(project, rel, stats) == left.sha256)
        for rel, left in present_leftovers(project, baseline).items()
    ]


def _unmodified_leftovers(project: Project, baseline: Baseline) -> bool:
    return any(
        a.why is not None and not a.why.modified for a in _leftover_actions(project, baseline)
    )


def _answers_change(project: Project) -> bool:
    from tether.flows.template_project import answers_change

    return answers_change(project)


def _held_and_resolved(project: Project, baseline: Baseline) -> bool:
    """A file held back by unresolved markers was resolved since: the same release still
    has to be merged into it, so the project is not up to date yet."""
    from tether.flows.conflicts import conflict_is_unresolved

    state = baseline.state
    if state is None:
        return False
    for rel in state.held:
        record = state.conflicts.get(rel)
        if record is None or not conflict_is_unresolved(project, rel, record):
            return True
    return False


def _up_to_date(
    project: Project, baseline: Baseline, unfinished: RunRecord | None, request: UpdateRequest
) -> UpdateReport:
    """Nothing to move: say so, unless what is in the tree says otherwise (an applied
    update not yet committed, conflicts from an earlier update still open)."""
    from tether.flows.status import open_action_items, unresolved_conflicts

    report = UpdateReport(
        project.profile.name,
        baseline.upstream,
        baseline.version,
        baseline.version,
        UpdateStatus.UP_TO_DATE,
        dry_run=request.dry_run,
        merge_dir=project.profile.merge_dir,
        notes=list(baseline.notes),
    )
    report.uncommitted = uncommitted_version_marker(project)
    if report.uncommitted is not None:
        report.status = UpdateStatus.NOT_COMMITTED
    report.actions = _leftover_actions(project, baseline)
    report.earlier_action_items = open_action_items(project, baseline)
    if report.earlier_action_items:
        report.status = UpdateStatus.ACTION_REQUIRED
    report.earlier_conflicts = unresolved_conflicts(project, baseline)
    if report.earlier_conflicts:
        report.status = UpdateStatus.CONFLICTS_OPEN
    if unfinished is not None and unfinished.state_written:
        # That run's own conflicts, not an earlier one's: it finished all but its last line.
        report.status = UpdateStatus.COMPLETED
        report.run_id = unfinished.run_id
        report.run_end = RunEnd(RunEndCode.STATE_WRITTEN, to_version=unfinished.to_version)
        if not request.dry_run:  # the caller holds the lock
            from tether.flows.lifecycle_steps import finish_post_update

            report.post_update = finish_post_update(
                project, project.journal(), unfinished, baseline.manifest().lifecycle
            )
            project.journal().run_complete(unfinished.run_id)
    return report


def uncommitted_version_marker(project: Project) -> UncommittedMarker | None:
    """For ecosystems whose version file is committed (GAIA): a marker that differs from
    HEAD's copy means an update was applied and not committed."""
    from tether import git

    marker = project.profile.version_file
    top = git.work_tree_top(project.root) if marker else None
    if marker is None or top is None:
        return None
    value = project.read_version_marker()
    rel = os.path.relpath(project.path(marker).resolve(), top.resolve())
    committed = git.read_blob(top, f"HEAD:./{rel}")
    if committed is None or value is None:
        return None
    committed_value = committed.decode(errors="replace").strip()
    if committed_value == value:
        return None
    return UncommittedMarker(marker, value, committed_value)


class _StopFlag:
    """SIGINT/SIGTERM during apply stop the run after the current file."""

    def __init__(self) -> None:
        self.raised = False

    def __call__(self) -> bool:
        return self.raised

    @contextmanager
    def installed(self) -> Iterator[None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            self.raised = True

        if threading.current_thread() is not threading.main_thread():
            # A worker thread (a campaign unit on a Dask worker) gets no signals; the
            # process that owns the main thread decides what stops it.
            yield
            return
        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)


def _earlier_artifacts(project: Project) -> list[str]:
    from tether.fsio import walk_files

    if not project.merge_dir.is_dir():
        return []
    return [f"{project.profile.merge_dir}/{p}" for p in walk_files(project.merge_dir)]


def run_update(
    request: UpdateRequest, confirm: Callable[[PreparedUpdate], bool] = lambda p: True
) -> UpdateReport:
    """Plan and (unless a dry run) apply; see ``_plan_and_apply``."""
    from tether import git

    with git.one_command(), fetch_once_per_command():
        if not request.git.allow_linked_worktree:
            # First, before anything is written, whatever the update would then find.
            refuse_linked_worktree(
                open_project(request.root, request.profile, request.template_options())
            )
        return _plan_and_apply(request, confirm)


def _plan_and_apply(
    request: UpdateRequest, confirm: Callable[[PreparedUpdate], bool]
) -> UpdateReport:
    """Plan and (unless a dry run) apply, holding the project lock from planning to the end,
    so no other run can change the tree between the plan a person confirmed and its apply."""
    if request.dry_run:
        prepared = prepare_update(request)
        if isinstance(prepared, UpdateReport):
            return prepared
        if prepared.lifecycle.declared:
            from tether.flows.lifecycle_steps import (
                count_trailer_invalidations,
                dry_run_migrations,
            )

            dry_run_migrations(prepared.lifecycle)
            count_trailer_invalidations(prepared.project, prepared.lifecycle)
        report = prepared.report(UpdateStatus.DRY_RUN)
        branch_plan = _planned_branch(prepared)
        report.branch = branch_plan.name if branch_plan is not None else None
        return report
    project = open_project(request.root, request.profile, request.template_options())
    require_an_install(project)
    with (
        ProjectLock(project.path(project.profile.lock_file), command=request.command),
        _ecosystem_lock(project, request.command),
    ):
        check_runtime_paths(project)
        prepared = prepare_update(request)
        if isinstance(prepared, UpdateReport):
            _log_for_the_ecosystem(project, prepared)
            return prepared
        own_writes = frozenset(holds_run_writes(project, prepared.resume))
        dirty = refuse_dirty(project.root, prepared.plan, request.git, own_writes)
        branch_plan = _planned_branch(prepared)
        # What a person confirms names the branch the update switches to, as a dry run does.
        prepared.branch = branch_plan.name if branch_plan is not None else None
        if not confirm(prepared):
            return prepared.report(UpdateStatus.CANCELLED)
        branch = branch_for_update(branch_plan)
        report = _execute(prepared, branch_plan)
        report.branch, report.dirty = branch, dirty
        return report


@contextmanager
def _ecosystem_lock(project: Project, command: str) -> Iterator[None]:
    """The ecosystem tool's own run lock (gbrain's, in the recipe's target root), held beside
    tether's: while either tool runs, the other stops at once."""
    name = project.profile.ecosystem_lock
    if name is None:
        yield
        return
    from tether.flows.gbrain_record import ecosystem_path, installed_manifest
    from tether.flows.safety import PathGuard, UnsafePath

    manifest = installed_manifest(project)
    rel = ecosystem_path(manifest, name) if manifest is not None else name
    try:
        path, _info = PathGuard(project.root).ready(rel)
    except UnsafePath as error:
        raise TetherError(f"{rel}: {error.problem}; not taking the refresh lock there") from None
    lock = ProjectLock(Path(path), command=command)
    try:
        lock.acquire()
    except TetherError as error:
        raise TetherError(f"refresh already in progress. ({error})") from None
    try:
        yield
    finally:
        lock.release()


def _log_for_the_ecosystem(project: Project, report: UpdateReport) -> None:
    """A refresh that ran no writer still logs each file's line (a run logs its own)."""
    from tether.flows.gbrain_record import installed_manifest
    from tether.flows.refresh import append_log

    if project.profile.ecosystem_log is None or not report.actions:
        return
    manifest = installed_manifest(project)
    if manifest is not None:
        append_log(project, manifest, report.actions, utc_now())


def _planned_branch(prepared: PreparedUpdate) -> BranchPlan | None:
    plan = prepared.plan
    return plan_branch(
        prepared.project.root,
        plan.upstream,
        plan.to_version,
        prepared.request.git,
        _branches_made(prepared.journal),
    )


def _branches_made(journal: Journal) -> frozenset[str]:
    """The update branches earlier runs created, as their journal records say."""
    made = set()
    for record in journal.records():
        context = record.get("git") if record.get("step") == STEP_RUN_STARTED else None
        if isinstance(context, dict) and isinstance(context.get("created_branch"), str):
            made.add(context["created_branch"])
    return frozenset(made)


def _execute(prepared: PreparedUpdate, branch: BranchPlan | None = None) -> UpdateReport:
    project = prepared.project
    run_id = prepared.unfinished.run_id if prepared.unfinished else new_run_id()
    earlier = _earlier_artifacts(project)
    if prepared.unfinished is None:
        prune_backups(project, current=run_id)
        prune_cached_releases(project, prepared.latest, prepared.baseline.version)
        remove_empty_merge_folder(project)
    ctx = RunContext(project, prepared.journal, run_id, prepared.request.command, prepared.resume)
    ctx.git_context = branch.context() if branch is not None else None
    ecosystem_log = _ecosystem_log(prepared, run_id)
    if ecosystem_log is not None:
        ctx.after_writes = lambda actions: ecosystem_log.append(actions, utc_now())
    _before_writes(prepared, ctx)
    _template_stage(prepared, ctx, "before")
    stop = _StopFlag()
    with stop.installed():
        outcome = execute_plan(ctx, prepared.plan, stop)
    if ecosystem_log is not None:  # the files nothing was written for, before the run ends
        not_done = {id(a) for a in outcome.not_done}
        ecosystem_log.append([a for a in outcome.actions if id(a) not in not_done], utc_now())
    if not outcome.failed and not outcome.interrupted:
        outcome.actions += _template_stage(prepared, ctx, "after")
    regenerated = []
    if not outcome.failed and not outcome.interrupted:
        regenerated = _regenerate(prepared, ctx, outcome)
        if prepared.lifecycle.declared:
            from tether.flows.lifecycle_steps import post_update_writes, run_migrations

            run_migrations(ctx, prepared.latest, prepared.lifecycle, "after")
            # Before the new state: backed up and journaled, an abandon still puts them back.
            post_update_writes(ctx, prepared.lifecycle)
        outcome.backed_up += prepared.lifecycle.backed_up
        finalize(
            ctx,
            prepared.baseline,
            prepared.latest,
            outcome,
            prepared.plan.latest_hashes,
            applied_migrations=prepared.lifecycle.applied(run_id),
        )
        if prepared.lifecycle.declared:
            from tether.flows.lifecycle_steps import count_trailer_invalidations

            count_trailer_invalidations(project, prepared.lifecycle)
        if prepared.ping is not None and prepared.ping.status == "planned":
            from tether.flows.ping import send_ping

            send_ping(project, prepared.latest, prepared.ping, prepared.lifecycle.from_version)
    report = _report_after_apply(prepared, ctx, outcome, earlier)
    report.regenerated = regenerated
    report.regions["unregenerated_paths"] = _unregenerated_paths(prepared.regions, regenerated)
    after = project.profile.after_regeneration
    if after and any(r.rewritten_paths for r in regenerated):
        report.notices.append({"id": "after-regeneration", "text": after})
    return report


def _ecosystem_log(prepared: PreparedUpdate, run_id: str) -> RefreshLog | None:
    if prepared.project.profile.ecosystem_log is None:
        return None
    from tether.flows.refresh import RefreshLog

    return RefreshLog(
        prepared.project, prepared.latest.manifest, run_id, prepared.baseline.manifest()
    )


def _template_stage(prepared: PreparedUpdate, ctx: RunContext, stage: str) -> list[FileAction]:
    """A copier template's migrations and tasks (``flows/template_project.py``), each
    stage once per run (journaled: a resumed run skips a finished one). When the "before"
    stage ran, the plan is made again on the tree it left."""
    project = prepared.project
    if project.template is None or project.template.options.no_programs:
        return []  # --no-programs: copier's tasks are programs too (the plan notes it)
    from tether.flows.template_project import run_template_stage

    if stage == "before":
        _journal_run_started(prepared, ctx)  # the stage's records belong to this run
    ran, failed = run_template_stage(ctx, prepared.latest, stage)
    if failed is not None:
        if stage == "before":
            raise TetherError(failed.reason)
        return [failed]
    if stage == "before" and ran:
        _replan(prepared)
    return []


def _unregenerated_paths(regions: RegionPlan, outcomes: list[RegenOutcome]) -> list[str]:
    """Every declared path of a region that was skipped, refused or failed, siblings
    included: a sibling the merge overwrote carries the release's region, not the adopter's."""
    by_id = {decl.id: decl for decl in regions.declarations}
    paths = {
        path
        for outcome in outcomes
        if outcome.status != "regenerated" and outcome.region_id in by_id
        for path in by_id[outcome.region_id].paths
    }
    return sorted(paths)


def _before_writes(prepared: PreparedUpdate, ctx: RunContext) -> None:
    """Journal the conditions as they are before any write, then run the "before"
    migrations; when one ran, the file plan is made again on the tree it left."""
    lifecycle = prepared.lifecycle
    before = [m for m in lifecycle.migrations if m.when == "before"]
    if not lifecycle.snapshot and not before:
        return
    from tether.flows.lifecycle_steps import journal_snapshot, run_migrations

    _journal_run_started(prepared, ctx)
    journal_snapshot(ctx, lifecycle)
    done = set(lifecycle.results)
    run_migrations(ctx, prepared.latest, lifecycle, "before")
    ran = [lifecycle.results.get(m.id) for m in before if m.id not in done]
    if any(result is not None and result.status == "ok" for result in ran):
        _replan(prepared)


def _journal_run_started(prepared: PreparedUpdate, ctx: RunContext) -> None:
    """The run begins in the journal before a step ahead of the file writes (a migration,
    the lifecycle snapshot), so a rerun after a kill resumes it instead of starting over."""
    plan = prepared.plan
    ctx.journal.run_started(
        ctx.run_id,
        from_version=plan.from_version,
        to_version=plan.to_version,
        plan_digest=plan.digest(),
        command=ctx.command,
        git=ctx.git_context,
    )


def _replan(prepared: PreparedUpdate) -> None:
    project, baseline, latest = prepared.project, prepared.baseline, prepared.latest
    plan = build_plan(project, baseline, latest, prepared.request.options, prepared.regions)
    _settle_local_edits(project, baseline, latest, plan, prepared.request.options)
    _lifecycle_into_plan(
        project, baseline, latest, prepared.lifecycle, plan, prepared.resume, prepared.unfinished
    )
    prepared.plan = plan


def _regenerate(
    prepared: PreparedUpdate, ctx: RunContext, outcome: ApplyOutcome
) -> list[RegenOutcome]:
    if not any(decl.regenerate is not None for decl in prepared.regions.declarations):
        return []  # no region has a program to run (regenerate_regions would run none)
    from tether.flows.regions_step import regenerate_regions, unreconciled_inputs

    latest = prepared.latest.manifest
    log = ctx.project.path(ctx.project.profile.log_dir) / f"regions-{ctx.run_id}.log"
    try:
        return regenerate_regions(
            ctx.project,
            prepared.regions,
            outcome.actions,
            set(latest.files),
            ctx.backup_dir,
            log,
            unreconciled_inputs(outcome.actions, set(latest.merge)),
            ctx.project.profile.region_inputs,
            not_run_by=prepared.lifecycle.programs_off,
        )
    finally:
        ctx.guard.forget()  # region programs ran: every folder is judged again


def _report_after_apply(
    prepared: PreparedUpdate, ctx: RunContext, outcome: ApplyOutcome, earlier: list[str]
) -> UpdateReport:
    status = (
        UpdateStatus.INTERRUPTED
        if outcome.interrupted
        else UpdateStatus.FAILED
        if outcome.failed
        else UpdateStatus.UPDATED
    )
    report = prepared.report(status)
    report.run_id = ctx.run_id
    not_done = {id(a) for a in outcome.not_done}
    report.actions = [a for a in outcome.actions if id(a) not in not_done]
    report.not_done = list(outcome.not_done)
    report.state_written = outcome.state_written
    # A resumed run reports the backups its first part made too, as one run would.
    this_part = set(outcome.backed_up)
    first_part = [p for p in prepared.resume.backed_up if p not in this_part]
    report.backed_up = first_part + outcome.backed_up
    if ctx.backup_dir.exists():
        report.backup_dir = str(ctx.backup_dir.relative_to(ctx.project.root))
    # An earlier artifact this run wrote again is this run's (listed with its file, never
    # also as superseded); one for a region path this run settled is superseded.
    this_runs = {a.artifact for a in report.actions if a.artifact}
    region_handled = _region_handled_patches(prepared, report.actions) - this_runs
    report.earlier_artifacts = [p for p in earlier if p not in this_runs | region_handled]
    report.superseded_artifacts = [p for p in earlier if p in region_handled]
    report.index_trouble = list(outcome.index_trouble)
    report.backups_edited = list(outcome.backups_edited)
    if outcome.interrupted:
        report.run_end = RunEnd(RunEndCode.STOPPED, run_id=ctx.run_id)
    elif outcome.failed:
        report.run_end = RunEnd(RunEndCode.FILES_FAILED)
    return report


def _region_handled_patches(prepared: PreparedUpdate, actions: list[FileAction]) -> set[str]:
    """Patches an earlier run left for a declared region path that this run settled without
    a conflict: superseded (this run handled the region), not unresolved."""
    from tether.flows.artifacts import artifact_path

    conflicted = {a.path for a in actions if a.bucket is Bucket.CONFLICT}
    return {
        artifact_path(prepared.project, path, ".patch")
        for path in prepared.regions.by_path
        if path not in conflicted
    }
