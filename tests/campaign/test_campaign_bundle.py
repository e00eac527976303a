"""``campaign run`` on Dask workers that do not see the campaign folder: each unit works in
the worker's own folder, fetches from the remote itself and sends its commit back as a git
bundle, which the coordinator verifies and takes into the campaign's mirror.

How a worker is made not to see the folder, for real: the workers are ``dask worker``
processes started with ``unshare --mount`` in a mount namespace of their own, where an empty
tmpfs is mounted over the folder the campaign folders of this module live in. The test (the
coordinator) writes the campaign there; the workers' kernel shows them an empty directory at
that path, exactly as a machine without the shared filesystem would, while everything else
(the ``file://`` remotes, the releases, tether itself) stays where it is. tether is told
nothing: no flag and no variable says "unseen". The fixture checks the workers see the
folder empty before any test runs, and skips where mount namespaces cannot be had.

Repositories are real bare git repositories served as ``file://`` remotes (the builders of
tests/campaign/test_campaign.py); the results are compared with a run of the same repositories
in the coordinator's own process, which works in the campaign folder itself (``serial_run``,
tests/campaign/conftest.py, one per test process).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import tests.campaign.test_campaign as test_campaign
from builders import GIT_TEST_ENV, git
from tests.campaign.conftest import SerialRun
from tests.campaign.test_campaign import World, cli
from tests.campaign.test_campaign_exec import (
    DASK_DIAGNOSTICS_SPARED,
    commits_on_branch,
    mixed_repositories,
    results,
    run,
    start,
)
from tether.campaign.bundles import take_in
from tether.campaign.executors import LOOPBACK_WEB_SERVER
from tether.campaign.model import Settings, UnitResult
from tether.campaign.store import CampaignFolder
from tether.campaign.units import fetch_unit, update_unit
from tether.campaign.workspace import own_folder
from tether.errors import Exit
from tether.report.campaign_run import NOT_VERIFIED
from tether.state import crashpoint

# Real repositories served as file:// remotes, a registry and a campaigns folder.
world = test_campaign.world

MOUNT_THEN_RUN = 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"'


@dataclass
class UnseeingWorkers:
    """A scheduler in this process and two worker processes that do not see ``hidden``."""

    cluster: Any
    client: Any
    process: subprocess.Popen[bytes]
    hidden: Path  # campaign folders go here; the workers see an empty tmpfs instead
    cache: Path  # the workers' XDG_CACHE_HOME: where their own folders are
    trigger: Path  # created by a test: the next worker writing a project file dies

    @property
    def address(self) -> str:
        return str(self.cluster.scheduler_address)

    def worker_pids(self) -> set[int]:
        return set(self.client.run(os.getpid).values())


def _unshare() -> list[str] | None:
    """How this machine gives a process a mount namespace of its own where it may mount: as
    root, ``unshare --mount``; else in a user namespace of its own, if the kernel allows."""
    if shutil.which("unshare") is None:
        return None
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    for argv in (["unshare", "--mount"], ["unshare", "--mount", "--map-root-user"]):
        done = subprocess.run(
            [*argv, "sh", "-c", MOUNT_THEN_RUN, "sh", str(probe), "true"],
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            return argv
    return None


def dask_variables(settings: dict[str, Any]) -> dict[str, str]:
    """Dask's settings as the environment variables a ``dask worker`` reads them from."""
    return {
        "DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value)
        for key, value in settings.items()
    }


@pytest.fixture(scope="module")
def unseeing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UnseeingWorkers]:
    distributed = pytest.importorskip("distributed", reason="pip install 'tether[distributed]'")
    unshare = _unshare()
    if unshare is None:
        pytest.skip("no mount namespace to be had here (unshare --mount)")
    import dask.config

    with dask.config.set(DASK_DIAGNOSTICS_SPARED):  # the scheduler in this process
        yield from _unseeing_workers(distributed, unshare, tmp_path_factory)


