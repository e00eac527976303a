"""``tether status`` and ``tether check``: drift against the installed baseline."""

from __future__ import annotations

import stat
import time
from pathlib import Path

from tether import progress
from tether.errors import TetherError
from tether.flows.baseline import Baseline, load_baseline
from tether.flows.conflicts import conflict_is_unresolved
from tether.flows.project import Project, open_project
from tether.flows.safety import PathGuard
from tether.fsio import (
    NotRegularFileError,
    cannot_read,
    read_regular,
    sha256_file,
)
from tether.model.manifest import FileClass
from tether.state.statcache import StatCache
from tether.state.store import Leftover
from tether.templates import TemplateOptions, read_only_options
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from tether.flows.notes import Note
    from tether.flows.regions_plan import RegionPlan  # read only when a file differs


@valueclass(frozen=True)
class NotCompared:
    """Why the files were not compared with the installed release (only the run in flight
    or stopped half way is reported), and the command of the run stopped half way whose
    rerun needs the ``--source`` it was given. ``report/status.py`` words it."""

    why: str  # the error that stopped reading the installed release
    unfinished_verb: str | None = None  # update or refresh, when one stopped half way


@valueclass()
class StatusReport:
    """What ``status`` and ``check`` found."""

    profile: str
    upstream: str
    source: str
    installed_version: str
    latest_version: str | None = None
    clean: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    modified_owned: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    deleted_owned: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    # Managed paths that are a FIFO, socket or device (also in ``modified``): never opened.
    not_regular: list[str] = field(default_factory=list)
    # Shipped paths a hand-off gives to the adopter right now (docs/lifecycle.md): their
    # drift is theirs, not reported as modified or deleted, and ``check`` does not fail on it.
    adopter_owned: list[str] = field(default_factory=list)
    # Paths the adopter took over (``tether own``), whether the release still ships them or
    # not: never compared, never drift; ``yours_deleted`` those of them not in the tree.
    yours: list[str] = field(default_factory=list)
    yours_deleted: list[str] = field(default_factory=list)
    # Files a release stopped shipping that an update left here ("Delete?"), until they are
    # deleted or taken over; ``leftovers_unmodified``: those still as the release had them
    # (what ``update --delete-removed`` removes).
    leftovers: list[str] = field(default_factory=list)
    leftovers_unmodified: list[str] = field(default_factory=list)
    # Another tether run holds the project's lock: the tree is being changed right now.
    running: dict[str, object] | None = None
    # An update that stopped before it completed (see ``unfinished_update``); its message is
    # worded by report/status_document.unfinished_message.
    unfinished: UnfinishedUpdate | None = None
    # Blocking items an update left (a migration that ended in conflict or error), until
    # they are settled (docs/lifecycle.md).
    action_items: list[dict[str, object]] = field(default_factory=list)
    # False when the files could not be compared with the installed release (only the run
    # in flight or stopped half way is reported).
    compared: bool = True
    # Why not (worded as the first notes by report/status.status_notes).
    not_compared: NotCompared | None = None
    notes: list[Note] = field(default_factory=list)  # worded by report/notes.py
    # A copier or cruft project: whether the template moved past the recorded version (its
    # versions are tags or commits, which tether's version order does not compare).
    template_moved: bool | None = None

    @property
    def update_available(self) -> bool:
        from tether.versions import compare_versions, is_version

        if self.template_moved is not None:
            return self.template_moved
        latest, installed = self.latest_version, self.installed_version
        if latest is None or not (is_version(latest) and is_version(installed)):
            return False
        return compare_versions(latest, installed) > 0

    def to_json(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "upstream": self.upstream,
            "source": self.source,
            "installed_version": self.installed_version,
            "latest_version": self.latest_version,
            "clean": len(self.clean),
            "modified": self.modified,
            "modified_owned": self.modified_owned,
            "deleted": self.deleted,
            "deleted_owned": self.deleted_owned,
            "conflicts": self.conflicts,
            "not_regular": self.not_regular,
            "adopter_owned": self.adopter_owned,
            "yours": self.yours,
            "yours_deleted": self.yours_deleted,
            "leftovers": self.leftovers,
            "leftovers_unmodified": self.leftovers_unmodified,
            "running": self.running,
            "unfinished": self.unfinished.document() if self.unfinished is not None else None,
            "action_items": self.action_items,
            "compared": self.compared,
            "notes": [],  # facts, worded by report/ into the document
        }


