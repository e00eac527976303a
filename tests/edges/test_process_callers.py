"""The programs tether starts outside ``deps`` run through the process edge too: a
regeneration program, a migration, shellcheck and shfmt each stop with their whole process
group at their time limit (set by its ``TETHER_LIMIT_*_SECONDS`` variable) and fail that one
step in one line naming the program and the limit; a limit that is not a number fails the
step, naming the variable; programs run from worker threads are stopped when the waiting
thread is interrupted. The stand-ins are shell scripts that start a child in their group,
record both pids and hang, ignoring SIGINT and SIGTERM (``process_helpers.hung_program``).
"""

from __future__ import annotations

import signal
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from builders import ForkedChild
from process_helpers import all_gone, hung_program, kill_leftovers, recorded_pids
from tether import process
from tether.audit import shellast, shellcheck
from tether.audit.result_cache import ResultCache
from tether.audit.tools import Tool
from tether.engine.regions import RegenSpec, RegionDecl
from tether.flows.regen import run_program, run_regeneration
from tether.report.lifecycle_steps import program_reason
from tether.report.reasons import regen_reason
from tether.sources.limits import MIGRATION_TIME

pytestmark = pytest.mark.usefixtures("short_graces")


def _stopped(pids_file: Path) -> None:
    """Every process the stand-in recorded has ended, its group with it."""
    pids = recorded_pids(pids_file, seconds=0)
    try:
        assert all_gone(pids), "a process of the program's group outlived its time limit"
    finally:
        kill_leftovers(pids)


# Each stand-in's limit: a shell script starts and writes its pids in a few milliseconds,
# so a second leaves it a wide margin on a loaded machine (and each test waits it out).
LIMIT = "1"


def test_a_hung_regeneration_program_is_stopped_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    pids = tmp_path / "pids"
    script = root / "scripts" / "gen.sh"
    hung_program(script, pids, ignore=("INT", "TERM"), before="echo x > out.md")
    (root / "out.md").write_text("old region\n")
    decl = RegionDecl("gen", "# s", "# e", ("out.md",), RegenSpec("sh", "scripts/gen.sh", ()))
    monkeypatch.setenv("TETHER_LIMIT_REGEN_SECONDS", LIMIT)
    outcome = run_regeneration(root, decl, {"scripts/gen.sh", "out.md"})
    _stopped(pids)
    assert outcome.status == "failed" and not outcome.could_not_start
    assert regen_reason(outcome) == (
        "ran and timed out after 1 s (TETHER_LIMIT_REGEN_SECONDS sets it); "
        "its process group was stopped"
    )
    assert (root / "out.md").read_text() == "old region\n"  # a failed run is put back


def test_a_regeneration_limit_that_is_not_a_number_fails_the_region(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "gen.sh").write_text("echo new > out.md\n")
    (root / "out.md").write_text("old region\n")
    decl = RegionDecl("gen", "# s", "# e", ("out.md",), RegenSpec("sh", "scripts/gen.sh", ()))
    monkeypatch.setenv("TETHER_LIMIT_REGEN_SECONDS", "-1")
    outcome = run_regeneration(root, decl, {"scripts/gen.sh", "out.md"})
    assert outcome.status == "failed" and outcome.could_not_start
    assert regen_reason(outcome) == (
        "could not start: TETHER_LIMIT_REGEN_SECONDS='-1': not a number of seconds above 0"
    )
    assert (root / "out.md").read_text() == "old region\n"


def test_a_hung_migration_is_stopped_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    program = hung_program(tmp_path / "migrate", pids, ignore=("INT", "TERM"))
    monkeypatch.setenv("TETHER_LIMIT_MIGRATION_SECONDS", LIMIT)
    log = tmp_path / "logs" / "migrations.log"
    run = run_program(tmp_path, (str(program),), {}, timeout=MIGRATION_TIME, log_path=log)
    _stopped(pids)
    assert run.started and run.timed_out and run.exit_code is None
    assert program_reason(run.end) == (
        "ran and timed out after 1 s (TETHER_LIMIT_MIGRATION_SECONDS sets it); "
        "its process group was stopped"
    )
    assert log.read_text().endswith(f"[{program_reason(run.end)}]\n")


