"""A refresh in gbrain's terms: each copied file in one of its states, and the decision that
settles a locally-modified or host-deleted file (docs/refresh.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from tether.model.plan import AUTO_CHOICES, Bucket, FileAction, Op, UpdatePlan
from tether.valueclass import replace

if TYPE_CHECKING:
    from tether.flows.baseline import Baseline
    from tether.flows.project import Project, Release
    from tether.model.manifest import Manifest

UNCHANGED_IDENTICAL = "unchanged-identical"
UNCHANGED_STALE = "unchanged-stale"
LOCALLY_MODIFIED = "locally-modified"
HOST_DELETED = "host-deleted"
SOURCE_DELETED = "source-deleted"
NEW_IN_SOURCE = "new-in-source"
FAILED = "failed"


def refresh_state(action: FileAction) -> str:
    """The state of one copied file, from the plan's action for it."""
    from tether.flows.plan import LOCAL_EDIT_KEPT

    bucket = action.bucket
    if bucket is Bucket.REMOVED or action.decision == "restore":
        return HOST_DELETED
    if bucket is Bucket.ADD:
        return NEW_IN_SOURCE
    if bucket in (Bucket.UPDATE, Bucket.OVERWRITE):
        return UNCHANGED_STALE
    if bucket in (Bucket.DELETE, Bucket.DELETED):
        return SOURCE_DELETED
    if bucket is Bucket.FAILED:
        return FAILED
    if bucket is Bucket.SKIP:
        return LOCALLY_MODIFIED if action.reason == LOCAL_EDIT_KEPT else UNCHANGED_IDENTICAL
    if bucket is Bucket.CONFLICT and action.sides is not None and not action.sides[0]:
        return NEW_IN_SOURCE  # a host file already stands where the recipe adds one
    return LOCALLY_MODIFIED


def refresh_states(actions: Iterable[FileAction]) -> dict[str, str]:
    return {a.path: refresh_state(a) for a in actions}


def refresh_command(auto: str | None, deleted: str | None) -> str:
    """The command a refresh journals: its choices included, so an interrupted run is
    finished with the choices it started with (never silently with others)."""
    words = ["refresh"]
    if auto:
        words += ["--auto", auto]
    if deleted:
        words += ["--deleted", deleted]
    return " ".join(words)


def settle_local_edit(
    project: Project, latest: Release, action: FileAction, choice: str
) -> FileAction:
    """One locally-modified file settled as ``choice`` says: keep-mine leaves the host's
    bytes, take-theirs writes the recipe's (whether or not a line merge would be clean),
    merge keeps the line merge as planned, ours/theirs merge with the clashing hunks taking
    that side; ``hand-merge`` writes nothing and leaves the recipe's changes as a patch for
    a person. When the recipe did not move there is nothing to merge: every choice but
    take-theirs leaves the host's file. When only the hash of the copied version is known
    (a host gbrain installed itself) there is no line merge either: keep-mine and
    take-theirs settle the file, the others leave the recipe's change as a patch."""
    from tether.flows.plan import resettle

    if refresh_state(action) != LOCALLY_MODIFIED or choice == "merge":
        return action
    if action.sides is not None:
        return resettle(project, action, "patch" if choice == "hand-merge" else choice)
    if choice == "take-theirs":  # the host's edit is replaced, whatever the recipe did
        content = latest.verified_bytes(action.path)
        mode = latest.mode_of(action.path)
        return replace(
            action,
            bucket=Bucket.CONFLICT,
            op=Op.WRITE,
            content=content,
            mode=mode,
            artifact=None,
            artifact_content=None,
            decision=choice,
            reason="",
            why=None,
        )
    if action.bucket is Bucket.CONFLICT:  # known by hash only: nothing to merge on
        if choice != "keep-mine":
            return action
        return replace(action, op=Op.NONE, artifact=None, artifact_content=None, decision=choice)
    return replace(action, decision=choice if choice in AUTO_CHOICES else "")


def settle_local_edits(project: Project, latest: Release, plan: UpdatePlan, choice: str) -> None:
    """``--auto``: every locally-modified file settled the same way; ``take-theirs`` also
    cleans up the files the recipe dropped (removed, backed up first), as gbrain does."""
    plan.actions[:] = [settle_local_edit(project, latest, a, choice) for a in plan.actions]
    if choice == "take-theirs":
        plan.actions[:] = [_clean_up(a) for a in plan.actions]


def _clean_up(action: FileAction) -> FileAction:
    """A file the recipe dropped that is still here: removed (the writer backs it up)."""
    if action.bucket is not Bucket.DELETE:
        return action
    return replace(
        action, bucket=Bucket.DELETED, op=Op.REMOVE, decision="cleanup", reason="", why=None
    )


def settle_source_deleted(action: FileAction, choice: str) -> FileAction:
    """cleanup: a file the recipe dropped is removed from the host (backed up first), as
    gbrain offers; keep: it stays, the host's own file from now on."""
    if action.bucket is not Bucket.DELETE or action.decision:
        return action
    if choice == "cleanup":
        return _clean_up(action)
    return replace(action, decision="keep")


def local_edit_diff(project: Project, latest: Release, action: FileAction) -> bytes:
    """What the recipe would change in the host's copy: a unified diff, host → recipe."""
    from tether.engine.patches import unified_patch
    from tether.fsio import read_bytes

    if action.sides is not None:
        ours, theirs = action.sides[1], action.sides[2]
    else:
        ours, theirs = read_bytes(project.path(action.path)), latest.verified_bytes(action.path)
    return unified_patch(action.path, ours, theirs)


