"""``campaign push``, ``pr``, ``close``, ``retry --failed`` and ``status --refresh``: a
campaign's committed updates taken to their remotes and pull requests, one library call
each. Nothing here prints.

Like ``run``, each holds the campaign's coordinator lock and writes every record the moment
its step is done: the push, then the pull request's number and address right after gh
returns them. A coordinator killed between gh opening a pull request and that write finds
the pull request again on the next ``pr`` (it always asks gh for the branch's open pull
request before opening one), so no repository ever gets a second one.

States after a run (campaign/model.py): ``updated`` (or ``conflicts`` committed with
``--on-conflict commit``) → ``pushed`` → ``pr-open`` → ``merged`` | ``closed``. Each
repository's trouble (an unreachable remote, a refused push, gh missing or not logged in)
becomes its ``failed`` record with a one-line reason and the campaign goes on.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from tether import gh, git
from tether.campaign.commands import CampaignResult, _document, _run_exit_code, run_campaign
from tether.campaign.model import (
    CLOSED,
    CONFLICTS,
    FAILED,
    MERGED,
    PR_OPEN,
    PUSHED,
    UPDATED,
    RepoRecord,
    Settings,
)
from tether.campaign.pacing import Budget, Pacing, Stop
from tether.campaign.store import CampaignFolder, campaign_folder
from tether.campaign.workspace import checked_mirror
from tether.errors import Exit, TetherError, UsageError
from tether.report.campaign_publish import (
    branch_moved,
    cannot_push,
    close_comment,
    pull_request_body,
    push_refused,
    step_document,
)
from tether.runs.registry import utc_timestamp
from tether.sources import limits
from tether.sources.github import answer_bound
from tether.sources.github import bound_words as gh_bound_words
from tether.sources.gitrepo import bound_words, listing_bound, transfer_bound

Answer = TypeVar("Answer")

# What gh's `pr view` says → the record's state.
ENDED = {"MERGED": MERGED, "CLOSED": CLOSED}


@dataclass(frozen=True)
class PullRequestsRequest:
    name: str
    directory: str | None = None  # --dir
    pacing: Pacing = field(default_factory=Pacing)


@dataclass(frozen=True)
class RepoNote:
    """Something a command left for a person about one repository: the error that kept it
    from moving on (``error``), or a campaign branch ``close`` kept on ``target`` because it
    holds commits tether did not push (``kept_branch``). ``report/campaign_publish.py``
    words it."""

    name: str
    error: str = ""
    kept_branch: str = ""
    target: str = ""


@dataclass
class _Coordinator:
    """One command's hold on a campaign: its records, written one at a time, and what
    changed."""

    folder: CampaignFolder
    settings: Settings
    records: list[RepoRecord]
    changed: list[str] = field(default_factory=list)
    notes: list[RepoNote] = field(default_factory=list)

    def save(self, index: int, record: RepoRecord) -> RepoRecord:
        record = replace(record, updated_at=utc_timestamp())
        self.folder.save(record)
        self.records[index] = record
        if record.name not in self.changed:
            self.changed.append(record.name)
        return record

    def result(
        self, action: str, stopped: Stop | None = None, pacing: dict[str, Any] | None = None
    ) -> CampaignResult:

        step = step_document(
            action,
            self.changed,
            stopped.to_json() if stopped else None,
            pacing,
            self.notes,
        )
        document = {**_document(self.folder, self.settings, self.records), "step": step}
        code = _run_exit_code(self.records)
        if stopped is not None and code != Exit.ERROR:
            code = Exit.FOUND  # work is left for a later run
        return CampaignResult(document, code)


@contextmanager
def _coordinating(name: str, directory: str | None, command: str) -> Iterator[_Coordinator]:
    from tether.state.lock import ProjectLock

    folder = CampaignFolder(campaign_folder(name, directory))
    settings, records = folder.load()
    with ProjectLock(folder.lock_path, f"campaign {command} {name}"):
        # Read again under the lock: the records another coordinator left are the truth.
        settings, records = folder.load()
        yield _Coordinator(folder, settings, records)


# --- push ----------------------------------------------------------------------------------


def push_campaign(name: str, directory: str | None = None) -> CampaignResult:
    """Push every committed update's campaign branch to its repository."""
    with _coordinating(name, directory, "push") as coordinator:
        for index, record in enumerate(coordinator.records):
            if _committed(record):
                coordinator.save(index, push_unit(record, coordinator.settings))
        return coordinator.result("push")