def unresolved_conflicts(project: Project, baseline: Baseline) -> list[dict[str, str]]:
    if baseline.state is None:
        return []
    return [
        {"path": path, "style": record.style, "artifact": record.artifact}
        for path, record in sorted(baseline.state.conflicts.items())
        if conflict_is_unresolved(project, path, record)
    ]


def _crlf_checkout_of(target: Path, baseline: Baseline, rel: str) -> bool:
    """The file differs from its baseline only by CRLF line endings (a checkout setting)."""
    from tether.engine.eol import same_text

    try:
        data = read_regular(target)
    except OSError:
        return False
    return b"\r\n" in data and same_text(data, baseline.read(rel) or b"")


NOT_A_FILE = ""  # current_digest of a folder, FIFO, socket or device: no file's digest


def current_digest(
    project: Project, rel: str, stats: StatCache, guard: PathGuard | None = None
) -> str | None:
    """sha256 of the project's file (None when absent), through the stat cache;
    NOT_A_FILE, without opening it, when the path is not a regular file, is a link, or
    lies behind a folder linking out of the project."""
    guard = guard or PathGuard(project.root)
    try:
        problem, info = guard.inspect_for_reading(rel)
    except OSError as error:  # a folder on the way that cannot be looked into
        raise TetherError(cannot_read(rel, error)) from None
    if info is None and problem is None:
        return None
    if problem is not None or info is None or not stat.S_ISREG(info.st_mode):
        return NOT_A_FILE
    cached = stats.lookup(rel, info)
    if cached is not None:
        return cached
    read_from = time.time_ns()
    try:
        digest = sha256_file(project.path(rel))  # a path object only for a file read
    except NotRegularFileError:  # swapped for a FIFO or device since the look
        return NOT_A_FILE
    except OSError as error:
        raise TetherError(cannot_read(rel, error)) from None
    stats.record(rel, info, digest, read_from)
    return digest


def classify_drift(
    project: Project, baseline: Baseline, report: StatusReport, no_regions: bool = False
) -> None:
    stats = project.stat_cache()
    guard = PathGuard(project.root)
    regions = _BaselineRegions(baseline, no_regions)
    yours = project.yours
    _list_yours(project, guard, report)
    for rel, record in progress.tracked("checking", sorted(baseline.files.items())):
        if rel in baseline.sentinels or rel in yours:
            continue
        owned = record.cls is FileClass.OWNED
        digest = current_digest(project, rel, stats, guard)
        if digest is None:
            report.deleted.append(rel)
            if owned:
                report.deleted_owned.append(rel)
            continue
        if digest == NOT_A_FILE:
            problem = guard.inspect_for_reading(rel)[0]
            if problem is not None:
                from tether.flows.notes import NotRead

                report.not_regular.append(rel)
                report.notes.append(NotRead(rel, problem))
        if digest != NOT_A_FILE and (
            digest == record.sha256
            or _crlf_checkout_of(project.path(rel), baseline, rel)
            or regions.differs_only_inside(rel, project.path(rel))
        ):
            report.clean.append(rel)
        else:
            report.modified.append(rel)
            if owned:
                report.modified_owned.append(rel)
    _save_unless_a_run_holds_the_lock(project, stats)


def _list_yours(project: Project, guard: PathGuard, report: StatusReport) -> None:
    """The paths taken over, each only looked at (is it there?), never read or compared."""
    for rel in sorted(project.yours):
        report.yours.append(rel)
        try:
            problem, info = guard.inspect_for_reading(rel)
        except OSError:
            continue
        if info is None and problem is None:
            report.yours_deleted.append(rel)


def present_leftovers(project: Project, baseline: Baseline) -> dict[str, Leftover]:
    """The recorded leftovers still in the tree, neither taken over nor shipped again."""
    state = baseline.state
    if state is None:
        return {}
    guard = PathGuard(project.root)
    present = {}
    for rel, left in sorted(state.leftovers.items()):
        if rel in project.yours or rel in baseline.files:
            continue
        try:
            problem, info = guard.inspect_for_reading(rel)
        except OSError:
            continue
        if info is not None or problem is not None:
            present[rel] = left
    return present


def _list_leftovers(project: Project, baseline: Baseline, report: StatusReport) -> None:
    stats = project.stat_cache()
    for rel, left in present_leftovers(project, baseline).items():
        report.leftovers.append(rel)
        if current_digest(project, rel, stats) == left.sha256:
            report.leftovers_unmodified.append(rel)


