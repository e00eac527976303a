"""The words of one ``campaign run``: where its units ran, its waves, and why a canary
stopped it. A pure function of the ``run`` section of the campaign document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Doc = Mapping[str, Any]

# --- why a repository's unit failed: the ``reason`` its record keeps -------------------------

NOT_VERIFIED = "the commits its unit sent back do not verify"


def internal_error(detail: str) -> str:
    """A unit that crashed (``detail``: the exception's type and message)."""
    return f"internal error: {detail}"


def mirror_locked(error: Exception) -> str:
    return f"its mirror is locked by another unit: {error}"


def cannot_lock(path: object, why: str) -> str:
    return f"cannot lock {path}: {why}"


def no_default_branch(url: str) -> str:
    return f"{url} names no default branch (empty?)"


def no_branch(url: str, branch: str) -> str:
    return f"{url} has no branch {branch}"


def cannot_fetch(url: str, error: Exception) -> str:
    return f"cannot fetch {url}: {error}"


def update_failed(status: str, failed: Sequence[tuple[str, str]]) -> str:
    """An update that ended neither done nor in conflicts: its status, or its failed files
    (path, reason), the first named."""
    if not failed:
        return f"update {status}"
    path, reason = failed[0]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"{len(failed)} file(s) failed: {path}: {reason}{more}"


def unit_did_not_move(unit: str, status: str) -> str:
    """A unit that left its record where it was (a unit must move it on)."""
    return f"{unit} left it {status}"


def worker_died(attempts: int) -> str:
    return f"the worker process running it died {attempts} times"


def lost_on_cluster(killed_worker: bool, detail: str) -> str:
    """A unit Dask lost: each worker that ran it died, or ``detail`` (the error's first line)."""
    if killed_worker:
        return "each Dask worker that ran it died (KilledWorker: allowed-failures reached)"
    return f"lost on the Dask cluster: {detail}"


def cannot_take_in(error: Exception) -> str:
    """The unit's commits could not be brought into the campaign's mirror."""
    return f"cannot take in the commits its unit sent back: {error}"


def not_verified(error: Exception) -> str:
    return f"{NOT_VERIFIED}: {error}"


def render_run(run: Doc, repositories: Sequence[Doc]) -> list[str]:
    lines = [_ran(run)]
    stopped = run["stopped_by_canary"]
    if stopped:
        states = {r["name"]: r["status"] for r in repositories}
        named = ", ".join(f"{name} {states.get(name, '?')}" for name in stopped)
        lines.append(
            f"stopped after the canary ({named}): nothing else was started. Look at them, "
            "then run again; without --canary the campaign goes on regardless."
        )
    return lines


def _ran(run: Doc) -> str:
    waves = run["waves"]
    count = sum(len(wave) for wave in waves)
    if not count:
        return "nothing to run: every repository is finished"
    where = _where(run)
    if len(waves) == 1:
        return f"ran {count} repositories ({where})"
    return f"ran {count} repositories in {len(waves)} waves ({where})"


def _where(run: Doc) -> str:
    if run["executor"] == "dask":
        if run["scheduler"]:
            return f"dask, scheduler {run['scheduler']}"
        return f"dask, {run['jobs']} workers on this machine"
    return "in this process" if run["jobs"] == 1 else f"local, {run['jobs']} processes"
