"""``campaign run`` through its executors: in the coordinator's process (-j 1), a local
process pool, and Dask distributed on a real ``LocalCluster`` (a scheduler and two worker
processes over loopback, one per module); canary and waves.

Repositories are real bare git repositories served as ``file://`` remotes (the builders of
tests/campaign/test_campaign.py). Workers are killed for real, mid-update: the crash trigger
(state/crashpoint.py, ``TETHER_CRASH_TRIGGER``) makes the first worker process that writes a
project file after the test arms it die with ``os._exit``, as a killed process does.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tests.campaign.test_campaign as test_campaign
from builders import (
    GIT_TEST_ENV,
    TETHER,
    default_sigint,
    git,
    in_forked_child,
    make_release,
    run_process,
    run_tether,
    tree_digest,
)
from process_helpers import signal_delivered
from tests.campaign.conftest import SerialRun
from tests.campaign.test_campaign import World, cli, files_of
from tether.campaign import executors
from tether.campaign.coordinator import RunOptions, coordinate, parse_duration, plan_waves
from tether.campaign.executors import Call, ProcessPool, run_unit
from tether.campaign.model import RepoRecord, Settings, UnitResult
from tether.campaign.store import RECORD_STEP, CampaignFolder
from tether.campaign.units import fetch_unit, update_unit
from tether.errors import Exit, UsageError
from tether.flows.apply import BATCH_SIZE
from tether.state import crashpoint
from tether.state.lock import ProjectLock

# Real repositories served as file:// remotes, a registry and a campaigns folder.
world = test_campaign.world


# --- a Dask cluster for the module ---------------------------------------------------------


class Cluster:
    def __init__(self, cluster: Any, client: Any, trigger: Path) -> None:
        self.cluster = cluster
        self.client = client
        self.trigger = trigger  # created by a test: the next worker writing a file dies

    @property
    def address(self) -> str:
        return str(self.cluster.scheduler_address)

    def worker_pids(self) -> set[int]:
        return set(self.client.run(os.getpid).values())


# Dask's watch over itself, which no test here reads: the event loop's health checked every
# 20 ms, a statistical profile of each worker's threads every 10 ms, the memory and system
# monitors every 100 and 500 ms. The cluster lives from the module's first Dask test to its
# end and idles most of that time: 0.075 s of CPU a second (scheduler, nannies and two
# workers), 0.01 s with these spared. The nanny still sees a worker die at once (its process
# ends); the memory limit is not tested.
DASK_DIAGNOSTICS_SPARED = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
}


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    distributed = pytest.importorskip("distributed", reason="pip install 'tether[distributed]'")
    import dask.config

    home = tmp_path_factory.mktemp("dask-workers")
    trigger = home / "kill-the-next-worker-writing-a-file"
    env = {
        **GIT_TEST_ENV,
        crashpoint.TRIGGER_VAR: f"file-written@{trigger}",
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    # The workers (and the one a killed worker's nanny starts again) are forked from this
    # process's fork server with Dask loaded, not fresh interpreters that each import it:
    # the server tether's process pools use here too, so it preloads their unit code as
    # well (test_pool_workers_see_the_environment_and_folder_of_each_pools_start), and is
    # started here unless a pool of an earlier test started it.
    forkserver = multiprocessing.get_context("forkserver")
    forkserver.set_forkserver_preload([*executors.POOL_PRELOAD, "distributed"])
    multiprocessing.forkserver.ensure_running()
    spared = {**DASK_DIAGNOSTICS_SPARED, "distributed.worker.multiprocessing-method": "forkserver"}
    with dask.config.set(spared):  # the workers get it from their nannies
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit="768MiB",
            host="127.0.0.1",
            **executors.LOOPBACK_WEB_SERVER,
            env=env,
        )
        client = distributed.Client(cluster, set_as_default=False)
        try:
            yield Cluster(cluster, client, trigger)
        finally:
            client.close()
            cluster.close()


# --- helpers -------------------------------------------------------------------------------


def run(world: World, name: str, *flags: str) -> tuple[int, dict]:
    return cli("run", name, "--dir", str(world.campaigns), *flags)


def campaign_run_in_interpreter(
    world: World, tmp: dict[str, str], name: str, *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``tether campaign run NAME --json`` in a fresh interpreter (the console script), with
    no crash point of the test's own environment and TMPDIR from ``tmp``."""
    argv = ["campaign", "run", name, "--dir", str(world.campaigns), "--json", *flags]
    no_crash: dict[str, str | None] = {crashpoint.ENV_VAR: None, crashpoint.TRIGGER_VAR: None}
    return run_process(*argv, env={**no_crash, **tmp, **(env or {})}, timeout=300)


