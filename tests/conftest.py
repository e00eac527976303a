import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

# An environment that asks Python not to write bytecode (container images often do) would
# make every test worker rewrite every test module and every tether child process compile
# tether from source: seconds per worker, a third of a second per child. The caches are
# ignored by git; the suite writes them as an ordinary run of Python would.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

sys.path.insert(0, str(Path(__file__).parent))

import pytest

from builders import GIT_TEST_ENV, start_fork_server, stop_fork_server
from fixtures.deps.loopback import LoopbackRegistry

os.environ.update(GIT_TEST_ENV)
# Every command the suite runs ends with a code from its row of the exit table
# (tether.errors.COMMAND_EXITS): a code outside it stops the command with an AssertionError.
os.environ["TETHER_CHECK_EXITS"] = "1"

# The suite runs the same on a laptop and on a CI runner: tests that need CI behaviour set
# these variables themselves (audit sidecars are declined under CI).
for _ci_variable in ("CI", "GITHUB_ACTIONS"):
    os.environ.pop(_ci_variable, None)

# No test reaches GitHub: release sources fall back to GitHub's REST API when gh is missing
# or fails, and its address is a loopback port where nothing listens (connection refused)
# unless a test serves the API there itself. No token of the machine's is ever sent.
os.environ["GITHUB_API_URL"] = "http://127.0.0.1:9"
for _token_variable in ("GITHUB_TOKEN", "GH_TOKEN"):
    os.environ.pop(_token_variable, None)


def _memory_backed_tmp() -> None:
    """Temporary folders on the memory file system when there is room (at least 4 GiB free
    in /dev/shm): every test writes real files through the same calls, fsync included, but
    a sync costs nothing there, and the crash tests kill processes, not the machine's power
    (docs/performance.md). Elsewhere the system's temporary folder is used."""
    import tempfile

    shm = Path("/dev/shm")
    try:
        room = os.statvfs(shm)
    except OSError:
        return
    if room.f_bavail * room.f_frsize < 4 << 30 or not os.access(shm, os.W_OK):
        return
    root = shm / f"tether-tests-{os.getuid()}"
    root.mkdir(exist_ok=True)
    root.chmod(0o1777)  # as /tmp: the tests that drop privileges make their folders here
    os.environ["TMPDIR"] = str(root)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


_memory_backed_tmp()


