"""The lifecycle steps of one update (docs/lifecycle.md): planned with the file plan, run at
their place in the update, journaled so an interrupted run resumes without redoing one.

Order within an update: conditions are read (ownership, notices) before anything is written
and journaled as a snapshot; "before" migrations run after confirmation, before any file
write; files are written (template refreshes among them, as ordinary actions); "after"
migrations run after the merge and region regeneration, before the state and version marker
are written; post-update writes come last.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.engine.lifecycle_rules import (
    classify_template,
    condition_holds,
    condition_patterns,
    due_migrations,
    exit_status,
    post_update_document,
    summary_capture,
)
from tether.flows.lifecycle_plan import (
    LifecyclePlan,
    MigrationResult,
    PostUpdateCode,
    PostUpdateOutcome,
    ProgramCode,
    ProgramWhy,
    TrailerCount,
    migration_result,
    skipped_by,
)
from tether.flows.project import open_project, utc_now
from tether.fsio import read_bytes, sha256_bytes
from tether.model.lifecycle import blocking_items
from tether.model.lifecycle_declarations import (
    BLOCKING,
    Condition,
    Lifecycle,
    Migration,
    PostUpdateWrite,
)
from tether.model.plan import Bucket, FileAction, Op, RowCode, RowWhy, UpdatePlan
from tether.sources import limits
from tether.sources.limits import MIGRATION_TIME
from tether.state.journal import (
    STEP_FILE_BACKED_UP,
    STEP_FILE_INTENT,
    STEP_FILE_WRITTEN,
    STEP_LIFECYCLE_SNAPSHOT,
    STEP_MIGRATION_FINISHED,
    STEP_MIGRATION_STARTED,
    STEP_POST_UPDATE_WRITTEN,
    Journal,
    RunRecord,
    new_run_id,
)
from tether.state.store import AppliedMigration, save_state
from tether.valueclass import replace as replace_value  # for the store's and templates' values

if TYPE_CHECKING:
    from tether.flows.apply import RunContext
    from tether.flows.baseline import Baseline
    from tether.flows.notes import Note
    from tether.flows.project import Project, Release
    from tether.flows.safety import PathGuard

# --------------------------------------------------------------------------- planning


def declared_lifecycle(project: Project, latest: Release) -> Lifecycle:
    """The profile's declarations, then the new release's."""
    return project.profile.lifecycle.joined(latest.manifest.lifecycle)


def _reader(project: Project) -> tuple[Any, Any]:
    root = project.root.resolve()

    def inside(rel: str) -> Path | None:
        path = project.path(rel)
        try:
            resolved = path.resolve()
        except OSError:
            return None
        return resolved if resolved.is_relative_to(root) else None

    def read(rel: str) -> str | None:
        path = inside(rel)
        if path is None or not path.is_file():
            return None
        try:
            return read_bytes(path).decode("utf-8", errors="replace")
        except OSError:
            return None

    def exists(rel: str) -> bool:
        path = inside(rel)
        return path is not None and path.exists()

    return read, exists


def _matched(
    project: Project, conditions: Mapping[str, Condition]
) -> tuple[dict[str, bool], list[Note]]:
    """Each named condition on the tree as it is now, with the notes for those a pattern
    left undecided. Every release pattern the conditions use is matched in one bounded
    child process (``pattern_child``): a pattern that backtracks for ever cannot hang the
    run; one the bound stopped makes its condition not hold, and says so."""
    from tether.parselimits import PATTERN_MEMORY_BYTES, PATTERN_SECONDS
    from tether.pattern_child import SEARCH, match_in_child

    read, exists = _reader(project)
    texts: dict[str, str | None] = {}

    def cached(rel: str) -> str | None:
        if rel not in texts:
            texts[rel] = read(rel)
        return texts[rel]

    wanted: dict[tuple[str, str], None] = {}  # (pattern, file), in order, once each
    for condition in conditions.values():
        for file, pattern in condition_patterns(condition):
            if cached(file) is not None:
                wanted[(pattern, file)] = None
    requests = [(pattern, texts[file] or "", SEARCH) for pattern, file in wanted]
    answers = match_in_child(requests, PATTERN_SECONDS, PATTERN_MEMORY_BYTES)
    table = {
        (pattern, texts[file]): answer.matched if answer.decided else None
        for (pattern, file), answer in zip(wanted, answers, strict=True)
    }
    results: dict[str, bool] = {}
    notes: list[Note] = []
    for name, condition in conditions.items():
        held = condition_holds(condition, cached, exists, lambda p, t: table.get((p, t)))
        if held is None:
            from tether.flows.notes import PatternUndecided

            notes.append(PatternUndecided(name, PATTERN_SECONDS, condition))
        results[name] = bool(held)
    return results, notes


def handed_over_now(project: Project, lifecycle: Lifecycle) -> dict[str, str]:
    """Path -> its hand-off's condition (described), for every hand-off whose condition
    holds on the tree as it is now: what ``status`` and ``check`` leave to the adopter, as
    the next update will."""
    rules = {f"ownership[{i}]": rule.when for i, rule in enumerate(lifecycle.ownership)}
    held, _ = _matched(project, rules)
    owned: dict[str, str] = {}
    for index, rule in enumerate(lifecycle.ownership):
        if held[f"ownership[{index}]"]:
            for path in rule.paths:
                owned.setdefault(path, rule.when.describe())
    return owned


def take_snapshot(project: Project, lifecycle: Lifecycle) -> tuple[dict[str, bool], list[Note]]:
    """Every condition, evaluated on the tree as it is now (before this run writes), and
    the notes for those a pattern left undecided."""
    conditions = {f"ownership[{i}]": r.when for i, r in enumerate(lifecycle.ownership)}
    conditions.update({f"notice:{n.id}": n.when for n in lifecycle.notices})
    return _matched(project, conditions)


def journaled_snapshot(journal: Journal, run_id: str) -> dict[str, bool] | None:
    for record in journal.records():
        if record.get("run") == run_id and record.get("step") == STEP_LIFECYCLE_SNAPSHOT:
            conditions = record.get("conditions")
            if isinstance(conditions, dict):
                return {str(k): bool(v) for k, v in conditions.items()}
    return None


def journaled_migrations(
    journal: Journal, run_id: str
) -> tuple[dict[str, MigrationResult], set[str]]:
    """Migrations an interrupted run finished (id -> result), and those it started only."""
    finished: dict[str, MigrationResult] = {}
    started: set[str] = set()
    for record in journal.records():
        if record.get("run") != run_id:
            continue
        if record.get("step") == STEP_MIGRATION_STARTED:
            started.add(str(record.get("id")))
        elif record.get("step") == STEP_MIGRATION_FINISHED:
            result = MigrationResult.from_record(record)
            finished[result.id] = result
    return finished, started - set(finished)


def plan_lifecycle(
    project: Project,
    baseline: Baseline,
    latest: Release,
    from_version: str,
    *,
    skip_migrations: bool = False,
    programs_off: str | None = None,
    journal: Journal | None = None,
    run_id: str | None = None,
) -> LifecyclePlan:
    """Decide every lifecycle step before anything is written. A resumed run takes the
    conditions and the finished migrations from its journal, not from the tree it wrote.
    ``programs_off``: the switch that stops every release program this run (its
    migrations are then skipped and recorded, as with ``--skip-migrations``)."""
    lifecycle = declared_lifecycle(project, latest)
    applied = baseline.state.applied_migrations if baseline.state is not None else {}
    plan = LifecyclePlan(
        declared=lifecycle,
        from_version=from_version,
        to_version=latest.version,
        migrations=due_migrations(
            lifecycle.migrations,
            from_version,
            latest.version,
            {ident: record.status for ident, record in applied.items()},
        ),
        skipped_by=skipped_by(skip_migrations, programs_off),
        programs_off=programs_off or "",
    )
    snapshot = None
    if journal is not None and run_id is not None:
        snapshot = journaled_snapshot(journal, run_id)
        plan.results, interrupted = journaled_migrations(journal, run_id)
        if interrupted:
            from tether.flows.notes import MigrationInterrupted

            plan.notes += [MigrationInterrupted(ident) for ident in sorted(interrupted)]
    if snapshot is None:
        snapshot, undecided = take_snapshot(project, lifecycle)
        plan.notes += undecided
    plan.snapshot = snapshot
    for index, rule in enumerate(lifecycle.ownership):
        if plan.snapshot.get(f"ownership[{index}]"):
            for path in rule.paths:
                plan.owned.setdefault(path, rule.when.describe())
    plan.notices = [n for n in lifecycle.notices if plan.snapshot.get(f"notice:{n.id}")]
    plan.post_planned = [_post_status(project, write)[0] for write in lifecycle.post_update]
    return plan


def hand_over(plan: UpdatePlan, owned: Mapping[str, str]) -> None:
    """Paths handed to the adopter are left entirely alone: no write, backup or artifact.
    ``owned``: path -> its hand-off's condition, described."""
    for index, action in enumerate(plan.actions):
        condition = owned.get(action.path)
        if condition is not None:
            why = RowWhy(RowCode.HANDED_OVER, detail=condition)
            plan.actions[index] = FileAction(action.path, action.cls, Bucket.SKIP, why=why)
            plan.structured.pop(action.path, None)