def test_a_migration_limit_that_is_not_a_number_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    monkeypatch.setenv("TETHER_LIMIT_MIGRATION_SECONDS", "later")
    run = run_program(tmp_path, ("touch", str(marker)), {}, timeout=MIGRATION_TIME)
    assert not run.started and not marker.exists()
    assert program_reason(run.end) == (
        "could not start 'touch': TETHER_LIMIT_MIGRATION_SECONDS='later': "
        "not a number of seconds above 0"
    )


def test_a_hung_shellcheck_is_stopped_and_the_file_cannot_be_analysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    program = hung_program(tmp_path / "shellcheck", pids, ignore=("INT", "TERM"))
    tool = Tool("shellcheck", str(program), "0.11.0", "PATH")
    monkeypatch.setenv("TETHER_LIMIT_SHELLCHECK_SECONDS", LIMIT)
    result = shellcheck.run_shellcheck(tool, b"echo hi\n", "bash", ResultCache(None))
    _stopped(pids)
    assert result.cannot == (
        "shellcheck timed out after 1 s (TETHER_LIMIT_SHELLCHECK_SECONDS sets it); "
        "its process group was stopped"
    )


def test_a_hung_shfmt_is_stopped_and_the_file_cannot_be_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    program = hung_program(tmp_path / "shfmt", pids, ignore=("INT", "TERM"))
    tool = Tool("shfmt", str(program), "3.14.0", "PATH")
    monkeypatch.setenv("TETHER_LIMIT_SHFMT_SECONDS", LIMIT)
    parsed = shellast.parse(tool, b"echo hi\n", "bash")
    _stopped(pids)
    assert parsed.tree is None
    assert parsed.error == (
        "shfmt timed out after 1 s (TETHER_LIMIT_SHFMT_SECONDS sets it); "
        "its process group was stopped"
    )