def _unseeing_workers(
    distributed: Any, unshare: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[UnseeingWorkers]:
    hidden = tmp_path_factory.mktemp("campaigns-the-workers-do-not-see")
    (hidden / "marker").write_text("the workers must not see this\n")
    home = tmp_path_factory.mktemp("unseeing-workers")
    trigger = home / "kill-the-next-worker-writing-a-file"
    # A free port for its web server: another cluster of the test run may hold Dask's default.
    cluster = distributed.LocalCluster(
        n_workers=0,
        host="127.0.0.1",
        **LOOPBACK_WEB_SERVER,
        processes=True,
    )
    client = distributed.Client(cluster, set_as_default=False)
    inherited = {
        k: v for k, v in os.environ.items() if k not in (crashpoint.ENV_VAR, crashpoint.TRIGGER_VAR)
    }
    env = {
        **inherited,
        **GIT_TEST_ENV,
        crashpoint.TRIGGER_VAR: f"file-written@{trigger}",
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        # Workers forked from a server that has Dask loaded, not fresh interpreters that each
        # import it (the nanny starts a new one for each killed worker too).
        "DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD": "forkserver",
        # Dask's watch over itself, which no test reads (tests/campaign/test_campaign_exec.py).
        **dask_variables(DASK_DIAGNOSTICS_SPARED),
    }
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address]
    options = ["--nworkers", "2", "--nthreads", "1", "--no-dashboard", "--memory-limit", "768MiB"]
    process = subprocess.Popen(
        [*unshare, "sh", "-c", MOUNT_THEN_RUN, "sh", str(hidden), *worker, *options],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        client.wait_for_workers(2, timeout=120)
        seen = client.run(os.listdir, str(hidden))
        assert list(seen.values()) == [[], []], f"the workers see {hidden}: {seen}"
        yield UnseeingWorkers(cluster, client, process, hidden, home / "cache", trigger)
    finally:
        client.close()
        os.killpg(process.pid, signal.SIGTERM)  # the workers' session: nannies and workers
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        cluster.close()


@pytest.fixture
def unseen(world: World, unseeing: UnseeingWorkers) -> World:
    """The world of tests/campaign/test_campaign.py with its campaigns where the workers see
    nothing."""
    campaigns = unseeing.hidden / world.tmp.name
    campaigns.mkdir()
    return replace(world, campaigns=campaigns)


def workers_folder(unseeing: UnseeingWorkers, settings: Settings) -> Path:
    """The workers' own folder for the campaign (campaign/workspace.py), in their cache."""
    return unseeing.cache / "tether" / "campaign-work" / own_folder(settings).name


# --- the same results as in the campaign folder ---------------------------------------------


def test_workers_without_the_campaign_folder_send_their_commits_back_as_bundles(
    unseen: World, unseeing: UnseeingWorkers, serial_run: SerialRun
) -> None:
    mixed_repositories(unseen)
    start(unseen, "away")
    code, away = run(unseen, "away", "--executor", "dask", "--scheduler", unseeing.address)
    assert code == Exit.ERROR  # p3 follows another upstream, as in the folder itself

    # The same records and committed files, the commits read from the campaign's mirrors.
    assert results(away) == serial_run.results
    committed = [r for r in away["repositories"] if r["commit"]]
    assert [r["name"] for r in committed] == ["p1", "p4", "p5"]
    for record in committed:
        assert commits_on_branch(record, away) == 1
    # The units worked in the workers' own folder, never in the campaign's (where the
    # coordinator took the commits into mirrors of its own).
    folder = Path(away["campaign_dir"])
    assert not (folder / "work").exists()
    own = workers_folder(unseeing, CampaignFolder(folder).load()[0])
    assert len(list((own / "work").iterdir())) == 5
    assert not list((folder / "incoming").iterdir())  # each bundle removed once taken in

    # push works from the campaign's mirror as after any run.
    code, pushed = cli("push", "away", "--dir", str(unseen.campaigns))
    assert code == Exit.ERROR  # p3 is still failed
    for record in committed:
        remote = unseen.tmp / "remotes" / f"{record['name']}.git"
        assert git(remote, "rev-parse", away["branch"]).strip() == record["commit"]
    assert {r["name"] for r in pushed["repositories"] if r["status"] == "pushed"} == {
        "p1",
        "p4",
        "p5",
    }


def test_a_worker_killed_mid_update_without_the_folder_gives_the_same_final_state(
    unseen: World, unseeing: UnseeingWorkers, serial_run: SerialRun
) -> None:
    mixed_repositories(unseen)
    start(unseen, "away")
    before = unseeing.worker_pids()

    unseeing.trigger.write_text("armed\n")
    code, away = run(unseen, "away", "--executor", "dask", "--scheduler", unseeing.address)
    assert not unseeing.trigger.exists(), "no worker died: the trigger was never pulled"
    assert unseeing.worker_pids() != before  # the dead worker's nanny started a new one
    assert code == Exit.ERROR
    assert results(away) == serial_run.results
    for record in away["repositories"]:
        if record["commit"]:
            assert commits_on_branch(record, away) == 1


# --- a bundle that does not verify ----------------------------------------------------------


def test_a_bundle_that_does_not_verify_fails_its_repository(
    unseen: World, unseeing: UnseeingWorkers
) -> None:
    unseen.remote("p1")
    unseen.remote("p5", edit="x\ny\nz\nmore\n")
    document = start(unseen, "away")
    folder = CampaignFolder(Path(document["campaign_dir"]))
    settings, records = folder.load()
    client = unseeing.client
    # Real results of units run on a worker that does not see the folder.
    cloned = [client.submit(fetch_unit, r, settings, pure=False).result().record for r in records]
    # The update runs where the fetch did not (a machine without those mirrors): it fetches.
    shutil.rmtree(workers_folder(unseeing, settings) / "mirrors")
    p1, p5 = (client.submit(update_unit, r, settings, pure=False).result() for r in cloned)
    assert p1.record.status == p5.record.status == "updated" and p1.bundle and p5.bundle
    mirror = folder.mirror_path(p1.record.url)

    broken = {
        "truncated": UnitResult(p1.record, p1.bundle[: len(p1.bundle) // 2]),
        "not a bundle": UnitResult(p1.record, b"not a bundle\n"),
        "another commit": UnitResult(p1.record, p5.bundle),
        "another start": UnitResult(replace(p1.record, start_commit=p5.record.commit), p1.bundle),
    }
    reasons = {}
    for case, result in broken.items():
        failed = take_in(folder, settings, cloned[0], result)
        reasons[case] = failed.reason
        assert failed.status == "failed", case
        assert failed.reason.startswith(f"{NOT_VERIFIED}: "), (case, failed.reason)
        assert "\n" not in failed.reason and failed.commit == "", case
        assert failed.start_commit == cloned[0].start_commit, case
        assert git(mirror, "for-each-ref", f"refs/heads/{settings.branch}") == "", case
    assert reasons["another commit"].endswith(f"the record names {p1.record.commit}")
    assert reasons["another start"].endswith(f"on the start commit {p5.record.commit}")

    taken = take_in(folder, settings, cloned[0], p1)
    assert taken == p1.record
    assert git(mirror, "rev-parse", settings.branch).strip() == p1.record.commit
