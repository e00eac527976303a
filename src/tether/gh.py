"""The GitHub CLI edge: every call of the ``gh`` program goes through this module, and
through the process edge (``tether.process``: its own process group, stopped with it on
Ctrl-C or at a deadline).

One runner, one policy for every use (``gh:`` sources and pull requests): the environment
of a git call (gh runs git itself) with gh's prompts switched off, stdin closed. Nothing can
wait for a person, so a slow call is a slow network, which gh's own timeouts and Ctrl-C
handle; a download into a file (a release's tarball) and the listing of a source's
versions are given their caller's bounds as well: a total time, and the most bytes gh may
write (``GhBound``).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tether import process
from tether.errors import TetherError
from tether.git import first_error_line, git_env
from tether.parselimits import json_loads

NOT_INSTALLED = "the `gh` program is not installed"


def installed() -> bool:
    return shutil.which("gh") is not None


def gh_env() -> dict[str, str]:
    return git_env(extra={"GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1"})


@dataclass(frozen=True)
class GhBound:
    """What one download through gh may take: ``seconds`` in all (gh is stopped then), and
    at most ``max_bytes`` in any file it writes (``RLIMIT_FSIZE``: the kernel refuses the
    write past it, so the file never grows beyond)."""

    seconds: float
    max_bytes: int


class GhBoundExceeded(TetherError):
    """gh was stopped by a ``GhBound``: ``kind`` is ``"time"`` or ``"bytes"``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class GhResult:
    """What one gh call printed (its stdout as text, "" when it went into a file)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def run_gh(
    args: Sequence[str],
    cwd: Path | None = None,
    *,
    out: Path | None = None,
    check: bool = True,
    bound: GhBound | None = None,
) -> GhResult:
    """Run ``gh ARGS`` in ``cwd``; its stdout as text, or streamed into the file ``out``
    (a tarball is binary). With ``check`` a non-zero exit raises TetherError naming the
    subcommand and gh's error line; a passed ``bound`` raises GhBoundExceeded. With a
    ``bound`` and no ``out``, the answer goes to a temporary file under the bound's size
    limit before it is read, so an answer without end never fills the memory."""
    argv = ["gh", *args]
    with tempfile.TemporaryFile() as errors:
        if out is not None:
            with open(out, "wb") as handle:
                ran = _run(argv, cwd, bound, output=handle, errors=errors)
            errors.seek(0)
            ran_stderr, answer = errors.read(), b""
        elif bound is not None:
            with tempfile.TemporaryFile() as held:
                ran = _run(argv, cwd, bound, output=held, errors=errors)
                held.seek(0)
                answer = held.read(bound.max_bytes + 1)
            errors.seek(0)
            ran_stderr = errors.read()
        else:
            ran = _run(argv, cwd, bound)
            ran_stderr, answer = ran.stderr, ran.stdout
    if ran.not_found:
        raise TetherError(NOT_INSTALLED)
    if not ran.started:
        raise TetherError(f"gh {args[0]}: {ran.end_words()}")
    if ran.timed_out:
        assert bound is not None
        raise GhBoundExceeded("time", f"took longer than {bound.seconds:g} s")
    returncode = ran.code()
    stdout = answer.decode("utf-8", "replace")
    stderr = ran_stderr.decode("utf-8", "replace")
    # An answer that reached the size limit was cut there, whatever gh made of that.
    if bound is not None and (
        len(answer) >= bound.max_bytes
        or (returncode != 0 and _wrote_up_to(out, cwd, bound.max_bytes))
    ):
        raise GhBoundExceeded("bytes", f"wrote more than {bound.max_bytes:,} bytes")
    if check and returncode != 0:
        raise TetherError(f"gh {args[0]} failed: {first_error_line(stderr)}")
    return GhResult(argv, returncode, stdout, stderr)


def _run(
    argv: list[str],
    cwd: Path | None,
    bound: GhBound | None,
    output: IO[bytes] | None = None,
    errors: IO[bytes] | None = None,
) -> process.Finished:
    """gh through the process edge: no deadline of tether's without a ``bound`` (gh's own
    network timeouts apply), stopped with its group on Ctrl-C."""
    return process.run(
        argv,
        cwd=cwd,
        env=gh_env(),
        timeout=bound.seconds if bound is not None else None,
        output=output,
        errors=errors,
        max_file_bytes=bound.max_bytes if bound is not None else None,
        at_once=True,
    )


def _wrote_up_to(out: Path | None, folder: Path | None, max_bytes: int) -> bool:
    """Whether gh filled a file to the size limit: ``out``, or a file it wrote in ``folder``
    (``--dir``)."""
    files = [out] if out is not None else []
    if folder is not None and folder.is_dir():
        files += [path for path in folder.iterdir() if path.is_file()]
    return any(path.stat().st_size >= max_bytes for path in files if path.exists())


# --- pull requests ------------------------------------------------------------------------
# Each call takes its caller's ``bound`` (a total time, and the bytes of gh's answer): gh
# answers from the network, and a campaign asks it once per repository.


@dataclass(frozen=True)
class PullRequest:
    number: int | None
    url: str


def open_pull_request_for(
    repo: Path, head: str, bound: GhBound | None = None
) -> PullRequest | None:
    """The open pull request whose head is the branch ``head``, None when there is none."""
    args = ["pr", "list", "--head", head, "--state", "open", "--json", "number,url"]
    result = _run_pr(args, repo, bound)
    try:
        found = json_loads(result.stdout or "[]")
        if not found:
            return None
        return PullRequest(int(found[0]["number"]), str(found[0]["url"]))
    except (ValueError, TypeError, KeyError, IndexError):
        raise TetherError(
            f"gh pr list answered something unreadable: {result.stdout[:80]!r}"
        ) from None


def create_pull_request(
    repo: Path, base: str, head: str, title: str, body: str, bound: GhBound | None = None
) -> PullRequest:
    """Open a pull request ``head`` → ``base``; gh prints its address, which ends in its
    number."""
    args = ["pr", "create", "--base", base, "--head", head, "--title", title, "--body", body]
    return _created(_run_pr(args, repo, bound))


def _created(result: GhResult) -> PullRequest:
    """The pull request ``gh pr create`` printed the address of (its last line)."""
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    url = lines[-1] if lines else ""
    number = re.search(r"/pull/(\d+)$", url)
    return PullRequest(int(number.group(1)) if number else None, url)


def open_pull_request_heads(repo: Path, bound: GhBound | None = None) -> list[str]:
    """The head commit of every open pull request of the repository at ``repo``."""
    args = ["pr", "list", "--state", "open", "--limit", "500", "--json", "headRefOid"]
    result = _run_pr(args, repo, bound)
    try:
        found = json_loads(result.stdout or "[]")
        return [str(pr["headRefOid"]) for pr in found]
    except (ValueError, TypeError, KeyError):
        raise TetherError(
            f"gh pr list answered something unreadable: {result.stdout[:80]!r}"
        ) from None


# --- pull requests named by their repository's address (campaigns) ------------------------
# A campaign works in tether's own mirrors, which have no remotes gh could read the
# repository from; each call names it with --repo (gh takes OWNER/REPO or the remote's URL).


def find_open_pull_request(
    repo: str, head: str, bound: GhBound | None = None
) -> PullRequest | None:
    """The open pull request of ``repo`` whose head is the branch ``head``, else None."""
    args = ["pr", "list", "--repo", repo, "--head", head, "--state", "open"]
    result = _run_pr([*args, "--json", "number,url"], None, bound)
    found = _json_answer(result.stdout or "[]", "pr list")
    if not isinstance(found, list) or not found:
        return None
    return _pull_request(found[0], "pr list")


def create_pull_request_in(
    repo: str, base: str, head: str, title: str, body: str, bound: GhBound | None = None
) -> PullRequest:
    """Open a pull request ``head`` → ``base`` in ``repo``; gh prints its address."""
    where = ["--repo", repo, "--base", base, "--head", head]
    return _created(
        _run_pr(["pr", "create", *where, "--title", title, "--body", body], None, bound)
    )


# ``pull_request`` names one pull request as gh does: its number, or its address.


def edit_pull_request_body(
    repo: str, pull_request: str, body: str, bound: GhBound | None = None
) -> None:
    _run_pr(["pr", "edit", pull_request, "--repo", repo, "--body", body], None, bound)


def pull_request_state(repo: str, pull_request: str, bound: GhBound | None = None) -> str:
    """``OPEN``, ``MERGED`` or ``CLOSED``, as gh reports it."""
    args = ["pr", "view", pull_request, "--repo", repo, "--json", "state"]
    result = _run_pr(args, None, bound)
    answer = _json_answer(result.stdout, "pr view")
    state = answer.get("state") if isinstance(answer, dict) else None
    if state not in ("OPEN", "MERGED", "CLOSED"):
        raise TetherError(f"gh pr view answered something unreadable: {result.stdout[:80]!r}")
    return str(state)


def close_pull_request(
    repo: str, pull_request: str, comment: str, bound: GhBound | None = None
) -> None:
    _run_pr(["pr", "close", pull_request, "--repo", repo, "--comment", comment], None, bound)


def _run_pr(args: list[str], cwd: Path | None, bound: GhBound | None) -> GhResult:
    """``run_gh`` for a pull-request call: a bound that stopped it names the call (``gh pr
    create took longer than 600 s``), as gh's own failures do."""
    try:
        return run_gh(args, cwd, bound=bound)
    except GhBoundExceeded as error:
        raise GhBoundExceeded(error.kind, f"gh {args[0]} {args[1]} {error}") from None


def _json_answer(text: str, call: str) -> object:
    try:
        return json_loads(text)
    except ValueError:
        raise TetherError(f"gh {call} answered something unreadable: {text[:80]!r}") from None


def _pull_request(item: object, call: str) -> PullRequest:
    try:
        if isinstance(item, dict):
            return PullRequest(int(item["number"]), str(item["url"]))
    except (KeyError, TypeError, ValueError):
        pass
    raise TetherError(f"gh {call} answered something unreadable: {item!r:.80}")
