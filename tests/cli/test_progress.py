"""Progress of long work: what flows report, and what a terminal shows of it.

The command-line tests run the real ``tether`` with its stderr on a real pseudo-terminal
(the stdlib ``pty`` module, in raw mode so the bytes arrive exactly as written) and read
everything the terminal received.
"""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import tarfile
import threading
import tty
from pathlib import Path

import pytest

from builders import call, make_release, run_forked, run_tether
from helpers_sources import commit_release, init_repo, serve_directory
from tether import progress
from tether.report.progress import LIVE_INTERVAL, LiveLine, PlainLines, choose
from tether.state import crashpoint

FILES = 300


def on_terminal(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, bytes]:
    """Run tether (a child forked from the test's process) with stderr on a pseudo-terminal:
    exit code, stdout, the terminal's bytes."""
    environ: dict[str, str | None] = {"NO_COLOR": None, "TERM": "xterm", **(env or {})}
    master, slave = pty.openpty()
    tty.setraw(slave)  # no \n -> \r\n translation: the test sees the bytes tether wrote
    received: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not data:
                return
            received.append(data)

    reader = threading.Thread(target=pump)
    reader.start()
    try:
        done = run_forked(*args, env=environ, stderr_fd=slave)
    finally:
        os.close(slave)
        reader.join(timeout=30)
        os.close(master)
    return done.returncode, done.stdout, b"".join(received)


def visible_line(terminal: bytes) -> str:
    """What the last line of a terminal shows once ``terminal`` was written to it."""
    line: list[str] = []
    column = 0
    for char in terminal.decode().rsplit("\n", 1)[-1]:
        if char == "\r":
            column = 0
            continue
        if column < len(line):
            line[column] = char
        else:
            line.append(char)
        column += 1
    return "".join(line)