@pytest.fixture
def coordinator_tmp() -> Iterator[dict[str, str]]:
    """TMPDIR for a coordinator this test starts: short, so the fork server's socket fits in
    it (below a deep folder the pool falls back to fresh interpreters, a test of its own), and
    removed after the test with the fork server's socket folder a killed coordinator leaves
    behind (docs/campaigns.md)."""
    folder = tempfile.mkdtemp(prefix="coordinator-")
    yield {"TMPDIR": folder}
    shutil.rmtree(folder)


def results(document: dict) -> dict[str, tuple[Any, ...]]:
    """What a run decided per repository, without times and commit ids (a commit's time is
    in its id): the state, versions, buckets, conflicts, reason, start commit, and the files
    of the commit on the campaign branch."""
    decided = {}
    for record in document["repositories"]:
        commit = record["commit"]
        committed = files_of(mirror_in(document, record), commit) if commit else None
        decided[record["name"]] = (
            record["status"],
            record["from_version"],
            record["to_version"],
            record["buckets"],
            record["conflicts"],
            record["reason"],
            record["start_commit"],
            committed,
        )
    return decided


def mirror_in(document: dict, record: dict) -> Path:
    return CampaignFolder(Path(document["campaign_dir"])).mirror_path(record["url"])


def commits_on_branch(record: dict, document: dict) -> int:
    mirror = mirror_in(document, record)
    span = f"{record['start_commit']}..{document['branch']}"
    return int(git(mirror, "rev-list", "--count", span).strip())


def mixed_repositories(world: World) -> None:
    """Five repositories: clean updates, one conflict, one that follows another upstream."""
    world.remote("p1")
    world.remote("p2", edit="x\nmine\nz\n")
    world.remote("p3", shelf=world.seeds.other_shelf)  # follows other-kit
    world.remote("p4")
    world.remote("p5", edit="x\ny\nz\nmore\n")


def start(world: World, name: str, *extra: str) -> dict:
    code, document = world.start(*extra, name=name)
    assert code == 0, document
    return document


def states(document: dict) -> dict[str, str]:
    return {r["name"]: r["status"] for r in document["repositories"]}


EXPECTED_STATES = {
    "p1": "updated",
    "p2": "conflicts",
    "p3": "failed",
    "p4": "updated",
    "p5": "updated",
}


# --- the same results whatever runs the units ------------------------------------------------


def test_a_process_pool_and_dask_give_the_results_of_one_process(
    world: World, dask_cluster: Cluster, serial_run: SerialRun
) -> None:
    mixed_repositories(world)
    for name in ("pool", "dask"):
        start(world, name)
    serial = serial_run.document  # the same repositories, run in this process with -j 1
    assert serial_run.code == Exit.ERROR  # p3 failed; every other repository still ran
    assert states(serial) == EXPECTED_STATES
    assert serial["run"]["jobs"] == 1 and serial["run"]["executor"] == "local"

    code, pool = run(world, "pool", "-j", "2")
    assert code == Exit.ERROR and pool["run"]["jobs"] == 2
    code, on_dask = run(world, "dask", "--executor", "dask", "--scheduler", dask_cluster.address)
    assert code == Exit.ERROR
    assert on_dask["run"]["executor"] == "dask"
    assert on_dask["run"]["scheduler"] == dask_cluster.address

    expected = serial_run.results
    assert results(pool) == expected
    assert results(on_dask) == expected
    # Registry order in the document whatever order the units finished in.
    assert [r["name"] for r in on_dask["repositories"]] == ["p1", "p2", "p3", "p4", "p5"]
    for document in (pool, on_dask):
        for record in document["repositories"]:
            if record["commit"]:
                assert commits_on_branch(record, document) == 1