def plan_templates(
    project: Project,
    baseline: Baseline,
    latest: Release,
    lifecycle: LifecyclePlan,
    plan: UpdatePlan,
    written_before: Collection[str] = (),
) -> None:
    """One action per template-installed file, classified installed vs old vs new template.

    ``written_before``: paths an interrupted run of this update already wrote. A template
    it refreshed reads as in sync now; it is planned as the refresh it was, so the resumed
    run reports (and tells its after-refresh text) as an uninterrupted one would."""
    from tether.engine.patches import unified_patch
    from tether.flows.artifacts import artifact_path

    for template in lifecycle.declared.templates:
        if template.target in lifecycle.owned or any(
            a.path == template.target for a in plan.actions
        ):
            continue
        new = latest.read(template.template)
        if new is None:
            continue  # this release does not ship the template: nothing to refresh from
        installed = _installed_bytes(project, template.target)
        old = _baseline_bytes(baseline, template.template)
        verdict = classify_template(installed, old, new)
        if template.target in written_before and installed == new:
            verdict = "clean"
        if verdict == "missing" and template.install == "always":
            why = RowWhy(RowCode.TEMPLATE_INSTALLED)
            action = FileAction(template.target, None, Bucket.ADD, Op.WRITE, new, 0o644, why=why)
        elif verdict == "clean":
            action = FileAction(
                template.target,
                None,
                Bucket.UPDATE,
                Op.WRITE,
                new,
                0o644,
                why=RowWhy(RowCode.TEMPLATE_REFRESHED, path=template.template),
            )
            if template.after_refresh:
                lifecycle.after_refresh[template.target] = template.after_refresh
        elif verdict == "conflict":
            diverged = (
                RowCode.TEMPLATE_DIVERGED if old is not None else RowCode.TEMPLATE_UNAVAILABLE
            )
            patch = unified_patch(template.target, installed or b"", new)
            action = FileAction(
                template.target,
                None,
                Bucket.CONFLICT,
                Op.PATCH,
                artifact=artifact_path(project, template.target, ".patch"),
                artifact_content=patch,
                decision="patch",
                why=RowWhy(diverged),
            )
        else:
            left = (
                RowCode.TEMPLATE_NOT_INSTALLED if verdict == "missing" else RowCode.TEMPLATE_IN_SYNC
            )
            action = FileAction(template.target, None, Bucket.SKIP, why=RowWhy(left))
        plan.actions.append(action)


