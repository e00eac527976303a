"""Where a campaign's units run: in the coordinator's own process (``-j 1``), in a pool of
processes on this machine (``--executor local``), or on a Dask cluster (``--executor dask``).

The coordinator (campaign/coordinator.py) hands an executor one call at a time (a unit, a
record, the settings) and takes back each record a unit returned as it finishes; the
coordinator alone writes records. An executor only runs units: a worker lost mid-unit
means the unit runs again (units are idempotent), and a unit whose workers died
``MAX_ATTEMPTS`` times becomes that repository's failed record. Where a unit works (the
campaign folder, or a folder of the worker's own when it does not see it) and the mirror lock
it holds there are the unit's own business (campaign/workspace.py).

Dask is imported only here and only when chosen (``pip install 'tether[distributed]'``).
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tether.campaign.model import RepoRecord, Settings, UnitResult
from tether.errors import TetherError
from tether.report.campaign_run import internal_error, lost_on_cluster, worker_died
from tether.runs.registry import utc_timestamp

LOCAL = "local"
DASK = "dask"
EXECUTORS = (LOCAL, DASK)
DISTRIBUTED_EXTRA = "pip install 'tether[distributed]'"

# A unit whose worker process died this often fails; Dask's own default
# (distributed.scheduler.allowed-failures) is the same number.
MAX_ATTEMPTS = 3
# How often a pool worker looks whether its coordinator is still there, where the system
# cannot tell it (no pidfd).
ORPHAN_CHECK = 0.5
# How often the coordinator asks a Dask scheduler how many workers it has.
DASK_SLOTS_REFRESH = 2.0
# Units in flight per worker slot: a worker finishing one unit finds the next one queued
# instead of waiting while the coordinator writes a record and submits.
IN_FLIGHT_PER_SLOT = 2

Unit = Callable[[RepoRecord, Settings], UnitResult]


# --- what a worker runs --------------------------------------------------------------------


def run_unit(unit: Unit, record: RepoRecord, settings: Settings) -> UnitResult:
    """``unit(record, settings)``. Never raises (but for Ctrl-C in the coordinator's own
    process): whatever goes wrong becomes the repository's failed record."""
    try:
        return unit(record, settings)
    except Exception as error:
        return UnitResult(failed_record(record, internal_error(_first_line(error))))


def failed_record(record: RepoRecord, reason: str) -> RepoRecord:
    failed = record.failed(reason)
    return failed.moved(failed.status, updated_at=utc_timestamp())


def worker_tether_version() -> str:
    """Run on each Dask worker before any unit: which tether it has."""
    from tether import __version__

    return __version__


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


# --- the executors -------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    unit: Unit
    record: RepoRecord
    settings: Settings
    attempt: int = 1


class Executor(Protocol):
    def slots(self) -> int:
        """How many calls are worth having in flight now."""
        ...

    def submit(self, call: Call) -> None: ...

    def next_done(self) -> tuple[Call, UnitResult]:
        """Wait for one call in flight to finish; its result (a failed record when the call
        was lost for good)."""
        ...

    def close(self) -> None:
        """Everything finished: release the workers."""
        ...

    def abandon(self) -> None:
        """The run stops early (interrupted): stop the workers, drop what is in flight."""
        ...


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str = LOCAL
    jobs: int = 1  # local: processes; dask without a scheduler: worker processes
    scheduler: str | None = None  # dask: the scheduler's address; None starts one here


@contextmanager
def open_executor(spec: ExecutorSpec) -> Iterator[Executor]:
    executor = _make(spec)
    try:
        yield executor
    except BaseException:
        executor.abandon()
        raise
    executor.close()


def _make(spec: ExecutorSpec) -> Executor:
    if spec.kind == DASK:
        return DaskExecutor(spec.scheduler, spec.jobs)
    return InProcess() if spec.jobs <= 1 else ProcessPool(spec.jobs)


class InProcess:
    """``-j 1``: each unit runs in the coordinator's own process, one after the other."""

    def __init__(self) -> None:
        self._queue: deque[Call] = deque()

    def slots(self) -> int:
        return 1

    def submit(self, call: Call) -> None:
        self._queue.append(call)

    def next_done(self) -> tuple[Call, UnitResult]:
        call = self._queue.popleft()
        return call, run_unit(call.unit, call.record, call.settings)

    def close(self) -> None:
        pass

    def abandon(self) -> None:
        pass


# What a pool's fork server imports once, so each worker forked from it starts with the
# code of a unit already loaded (a fresh interpreter importing it costs a fifth of a second).
POOL_PRELOAD = ["tether.campaign.executors", "tether.campaign.units"]