def test_a_dask_worker_killed_mid_update_gives_the_same_final_state(
    world: World, dask_cluster: Cluster, serial_run: SerialRun
) -> None:
    mixed_repositories(world)
    start(world, "dask")
    before = dask_cluster.worker_pids()

    dask_cluster.trigger.write_text("armed\n")
    code, on_dask = run(world, "dask", "--executor", "dask", "--scheduler", dask_cluster.address)
    assert not dask_cluster.trigger.exists(), "no worker died: the trigger was never pulled"
    assert dask_cluster.worker_pids() != before  # the dead worker's nanny started a new one
    assert code == Exit.ERROR
    assert results(on_dask) == serial_run.results
    for record in on_dask["repositories"]:
        if record["commit"]:
            assert commits_on_branch(record, on_dask) == 1


def test_a_pool_worker_killed_mid_update_gives_the_same_final_state(
    world: World, coordinator_tmp: dict[str, str], serial_run: SerialRun
) -> None:
    mixed_repositories(world)
    start(world, "pool")
    trigger = world.tmp / "kill-the-next-worker"
    trigger.write_text("armed\n")
    # The coordinator never writes a project file itself with -j 2: the one that dies is a
    # pool worker, and the pool it broke is replaced.
    done = campaign_run_in_interpreter(
        world,
        coordinator_tmp,
        "pool",
        "-j",
        "2",
        env={crashpoint.TRIGGER_VAR: f"file-written@{trigger}"},
    )
    assert not trigger.exists(), "no worker died: the trigger was never pulled"
    assert done.returncode == Exit.ERROR, done.stderr
    pool = json.loads(done.stdout)
    assert results(pool) == serial_run.results


def test_a_pool_whose_workers_keep_dying_fails_those_repositories_and_goes_on(
    world: World,
    coordinator_tmp: dict[str, str],
) -> None:
    world.remote("p1")
    start(world, "pool")
    # Every worker process dies at its first project file: the repository is tried three
    # times, then failed with the reason; the coordinator itself lives on.
    done = campaign_run_in_interpreter(
        world, coordinator_tmp, "pool", "-j", "2", env={crashpoint.ENV_VAR: "file-written:1"}
    )
    assert done.returncode == Exit.ERROR, done.stderr
    [record] = json.loads(done.stdout)["repositories"]
    assert record["status"] == "failed"
    assert record["reason"] == "the worker process running it died 3 times"


def where_the_worker_runs(record: RepoRecord, _settings: Settings) -> UnitResult:
    """A unit telling what its worker sees: its folder, one variable, and its parent's
    command line."""
    parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    seen = {"folder": os.getcwd(), "variable": os.environ.get("TETHER_TEST_SEEN"), "parent": parent}
    return UnitResult(record.failed(json.dumps(seen)))