def _committed(record: RepoRecord) -> bool:
    """A committed update not pushed yet: updated, or conflicts committed with markers."""
    return record.status in (UPDATED, CONFLICTS) and bool(record.commit)


def push_unit(record: RepoRecord, settings: Settings) -> RepoRecord:
    """Put the record's commit on the campaign branch of its repository (→ ``pushed``).

    The branch is set only while it is absent or still at the commit tether pushed last,
    so commits a person added to it are never overwritten; a branch already at the commit
    counts as pushed (a push whose record was never written)."""
    branch = settings.branch
    try:
        mirror = checked_mirror(CampaignFolder(Path(settings.campaign_dir)), record.url)
        target = push_target(record)
        there = _remote_branch_commit(target, branch)
    except TetherError as error:
        return record.failed(cannot_push(error))
    if there != record.commit:
        if there is not None and there != record.pushed_commit:
            return record.failed(branch_moved(branch, target, there))
        try:
            refused = _push_commit(mirror, target, record.commit, branch, there or "")
        except TetherError as error:
            return record.failed(push_refused(target, str(error)))
        if refused is not None:
            return record.failed(push_refused(target, refused))
    return record.moved(PUSHED, pushed_commit=record.commit, reason="")


def _remote_branch_commit(target: str, branch: str) -> str | None:
    """Where ``branch`` is on ``target``, asked as a release source's tags are (an answer:
    ``TETHER_LIMIT_NETWORK_SECONDS``, ``TETHER_LIMIT_ANSWER_BYTES``)."""
    try:
        return git.remote_branch_commit(target, branch, listing_bound())
    except git.TransferBoundExceeded as error:
        raise TetherError(bound_words(error, limits.ANSWER_BYTES)) from None


def _push_commit(mirror: Path, target: str, commit: str, branch: str, expected: str) -> str | None:
    """``git.push_commit`` within the bounds of a fetch (``TETHER_LIMIT_NETWORK_SECONDS``):
    a remote that never answers stops the push, not the campaign."""
    try:
        return git.push_commit(mirror, target, commit, branch, expected, transfer_bound())
    except git.TransferBoundExceeded as error:
        raise TetherError(bound_words(error, limits.DOWNLOAD_BYTES)) from None


def push_target(record: RepoRecord) -> str:
    """Where the campaign branch goes: the remote entry's URL; for a local entry, the URL
    of its ``origin`` (tether never writes into the person's checkout itself)."""
    if not os.path.isabs(record.url):
        return record.url
    checkout = Path(record.url)
    origin = git.remote_url(checkout)
    if origin is None:
        raise TetherError(f"{checkout} has no remote named origin to push to")
    if "://" not in origin and ":" not in origin and not os.path.isabs(origin):
        return str((checkout / origin).resolve())  # a path relative to the checkout
    return origin


# --- pr ------------------------------------------------------------------------------------


def open_pull_requests(request: PullRequestsRequest) -> CampaignResult:
    """Read back the open pull requests' states, then push each committed update and open
    its pull request (or update the one already open), within the pacing's budget."""
    with _coordinating(request.name, request.directory, "pr") as coordinator:
        _refresh(coordinator)
        open_now = sum(1 for r in coordinator.records if r.status == PR_OPEN)
        budget = Budget(request.pacing, coordinator.folder.root, open_now)
        stopped = None
        for index, record in enumerate(coordinator.records):
            if _committed(record) or record.status == PUSHED:
                stopped = _pull_request(coordinator, index, budget)
                if stopped is not None:
                    break
        pacing = {
            **request.pacing.to_json(),
            "open_prs": budget.open_now,
            "opened_last_hour": budget.opened_in_window(),
        }
        return coordinator.result("pr", stopped, pacing)