def test_a_hung_gh_download_is_stopped_with_its_group_at_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gh runs git and other programs itself: at a download's time bound the whole group
    goes, not only gh."""
    import os

    from tether.gh import GhBound, GhBoundExceeded, run_gh

    pids = tmp_path / "pids"
    (tmp_path / "bin").mkdir()
    hung_program(tmp_path / "bin" / "gh", pids, ignore=("INT", "TERM"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(GhBoundExceeded) as caught:
        run_gh(["release", "download"], out=tmp_path / "kit.tgz", bound=GhBound(1.0, 1 << 20))
    _stopped(pids)
    assert caught.value.kind == "time"


def test_an_analyser_limit_that_is_not_a_number_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = Tool("shellcheck", "/bin/true", "0.11.0", "PATH")
    monkeypatch.setenv("TETHER_LIMIT_SHELLCHECK_SECONDS", "0")
    result = shellcheck.run_shellcheck(tool, b"echo hi\n", "bash", ResultCache(None))
    assert result.cannot == (
        "shellcheck could not run: TETHER_LIMIT_SHELLCHECK_SECONDS='0': "
        "not a number of seconds above 0"
    )


def test_ctrl_c_stops_the_programs_worker_threads_run(tmp_path: Path) -> None:
    """Worker threads run programs without a deadline (audit and fleet plans do this with
    theirs, through ``map_in_threads``); SIGINT reaches the process, whose main thread
    waits for the pool: every program's group is stopped and the work not begun is
    cancelled, instead of the pool waiting for the programs to end by themselves.

    The main thread waits as tether's callers do, a slice at a time: one that waited for
    the pool without a bound (``pool.map``, as this test once did) hung now and then on a
    loaded machine, the interrupt taken by the system just before that thread blocked and
    its handler never run (about one run in 150, ``stop_all_on_interrupt``)."""
    programs = [
        hung_program(tmp_path / f"hung-{n}", tmp_path / f"pids-{n}", ignore=("INT", "TERM"))
        for n in range(4)
    ]
    started = tmp_path / "started"

    def work() -> int:
        def one(program: Path) -> process.Finished:
            with open(started, "a") as note:
                note.write(f"{program.name}\n")
            return process.run([str(program)], timeout=None)

        try:
            process.map_in_threads(one, programs, 2)
        except KeyboardInterrupt:
            return 130
        return 0

    child = ForkedChild(work)
    pids = recorded_pids(tmp_path / "pids-0") + recorded_pids(tmp_path / "pids-1")
    try:
        child.send_signal(signal.SIGINT)
        assert child.wait(60).returncode == 130
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)
    assert sorted(started.read_text().split()) == ["hung-0", "hung-1"]  # the rest never began


def test_a_program_a_worker_starts_as_the_interrupt_lands_is_stopped_too(tmp_path: Path) -> None:
    """The interrupt reaches the waiting thread while a worker's program has started but is
    not yet listed among those ``stop_all`` stops (made certain here: the worker's start is
    held until ``stop_all`` has run). That program is stopped as the worker lists it, so
    the interrupted pool drains instead of waiting forever for a program that ignores
    SIGINT and SIGTERM."""
    program = hung_program(tmp_path / "hung", tmp_path / "pids", ignore=("INT", "TERM"))
    started, stop_all_ran = threading.Event(), threading.Event()
    real_popen, real_stop_all = subprocess.Popen, process.stop_all

    def held_popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        child = real_popen(*args, **kwargs)
        recorded_pids(tmp_path / "pids")  # running, its signals ignored
        started.set()
        stop_all_ran.wait()
        return child

    def stop_all_then_let_go() -> None:
        real_stop_all()
        stop_all_ran.set()

    def work() -> int:
        process.subprocess.Popen = held_popen  # type: ignore[misc]
        process.stop_all = stop_all_then_let_go  # type: ignore[assignment]
        try:
            with ThreadPoolExecutor(1) as pool, process.stop_all_on_interrupt(pool):
                pool.submit(process.run, [str(program)], timeout=None)
                started.wait()
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            return 130
        return 0

    child = ForkedChild(work)
    pids = recorded_pids(tmp_path / "pids")
    try:
        assert child.wait(60).returncode == 130
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)


def test_ctrl_c_the_system_gives_a_worker_thread_still_stops_the_run(tmp_path: Path) -> None:
    """The system hands a process's SIGINT to any of its threads; Python raises it in the
    main thread only when that thread runs. Here it goes to a worker thread (delivered to
    that thread alone) while the main thread waits for a program that ignores SIGINT and
    SIGTERM: the wait still ends, the programs are stopped with their groups."""
    programs = [
        hung_program(tmp_path / f"hung-{n}", tmp_path / f"pids-{n}", ignore=("INT", "TERM"))
        for n in range(2)
    ]

    def one(program: Path) -> process.Finished:
        if program == programs[1]:
            recorded_pids(tmp_path / "pids-0")
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        return process.run([str(program)], timeout=None)

    def work() -> int:
        try:
            process.map_in_threads(one, programs, 2)
        except KeyboardInterrupt:
            return 130
        return 0

    child = ForkedChild(work)
    pids = recorded_pids(tmp_path / "pids-0")
    try:
        assert child.wait(60).returncode == 130
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)
        if (tmp_path / "pids-1").exists():
            kill_leftovers(recorded_pids(tmp_path / "pids-1"))


def test_work_on_threads_keeps_the_items_order_and_raises_the_first_failure() -> None:
    assert process.map_in_threads(lambda n: n * n, list(range(20)), 4) == [n * n for n in range(20)]

    def fails_on_three(n: int) -> int:
        if n == 3:
            raise ValueError(f"item {n}")
        return n

    with pytest.raises(ValueError, match=r"item 3$"):
        process.map_in_threads(fails_on_three, [0, 1, 2, 3, 4], 4)
    with pytest.raises(ValueError, match=r"item 3$"):
        process.map_in_threads(fails_on_three, [0, 1, 2, 3, 4], 1)