def seen_by_a_pool() -> dict[str, Any]:
    record = RepoRecord("r", "file:///r.git", "main", "pending", "", "", "", "1", "2", {}, (), "t")
    settings = Settings("c", "kit", "2", "hold", "/f", "/r.json", "t")
    pool = ProcessPool(2)
    try:
        pool.submit(Call(where_the_worker_runs, record, settings))
        _call, result = pool.next_done()
    finally:
        pool.close()
    return dict(json.loads(result.record.reason))


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
def test_pool_workers_see_the_environment_and_folder_of_each_pools_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers are forked from a fork server that has the unit code loaded, started once per
    process; a library caller that changes its environment or folder between two runs gets
    workers that see the new ones, not those the fork server started with."""
    for value in ("first", "second"):
        folder = tmp_path / value
        folder.mkdir()
        monkeypatch.chdir(folder)
        monkeypatch.setenv("TETHER_TEST_SEEN", value)
        seen = seen_by_a_pool()
        assert seen["folder"] == str(folder) and seen["variable"] == value
        assert "multiprocessing.forkserver" in seen["parent"]
        assert "tether.campaign.units" in seen["parent"]  # preloaded there


def test_a_process_forked_after_its_parent_ran_a_pool_runs_pools_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parent's fork server is not the child's to use (it is not the child's child): a
    library caller that forks gets fresh interpreters as workers there, not an error."""
    monkeypatch.setenv("TETHER_TEST_SEEN", "parent")
    assert seen_by_a_pool()["variable"] == "parent"
    done = in_forked_child(
        lambda: 0 if seen_by_a_pool()["variable"] == "child" else 3,
        env={"TETHER_TEST_SEEN": "child"},
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "no-pidfd"])
def test_a_worker_learns_its_coordinator_ended_with_or_without_a_pidfd(
    pidfd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pool worker waits on: the coordinator's end, through a pidfd, or where the
    system has none by looking every ORPHAN_CHECK seconds."""
    if not pidfd:

        def no_pidfd(pid: int) -> int:
            raise OSError(errno.ENOSYS, "pidfd_open is not implemented here")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
        monkeypatch.setattr(executors, "ORPHAN_CHECK", 0.01)
    # Reaped as soon as it ends, as a coordinator is by its own parent.
    coordinator = subprocess.Popen(["sleep", "0.3"])
    threading.Thread(target=coordinator.wait, daemon=True).start()
    pid = coordinator.pid
    began = time.monotonic()
    executors._wait_until_gone(pid)
    assert time.monotonic() - began >= 0.2  # it waited for the end (0.3 s), not returned at once
    assert gone(pid)


def test_a_pool_starts_where_the_temporary_folder_is_too_deep_for_a_socket(
    world: World, coordinator_tmp: dict[str, str]
) -> None:
    """A socket path holds about a hundred bytes: below a deeper temporary folder the fork
    server cannot listen, and the workers start as fresh interpreters instead."""
    deep = world.tmp / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    world.remote("p1")
    start(world, "c1")
    done = campaign_run_in_interpreter(
        world, coordinator_tmp, "c1", "-j", "2", env={"TMPDIR": str(deep)}
    )
    assert done.returncode == 0, done.stderr
    assert states(json.loads(done.stdout)) == {"p1": "updated"}


def test_a_coordinator_killed_with_a_pool_at_work_continues_on_the_rerun(
    world: World, coordinator_tmp: dict[str, str], serial_run: SerialRun
) -> None:
    mixed_repositories(world)
    start(world, "pool")
    folder = world.campaigns / "pool"
    killed = campaign_run_in_interpreter(
        world, coordinator_tmp, "pool", "-j", "2", env={crashpoint.ENV_VAR: f"{RECORD_STEP}:4"}
    )
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stderr
    finished = {
        path.name: path.read_bytes()
        for path in (folder / "repos").iterdir()
        if RepoRecord.from_json(json.loads(path.read_text())).finished
    }
    # Units the killed coordinator had handed out may still be finishing; the rerun's units
    # wait for their mirrors' locks.
    rerun = campaign_run_in_interpreter(world, coordinator_tmp, "pool", "-j", "2")
    assert rerun.returncode == Exit.ERROR, rerun.stderr
    document = json.loads(rerun.stdout)
    assert results(document) == serial_run.results
    for name, data in finished.items():
        assert (folder / "repos" / name).read_bytes() == data  # not redone
    assert sum(len(wave) for wave in document["run"]["waves"]) == 5 - len(finished)


def test_a_unit_waits_for_its_mirrors_lock_and_names_the_holder_when_it_gives_up(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.remote("p1")
    document = start(world, "c1")
    folder = CampaignFolder(Path(document["campaign_dir"]))
    settings, [record] = folder.load()
    monkeypatch.setattr("tether.campaign.workspace.MIRROR_LOCK_WAIT", 0.0)
    with ProjectLock(folder.unit_lock_path(record.url), "another unit"):
        held = run_unit(fetch_unit, record, settings).record
    assert held.status == "failed"
    assert held.reason.startswith("its mirror is locked by another unit: ")
    assert f"pid {os.getpid()}" in held.reason
    assert not folder.mirror_path(record.url).exists()  # it did nothing while locked out
    assert run_unit(fetch_unit, record, settings).record.status == "cloned"


def test_a_unit_removes_the_lock_files_a_killed_git_left_in_its_mirror(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git killed mid-change (its worker killed with the coordinator) leaves its lock files
    in the mirror; the next unit holding the mirror's lock removes them, one waiting for that
    lock touches nothing."""
    world.remote("p1")
    document = start(world, "c1")
    folder = CampaignFolder(Path(document["campaign_dir"]))
    settings, [record] = folder.load()
    cloned = run_unit(fetch_unit, record, settings).record
    assert cloned.status == "cloned"
    mirror = folder.mirror_path(record.url)
    branch_lock = mirror / "refs" / "heads" / f"{settings.branch}.lock"
    left = [branch_lock, mirror / "packed-refs.lock", mirror / "config.lock"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{cloned.start_commit}\n")
    monkeypatch.setattr("tether.campaign.workspace.MIRROR_LOCK_WAIT", 0.0)
    with ProjectLock(folder.unit_lock_path(record.url), "another unit"):
        assert run_unit(update_unit, cloned, settings).record.status == "failed"
    assert all(path.exists() for path in left)  # not while another unit may be at work
    updated = run_unit(update_unit, cloned, settings).record
    assert updated.status == "updated", updated.reason
    assert not any(path.exists() for path in left)
    assert git(mirror, "rev-parse", settings.branch).strip() == updated.commit


def test_many_more_repositories_than_units_in_flight_through_dask(
    world: World, dask_cluster: Cluster
) -> None:
    """Three times as many repositories as the coordinator keeps units in flight on the
    cluster's two threads (two units each, a fetch and an update: six times as many units),
    so the coordinator hands out a unit as each one ends, over and over. Thirty repositories
    ran the same path 2.5 times longer."""
    count = 3 * 2 * executors.IN_FLIGHT_PER_SLOT
    for index in range(count):
        world.remote(f"r{index:02}")
    start(world, "many")
    code, ran = run(world, "many", "--executor", "dask", "--scheduler", dask_cluster.address)
    assert code == 0, ran
    assert ran["counts"]["updated"] == count
    assert ran["run"]["waves"] == [[f"r{i:02}" for i in range(count)]]
    for record in ran["repositories"]:
        assert commits_on_branch(record, ran) == 1


# --- canary and waves ------------------------------------------------------------------------


def test_a_failing_canary_stops_the_campaign_and_a_rerun_stays_stopped(world: World) -> None:
    mixed_repositories(world)
    start(world, "c1")
    code, ran = run(world, "c1", "-j", "2", "--canary", "2", "--wave-size", "1")
    assert code == Exit.ERROR
    assert states(ran) == {
        "p1": "updated",
        "p2": "conflicts",
        "p3": "pending",
        "p4": "pending",
        "p5": "pending",
    }
    assert ran["run"]["stopped_by_canary"] == ["p2"]
    assert ran["run"]["waves"] == [["p1", "p2"]]

    text = run_tether(
        "campaign", "run", "c1", "--dir", str(world.campaigns), "--canary", "2", "-j", "1"
    )
    assert text.returncode == Exit.ERROR
    assert "stopped after the canary (p2 conflicts): nothing else was started" in text.stdout
    assert "nothing to run" in text.stdout  # the canary is finished; nothing ran again
    assert states(world.status(name="c1")[1])["p3"] == "pending"

    code, rest = run(world, "c1", "-j", "2")  # without --canary: on regardless
    assert code == Exit.ERROR and states(rest) == EXPECTED_STATES
    assert rest["run"]["waves"] == [["p3", "p4", "p5"]]


def test_a_canary_that_passes_lets_the_waves_follow_with_pauses_between_them(
    world: World,
) -> None:
    for name in ("p1", "p2", "p3", "p4", "p5"):
        world.remote(name)
    document = start(world, "c1")
    folder = CampaignFolder(Path(document["campaign_dir"]))
    settings, records = folder.load()
    seen_at_pauses: list[tuple[float, dict[str, str]]] = []

    def pause(seconds: float) -> None:  # the clock: what is on disk when each pause starts
        seen_at_pauses.append((seconds, {r.name: r.status for r in folder.load()[1]}))

    options = RunOptions(jobs=2, canary=1, wave_size=2, pause="1m30s").checked()
    outcome = coordinate(folder, settings, records, options, sleep=pause)
    assert outcome.waves == [["p1"], ["p2", "p3"], ["p4", "p5"]]
    assert outcome.stopped_by == []
    assert [seconds for seconds, _ in seen_at_pauses] == [90.0, 90.0]
    first, second = (on_disk for _, on_disk in seen_at_pauses)
    assert first == {"p1": "updated", "p2": "pending", "p3": "pending", "p4": "pending",
                     "p5": "pending"}  # fmt: skip
    assert second == {"p1": "updated", "p2": "updated", "p3": "updated", "p4": "pending",
                      "p5": "pending"}  # fmt: skip
    assert {r.status for r in outcome.records} == {"updated"}


def test_waves_on_dask_through_the_command_line(world: World, dask_cluster: Cluster) -> None:
    for name in ("p1", "p2", "p3", "p4"):
        world.remote(name)
    start(world, "c1")
    code, ran = run(
        world,
        "c1",
        "--executor",
        "dask",
        "--scheduler",
        dask_cluster.address,
        "--canary",
        "1",
        "--wave-size",
        "2",
        "--pause",
        "0s",
    )
    assert code == 0
    assert ran["run"]["waves"] == [["p1"], ["p2", "p3"], ["p4"]]
    assert ran["run"]["canary"] == 1 and ran["run"]["wave_size"] == 2
    assert set(states(ran).values()) == {"updated"}


def test_dask_without_a_scheduler_runs_a_cluster_of_its_own_on_loopback(
    world: World, coordinator_tmp: dict[str, str]
) -> None:
    """No --scheduler: the run starts a local cluster of -j workers and ends it. Its web
    server takes a free loopback port, so Dask's usual one being taken (here by the test)
    makes no warning."""
    pytest.importorskip("distributed")
    for name in ("p1", "p2"):
        world.remote(name)
    start(world, "c1")
    with socket.socket() as taken:
        try:
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        except OSError:
            pass  # already taken by something else: the case this test is about
        done = campaign_run_in_interpreter(
            world, coordinator_tmp, "c1", "--executor", "dask", "-j", "1"
        )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["run"]["executor"] == "dask" and document["run"]["jobs"] == 1
    assert states(document) == {"p1": "updated", "p2": "updated"}
    assert done.stderr == ""


def test_a_rerun_forms_its_waves_from_the_unfinished_repositories(world: World) -> None:
    records = [
        RepoRecord(name, f"file:///{name}", status=state)
        for name, state in (
            ("a", "updated"),
            ("b", "pending"),
            ("c", "failed"),
            ("d", "cloned"),
            ("e", "pending"),
            ("f", "pending"),
        )
    ]
    waves = plan_waves(records, canary=2, wave_size=2)
    assert [(w.names, w.canary) for w in waves] == [
        (("a", "b"), True),
        (("d", "e"), False),
        (("f",), False),
    ]
    assert [w.names for w in plan_waves(records, None, None)] == [("b", "d", "e", "f")]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("5m", 300.0), ("1h", 3600.0), ("1m30s", 90.0), ("1.5m", 90.0), ("0s", 0)],
)
def test_pause_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["30", "", "5x", "m5", "-1s", "5 minutes"])
def test_pause_durations_need_a_number_and_a_unit(text: str) -> None:
    with pytest.raises(UsageError, match="give a number and a unit"):
        parse_duration(text)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--pause", "5"), "give a number and a unit"),
        (("--pause", "5m"), "--pause needs waves"),
        (("--scheduler", "tcp://127.0.0.1:1"), "--scheduler needs --executor dask"),
        (("-j", "0"), "--jobs must be at least 1"),
        (("--canary", "0"), "--canary must be at least 1"),
        (("--wave-size", "0"), "--wave-size must be at least 1"),
        (
            ("--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "-j", "2"),
            "-j does not go with --scheduler",
        ),
    ],
)
def test_bad_run_flags_are_usage_errors_and_touch_nothing(
    world: World, flags: tuple[str, ...], words: str
) -> None:
    world.remote("p1")
    start(world, "c1")
    before = tree_digest(world.campaigns)
    done = run_tether("campaign", "run", "c1", "--dir", str(world.campaigns), *flags)
    assert done.returncode == Exit.USAGE, done
    assert done.stderr.count("\n") == 1 and words in done.stderr
    assert tree_digest(world.campaigns) == before


