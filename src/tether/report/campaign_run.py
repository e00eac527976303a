"""The words of one ``campaign run``: where its units ran, its waves, and why a canary
stopped it. A pure function of the ``run`` section of the campaign document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Doc = Mapping[str, Any]


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