def _pull_request(coordinator: _Coordinator, index: int, budget: Budget) -> Stop | None:
    """One repository: find its open pull request, else check the budget; push; then edit
    the pull request found or open one. A Stop when the budget allows no more."""
    record = coordinator.records[index]
    settings = coordinator.settings
    if not gh.installed():
        coordinator.save(index, record.failed(gh.NOT_INSTALLED))
        return None
    try:
        target = push_target(record)
        existing = _gh_call(gh.find_open_pull_request, target, settings.branch)
    except TetherError as error:
        coordinator.save(index, record.failed(str(error)))
        return None
    if existing is None:
        stopped = budget.room()
        if stopped is not None:
            return stopped
    if record.status != PUSHED:
        record = coordinator.save(index, push_unit(record, settings))
        if record.status == FAILED:
            return None
    coordinator.save(index, _opened(record, settings, target, existing, budget))
    return None


def _opened(
    record: RepoRecord,
    settings: Settings,
    target: str,
    existing: gh.PullRequest | None,
    budget: Budget,
) -> RepoRecord:
    from tether.flows.pullrequest import default_title

    body = pull_request_body(settings.to_json(), record.to_json())
    try:
        if existing is not None:
            _gh_call(gh.edit_pull_request_body, target, _selector(existing), body)
            budget.counted()
            found, opened_at = existing, record.pr_opened_at or utc_timestamp()
        else:
            title = default_title(settings.upstream, record.to_version)
            base = record.default_branch or ""
            budget.spend()
            try:
                found = _gh_call(
                    gh.create_pull_request_in, target, base, settings.branch, title, body
                )
            finally:
                budget.settle()
            opened_at = utc_timestamp()
    except TetherError as error:
        return record.failed(str(error))
    return record.moved(
        PR_OPEN, pr_number=found.number, pr_url=found.url, pr_opened_at=opened_at, reason=""
    )


def _gh_call(call: Callable[..., Answer], *args: str) -> Answer:
    """A pull-request call of gh's within the bounds of an answer
    (``TETHER_LIMIT_NETWORK_SECONDS``, ``TETHER_LIMIT_ANSWER_BYTES``): a repository whose
    call the bound stopped fails in one line naming the call and the variable."""
    try:
        return call(*args, bound=answer_bound())
    except gh.GhBoundExceeded as error:
        raise TetherError(gh_bound_words(error, limits.ANSWER_BYTES)) from None


def _selector(pull_request: gh.PullRequest) -> str:
    """How gh names a pull request: its number, else its address."""
    return str(pull_request.number) if pull_request.number is not None else pull_request.url


# --- the pull requests' states --------------------------------------------------------------


def refresh_campaign(name: str, directory: str | None = None) -> CampaignResult:
    """``status --refresh``: each open pull request's state read back from gh."""
    with _coordinating(name, directory, "status --refresh") as coordinator:
        _refresh(coordinator)
        result = coordinator.result("refresh")
    # Like status, it reports; only a state it could not read is an error.
    return CampaignResult(result.document, Exit.ERROR if coordinator.notes else Exit.OK)


def _refresh(coordinator: _Coordinator) -> None:
    """``pr-open`` records whose pull request was merged or closed move on. gh's trouble
    here is a note, not a failure: the pull request is still there."""
    for index, record in enumerate(coordinator.records):
        if record.status != PR_OPEN:
            continue
        try:
            state = _pull_request_state(record)
        except TetherError as error:
            coordinator.notes.append(RepoNote(record.name, error=str(error)))
            continue
        if state in ENDED:
            coordinator.save(index, record.moved(ENDED[state]))


def _pull_request_state(record: RepoRecord) -> str:
    if not gh.installed():
        raise TetherError(gh.NOT_INSTALLED)
    return _gh_call(gh.pull_request_state, push_target(record), _record_selector(record))