def test_dask_not_installed_is_a_one_line_error(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.remote("p1")
    start(world, "c1")
    monkeypatch.setitem(sys.modules, "distributed", None)  # what Python does when it is absent
    done = run_tether("campaign", "run", "c1", "--dir", str(world.campaigns), "--executor", "dask")
    assert done.returncode == Exit.ERROR
    assert done.stderr == (
        "tether: --executor dask needs Dask distributed on this machine: "
        "pip install 'tether[distributed]'\n"
    )
    assert states(world.status(name="c1")[1]) == {"p1": "pending"}


def test_an_unreachable_scheduler_is_a_one_line_error(world: World) -> None:
    pytest.importorskip("distributed")
    import dask.config

    world.remote("p1")
    start(world, "c1")
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    # Dask's own connect timeout, from its configuration: what the variable
    # DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT sets when Dask is imported after it (this
    # process imported Dask long before), here without a coordinator process of its own.
    argv = ("campaign", "run", "c1", "--dir", str(world.campaigns), "--json")
    with dask.config.set({"distributed.comm.timeouts.connect": "200ms"}):
        done = run_tether(*argv, "--executor", "dask", "--scheduler", address)
    assert done.returncode == Exit.ERROR
    message = json.loads(done.stdout)["error"]["message"]
    assert message.startswith(f"cannot reach the Dask scheduler at {address}: ")
    assert done.stderr.endswith(f"tether: {message}\n") and "\n" not in message
    assert states(world.status(name="c1")[1]) == {"p1": "pending"}


# --- Ctrl-C ------------------------------------------------------------------------------------


# Each update is held still after its 20th written file while the test's gate file exists
# (tether.state.crashpoint, TETHER_PAUSE_AT): Ctrl-C and kill -9 land mid-update, every time.
HELD_AT = 20


def big_releases(shelf: Path) -> None:
    count = BATCH_SIZE + HELD_AT
    make_release(shelf, "1.0.0", {f"f/{i:05d}.txt": f"v1 {i}\n" for i in range(count)})
    make_release(shelf, "1.1.0", {f"f/{i:05d}.txt": f"v2 {i}\n" for i in range(count)})


def big_repositories(world: World, *names: str) -> Path:
    """Repositories whose files, all changed by 1.1.0, fill one batch of the update's writes
    and start a second (a stop takes effect between batches), and the gate that holds their
    updates after HELD_AT files: the coordinator and its workers read it from their
    environment."""
    shelf = world.seeds.releases("big-rel", big_releases)
    for name in names:
        world.remote(name, shelf=shelf)
    gate = world.tmp / "hold-the-updates"
    gate.touch()
    return gate


def journals(world: World, name: str) -> list[Path]:
    return list((world.campaigns / name / "work").glob("*/.tether/journal.jsonl"))


def wait_for_updates(world: World, name: str, proc: subprocess.Popen[str], count: int) -> bool:
    """True once ``count`` updates have each written HELD_AT files, while ``proc`` runs."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        written = [p.read_bytes().count(b'"step":"file-written"') for p in journals(world, name)]
        if len([n for n in written if n >= HELD_AT]) >= count:
            return True
        time.sleep(0.005)
    return False


def unit_pids(world: World, name: str) -> set[int]:
    """The processes holding mirror locks now (each lock file names its holder)."""
    pids = set()
    for path in (world.campaigns / name / "locks").glob("*.lock"):
        text = path.read_text()
        if text.strip():
            pids.add(int(json.loads(text)["pid"]))
    return pids


def gone(pid: int) -> bool:
    """The process ended (a zombie waiting to be reaped has ended too)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def coordinator(
    world: World, tmp: dict[str, str], name: str, gate: Path, *flags: str
) -> subprocess.Popen[str]:
    """A coordinator as a terminal starts it: its own process group, SIGINT as Ctrl-C; its
    updates (its own or its workers') are held at ``gate``."""
    argv = [*TETHER, "campaign", "run", name, "--dir", str(world.campaigns), "--json", *flags]
    held = {crashpoint.PAUSE_VAR: f"file-written:{HELD_AT}@{gate}"}
    return subprocess.Popen(
        argv,
        env={**os.environ, **tmp, **held},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
        start_new_session=True,
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_the_run_leaves_records_to_redo_and_no_worker_behind(
    world: World, coordinator_tmp: dict[str, str], jobs: str
) -> None:
    gate = big_repositories(world, "b1", "b2")
    start(world, "c1")
    proc = coordinator(world, coordinator_tmp, "c1", gate, "-j", jobs)
    assert wait_for_updates(world, "c1", proc, int(jobs)), "the run ended before Ctrl-C"
    workers = unit_pids(world, "c1") - {proc.pid}
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole foreground group
    # It lands in the coordinator and its workers while the updates are held; then they go.
    assert all(signal_delivered(pid, signal.SIGINT) for pid in {proc.pid, *workers})
    gate.unlink()
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == Exit.INTERRUPTED, (_out, err)
    assert len(workers) == (0 if jobs == "1" else 2)
    assert all(gone(pid) for pid in workers)  # killed with the git they started
    on_disk = states(world.status(name="c1")[1])
    assert "failed" not in on_disk.values()  # an interrupted update is redone, not failed
    code, rerun = run(world, "c1", "-j", jobs)
    assert code == 0 and set(states(rerun).values()) == {"updated"}
    for record in rerun["repositories"]:
        assert commits_on_branch(record, rerun) == 1


def test_pool_workers_of_a_killed_coordinator_stop_with_it(
    world: World, coordinator_tmp: dict[str, str]
) -> None:
    gate = big_repositories(world, "b1", "b2")
    start(world, "c1")
    proc = coordinator(world, coordinator_tmp, "c1", gate, "-j", "2")
    assert wait_for_updates(world, "c1", proc, 2), "the run ended before the kill"
    workers = unit_pids(world, "c1")
    proc.kill()  # the coordinator alone, as kill -9 does
    proc.communicate(timeout=120)
    gate.unlink()
    assert len(workers) == 2 and all(gone(pid) for pid in workers)
    code, rerun = run(world, "c1", "-j", "2")
    assert code == 0 and set(states(rerun).values()) == {"updated"}
