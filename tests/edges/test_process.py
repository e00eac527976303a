"""The process edge (``tether.process``): deadlines, the interrupt → terminate → kill
sequence on the whole process group, Ctrl-C, output, the environment. Real processes: the
stand-ins are shell scripts (``process_helpers.hung_program``) that record their pids."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from builders import ForkedChild
from process_helpers import all_gone, hung_program, kill_leftovers, recorded_pids
from tether import process
from tether.report.programs import program_failure

pytestmark = pytest.mark.usefixtures("short_graces")


def _stopped_at_deadline(tmp_path: Path, **stand_in: object) -> tuple[process.Finished, list[int]]:
    """A stand-in started with a deadline of 0.5 s and finished once it wrote its pids
    (so a slow start cannot end it before it did); the deadline has passed by then or
    passes while ``finish`` waits."""
    pids_file = tmp_path / "pids"
    program = hung_program(tmp_path / "hung", pids_file, **stand_in)  # type: ignore[arg-type]
    running = process.start(
        [str(program)], timeout=0.5, limit="TETHER_LIMIT_TEST_SECONDS", cwd=tmp_path
    )
    pids = recorded_pids(pids_file)
    try:
        finished = running.finish()
        assert all_gone(pids), "a process of the group outlived the deadline"
    finally:
        kill_leftovers(pids)
    return finished, pids


def test_a_program_past_its_deadline_is_stopped_with_its_whole_group(tmp_path: Path) -> None:
    """The stand-in and the child it started both ignore SIGINT and SIGTERM: only the
    SIGKILL to the group ends them, and the run reports the deadline in one line."""
    finished, _ = _stopped_at_deadline(tmp_path, ignore=("INT", "TERM"))
    assert finished.started and finished.timed_out
    assert finished.exit_code is None and finished.code() == process.TIMED_OUT
    assert not finished.ok
    line = program_failure(finished)
    assert line == (
        f"{tmp_path / 'hung'} timed out after 0.5 s (TETHER_LIMIT_TEST_SECONDS sets it); "
        "its process group was stopped"
    )
    assert "\n" not in line


def test_the_group_is_interrupted_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT comes first, as a terminal's Ctrl-C would: a program that handles it ends
    there (and what it left running is killed with the group). The grace is long: the
    program's own end is what is waited for, and a loaded machine may take a while to run
    its handler (a short grace would send SIGTERM into the middle of it)."""
    monkeypatch.setattr(process, "INTERRUPT_GRACE", 120.0)
    marker = tmp_path / "signals"
    finished, _ = _stopped_at_deadline(tmp_path, on_signal=marker)
    assert marker.read_text() == "INT\n"
    assert finished.timed_out


def test_a_program_that_ignores_the_interrupt_is_terminated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt grace is waited out (short here); the terminate grace is long: the
    program's end in its SIGTERM handler is what is waited for."""
    monkeypatch.setattr(process, "TERMINATE_GRACE", 120.0)
    marker = tmp_path / "signals"
    finished, _ = _stopped_at_deadline(tmp_path, ignore=("INT",), on_signal=marker)
    assert marker.read_text() == "TERM\n"
    assert finished.timed_out


def test_the_deadline_counts_from_the_start(tmp_path: Path) -> None:
    began = time.monotonic()
    finished = process.run(["sleep", "30"], timeout=0.4)
    took = time.monotonic() - began
    assert finished.timed_out
    assert 0.4 <= took < 25  # stopped at the deadline, not at the end of the 30 s sleep


def test_ctrl_c_stops_the_group_before_the_interrupt_goes_on(tmp_path: Path) -> None:
    """SIGINT reaches the process running ``process.run`` (the program sits in a session
    of its own, so a terminal's Ctrl-C would reach only that process too): the program's
    whole group is stopped, although it ignores SIGINT and SIGTERM, and KeyboardInterrupt
    goes on to the caller."""
    pids_file = tmp_path / "pids"
    program = hung_program(tmp_path / "hung", pids_file, ignore=("INT", "TERM"))

    def work() -> int:
        try:
            process.run([str(program)], timeout=None)
        except KeyboardInterrupt:
            return 130
        return 0

    child = ForkedChild(work)
    pids = recorded_pids(pids_file)
    try:
        child.send_signal(signal.SIGINT)
        assert child.wait(120).returncode == 130
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)


def test_a_program_started_ahead_is_stopped_with_its_group(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    program = hung_program(tmp_path / "hung", pids_file, ignore=("INT",))
    running = process.start([str(program)], timeout=None)
    pids = recorded_pids(pids_file)
    try:
        running.stop()
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)


def test_a_process_left_holding_the_output_does_not_outlive_the_deadline(
    tmp_path: Path,
) -> None:
    """The program ends at once, but a process it left behind keeps its stdout open: the
    captured output never ends, so the deadline stops the group."""
    pid_file = tmp_path / "left"
    script = (
        f"sleep 600 & echo $! $(cut -d' ' -f22 /proc/$!/stat) > {pid_file}.tmp; "
        f"mv {pid_file}.tmp {pid_file}; echo started"
    )
    running = process.start(["sh", "-c", script], timeout=0.5, capture=True)
    left = recorded_pids(pid_file)  # before the deadline ends it, under any load
    finished = running.finish()
    try:
        assert finished.timed_out
        assert finished.stdout == b"started\n"
        assert all_gone(left)
    finally:
        kill_leftovers(left)