def release_files(version: str) -> dict[str, str]:
    return {f"pkg{i % 7}/file{i:04d}.txt": f"file {i} of {version}\n" for i in range(FILES)}


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Releases 1.0.0 and 2.0.0 of FILES files each (2.0.0 changes every file), written once
    for the module: tether only reads a source."""
    shelf = tmp_path_factory.mktemp("progress") / "releases"
    make_release(shelf, "1.0.0", release_files("1.0.0"))
    make_release(shelf, "2.0.0", release_files("2.0.0"))
    return shelf


@pytest.fixture
def project(tmp_path: Path, shelf: Path) -> Path:
    """A project of FILES files installed from 1.0.0 of ``shelf``."""
    root = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    return root


def test_update_on_a_terminal_draws_a_live_line_and_clears_it(project: Path) -> None:
    code, out, terminal = on_terminal("update", "--yes", "-C", str(project))
    assert code == 0, terminal
    assert "tether update: 1.0.0 → 2.0.0" in out
    assert b"\rtether: fetching release 2.0.0..." in terminal
    for phase in (b"planning", b"applying", b"finalizing"):
        assert re.search(rb"\rtether: " + phase + rb" \d[\d,]*/300 files \(\d+%\)", terminal)
    assert b"\n" not in terminal  # never a new line: one line redrawn in place
    assert visible_line(terminal).strip() == ""  # cleared before the report is printed


def test_init_status_and_abandon_report_their_phases(
    tmp_path: Path, shelf: Path, project: Path
) -> None:
    code, _, terminal = on_terminal(
        "init", "--source", str(shelf), "--to", "1.0.0", "-C", str(tmp_path / "other")
    )
    assert code == 0 and b"\rtether: reading the project 0/300 files (0%)" in terminal
    assert b"\rtether: installing 0/300 files (0%)" in terminal
    code, _, terminal = on_terminal("status", "-C", str(project))
    assert code == 0 and b"\rtether: checking 0/300 files (0%)" in terminal
    crashed = run_forked("update", "--yes", "-C", str(project), crash="file-written:5")
    assert crashed.returncode == crashpoint.EXIT_CODE
    code, out, terminal = on_terminal("update", "--abandon", "-C", str(project))
    assert code == 0, out
    assert re.search(rb"\rtether: restoring backups \d+/\d+ files", terminal)
    assert (project / "pkg0/file0000.txt").read_text() == "file 0 of 1.0.0\n"


def test_release_download_and_extraction_are_shown(tmp_path: Path) -> None:
    release = make_release(tmp_path / "build", "1.0.0", release_files("1.0.0"))
    served = tmp_path / "srv"
    served.mkdir()
    with tarfile.open(served / "kit-1.0.0.tar.gz", "w:gz") as tar:
        tar.add(release, arcname="kit-1.0.0")
    with serve_directory(served) as base:
        code, _, terminal = on_terminal(
            "init",
            "--source",
            f"{base}/kit-{{version}}.tar.gz",
            "--to",
            "1.0.0",
            "-C",
            str(tmp_path / "proj"),
        )
    assert code == 0, terminal
    assert re.search(rb"\rtether: downloading [\d.]+/[\d.]+ MB \(\d+%\)", terminal)
    assert re.search(rb"\rtether: extracting \d+/\d+ entries", terminal)


def test_nothing_is_drawn_when_stderr_is_not_a_terminal(project: Path) -> None:
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        ("update", "--yes", "--json"),
        ("-q", "update", "--yes"),
        ("update", "--yes", "-q"),
        ("update", "--quiet", "--yes"),
    ],
)
def test_nothing_is_drawn_with_json_or_quiet(project: Path, args: tuple[str, ...]) -> None:
    code, out, terminal = on_terminal(*args, "-C", str(project))
    assert code == 0
    assert terminal == b""
    if "--json" in args:
        assert '"status": "updated"' in out


@pytest.mark.parametrize(
    ("env", "flags"),
    [({"NO_COLOR": "1"}, ()), ({"TERM": "dumb"}, ()), ({}, ("--no-color",))],
)
def test_plain_lines_without_redraw(
    project: Path, env: dict[str, str | None], flags: tuple[str, ...]
) -> None:
    code, _, terminal = on_terminal("update", "--yes", *flags, "-C", str(project), env=env)
    assert code == 0
    text = terminal.decode()
    assert "\r" not in text
    assert "tether: planning 300 files...\n" in text
    assert re.search(r"tether: planning done, 300 files in \d+\.\d s\n", text)
    assert re.search(r"tether: applying done, 300 files in \d+\.\d s\n", text)
    assert all(line.startswith("tether: ") for line in text.splitlines())


def test_help_imports_no_renderer() -> None:
    script = (
        "import sys\n"
        "from tether.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in WATCHED))\n"
    )
    watched = "{'tether.progress', 'tether.report.progress', 'difflib', 'json', 'rich'}"
    result = subprocess.run(
        ["python", "-c", f"WATCHED = {watched}\n{script}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


# --- the renderers, in-process, with a clock the test moves ---


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_live_line_redraws_at_most_ten_times_a_second() -> None:
    out, clock = io.StringIO(), Clock()
    line = LiveLine(out, clock, width=80)
    with line.phase("planning", 1000, "files") as step:
        for _ in range(500):
            step.advance()  # the clock stands still: no redraw
        assert out.getvalue() == "\rtether: planning 0/1,000 files (0%)"
        clock.now += LIVE_INTERVAL
        step.advance()
        assert out.getvalue().endswith("\rtether: planning 501/1,000 files (50%)")
    assert out.getvalue().endswith(
        "\r" + " " * len("tether: planning 501/1,000 files (50%)") + "\r"
    )


def test_live_line_shows_the_inner_phase_then_the_outer_again() -> None:
    out, clock = io.StringIO(), Clock()
    line = LiveLine(out, clock, width=80)
    with line.phase("fetching release 2.0.0", None, "files"):
        with line.phase("downloading", 3_000_000, "bytes") as step:
            clock.now += 1
            step.advance(1_500_000)
            assert out.getvalue().endswith("\rtether: downloading 1.5/3.0 MB (50%)")
        assert out.getvalue().endswith("\rtether: fetching release 2.0.0...")
    assert visible_line(out.getvalue().encode()).strip() == ""


def test_live_line_fits_the_terminal_width() -> None:
    out = io.StringIO()
    with LiveLine(out, Clock(), width=30).phase("a very long phase name indeed", 10, "files"):
        pass
    assert max(len(part) for part in out.getvalue().split("\r")) == 29


def test_plain_lines_say_start_and_end_and_a_stop() -> None:
    out, clock = io.StringIO(), Clock()
    lines = PlainLines(out, clock)
    with lines.phase("planning", 2, "files") as step:
        step.advance(2)
        clock.now += 1.25
    with pytest.raises(KeyboardInterrupt), lines.phase("applying", 5, "files") as step:
        step.advance(3)
        raise KeyboardInterrupt
    assert out.getvalue() == (
        "tether: planning 2 files...\n"
        "tether: planning done, 2 files in 1.2 s\n"
        "tether: applying 5 files...\n"
        "tether: applying stopped, 3 files in 0.0 s\n"
    )


def test_choose_follows_terminal_json_quiet_and_environment() -> None:
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal, os.fdopen(master, "rb"):
        assert isinstance(choose(terminal, quiet=False, as_json=False, environ={}), LiveLine)
        for environ in ({"NO_COLOR": "1"}, {"NO_COLOR": "0"}, {"TERM": "dumb"}):
            chosen = choose(terminal, quiet=False, as_json=False, environ=environ)
            assert isinstance(chosen, PlainLines)
        # NO_COLOR counts only when set to something (no-color.org).
        live = choose(terminal, quiet=False, as_json=False, environ={"NO_COLOR": ""})
        assert isinstance(live, LiveLine)
        plain = choose(terminal, quiet=False, as_json=False, environ={}, no_color=True)
        assert isinstance(plain, PlainLines)
        assert choose(terminal, quiet=True, as_json=False, environ={}) is None
        assert choose(terminal, quiet=False, as_json=True, environ={}) is None
    assert choose(io.StringIO(), quiet=False, as_json=False, environ={}) is None


# --- the neutral interface flows call ---


class Recorder:
    """A sink that writes down what it was told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def phase(self, name: str, total: int | None, unit: str) -> Recorder:
        self.events.append(("start", (name, total, unit)))
        return self

    def advance(self, n: int = 1) -> None:
        self.events.append(("advance", n))

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append(("end", None))