def _save_unless_a_run_holds_the_lock(project: Project, stats: StatCache) -> None:
    """status never takes the lock (it must not make a starting update fail), so while a run
    holds it the run's own stat cache is the one kept: this one is dropped."""
    from tether.state.lock import lock_holder

    if lock_holder(project.path(project.profile.lock_file)) is None:
        stats.save()


class _BaselineRegions:
    """The installed release's generated regions, read only once a file differs from its
    record: a regenerated region body is no drift, as it is no conflict for update."""

    def __init__(self, baseline: Baseline, no_regions: bool) -> None:
        self.baseline = baseline
        self.no_regions = no_regions
        self._plan: RegionPlan | None = None

    def plan(self) -> RegionPlan:
        if self._plan is None:
            from tether.flows.regions_plan import RegionPlan, plan_regions, regions_disabled

            if regions_disabled(self.no_regions):
                self._plan = RegionPlan(disabled=True)
            else:
                manifest = self.baseline.manifest()
                self._plan = plan_regions(manifest, manifest, disabled=False)
        return self._plan

    def differs_only_inside(self, rel: str, target: Path) -> bool:
        """The file equals the baseline's copy once the region bodies are masked."""
        if rel not in self.plan().by_path:
            return False
        from tether.flows.regions_step import masked_comparison

        try:
            current = read_regular(target)
        except OSError:
            return False
        base = self.baseline.read(rel) or b""
        sides, _ = masked_comparison(self.plan(), rel, base, current, base)
        return sides.ours_eq_base


def project_status(
    root: Path,
    profile: str | None = None,
    source: str | None = None,
    check_latest: bool = False,
    no_regions: bool = False,
    template: TemplateOptions | None = None,
) -> StatusReport:
    project = open_project(root, profile, read_only_options(template))
    running = running_run(project)
    unfinished = None if running else unfinished_update(project)
    try:
        baseline = load_baseline(project, source)
    except TetherError as error:
        if running is None and unfinished is None:
            raise
        # A first update killed half way, of a project tether had not installed, used a
        # --source it did not record yet: what stands is the unfinished run, and saying so
        # must not need that source again.
        return _run_state_only(project, running, unfinished, str(error))
    report = StatusReport(
        project.profile.name, baseline.upstream, baseline.source, baseline.version
    )
    report.running = running
    report.unfinished = unfinished
    report.notes += baseline.notes
    hand_offs = _hand_offs_declared(project, baseline)
    classify_drift(project, baseline, report, no_regions)  # saves what the stat cache learnt
    if hand_offs:
        _leave_handed_over_paths(project, baseline, report)
    report.conflicts = unresolved_conflicts(project, baseline)
    report.action_items = open_action_items(project, baseline)
    _list_leftovers(project, baseline, report)
    if project.template is not None:
        from tether.flows.template_project import template_leftovers

        report.conflicts += template_leftovers(project, baseline, report.conflicts)
    if check_latest:
        report.latest_version = newest_available(project, baseline.source, report.notes)
        if project.template is not None:
            from tether.flows.template_project import template_moved

            report.template_moved = template_moved(project, report.latest_version)
    return report


def _run_state_only(
    project: Project,
    running: dict[str, object] | None,
    unfinished: UnfinishedUpdate | None,
    why: str,
) -> StatusReport:
    """A report of the run in flight or stopped half way alone, when the installed release
    cannot be read without what that run was given (``check`` still exits 3 for it)."""
    installed = ""
    if unfinished is not None:
        installed = unfinished.from_version or ""
    report = StatusReport(
        project.profile.name,
        project.profile.display_name or project.profile.name,
        "(not recorded yet)",
        installed,
    )
    report.running = running
    report.unfinished = unfinished
    report.compared = False
    report.not_compared = NotCompared(why, unfinished.verb if unfinished is not None else None)
    return report


# The stat cache's fact for an installed manifest that hands no path over, under its digest,
# the profile that reads it (the profile decides its format and the paths it reserves) and
# tether's version (another version may read other declarations in the same bytes).
HANDS_NOTHING_OVER = "hands-nothing-over"


