"""``tether pr``: after a person committed an update, push its branch and open (or find)
its pull request. tether never commits; a branch with nothing committed is not pushed.

Every step's outcome lands in the report, which is returned whole however far the run got:
a failing push or ``gh`` never costs the person what was already done and said.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import gh, git
from tether.errors import Exit, TetherError, UsageError
from tether.flows.project import Project, check_project_dir, open_project
from tether.parselimits import json_loads
from tether.state.store import State

FAILED = ("push-failed", "gh-missing", "gh-failed")
CONFLICTS_LISTED = 10


@dataclass(frozen=True)
class PullRequestRequest:
    root: Path
    base: str | None = None  # None: the remote's default branch
    remote: str = "origin"
    title: str | None = None  # None: from tether's installed state
    body: str | None = None


@dataclass
class PullRequestReport:
    status: str  # nothing-ahead | opened | existing | push-failed | gh-missing | gh-failed
    branch: str
    base: str
    remote: str
    ahead: int
    title: str
    body: str
    pushed: bool = False
    number: int | None = None
    url: str | None = None
    error: str = ""  # the push's or gh's own error line
    # Files with uncommitted changes: not part of the pull request until committed. What the
    # person does next follows from the status; report/pullrequest.py words both.
    uncommitted: int = 0

    def exit_code(self) -> int:
        return Exit.ERROR if self.status in FAILED else Exit.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "branch": self.branch,
            "base": self.base,
            "remote": self.remote,
            "ahead": self.ahead,
            "pushed": self.pushed,
            "pull_request": self._pull_request(),
            "title": self.title,
            "body": self.body,
            "error": self.error,
        }  # report/pullrequest.pull_request_document adds next_step and notes

    def _pull_request(self) -> dict[str, Any] | None:
        if self.number is None and self.url is None:
            return None
        return {"number": self.number, "url": self.url}


@dataclass(frozen=True)
class _Where:
    """The checkout, the branch to push and the branch it goes into."""

    top: Path
    branch: str
    base: str
    base_ref: str  # what the branch is counted against: the remote's copy when known


def open_pull_request(request: PullRequestRequest) -> PullRequestReport:
    """Push the current branch and open its pull request, or say why not (see module)."""
    where = _locate(request)
    title, body = _title_and_body(request, where)
    report = PullRequestReport(
        "nothing-ahead",
        where.branch,
        where.base,
        request.remote,
        git.commits_ahead(where.top, where.base_ref),
        title,
        body,
    )
    report.uncommitted = len(git.dirty_paths(where.top, ["."]))
    if report.ahead == 0:
        return report
    _push(report, where)
    if report.pushed:
        _open_or_find(report, where)
    return report


def _locate(request: PullRequestRequest) -> _Where:
    top = git.work_tree_top(check_project_dir(request.root))
    if top is None:
        raise TetherError(f"{request.root}: not inside a git repository")
    branch = git.current_branch(top)
    if branch is None:
        raise TetherError(f"{top}: HEAD is detached; switch to the update's branch first")
    if not git.has_remote(top, request.remote):
        raise TetherError(
            f"{top}: no git remote named {request.remote!r}; add it "
            f"(git remote add {request.remote} URL) or pass --remote NAME"
        )
    base = request.base or git.remote_default_branch(top, request.remote)
    if base is None:
        raise TetherError(
            f"{top}: cannot tell which branch the pull request goes into "
            f"({request.remote}/HEAD is unknown and there is no main or master); pass --base-ref"
        )
    if base == branch:
        raise TetherError(
            f"{top}: you are on {base}, the branch the pull request would go into; put the "
            "update on its own branch (git switch -c NAME) and run 'tether pr' there"
        )
    return _Where(top, branch, base, _base_ref(top, request, base))


def _base_ref(top: Path, request: PullRequestRequest, base: str) -> str:
    for ref in (f"refs/remotes/{request.remote}/{base}", f"refs/heads/{base}"):
        if git.has_ref(top, ref):
            return ref
    error = UsageError if request.base else TetherError
    raise error(
        f"{top}: branch {base!r} exists neither here nor as {request.remote}/{base} "
        "(git fetch, or pass --base-ref BRANCH)"
    )


def _title_and_body(request: PullRequestRequest, where: _Where) -> tuple[str, str]:
    if request.title and request.body is not None:
        return request.title, request.body
    try:
        project = open_project(request.root)
        state = project.load_state()
    except TetherError:
        project, state = None, None
    if project is None or state is None:
        if not request.title:
            raise TetherError(
                f"{request.root}: no tether install found to name the pull request after; "
                "pass --title (and --body)"
            )
        return request.title, request.body or ""
    title = request.title or project.profile.update_title(state.upstream, state.version)
    body = request.body if request.body is not None else _body(project, state, where)
    return title, body


def default_title(upstream: str, version: str) -> str:
    """The title of an update's pull request when no profile names the upstream."""
    from tether.profiles import update_title

    return update_title(upstream, version)