def _pool_worker_start(coordinator: int, environment: dict[str, str], folder: str) -> None:
    """A pool worker takes the coordinator's environment and folder as they are when the
    pool starts (the fork server it comes from keeps those of the moment it was started,
    which a library caller may have changed since).

    It leaves the terminal's process group, so Ctrl-C reaches the coordinator alone, which
    then stops each worker with everything it started (its session). Nothing else would stop
    it when the coordinator is killed: it would wait for work forever (and its fork server
    with it, which lives while any worker does)."""
    import threading

    os.environ.clear()
    os.environ.update(environment)
    os.chdir(folder)
    if not hasattr(os, "setsid"):
        return
    os.setsid()
    threading.Thread(target=_die_with, args=(coordinator,), daemon=True).start()


def _die_with(coordinator: int) -> None:
    """Wait for the coordinator to end, then kill this worker's session: itself and any git
    it started."""
    _wait_until_gone(coordinator)
    os.killpg(0, signal.SIGKILL)


def _wait_until_gone(pid: int) -> None:
    try:
        ended = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # no pidfd here: look every ORPHAN_CHECK seconds
        from tether.state.lock import pid_alive

        while pid_alive(pid):
            time.sleep(ORPHAN_CHECK)
        return
    select.select([ended], [], [])  # a process's pidfd reads ready once it has ended