def _record_selector(record: RepoRecord) -> str:
    return _selector(gh.PullRequest(record.pr_number, record.pr_url))


# --- close ---------------------------------------------------------------------------------


def close_campaign(name: str, directory: str | None = None) -> CampaignResult:
    """End the campaign: close the pull requests it opened that are still open, delete the
    campaign branches it pushed and its own worktrees' branches; every record not merged
    becomes ``closed``. A repository where that fails keeps its record (with a note), so
    running ``close`` again finishes it."""

    with _coordinating(name, directory, "close") as coordinator:
        comment = close_comment(name)
        for index, record in enumerate(coordinator.records):
            if record.status == CLOSED:
                continue
            try:
                ended = _close_pull_request(record, comment)
                _delete_branches(coordinator, record)
            except TetherError as error:
                coordinator.notes.append(RepoNote(record.name, error=str(error)))
                continue
            if ended != record.status:
                coordinator.save(index, record.moved(ended))
        result = coordinator.result("close")
        left = any(r.status not in (CLOSED, MERGED) for r in coordinator.records)
        return CampaignResult(result.document, Exit.ERROR if left else Exit.OK)


def _close_pull_request(record: RepoRecord, comment: str) -> str:
    """The record's final state: ``merged`` when its pull request was, else ``closed``
    (closing the pull request when it is still open)."""
    if record.status == MERGED:
        return MERGED
    if record.status != PR_OPEN:
        return CLOSED
    state = _pull_request_state(record)
    if state == "OPEN":
        _gh_call(gh.close_pull_request, push_target(record), _record_selector(record), comment)
        return CLOSED
    return ENDED[state]


def _delete_branches(coordinator: _Coordinator, record: RepoRecord) -> None:
    """The campaign branch on the remote (only while it is the commit tether pushed), then
    tether's worktree and the branch in its mirror."""
    branch = coordinator.settings.branch
    if record.pushed_commit:
        target = push_target(record)
        there = _remote_branch_commit(target, branch)
        mirror = checked_mirror(coordinator.folder, record.url)
        if there == record.pushed_commit:
            try:
                refused = _push_commit(mirror, target, "", branch, there)
            except TetherError as error:
                raise TetherError(f"cannot delete {branch} on {target}: {error}") from None
            if refused is not None:
                raise TetherError(f"cannot delete {branch} on {target}: {refused}")
        elif there is not None:
            coordinator.notes.append(RepoNote(record.name, kept_branch=branch, target=target))
    _delete_own_branch(coordinator.folder, record, branch)


def _delete_own_branch(folder: CampaignFolder, record: RepoRecord, branch: str) -> None:
    mirror = checked_mirror(folder, record.url)
    if not mirror.is_dir():
        return
    work = folder.worktree_path(record.name)
    shutil.rmtree(work, ignore_errors=True)
    git.worktree_forget(mirror, work)
    if git.branch_commit(mirror, branch) is not None:
        git.delete_branch(mirror, branch)


# --- retry ---------------------------------------------------------------------------------


def retry_campaign(name: str, directory: str | None = None, *, failed: bool) -> CampaignResult:
    """Failed records back to ``pending``, then the campaign's ``run``."""
    if not failed:
        raise UsageError("say which repositories to retry: --failed")
    with _coordinating(name, directory, "retry") as coordinator:
        for index, record in enumerate(coordinator.records):
            if record.status == FAILED:
                coordinator.save(index, _reset(record))
        retried = list(coordinator.changed)
    ran = run_campaign(name, directory)

    step = step_document("retry", retried, None, None, [])
    return CampaignResult({**ran.document, "step": step}, ran.exit_code)


def _reset(record: RepoRecord) -> RepoRecord:
    """A pending record that keeps only who it is and what tether left on the remote (the
    branch it pushed, the pull request it opened), so the next push and pr find them."""
    return RepoRecord(
        record.name,
        record.url,
        record.default_branch,
        pushed_commit=record.pushed_commit,
        pr_number=record.pr_number,
        pr_url=record.pr_url,
        pr_opened_at=record.pr_opened_at,
    )