def _installed_bytes(project: Project, rel: str) -> bytes | None:
    path = project.path(rel)
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return read_bytes(path)
    except OSError:
        return None


def _baseline_bytes(baseline: Baseline, rel: str) -> bytes | None:
    from tether.errors import TetherError

    try:
        return baseline.read(rel)
    except TetherError:
        return None


# --------------------------------------------------------------------------- running


def journal_snapshot(ctx: RunContext, lifecycle: LifecyclePlan) -> None:
    if lifecycle.snapshot and not _has_snapshot(ctx):
        ctx.journal.append(ctx.run_id, STEP_LIFECYCLE_SNAPSHOT, conditions=lifecycle.snapshot)


def _has_snapshot(ctx: RunContext) -> bool:
    return journaled_snapshot(ctx.journal, ctx.run_id) is not None


def _environment(project: Project, lifecycle: LifecyclePlan) -> dict[str, str]:
    return {
        **os.environ,
        "TETHER_VERSION_FROM": lifecycle.from_version,
        "TETHER_VERSION_TO": lifecycle.to_version,
        "TETHER_PROJECT_ROOT": str(project.root.resolve()),
    }


def _program_path(
    project: Project, latest: Release, migration: Migration
) -> tuple[Path | None, ProgramWhy | None]:
    """Where the operand is run from (the release's copy before the merge, the merged copy
    after it), or why it cannot run."""
    from tether.flows.regen import operand_refusal

    shipped = set(latest.manifest.files) | set(latest.manifest.sentinels)
    operand = migration.operand
    if operand not in shipped:
        return None, ProgramWhy(ProgramCode.NOT_SHIPPED, operand=operand)
    if migration.when == "before":
        path = latest.file_path(operand)
        if path.is_file():
            return path, None
        return None, ProgramWhy(ProgramCode.MISSING_FROM_RELEASE, operand=operand)
    refused = operand_refusal(project.root, operand, shipped)
    if refused is not None:
        return None, refused
    path = project.path(operand)
    if path.is_file():
        return path, None
    return None, ProgramWhy(ProgramCode.NOT_A_FILE, operand=operand)