def _import_tether_once() -> None:
    """Every tether module, and the libraries tether imports only when a command needs them,
    imported once per test process: the many children the suite forks from it (crash points,
    hostile trees, terminals) then start with them loaded instead of each importing them
    again, as a fresh run would. Never Dask: its absence is a case the tests make."""
    import importlib
    import pkgutil

    import tether

    for module in pkgutil.walk_packages(tether.__path__, "tether."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    for library in ("ruamel.yaml", "tomlkit", "packaging.version", "pathspec", "nodesemver"):
        with contextlib.suppress(ImportError):  # optional: the tests that need it say so
            importlib.import_module(library)
    _run_one_update_in_a_scratch_folder()


def _run_one_update_in_a_scratch_folder() -> None:
    """An init, an update with a line merge and a conflict, status and diff, run once here
    in a folder removed afterwards: what they load on first use (parsers, compiled patterns,
    the merge engine) is then loaded before the first child is forked."""
    import shutil
    import tempfile

    from builders import make_release, run_tether

    scratch = Path(tempfile.mkdtemp(prefix="tether-warm-up-"))
    try:
        shelf = scratch / "releases"
        make_release(shelf, "1.0.0", {"a.txt": "a\nb\nc\n", "b.json": '{"k": 1}\n'})
        make_release(shelf, "1.1.0", {"a.txt": "A\nb\nc\n", "b.json": '{"k": 2}\n'})
        project = scratch / "project"
        run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
        (project / "a.txt").write_text("a\nb\nmine\n")
        (project / "b.json").write_text('{"k": 3}\n')
        for command in ("status", "diff", "update", "check"):
            run_tether(command, *(("--yes",) if command == "update" else ()), "-C", str(project))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    """Warm up the processes that run tests: a worker, or a run without workers (not the
    controller of a run with workers, which only hands tests out)."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") == "no":
        # No cyclic collection until the tests are collected (pytest_collection_finish):
        # the warm-up and the collection only add objects that stay, and each 25% of growth
        # set off a full collection walking all of them again (five per worker, ~0.3 s).
        gc.disable()
        _import_tether_once()
        # Forked now, before any test is collected: the CLI children it forks for the tests
        # copy a small process instead of this one (tests/builders.py, ForkServer).
        start_fork_server()


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_fork_server()


# The modules whose tests take longest, with the seconds each took in one whole run on three
# workers (docs/performance.md, "ninth pass"). They are dealt to the workers' first runs of
# tests (pytest_collection_modifyitems below), so that each first run holds about as many
# seconds of them: then all take the many short tests and end together, instead of one
# worker still in its first run while the others have nothing left to do. Only the
# proportions matter; a module that grew a lot belongs here with its new figure.
LONGEST_FIRST = {
    "templates/test_templates_copier.py": 16.5,
    "campaign/test_campaign_exec.py": 12.4,
    "campaign/test_campaign_publish.py": 7.5,
    "hostile/test_hostile_releases.py": 9.3,
    "sources/test_sources_git_remote.py": 3.5,
    "engine/test_textmerge.py": 5.2,
    "update/test_update_gaia.py": 4.1,
    "campaign/test_campaign_bundle.py": 4.1,
    "templates/test_templates_copier_remote.py": 1.9,
    "hostile/test_hostile_sweep.py": 3.7,
    "architecture/test_json_schemas.py": 3.5,
    "deps/test_deps_crash.py": 3.3,
    "hostile/test_hostile_lifecycle.py": 3.3,
    "templates/test_templates_cruft.py": 3.2,
    "campaign/test_campaign.py": 3.0,
    "deps/test_deps_real_tools.py": 3.0,
    "deps/test_deps_worktree_config.py": 2.9,
    "audit/test_audit_binding.py": 2.8,
    "reapply/test_reapply_crash.py": 2.6,
    "cli/test_progress.py": 2.4,
    "lifecycle/test_lifecycle_gaia.py": 2.4,
    "update/test_update_interrupted.py": 2.3,
    "fleet/test_fleet.py": 2.3,
    "audit/test_audit_clearance.py": 2.2,
    "cli/test_relative_paths.py": 2.1,
    "campaign/test_campaign_html.py": 2.1,
    "engine/test_bounded_parsing.py": 2.0,
    "deps/test_deps_apply.py": 2.0,
    "flows/test_crash_safety.py": 1.9,
}

# The modules that mostly wait (time bounds waited out on purpose, a core left idle
# meanwhile), and single tests that do (``module::test``, all its cases), with their seconds
# as above (a module's figure above leaves out its tests named here). All of them go to one
# worker's first run: three
# workers share two cores, so while that one waits the other two keep both cores busy.
# Dealt in turn like the long ones, they met on all three workers at once, about 50 s into
# the run, and left both cores idle for five seconds (docs/performance.md, "ninth pass").
MOSTLY_WAITING = {
    "edges/test_process_callers.py": 6.2,
    "edges/test_process.py": 5.1,
    "sources/test_sources_gh_listing_bounds.py": 4.2,
    "deps/test_deps_apply_timeouts.py": 3.7,
    "deps/test_deps_request_options.py": 2.8,
    "sources/test_sources_network_bounds.py": 2.4,
    "campaign/test_campaign_mirror_rules.py": 5.2,
    "sources/test_sources_git_remote.py::test_a_trickling_remote_is_stopped_at_the_time_bound": 2.1,
    "campaign/test_campaign_publish.py::"
    "test_wait_sleeps_out_a_spent_budget_and_no_window_holds_more_than_the_limit": 3.2,
    "templates/test_templates_copier_remote.py::"
    "test_a_trickling_template_stops_the_render_at_the_time_bound_and_writes_nothing": 2.1,
}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on two cores: three workers, a third filling part of the time the two
    spend waiting for children and for bounds waited out on purpose (docs/performance.md,
    seventh pass). Elsewhere, or with PYTEST_XDIST_AUTO_NUM_WORKERS set, xdist's own count."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 3 if cores == 2 else None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive once the tests are collected (tether, the libraries, pytest, every
    test item) is moved out of the collector's reach (``gc.freeze``) for the rest of the
    run, after one collection of what the warm-up and the collection left: each full
    collection during the tests would otherwise walk those objects again (docs/performance.md,
    eighth pass). What the tests create is collected as before."""
    gc.enable()
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of ``MOSTLY_WAITING`` and ``LONGEST_FIRST`` first, dealt to the workers'
    first runs of tests.

    xdist (``--dist load``, the default) first sends each worker a run of
    ``len(items) // workers // 4`` consecutive tests and hands out the rest as workers free
    up. With the long modules one after another, the first worker's run held them all: at
    5be9e33 about a third of the whole suite's test time, sent before any test was left to
    balance it. So the waiting modules all go to the last run, then each long module,
    longest first, to the run holding the fewest seconds so far that has room for its tests
    (after the runs if none has); each run is filled up with the other tests in their order.
    Without workers: the long modules first, longest first, then the waiting ones. The order
    depends only on what was collected, so every worker computes the same (xdist requires
    it)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.partition("::")[0], []).append(item)
    waiting = [item for name in MOSTLY_WAITING for item in _taken(modules, f"tests/{name}")]
    by_length = sorted(LONGEST_FIRST.items(), key=lambda entry: -entry[1])
    longest = [(modules.pop(f"tests/{name}", []), seconds) for name, seconds in by_length]
    others = [item for module in modules.values() for item in module]
    if workers < 2:
        items[:] = [item for module, _ in longest for item in module] + waiting + others
        return
    size = max(2, len(items) // workers // 4)
    runs: list[list[pytest.Item]] = [[] for _ in range(workers)]
    seconds_dealt = [0.0] * workers
    late: list[pytest.Item] = []
    if len(waiting) <= size:
        runs[-1].extend(waiting)
        seconds_dealt[-1] = sum(MOSTLY_WAITING.values())
    else:
        late.extend(waiting)
    for module, seconds in longest:
        room = [n for n in range(workers) if len(runs[n]) + len(module) <= size]
        if not room:
            late.extend(module)
            continue
        run = min(room, key=lambda n: seconds_dealt[n])
        runs[run].extend(module)
        seconds_dealt[run] += seconds
    dealt: list[pytest.Item] = []
    for run in runs:
        fill = size - len(run)
        dealt += run + others[:fill]
        del others[:fill]
    items[:] = dealt + late + others


def _taken(modules: dict[str, list[pytest.Item]], name: str) -> list[pytest.Item]:
    """The items ``name`` names, taken out of ``modules``: a whole module (``path``), or
    every case of one test of it (``path::test``)."""
    module, _, test = name.partition("::")
    if not test:
        return modules.pop(module, [])
    held = modules.get(module, [])
    taken = [item for item in held if item.nodeid.split("::")[1].partition("[")[0] == test]
    held[:] = [item for item in held if item not in taken]
    return taken


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[LoopbackRegistry]:
    """A package registry on 127.0.0.1 (tests/fixtures/deps/loopback.py), one per test module,
    so what it counts is that module's. A module that needs more than the fixture files names
    LoopbackRegistry's arguments in ``SERVED`` (packuments, GitHub API pages, no tarballs)."""
    with LoopbackRegistry(**getattr(request.module, "SERVED", {})) as registry:
        yield registry
