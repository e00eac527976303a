"""The coordinator of ``campaign run``: the single writer of a campaign's records.

It cuts the unfinished repositories into waves (the canary first), hands each repository's
next unit to an executor (campaign/executors.py), and as each unit finishes writes the
record it returned, durably, before it gives that repository its next unit. A repository
already under way goes on before a new one starts, so a long campaign finishes repositories
from the first minute instead of fetching everything first.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from tether import progress
from tether.campaign.executors import (
    EXECUTORS,
    LOCAL,
    Call,
    Executor,
    ExecutorSpec,
    Unit,
    failed_record,
    open_executor,
)
from tether.campaign.model import CLONED, CONFLICTS, FAILED, PENDING, RepoRecord, Settings
from tether.campaign.store import CampaignFolder
from tether.errors import UsageError
from tether.report.campaign_run import unit_did_not_move

# A canary repository in one of these states stops the campaign after the canary.
CANARY_STOPPERS = frozenset({FAILED, CONFLICTS})

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(s|m|h)")
_SECONDS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> float:
    """``30s``, ``5m``, ``1h``, ``1m30s`` in seconds; a bare number is refused."""
    compact = text.strip().replace(" ", "")
    parts = _DURATION.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise UsageError(f"--pause {text!r}: give a number and a unit: 30s, 5m, 1h, 1m30s")
    return sum(float(number) * _SECONDS[unit] for number, unit in parts)


@dataclass(frozen=True)
class RunOptions:
    executor: str = LOCAL
    jobs: int = 1  # local: processes (1: in the coordinator); dask: workers it starts
    scheduler: str | None = None  # dask: connect here; None: a cluster on this machine
    canary: int | None = None
    wave_size: int | None = None
    pause: str | None = None  # a duration (parse_duration)

    def checked(self) -> RunOptions:
        """These options, or the usage error they make; nothing has been read yet."""
        if self.executor not in EXECUTORS:
            raise UsageError(f"--executor must be one of {', '.join(EXECUTORS)}")
        if self.scheduler is not None and self.executor != "dask":
            raise UsageError("--scheduler needs --executor dask")
        for flag, value in (("--jobs", self.jobs), ("--canary", self.canary)):
            if value is not None and value < 1:
                raise UsageError(f"{flag} must be at least 1")
        if self.wave_size is not None and self.wave_size < 1:
            raise UsageError("--wave-size must be at least 1")
        if self.pause is not None:
            parse_duration(self.pause)
            if self.canary is None and self.wave_size is None:
                raise UsageError("--pause needs waves to pause between: --wave-size or --canary")
        return self

    @property
    def pause_seconds(self) -> float:
        return parse_duration(self.pause) if self.pause is not None else 0.0


@dataclass(frozen=True)
class Wave:
    names: tuple[str, ...]
    canary: bool = False


def plan_waves(
    records: Sequence[RepoRecord], canary: int | None, wave_size: int | None
) -> list[Wave]:
    """The canary (the campaign's first ``canary`` repositories, finished or not), then the
    other unfinished repositories in waves of ``wave_size`` (one wave without it)."""
    head = [r.name for r in records[: canary or 0]]
    rest = [r.name for r in records[len(head) :] if r.status in steps()]
    size = wave_size or len(rest) or 1
    waves = [Wave(tuple(head), canary=True)] if head else []
    return waves + [Wave(tuple(rest[i : i + size])) for i in range(0, len(rest), size)]


def steps() -> Mapping[str, Unit]:
    """The unit that carries a record out of each unfinished state."""
    from tether.campaign.units import fetch_unit, update_unit

    return {PENDING: fetch_unit, CLONED: update_unit}


@dataclass
class RunOutcome:
    records: list[RepoRecord]
    waves: list[list[str]] = field(default_factory=list)  # repositories worked on, per wave
    stopped_by: list[str] = field(default_factory=list)  # canary repositories that stopped it

    def to_json(self, options: RunOptions) -> dict[str, Any]:
        return {
            "executor": options.executor,
            "jobs": None if options.scheduler else options.jobs,
            "scheduler": options.scheduler,
            "canary": options.canary,
            "wave_size": options.wave_size,
            "pause_seconds": options.pause_seconds,
            "waves": self.waves,
            "stopped_by_canary": self.stopped_by,
        }


def coordinate(
    folder: CampaignFolder,
    settings: Settings,
    records: Sequence[RepoRecord],
    options: RunOptions,
    sleep: Callable[[float], None] = time.sleep,
) -> RunOutcome:
    """Carry every unfinished repository to a finished state, wave by wave; after a canary
    with a failed or conflicting repository, start nothing more."""
    current = {r.name: r for r in records}
    outcome = RunOutcome(list(records))
    spec = ExecutorSpec(options.executor, options.jobs, options.scheduler)
    units = steps()
    todo = sum(1 for r in records if r.status in units)
    with progress.phase("repositories", todo, "repositories") as step, ExitStack() as stack:
        executor: Executor | None = None  # started with the first wave that has work
        for wave in plan_waves(records, options.canary, options.wave_size):
            work = [current[name] for name in wave.names if current[name].status in units]
            if work:
                if outcome.waves and options.pause_seconds:
                    sleep(options.pause_seconds)
                if executor is None:
                    executor = stack.enter_context(open_executor(spec))
                for record in _drive(executor, work, settings, folder, step.advance):
                    current[record.name] = record
                outcome.waves.append([r.name for r in work])
            if wave.canary:
                outcome.stopped_by = [n for n in wave.names if current[n].status in CANARY_STOPPERS]
                if outcome.stopped_by:
                    break
    outcome.records = [current[r.name] for r in records]
    return outcome


def _drive(
    executor: Executor,
    work: Sequence[RepoRecord],
    settings: Settings,
    folder: CampaignFolder,
    finished: Callable[[], None],
) -> list[RepoRecord]:
    """Run ``work`` to finished records, writing each record a unit returns as it comes
    (with the commits a unit sent back taken into the campaign's mirror first)."""
    from tether.campaign.bundles import take_in

    units = steps()
    waiting = deque(work)
    in_flight = 0
    done = []
    while waiting or in_flight:
        while waiting and in_flight < executor.slots():
            record = waiting.popleft()
            executor.submit(Call(units[record.status], record, settings))
            in_flight += 1
        call, returned = executor.next_done()
        in_flight -= 1
        result = returned.record
        if result.status == call.record.status:  # a unit must move its record on
            result = failed_record(
                call.record, unit_did_not_move(call.unit.__name__, result.status)
            )
        else:
            result = take_in(folder, settings, call.record, returned)
        folder.save(result)
        if result.status in units:  # this repository goes on before a new one starts
            executor.submit(Call(units[result.status], result, settings))
            in_flight += 1
        else:
            done.append(result)
            finished()
    return done