def run_migrations(ctx: RunContext, latest: Release, lifecycle: LifecyclePlan, when: str) -> None:
    """Run the due migrations of one phase, each at most once per run (journaled)."""
    if lifecycle.skip_migrations:
        return
    for migration in lifecycle.migrations:
        if migration.when != when or migration.id in lifecycle.results:
            continue
        lifecycle.results[migration.id] = _run_one(ctx, latest, lifecycle, migration)


def _run_one(
    ctx: RunContext,
    latest: Release | None,
    lifecycle: LifecyclePlan,
    migration: Migration,
    program: tuple[Path | None, ProgramWhy | None] | None = None,
) -> MigrationResult:
    """Run one migration; ``program``: where its operand is (or why it cannot run), when
    the caller found it without a new release (a rerun)."""
    from tether.flows.regen import run_program

    project = ctx.project
    if program is None:
        assert latest is not None
        program = _program_path(project, latest, migration)
    path, problem = program
    if path is None:
        assert problem is not None
        status = "skipped" if problem.code is ProgramCode.NOT_SHIPPED else "refused"
        result = migration_result(migration, status, why=problem)
        _journal_finished(ctx, result)
        return result
    argv = (migration.interpreter, str(path), *migration.run[2:])
    ctx.journal.append(
        ctx.run_id,
        STEP_MIGRATION_STARTED,
        id=migration.id,
        version=migration.version,
        when=migration.when,
    )
    log = project.path(project.profile.log_dir) / f"migrations-{ctx.run_id}.log"
    run = run_program(
        project.root,
        argv,
        _environment(project, lifecycle),
        timeout=MIGRATION_TIME,
        log_path=log,
    )
    status = exit_status(migration, run.exit_code) if run.started and not run.timed_out else "error"
    output = run.stdout + "\n" + run.stderr
    summary = summary_capture(migration, output, _capture) if status == "ok" else None
    result = migration_result(
        migration,
        status,
        exit_code=run.exit_code,
        summary=summary,
        stderr=run.stderr if status != "ok" else "",
        why=run.end,
    )
    _journal_finished(ctx, result)
    _after_a_program(ctx, result.command)
    return result