def test_what_was_printed_before_the_deadline_is_kept(tmp_path: Path) -> None:
    finished = process.run(["sh", "-c", "echo early; exec sleep 30"], timeout=0.5)
    assert finished.timed_out and finished.stdout == b"early\n"


def test_captured_output_input_and_exit_code(tmp_path: Path) -> None:
    finished = process.run(
        ["sh", "-c", "cat; echo warning >&2; exit 3"], timeout=30, input=b"given\n"
    )
    assert finished.started and not finished.timed_out
    assert (finished.exit_code, finished.code(), finished.ok) == (3, 3, False)
    assert (finished.stdout, finished.stderr) == (b"given\n", b"warning\n")
    assert program_failure(finished, "the check") == "the check exited 3"


def test_a_signal_that_ends_the_program_is_reported(tmp_path: Path) -> None:
    finished = process.run(["sh", "-c", "kill -9 $$"], timeout=30)
    assert finished.exit_code == -9 and finished.code() == 137
    assert finished.end_words() == "was killed by signal 9"


def test_output_goes_to_the_log_and_only_a_bounded_tail_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "TAIL_BYTES", 1000)
    log_path = tmp_path / "tool.log"
    with open(log_path, "a+b") as log:
        log.write(b"$ header\n")
        finished = process.run(
            ["sh", "-c", "seq 1 5000; echo failing >&2; exit 1"], timeout=30, output=log
        )
    assert finished.exit_code == 1 and finished.stdout == b""
    assert finished.tail.splitlines() == [*map(str, range(4982, 5001)), "failing"]
    text = log_path.read_text()
    assert text.startswith("$ header\n1\n2\n") and text.endswith("5000\nfailing\n")


def test_a_log_open_for_writing_only_has_no_tail(tmp_path: Path) -> None:
    """deps writes its logs as text, append-only: the edge does not need to read them."""
    with open(tmp_path / "tool.log", "a", encoding="utf-8") as log:
        log.write("== install\n")
        finished = process.run(["echo", "installed"], timeout=30, output=log)
    assert finished.ok and finished.tail == ""
    assert (tmp_path / "tool.log").read_text() == "== install\ninstalled\n"


def test_the_environment_is_sanitised(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Variables that would point git at another repository (a git hook running tether
    sets them) never reach a program; nothing can prompt for credentials."""
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "index"))
    monkeypatch.setenv("TETHER_TEST_KEPT", "yes")
    finished = process.run(["env"], timeout=30)
    seen = dict(line.split("=", 1) for line in finished.stdout.decode().splitlines() if "=" in line)
    assert "GIT_DIR" not in seen and "GIT_INDEX_FILE" not in seen
    assert seen["TETHER_TEST_KEPT"] == "yes"
    assert (seen["GIT_TERMINAL_PROMPT"], seen["GCM_INTERACTIVE"]) == ("0", "never")
    explicit = process.child_env({"PATH": os.environ["PATH"], "GIT_DIR": "x"}, drop=["PATH"])
    assert explicit == {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}


def test_the_program_runs_in_a_session_of_its_own(tmp_path: Path) -> None:
    """Its own group: a terminal's Ctrl-C reaches tether alone, which stops the group."""
    finished = process.run(["sh", "-c", "ps -o pgid= -p $$; ps -o sid= -p $$"], timeout=30)
    group, session = finished.stdout.split()
    assert int(group) != os.getpgrp() and int(session) != os.getsid(0)


def test_no_shell_reads_the_arguments(tmp_path: Path) -> None:
    finished = process.run(["echo", "$(touch pwned)", ";", "rm", "-rf", "x"], timeout=30)
    assert finished.stdout == b"$(touch pwned) ; rm -rf x\n"
    assert not (Path.cwd() / "pwned").exists()


def test_a_missing_program_could_not_start() -> None:
    finished = process.run(["tether-test-no-such-program", "x"], timeout=30)
    assert not finished.started and finished.not_found
    assert finished.code() == 127
    assert program_failure(finished) == (
        "could not start 'tether-test-no-such-program': No such file or directory"
    )


def test_a_file_size_limit_holds(tmp_path: Path) -> None:
    out = tmp_path / "big"
    finished = process.run(
        ["sh", "-c", f"head -c 100000 /dev/zero > {out}"], timeout=30, max_file_bytes=4096
    )
    assert not finished.ok
    assert out.stat().st_size == 4096


def test_every_program_time_limit_is_documented_with_its_default() -> None:
    from tether.sources import limits

    text = " ".join((Path(__file__).parents[2] / "docs" / "cli.md").read_text().split())
    program_times = [v for v in vars(limits).values() if isinstance(v, limits.TimeLimit)]
    assert len(program_times) >= 6  # every limit the module defines, found, not listed
    for limit in program_times:
        assert f"`{limit.variable}` ({limit.default:g}:" in text, limit.variable


def test_an_interrupt_while_a_program_starts_waits_until_its_handle_is_held(
    tmp_path: Path,
) -> None:
    """SIGINT arriving between the start of a program and the moment its handle is stored
    would leave a program nobody can stop: it is held back until then, then delivered."""
    marker = tmp_path / "delivered-after"
    # Python's own handler, as on a person's terminal: a test run started in the
    # background by a shell inherits SIGINT ignored, and an ignored interrupt is delivered
    # to nobody, held back or not.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), process._interrupts_held():
            # To this thread (the main one): the signal is delivered before pthread_kill
            # returns, and a handler runs at the next line, so the marker is written only
            # if the interrupt was held back.
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            marker.touch()
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert marker.exists()


def _run_until_interrupted(program: Path, timeout: float | None) -> int:
    """A forked child's work: run ``program``; 130 when a Ctrl-C ends the run, else 0."""
    try:
        process.run([str(program)], timeout=timeout)
    except KeyboardInterrupt:
        return 130
    return 0


@pytest.mark.parametrize("timeout", [None, 600.0], ids=["no deadline", "a long deadline"])
def test_a_ctrl_c_that_did_not_wake_the_waiting_thread_still_stops_the_program(
    tmp_path: Path, timeout: float | None
) -> None:
    """The system may take a SIGINT on another thread of tether, or just before the main
    thread blocks in its wait for the program: the signal's C handler runs, and Python
    runs the handler that raises KeyboardInterrupt only when the main thread next runs.
    Made certain here by a second thread sending SIGINT to itself once the program runs
    (which ignores SIGINT and SIGTERM): the main thread's wait still hears it within a
    moment and the group is stopped, instead of the wait lasting until the program ends
    or its deadline passes."""
    pids_file = tmp_path / "pids"
    program = hung_program(tmp_path / "hung", pids_file, ignore=("INT", "TERM"))

    def interrupt_on_this_thread_once_the_program_runs() -> None:
        recorded_pids(pids_file)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    def work() -> int:
        threading.Thread(target=interrupt_on_this_thread_once_the_program_runs).start()
        return _run_until_interrupted(program, timeout)

    child = ForkedChild(work)
    pids = recorded_pids(pids_file)
    try:
        assert child.wait(60).returncode == 130
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)