def _hand_offs_declared(project: Project, baseline: Baseline) -> bool:
    """Whether the profile or the installed release declares an ownership hand-off
    (docs/lifecycle.md). The release's answer is learnt once from the manifest the state
    records, and kept in the stat cache under that manifest's digest: a later status then
    reads, hashes and parses no manifest (a third of a clean status's time on a small
    project). Another release installed is another digest, and another tether version
    another key, asked again."""
    if project.profile.lifecycle.ownership:
        return True
    digest = baseline.recorded_digest()
    if digest is None:
        return bool(baseline.manifest().lifecycle.ownership)
    import tether  # already loaded: its version is what reads the manifest

    stats, key = project.stat_cache(), f"{digest} {project.profile.name} {tether.__version__}"
    if stats.fact(key) == HANDS_NOTHING_OVER:
        return False
    manifest = baseline.recorded_manifest()
    if manifest is None:  # not at hand (a fresh clone): the release's own, nothing learnt
        return bool(baseline.manifest().lifecycle.ownership)
    if manifest.lifecycle.ownership:
        return True
    stats.learn(key, HANDS_NOTHING_OVER)
    return False


def _leave_handed_over_paths(project: Project, baseline: Baseline, report: StatusReport) -> None:
    lifecycle = project.profile.lifecycle.joined(baseline.manifest().lifecycle)
    if not lifecycle.ownership:
        return  # nothing to match: the lifecycle runner and its child process are not loaded
    from tether.flows.lifecycle_steps import handed_over_now

    owned = handed_over_now(project, lifecycle)
    if not owned:
        return
    for listing in (report.modified, report.modified_owned, report.deleted, report.deleted_owned):
        listing[:] = [path for path in listing if path not in owned]
    report.clean = [path for path in report.clean if path not in owned]
    report.adopter_owned = sorted(owned)


def open_action_items(project: Project, baseline: Baseline) -> list[dict[str, object]]:
    """Migrations an update left blocking (conflict, error, refused) that the installed
    release or the profile still declares: settled only when one runs again and succeeds."""
    if baseline.state is None or not baseline.state.applied_migrations:
        return []  # no migration ever ran here, so none is left blocking
    from tether.flows.lifecycle_steps import blocking_migrations

    return [item.to_json() for item in blocking_migrations(project, baseline)]


def newest_available(project: Project, source_spec: str, notes: list[Note]) -> str | None:
    """The newest version the source offers; what its listing left out goes to ``notes``."""
    from tether.sources import open_source

    if project.template is not None:
        from tether.flows.template_project import resolve_template_target

        return resolve_template_target(project, None)
    source = open_source(source_spec, project.releases_cache)
    versions = source.available_versions()
    notes += source.notes
    return versions[-1] if versions else None


@valueclass(frozen=True)
class UnfinishedUpdate:
    """An update (or refresh) whose run stopped before it recorded the new state: files
    may be half written and markers may sit in files. Rerunning the same command finishes
    it; ``--abandon`` rolls it back."""

    run_id: str
    from_version: str | None
    to_version: str
    command: str
    # The run recorded its new state and the version marker, then stopped before it
    # completed (post-update writes may be missing): it can only be finished, not abandoned.
    state_written: bool = False
    # An abandon began putting the run back and was stopped: only the abandon can go on
    # (the command itself refuses to finish a run that is half rolled back).
    abandon_started: bool = False

    @property
    def verb(self) -> str:
        return self.command.split(" ", 1)[0] or "update"

    def document(self) -> dict[str, object]:
        """The facts of the JSON document's ``unfinished``; report/status_document.py adds
        its ``message``."""
        return {
            "run_id": self.run_id,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "command": self.command,
            "state_written": self.state_written,
            "abandon_started": self.abandon_started,
        }


def unfinished_update(project: Project) -> UnfinishedUpdate | None:
    """The journal's unfinished run: one that stopped before recording its new state, or
    after it (the steps after the version marker, such as post-update writes, may be
    missing; the same command finishes them)."""
    problem, info = PathGuard(project.root).inspect(project.profile.journal_file)
    if info is None and not problem:
        return None  # no update ever ran here: no journal to read (nor its modules to load)
    from tether.flows.replay import checked_unfinished_run

    journal = project.journal()
    run = checked_unfinished_run(project, journal)
    if run is None:
        return None
    return UnfinishedUpdate(
        run.run_id,
        run.from_version,
        run.to_version,
        run.command,
        run.state_written,
        run.abandon_started,
    )


def running_run(project: Project) -> dict[str, object] | None:
    """Who is changing the project right now (holding its lock), or None."""
    from tether.state.lock import lock_holder

    owner = lock_holder(project.path(project.profile.lock_file))
    if owner is None:
        return None
    return {"pid": owner.pid, "started": owner.started, "command": owner.command}