def _after_a_program(ctx: RunContext, command: str) -> None:
    """A program the release ships ran: every folder is judged again before the next write,
    and tether's own folders must still be plain folders (else the run stops here)."""
    from tether.flows.safety import check_own_paths_after

    ctx.guard.forget()
    check_own_paths_after(ctx.project.root, ctx.project.profile, command)


def _capture(pattern: str, text: str) -> str | None:
    """A release's summary pattern in a program's output, matched within the bound on
    release patterns (``pattern_child``); None when it does not match or the bound stopped
    it (the summary is then the declared default)."""
    from tether.parselimits import PATTERN_MEMORY_BYTES, PATTERN_SECONDS
    from tether.pattern_child import CAPTURE, match_in_child

    [answer] = match_in_child([(pattern, text, CAPTURE)], PATTERN_SECONDS, PATTERN_MEMORY_BYTES)
    return answer.captured


def _journal_finished(ctx: RunContext, result: MigrationResult) -> None:
    ctx.journal.append(ctx.run_id, STEP_MIGRATION_FINISHED, **result.to_json())


def dry_run_migrations(lifecycle: LifecyclePlan) -> None:
    """A dry run runs no program a release ships, not even one declaring ``dry_run_args``:
    it lists each due migration with the command the real update would run, ``planned``
    (why it did not run is that status, worded by ``report/lifecycle_steps.py``)."""
    if lifecycle.skip_migrations:
        return  # listed as skipped, with the switch that skips them
    for migration in lifecycle.migrations:
        lifecycle.results.setdefault(migration.id, migration_result(migration, "planned"))


# --------------------------------------------------------------------------- post-update writes


def post_update_writes(ctx: RunContext, lifecycle: LifecyclePlan) -> None:
    """After the after-migrations, before the new state is recorded: set keys in the
    adopter's JSON state files, once per run. Each file is backed up and journaled like any
    file the update writes, so an abandon puts it back."""
    done = _posted(ctx)
    values = {
        "from_version": lifecycle.from_version,
        "to_version": lifecycle.to_version,
        "now_unix": str(int(time.time())),
        "now_iso": utc_now(),
    }
    for write in lifecycle.declared.post_update:
        if write.file in done:
            lifecycle.post_updated.append(PostUpdateOutcome(write.file, PostUpdateCode.WRITTEN))
            continue
        outcome = _post_one(ctx, lifecycle, write, values)
        lifecycle.post_updated.append(outcome)
        if outcome.code is PostUpdateCode.WRITTEN:
            ctx.journal.append(ctx.run_id, STEP_POST_UPDATE_WRITTEN, file=write.file)


def finish_post_update(
    project: Project, journal: Journal, run: RunRecord, release: Lifecycle
) -> list[PostUpdateOutcome]:
    """A run stopped after its version marker: do the post-update writes it had not done
    (a run journaled by a tether that wrote them after the marker; today they come first)."""
    from tether.flows.apply import RunContext

    plan = LifecyclePlan(
        declared=project.profile.lifecycle.joined(release),
        from_version=run.from_version or "",
        to_version=run.to_version,
    )
    post_update_writes(RunContext(project, journal, run.run_id, run.command), plan)
    return plan.post_updated


def _posted(ctx: RunContext) -> set[str]:
    return {
        str(r.get("file"))
        for r in ctx.journal.records()
        if r.get("run") == ctx.run_id and r.get("step") == STEP_POST_UPDATE_WRITTEN
    }