def test_phases_go_to_the_installed_sink_and_nowhere_after() -> None:
    assert progress.phase("x", 1) is progress.SILENT
    recorder = Recorder()
    with progress.use(recorder):
        for _ in progress.tracked("planning", ["a", "b"]):
            pass
    assert recorder.events == [
        ("start", ("planning", 2, "files")),
        ("advance", 1),
        ("advance", 1),
        ("end", None),
    ]
    assert progress.phase("x", 1) is progress.SILENT


def test_tracked_phase_ends_when_the_loop_stops_early() -> None:
    recorder = Recorder()
    with progress.use(recorder):
        for item in progress.tracked("restoring", [1, 2, 3]):
            if item == 2:
                break
        assert recorder.events[-1] == ("end", None)


def test_a_new_thread_reports_to_nobody() -> None:
    seen: list[object] = []
    with progress.use(Recorder()):
        worker = threading.Thread(target=lambda: seen.append(progress.phase("x", 1)))
        worker.start()
        worker.join()
    assert seen == [progress.SILENT]


def test_a_real_update_reports_its_phases_in_order(project: Path) -> None:
    recorder = Recorder()
    with progress.use(recorder):
        assert call("update", "--yes", "-C", str(project)) == 0
    started = [event[1][0] for event in recorder.events if event[0] == "start"]  # type: ignore[index]
    assert started == ["fetching release 2.0.0", "planning", "applying", "finalizing"]
    advanced = sum(n for kind, n in recorder.events if kind == "advance")  # type: ignore[misc]
    assert advanced == 3 * FILES


def test_a_git_source_reports_listing_and_extracting(tmp_path: Path) -> None:
    from tether.sources import open_source

    repo = init_repo(tmp_path / "upstream")
    commit_release(repo, {"a.txt": "a\n", "d/b.txt": "b\n"}, "v1.0.0")
    recorder = Recorder()
    with progress.use(recorder):
        open_source(str(repo), tmp_path / "cache").fetch("1.0.0")
    started = [event[1] for event in recorder.events if event[0] == "start"]
    assert started == [("listing versions", None, "files"), ("extracting", 3, "entries")]