def test_stop_all_stops_a_program_nobody_stopped(tmp_path: Path) -> None:
    """What the CLI calls when Ctrl-C ends a command: a program started ahead that the
    caller, interrupted, never stopped is stopped on the way out."""
    pids_file = tmp_path / "pids"
    program = hung_program(tmp_path / "hung", pids_file, ignore=("INT", "TERM"))
    running = process.start([str(program)], timeout=None)
    pids = recorded_pids(pids_file)
    try:
        process.stop_all()
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)
    running.finish()


@pytest.mark.parametrize("second_on", ["the main thread", "another thread"])
def test_a_second_ctrl_c_kills_the_group_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second_on: str
) -> None:
    """The first interrupt starts the graces (here long); a second one while they run does
    not wait them out: the group is killed and the interrupt goes on. Also when the system
    takes the second one on another thread of tether, which does not wake the main thread
    waiting out the grace (``test_a_ctrl_c_that_did_not_wake_the_waiting_thread_...``)."""
    monkeypatch.setattr(process, "INTERRUPT_GRACE", 60.0)
    monkeypatch.setattr(process, "TERMINATE_GRACE", 60.0)
    pids_file, marker = tmp_path / "pids", tmp_path / "interrupted"
    program = tmp_path / "stubborn"
    program.write_text(
        "#!/bin/sh\n"
        f"trap 'echo INT >> {marker}' INT\n"
        "trap '' TERM\n"
        "sleep 600 &\n"
        "child=$!\n"
        f'echo "$$ $(cut -d" " -f22 /proc/$$/stat) $child $(cut -d" " -f22 /proc/$child/stat)"'
        f" > {pids_file}.tmp && mv {pids_file}.tmp {pids_file}\n"
        "while :; do wait; done\n"
    )
    program.chmod(0o755)

    def interrupt_on_this_thread_once_the_grace_runs() -> None:
        while not marker.exists():
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    def work() -> int:
        if second_on == "another thread":
            threading.Thread(target=interrupt_on_this_thread_once_the_grace_runs).start()
        return _run_until_interrupted(program, None)

    child = ForkedChild(work)
    pids = recorded_pids(pids_file)
    try:
        child.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while not marker.exists():  # the group got its SIGINT: the grace is running
            assert time.monotonic() < deadline, "the group never got SIGINT"
            time.sleep(0.01)
        began = time.monotonic()
        if second_on == "the main thread":
            child.send_signal(signal.SIGINT)
        assert child.wait(30).returncode == 130
        assert time.monotonic() - began < 20  # not the 60 s grace
        assert all_gone(pids)
    finally:
        kill_leftovers(pids)