def _post_status(
    project: Project, write: PostUpdateWrite, guard: PathGuard | None = None
) -> tuple[PostUpdateOutcome, dict[str, Any] | None]:
    """(what the write will do, the JSON object the file holds now, or None for a missing
    file). Judged through the path guard, as a write is: a link, a folder leading out of the
    project or a FIFO is never read, and is reported instead of written."""
    from tether.flows.safety import PathGuard
    from tether.parselimits import json_loads

    guard = guard or PathGuard(project.root)
    problem, info = guard.inspect(write.file)
    if problem:
        return PostUpdateOutcome(write.file, PostUpdateCode.FAILED, problem), None
    if info is None:
        missing = PostUpdateCode.NO_SUCH_FILE if write.only_if_exists else PostUpdateCode.PLANNED
        return PostUpdateOutcome(write.file, missing), None
    try:
        loaded = json_loads(read_bytes(project.path(write.file)))
    except (OSError, ValueError, RecursionError):
        loaded = None
    if not isinstance(loaded, dict):
        return PostUpdateOutcome(write.file, PostUpdateCode.NOT_AN_OBJECT), None
    return PostUpdateOutcome(write.file, PostUpdateCode.PLANNED), loaded


def _post_one(
    ctx: RunContext, lifecycle: LifecyclePlan, write: PostUpdateWrite, values: Mapping[str, str]
) -> PostUpdateOutcome:
    import json

    from tether.flows.safety import UnsafePath

    # Judged now, at write time: a program that ran since the plan may have made a link.
    ctx.guard.forget()
    planned, existing = _post_status(ctx.project, write, ctx.guard)
    if planned.code is not PostUpdateCode.PLANNED:
        return planned
    doc = post_update_document(write, existing or {}, values)
    data = (json.dumps(doc, indent=2) + "\n").encode()
    try:
        if _write_backed_up(ctx, write.file, data, existed=existing is not None):
            lifecycle.backed_up.append(write.file)
    except (UnsafePath, OSError) as error:
        return PostUpdateOutcome(write.file, PostUpdateCode.FAILED, str(error))
    return PostUpdateOutcome(write.file, PostUpdateCode.WRITTEN)


def _write_backed_up(ctx: RunContext, rel: str, data: bytes, *, existed: bool) -> bool:
    """Write ``rel`` as the update writes every file: its bytes backed up first (the run's
    first backup is never written over), then the intent, the write and its record, so an
    abandon restores the file, or removes it when the run created it. True when a backup
    was made."""
    from tether.flows.backups import back_up

    if existed:
        folder = ctx.backups
        saved = back_up(
            folder.guard,
            folder.name(rel),
            ctx.project.path(rel),
            first=ctx.resume.backed_up.get(rel),
        )
        if saved is not None:
            backup = {"path": rel, "backup": folder.label(saved.name), "sha256": saved.sha256}
            ctx.journal.append(ctx.run_id, STEP_FILE_BACKED_UP, **backup)
            ctx.resume.backed_up.setdefault(rel, saved.sha256)
    fields: dict[str, object] = {
        "path": rel,
        "target": rel,
        "sha256": sha256_bytes(data),
        "bucket": Bucket.UPDATE.value,
        "why": RowWhy(RowCode.POST_UPDATE_WRITE).to_json(),  # worded by report/reasons.py
    }
    ctx.journal.append(ctx.run_id, STEP_FILE_INTENT, **fields)
    ctx.guard.write(rel, data)
    ctx.journal.append(ctx.run_id, STEP_FILE_WRITTEN, **fields)
    return existed


# --------------------------------------------------------------------------- tether migrations


@dataclass
class MigrationsReport:
    profile: str
    version: str
    migrations: list[dict[str, Any]]
    pending_only: bool = False
    # --rerun: what each pending migration did when run again (MigrationResult documents).
    rerun: list[dict[str, Any]] | None = None

    @property
    def action_items(self) -> list[dict[str, Any]]:
        """Rerun migrations that still did not succeed: the same blocking items an update
        reports (``UpdateReport.action_items``)."""
        return blocking_items(self.rerun or [])

    def exit_code(self) -> int:
        from tether.errors import Exit

        return Exit.CONFLICTS if self.action_items else Exit.OK

    def to_json(self) -> dict[str, Any]:
        doc = {
            "profile": self.profile,
            "version": self.version,
            "pending_only": self.pending_only,
            "migrations": self.migrations,
        }
        if self.rerun is not None:
            doc["rerun"] = self.rerun
        return doc