def settle_host_deleted(latest: Release, action: FileAction, choice: str) -> FileAction:
    """restore: copy the recipe's file back; drop: the deletion stands and is recorded
    (the entry leaves gbrain's record), so later refreshes do not ask again."""
    if refresh_state(action) != HOST_DELETED:
        return action
    if choice == "restore":
        content, mode = latest.verified_bytes(action.path), latest.mode_of(action.path)
        return replace(
            action, bucket=Bucket.ADD, op=Op.WRITE, content=content, mode=mode, decision="restore"
        )
    return replace(action, decision="drop")


def settle_host_deletions(
    project: Project, baseline: Baseline, latest: Release, plan: UpdatePlan, choice: str | None
) -> None:
    """Deletions dropped by an earlier refresh stay dropped; the others take ``choice``."""
    from tether.flows.gbrain_record import recorded_drops

    dropped = recorded_drops(project, baseline)
    for index, action in enumerate(plan.actions):
        if action.bucket is not Bucket.REMOVED:
            continue
        if action.path in dropped:
            plan.actions[index] = replace(action, decision="dropped")
        elif choice:
            plan.actions[index] = settle_host_deleted(latest, action, choice)


# What a file's line in the ecosystem's run log says was done, when no choice was asked.
_DEFAULT_DECISION = {
    UNCHANGED_IDENTICAL: "none",
    UNCHANGED_STALE: "take-theirs",
    NEW_IN_SOURCE: "add",
    LOCALLY_MODIFIED: "merge",
    HOST_DELETED: "keep-deleted",
    SOURCE_DELETED: "keep",
    FAILED: "failed",
}
LOG_ROTATE_BYTES = 1024 * 1024


def log_lines(
    actions: Iterable[FileAction],
    now: str,
    run_id: str | None = None,
    sources: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """One line per copied file, untouched ones included: when, which file (``src``: the
    recipe's path as the manifest names it, as gbrain logs it; ``target``: its path in the
    host), its state and the decision taken (docs/refresh.md, "Run log and lock"), and the
    run that took it."""
    sources = sources or {}
    lines = []
    for action in sorted(actions, key=lambda a: a.path):
        state = refresh_state(action)
        decision = action.decision or _DEFAULT_DECISION[state]
        if state == SOURCE_DELETED and action.bucket is Bucket.DELETED:
            decision = "cleanup"
        line = {
            "ts": now,
            "src": sources.get(action.path, action.path),
            "target": action.path,
            "state": state,
            "decision": decision,
        }
        if run_id is not None:
            line["run"] = run_id
        lines.append(line)
    return lines


class RefreshLog:
    """The ecosystem's own per-file run log (gbrain's ``.gbrain-source.refresh.log``, in the
    recipe's target root). A run appends each file's line once, when the file's decision is
    carried out (the writer's batches, durable first), so a kill never leaves a write
    unlogged; a resumed run finds the lines its interrupted part wrote (by run id) and does
    not write them twice."""

    def __init__(
        self,
        project: Project,
        manifest: Manifest,
        run_id: str | None,
        earlier: Manifest | None = None,
    ) -> None:
        from tether.flows.gbrain_record import ecosystem_path

        name = project.profile.ecosystem_log
        self.project = project
        self.rel = ecosystem_path(manifest, name) if name else None
        self.run_id = run_id
        # The recipe's path of each file; a file the recipe dropped has it in ``earlier``.
        self.sources = {**(earlier.sources if earlier else {}), **manifest.sources}
        self.logged: set[str] = self._logged_by_run() if run_id is not None else set()

    def _logged_by_run(self) -> set[str]:
        from tether.fsio import read_regular
        from tether.parselimits import json_loads

        found: set[str] = set()
        if self.rel is None:
            return found
        for rel in (self.rel + ".1", self.rel):
            try:
                data = read_regular(self.project.path(rel))
            except OSError:
                continue
            for raw in data.splitlines():
                try:
                    line = json_loads(raw)
                except (ValueError, UnicodeDecodeError):
                    continue  # a line cut short by a crash, or not ours
                if isinstance(line, dict) and line.get("run") == self.run_id:
                    # the host path; a line of an earlier tether has it as src only
                    found.add(str(line.get("target", line.get("src"))))
        return found

    def append(self, actions: Iterable[FileAction], now: str) -> None:
        """Append (and make durable) the lines of the actions not logged yet by this run,
        first moving a log above 1 MB to ``<log>.1`` (the one earlier generation kept)."""
        import json
        import os

        from tether.flows.safety import PathGuard
        from tether.fsio import write_all

        fresh = [a for a in actions if a.path not in self.logged]
        if self.rel is None or not fresh:
            return
        guard = PathGuard(self.project.root)
        path, info = guard.ready(self.rel)
        if info is not None and info.st_size > LOG_ROTATE_BYTES:
            os.replace(path, path + ".1")
        lines = log_lines(fresh, now, self.run_id, self.sources)
        text = "".join(json.dumps(line) + "\n" for line in lines)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o644)
        try:
            write_all(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self.logged.update(a.path for a in fresh)


def append_log(
    project: Project, manifest: Manifest, actions: Iterable[FileAction], now: str
) -> None:
    """A refresh that ran no writer (nothing moved): every file's line, no run id."""
    RefreshLog(project, manifest, None).append(actions, now)