def _body(project: Project, state: State, where: _Where) -> str:
    """What the update was, from the installed state and the base branch's copy of it."""
    before = _version_at(project, where.base_ref)
    profile = project.profile
    tag = profile.tag_prefix
    span = (
        f"from {tag}{before} to {tag}{state.version}" if before and before != state.version else ""
    )
    lines = [
        f"Updates {profile.display_name or state.upstream} {span or 'to ' + tag + state.version}.",
        "",
        "tether merged the release and kept the project's own changes where they did not "
        "collide; review the diff before merging.",
    ]
    unresolved = _unresolved_conflicts(project, state)
    if unresolved:
        lines += ["", f"Conflicts still unresolved in the working tree ({len(unresolved)}):"]
        lines += [f"- {path}" for path in unresolved[:CONFLICTS_LISTED]]
        if len(unresolved) > CONFLICTS_LISTED:
            lines.append(f"- … and {len(unresolved) - CONFLICTS_LISTED} more")
    return "\n".join(lines)


def _version_at(project: Project, rev: str) -> str | None:
    """The installed version the base branch records (its version marker, else its state)."""

    marker = project.profile.version_file
    if marker:
        data = git.read_blob(project.root, f"{rev}:./{marker}")
        return data.decode(errors="replace").strip() or None if data else None
    data = git.read_blob(project.root, f"{rev}:./{project.profile.state_file}")
    try:
        version = json_loads(data)["version"] if data else None
    except (ValueError, TypeError, KeyError):
        return None
    return str(version) if version else None


def _unresolved_conflicts(project: Project, state: State) -> list[str]:
    from tether.flows.conflicts import conflict_is_unresolved

    return [
        path
        for path, record in sorted(state.conflicts.items())
        if conflict_is_unresolved(project, path, record)
    ]


def _push(report: PullRequestReport, where: _Where) -> None:
    error = git.push_branch(where.top, where.branch, report.remote)
    if error is None:
        report.pushed = True
        return
    report.status, report.error = "push-failed", f"git push failed: {error}"


def _open_or_find(report: PullRequestReport, where: _Where) -> None:
    if not gh.installed():
        report.status, report.error = "gh-missing", gh.NOT_INSTALLED
        return
    from tether.sources import limits
    from tether.sources.github import answer_bound, bound_words

    try:
        bound = answer_bound()  # gh answers from the network: a total time and size
        existing = gh.open_pull_request_for(where.top, where.branch, bound)
        if existing is not None:
            report.status, report.number, report.url = "existing", existing.number, existing.url
            return
        created = gh.create_pull_request(
            where.top, where.base, where.branch, report.title, report.body, bound
        )
        report.status, report.number, report.url = "opened", created.number, created.url
    except TetherError as error:
        report.status, report.error = "gh-failed", bound_words(error, limits.ANSWER_BYTES)