def _listing_status(migration: Migration | None, record: AppliedMigration | None) -> str:
    if record is not None:
        return "applied" if record.status == "ok" else record.status
    if migration is not None and migration.version is None:
        return "every-update"
    return "not-run"  # declared for a release at or before the one installed first


def list_migrations(
    root: Path, profile: str | None = None, pending_only: bool = False
) -> MigrationsReport:
    """The migrations the installed release and the profile declare, with what the state
    records for each. Pending: recorded as not finished (conflict, error, refused, skipped),
    so the next update runs them again."""
    from tether.flows.baseline import load_baseline

    project = open_project(root, profile)
    baseline = load_baseline(project)
    declared = project.profile.lifecycle.joined(baseline.manifest().lifecycle).migrations
    applied = baseline.state.applied_migrations if baseline.state is not None else {}
    rows: list[dict[str, Any]] = []
    by_id = {m.id: m for m in declared}
    for ident in [*by_id, *(i for i in applied if i not in by_id)]:
        migration, record = by_id.get(ident), applied.get(ident)
        status = _listing_status(migration, record)
        if pending_only and status in ("applied", "every-update", "not-run"):
            continue
        rows.append(
            {
                "id": ident,
                "version": migration.version if migration else (record.version if record else None),
                "when": migration.when if migration else None,
                "command": " ".join(migration.run) if migration else None,
                "status": status,
                "at": record.at if record else None,
                "declared": migration is not None,
            }
        )
    return MigrationsReport(project.profile.name, baseline.version, rows, pending_only)


RERUN_COMMAND = "migrations --rerun"


def _installed_program(
    project: Project, migration: Migration, shipped: set[str]
) -> tuple[Path | None, ProgramWhy | None]:
    """The project's copy of a migration's program (the installed release ships it), or why
    it cannot run."""
    from tether.flows.regen import operand_refusal

    operand = migration.operand
    if operand not in shipped:
        return None, ProgramWhy(ProgramCode.NOT_SHIPPED, operand=operand)
    refused = operand_refusal(project.root, operand, shipped)
    if refused is not None:
        return None, refused
    path = project.path(operand)
    if not path.is_file():
        return None, ProgramWhy(ProgramCode.NOT_A_FILE, operand=operand)
    return path, None


def rerun_pending_migrations(root: Path, profile: str | None = None) -> MigrationsReport:
    """Run again, now, every declared migration the state records as not finished
    (conflict, error, refused, skipped), each the project's copy of its program, and record
    the results: how a blocking action item is settled once the cause is fixed by hand.

    Holds the project lock; refuses while an update is unfinished (finishing it runs them).
    Nothing is journaled: a migration must be safe to run twice, and one stopped half way
    stays recorded as not finished, so it is simply run again."""
    import tempfile

    from tether.errors import TetherError
    from tether.flows.apply import RunContext
    from tether.flows.baseline import load_baseline
    from tether.flows.replay import checked_unfinished_run
    from tether.flows.runtime_paths import check_runtime_paths
    from tether.state.lock import ProjectLock

    project = open_project(root, profile)
    with ProjectLock(project.path(project.profile.lock_file), command=RERUN_COMMAND):
        check_runtime_paths(project)
        journal = project.journal()
        unfinished = checked_unfinished_run(project, journal)
        if unfinished is not None:
            raise TetherError(
                f"the update to {unfinished.to_version} (run {unfinished.run_id}) is unfinished; "
                "rerun 'tether update' to finish it (that runs its migrations)"
            )
        baseline = load_baseline(project)
        state = baseline.state
        if state is None:
            raise TetherError(f"{project.root}: tether has no record of an installed release")
        manifest = baseline.manifest()
        declared = project.profile.lifecycle.joined(manifest.lifecycle)
        pending = [
            m
            for m in declared.migrations
            if (record := state.applied_migrations.get(m.id)) is not None and record.status != "ok"
        ]
        version = baseline.version
        plan = LifecyclePlan(declared, version, version, pending)
        run_id = new_run_id()
        shipped = set(manifest.files) | set(manifest.sentinels)
        # The runner journals each migration; a rerun keeps no journal (see above).
        with tempfile.TemporaryDirectory(prefix="tether-rerun-") as scratch:
            ctx = RunContext(project, Journal(Path(scratch) / "journal"), run_id, RERUN_COMMAND)
            for migration in plan.migrations:
                program = _installed_program(project, migration, shipped)
                plan.results[migration.id] = _run_one(ctx, None, plan, migration, program)
        if pending:
            applied = {**state.applied_migrations, **plan.applied(run_id)}
            save_state(project.state_path, replace_value(state, applied_migrations=applied))
    listing = list_migrations(root, profile)
    listing.rerun = [r.to_json() for r in plan.migration_results()]
    return listing