class ProcessPool:
    """``-j N``: N processes on this machine. A worker that dies breaks the whole pool
    (concurrent.futures cannot tell which call killed it), so every call in flight then
    runs again in a new pool, each counting one attempt."""

    def __init__(self, jobs: int) -> None:
        self._jobs = jobs
        self._pids: set[int] = set()
        self._running: dict[Future[UnitResult], Call] = {}
        self._ready: deque[tuple[Call, UnitResult]] = deque()
        self._pool = self._start()

    def _start(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor

        # Workers are forked from a fork server: a fresh interpreter started once per
        # coordinator, with no threads, that has imported the unit code (never a fork of the
        # coordinator, which has threads).
        return ProcessPoolExecutor(
            self._jobs,
            mp_context=_pool_context(),
            initializer=_pool_worker_start,
            initargs=(os.getpid(), dict(os.environ), os.getcwd()),
        )

    def slots(self) -> int:
        return self._jobs * IN_FLIGHT_PER_SLOT

    def submit(self, call: Call) -> None:
        future = self._pool.submit(run_unit, call.unit, call.record, call.settings)
        self._running[future] = call
        self._pids.update(getattr(self._pool, "_processes", None) or ())

    def next_done(self) -> tuple[Call, UnitResult]:
        from concurrent.futures import FIRST_COMPLETED, wait

        while not self._ready:
            done, _ = wait(self._running, return_when=FIRST_COMPLETED)
            if any(_worker_died(future) for future in done):
                self._recover()
            else:
                for future in done:
                    call = self._running.pop(future)
                    self._ready.append((call, _result(call, future)))
        return self._ready.popleft()

    def _recover(self) -> None:
        """The pool is broken: keep what finished, run the rest again in a new pool."""
        from concurrent.futures import wait

        wait(self._running)  # a broken pool fails every call it still held, at once
        lost = []
        for future, call in self._running.items():
            if _worker_died(future):
                lost.append(call)
            else:
                self._ready.append((call, _result(call, future)))
        self._running.clear()
        self._stop_workers()
        self._pool.shutdown(wait=True)
        self._pool = self._start()
        for call in lost:
            if call.attempt >= MAX_ATTEMPTS:
                reason = worker_died(call.attempt)
                self._ready.append((call, UnitResult(failed_record(call.record, reason))))
            else:
                self.submit(replace(call, attempt=call.attempt + 1))

    def _stop_workers(self) -> None:
        """Kill each worker's session: the worker and any git it started."""
        from tether.process import kill_group

        for pid in self._pids:
            kill_group(pid)
        self._pids.clear()

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def abandon(self) -> None:
        self._stop_workers()
        self._pool.shutdown(wait=False, cancel_futures=True)


# The process whose pools use the fork server: multiprocessing keeps one per process, and a
# process forked from that one cannot use it (it is not its child).
_fork_server_owner: int | None = None


def _pool_context() -> Any:
    """Where pool workers come from: the fork server, or fresh interpreters (``spawn``) where
    there is none or it belongs to the process this one was forked from."""
    import multiprocessing

    global _fork_server_owner
    spawn = multiprocessing.get_context("spawn")
    if "forkserver" not in multiprocessing.get_all_start_methods() or _fork_server_owner not in (
        None,
        os.getpid(),
    ):
        return spawn
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(POOL_PRELOAD)
    try:
        forkserver.ensure_running()
    except OSError:  # its socket cannot be made (a temporary folder with too long a path)
        return spawn
    _fork_server_owner = os.getpid()
    return context


def _worker_died(future: Future[UnitResult]) -> bool:
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(future.exception(), BrokenProcessPool)


def _result(call: Call, future: Future[UnitResult]) -> UnitResult:
    """A unit never raises; what is raised here is the pool's (say, a value it could not
    pickle) and fails the repository."""
    error = future.exception()
    if error is None:
        return future.result()
    return UnitResult(failed_record(call.record, internal_error(_first_line(error))))


# A local cluster's web server: a free loopback port, no dashboard. Dask's default port may
# be another cluster's, and then Dask warns on stderr.
LOOPBACK_WEB_SERVER: dict[str, Any] = {
    "dashboard_address": "127.0.0.1:0",
    "scheduler_kwargs": {"dashboard": False},
}


class DaskExecutor:
    """Units as Dask tasks. The scheduler reruns a task whose worker was lost, until
    ``distributed.scheduler.allowed-failures`` workers died running it; the task then ends
    in ``KilledWorker`` and the repository fails."""

    def __init__(self, scheduler: str | None, jobs: int) -> None:
        distributed = _import_distributed()
        self._cluster: Any = None
        if scheduler is None:
            self._cluster = distributed.LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                **LOOPBACK_WEB_SERVER,
            )
            self._client: Any = distributed.Client(self._cluster, set_as_default=False)
        else:
            self._client = _connect(distributed, scheduler)
        self._running: dict[str, tuple[Call, Any]] = {}
        self._done: Any = distributed.as_completed(loop=self._client.loop)
        self._slots = (0, 0.0)
        try:
            _check_workers(self._client)
        except BaseException:
            self.abandon()
            raise

    def slots(self) -> int:
        count, asked = self._slots
        if time.monotonic() - asked > DASK_SLOTS_REFRESH:
            count = sum(self._client.nthreads().values())
            self._slots = (count, time.monotonic())
        return max(1, count) * IN_FLIGHT_PER_SLOT

    def submit(self, call: Call) -> None:
        import uuid

        key = f"campaign-{call.unit.__name__}-{call.record.name}-{uuid.uuid4().hex[:12]}"
        future = self._client.submit(
            run_unit, call.unit, call.record, call.settings, key=key, pure=False
        )
        self._running[future.key] = (call, future)
        self._done.add(future)

    def next_done(self) -> tuple[Call, UnitResult]:
        future = next(self._done)
        call, _ = self._running.pop(future.key)
        try:
            return call, future.result()
        except Exception as error:
            return call, UnitResult(failed_record(call.record, _lost_reason(error)))

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def abandon(self) -> None:
        try:
            if self._running:
                self._client.cancel([future for _, future in self._running.values()])
        finally:
            self.close()


def _import_distributed() -> Any:
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise TetherError(
            f"--executor dask needs Dask distributed on this machine: {DISTRIBUTED_EXTRA}"
        ) from None


def _connect(distributed: Any, address: str) -> Any:
    """A client of the scheduler at ``address``; waits as long as Dask's connect timeout
    (``distributed.comm.timeouts.connect``) allows."""
    try:
        return distributed.Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise TetherError(
            f"cannot reach the Dask scheduler at {address}: {_first_line(error)}"
        ) from None


def _check_workers(client: Any) -> None:
    """Each worker connected now runs this tether. Workers that join later are not checked;
    a unit they cannot run fails its repository with the reason. Whether a worker sees the
    campaign folder is each unit's own question (campaign/workspace.py)."""
    from tether import __version__

    versions = client.run(worker_tether_version, on_error="return")
    for address, version in sorted(versions.items()):
        if isinstance(version, BaseException):
            raise TetherError(
                f"the Dask worker {address} cannot run tether ({_first_line(version)}): "
                f"{DISTRIBUTED_EXTRA} there"
            )
        if version != __version__:
            raise TetherError(
                f"the Dask worker {address} runs tether {version}, this machine {__version__}"
            )


def _lost_reason(error: BaseException) -> str:
    killed = type(error).__name__ == "KilledWorker"
    return lost_on_cluster(killed, "" if killed else _first_line(error))