# --------------------------------------------------------------------------- trailer invalidations


def count_trailer_invalidations(project: Project, lifecycle: LifecyclePlan) -> None:
    """For each declared trailer: how many open pull requests carry a stamp for the version
    this update moves away from; "unknown" when gh or git cannot tell."""
    for check in lifecycle.declared.trailer_invalidations:
        count, why, detail = _trailer_count(project, check.trailer_key, lifecycle.from_version)
        lifecycle.trailers.append(TrailerCount(check.trailer_key, check.label, count, why, detail))


def _trailer_count(project: Project, key: str, version: str) -> tuple[int | str, str, str]:
    """The count, or ``"unknown"`` with why (a ``TrailerCount``'s ``why`` and ``detail``)."""
    import re

    from tether import gh, git
    from tether.errors import TetherError

    top = git.work_tree_top(project.root)
    if top is None:
        return "unknown", "no-checkout", ""
    if not gh.installed():
        return "unknown", "gh", gh.NOT_INSTALLED
    from tether.sources.github import answer_bound, bound_words

    try:
        heads = gh.open_pull_request_heads(top, answer_bound())
    except TetherError as error:
        return "unknown", "gh", bound_words(error, limits.ANSWER_BYTES)
    stamp = re.compile(rf"^{re.escape(key)}:[ \t]+{re.escape(version)}[ \t]+[0-9a-f]{{40}}", re.M)
    count = 0
    for head in heads:
        message = git.commit_message(top, head) if re.fullmatch(r"[0-9a-f]{40}", head) else None
        if message is not None and stamp.search(message):
            count += 1
    return count, "", ""


# --------------------------------------------------------------------------- open action items


@dataclass(frozen=True)
class OpenActionItem:
    """A migration an update left blocking, as the state records it: what ``status`` and
    ``check`` report until it runs again and succeeds (``tether migrations --rerun``)."""

    id: str
    status: str  # conflict | error | refused
    command: str
    at: str
    run_id: str

    def to_json(self) -> dict[str, object]:
        return {
            "kind": "migration",
            "id": self.id,
            "status": self.status,
            "command": self.command,
            "at": self.at,
            "run_id": self.run_id,
        }


def blocking_migrations(project: Project, baseline: Baseline) -> list[OpenActionItem]:
    """Declared migrations (the profile's and the installed release's) whose last run ended
    in conflict, error or refusal. One no longer declared cannot be run again by tether, so
    it is not reported as something tether can settle."""
    import shlex

    if baseline.state is None:
        return []
    declared = project.profile.lifecycle.joined(baseline.manifest().lifecycle).migrations
    applied = baseline.state.applied_migrations
    return [
        OpenActionItem(m.id, record.status, shlex.join(m.run), record.at, record.run_id)
        for m in declared
        if (record := applied.get(m.id)) is not None and record.status in BLOCKING
    ]
