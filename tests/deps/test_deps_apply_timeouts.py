"""``deps apply`` never hangs on a tool it starts: an install or an override command that
outlives its time limit is stopped with its whole process group and fails the project in
one line naming the command and the limit; Ctrl-C during an install leaves no process of
it behind.

``npm`` and the override command are stand-in shell scripts first on PATH
(``process_helpers.hung_program``) that start a child in their process group, record both
pids and hang, ignoring SIGINT and SIGTERM (a real npm cannot be made to hang on cue).
Packuments come from a loopback registry on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from fixtures.deps.kit import in_place_apply, project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from process_helpers import all_gone, hung_program, kill_leftovers, recorded_pids
from tether import process
from tether.deps.owed import OWED_FILE


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(registry file, the project, where the hung npm writes its pids)."""
    setup_cli(monkeypatch, tmp_path)
    # The hung npm ignores SIGINT and SIGTERM: each grace is waited out in full.
    monkeypatch.setattr(process, "INTERRUPT_GRACE", 0.05)
    monkeypatch.setattr(process, "TERMINATE_GRACE", 0.05)
    folder = tmp_path / "bin"
    folder.mkdir()
    pids = tmp_path / "npm-pids"
    hung_program(folder / "npm", pids, ignore=("INT", "TERM"))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    root = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    return registry_file(tmp_path / "projects.json", {"app": root}), root, pids


def _owed_projects(state: Path) -> list[str]:
    return [
        row["name"]
        for path in sorted(state.glob(f"tether/runs/*/{OWED_FILE}"))
        for row in json.loads(path.read_text())
    ]


def test_a_hung_install_is_stopped_at_its_time_limit(
    world: tuple[Path, Path, Path],
    server: LoopbackRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry, root, pids_file = world
    # A shell script starts and writes its pids in a few milliseconds: a second leaves it a
    # wide margin on a loaded machine.
    monkeypatch.setenv("TETHER_LIMIT_INSTALL_SECONDS", "1")
    try:
        code, doc = run_json(*in_place_apply(registry, server.url))
        pids = recorded_pids(pids_file, seconds=0)
        assert all_gone(pids), "a process of the install outlived its time limit"
    finally:
        kill_leftovers(recorded_pids(pids_file, seconds=0) if pids_file.exists() else [])
    assert code == 1
    [failed] = doc["failed"]
    assert failed["step"] == "install" and failed["exit_code"] == process.TIMED_OUT
    assert failed["error"] == (
        "Manifests already bumped; install pending (npm install timed out after 1 s "
        "(TETHER_LIMIT_INSTALL_SECONDS sets it); its process group was stopped)"
    )
    # The manifest was bumped; the install stays owed for the next run.
    assert json.loads((root / "package.json").read_text())["dependencies"]["alpha"] == "^1.2.3"
    assert _owed_projects(tmp_path / "state") == ["app"]
    log = Path(doc["run_dir"]).glob("*app.log")
    assert "npm: timed out after 1 s" in next(log).read_text()


def test_the_human_report_names_the_command_and_the_limit_in_one_line(
    world: tuple[Path, Path, Path],
    server: LoopbackRegistry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry, _, pids_file = world
    monkeypatch.setenv("TETHER_LIMIT_INSTALL_SECONDS", "1")
    try:
        code, out, err = run_cli(*in_place_apply(registry, server.url))
    finally:
        kill_leftovers(recorded_pids(pids_file, seconds=0) if pids_file.exists() else [])
    assert code == 1
    [line] = [line for line in (out + err).splitlines() if "FAILED at install" in line]
    assert "(exit 124)" in line
    assert "npm install timed out after 1 s (TETHER_LIMIT_INSTALL_SECONDS sets it)" in line


def test_a_hung_override_command_is_stopped_at_its_time_limit(
    world: tuple[Path, Path, Path],
    server: LoopbackRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry, _, _ = world
    pids_file = tmp_path / "override-pids"
    command = hung_program(tmp_path / "bin" / "alpha-upgrade", pids_file, ignore=("INT", "TERM"))
    (tmp_path / "config" / "tether").mkdir(parents=True)
    (tmp_path / "config" / "tether" / "deps-overrides.yaml").write_text(
        "- id: alpha-family\n"
        "  match: [alpha]\n"
        f"  command: {json.dumps(command.name + ' {version}')}\n"
        "  versionSource: target-of:alpha\n"
    )
    monkeypatch.setenv("TETHER_LIMIT_OVERRIDE_SECONDS", "1")
    args = in_place_apply(
        registry, server.url, "--no-install", "--override-action", "alpha-family=run-override"
    )
    try:
        code, doc = run_json(*args)
        pids = recorded_pids(pids_file, seconds=0)
        assert all_gone(pids), "a process of the override command outlived its time limit"
    finally:
        kill_leftovers(recorded_pids(pids_file, seconds=0) if pids_file.exists() else [])
    assert code == 1
    [failed] = doc["failed"]
    assert failed["step"] == "override:alpha-family"
    assert failed["error"] == (
        "alpha-upgrade 1.2.3 timed out after 1 s (TETHER_LIMIT_OVERRIDE_SECONDS sets it); "
        "its process group was stopped"
    )


def test_ctrl_c_during_an_install_leaves_no_process_behind(
    world: tuple[Path, Path, Path], server: LoopbackRegistry, tmp_path: Path
) -> None:
    """SIGINT reaches tether (a child forked from the test's process) while the install
    hangs; the install ignores SIGINT and SIGTERM and started a child of its own. tether
    stops the install's whole group, keeps the install owed and exits 130."""
    from builders import start_forked

    registry, _, pids_file = world
    tether = start_forked(*in_place_apply(registry, server.url), "--json")
    pids = recorded_pids(pids_file)
    try:
        tether.send_signal(signal.SIGINT)
        done = tether.wait(120)
        assert all_gone(pids), "a process of the install outlived Ctrl-C"
    finally:
        kill_leftovers(pids)
    assert done.returncode == 130, done.stderr
    [failed] = json.loads(done.stdout)["failed"]
    assert failed["step"] == "install" and "install pending (interrupted)" in failed["error"]
    assert _owed_projects(tmp_path / "state") == ["app"]


def test_a_time_limit_that_is_not_a_number_stops_the_run_before_it_starts(
    world: tuple[Path, Path, Path], server: LoopbackRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry, root, pids_file = world
    before = (root / "package.json").read_bytes()
    monkeypatch.setenv("TETHER_LIMIT_INSTALL_SECONDS", "soon")
    code, out, err = run_cli(*in_place_apply(registry, server.url))
    assert code == 1 and out == ""
    assert err.strip() == (
        "tether: TETHER_LIMIT_INSTALL_SECONDS='soon': not a number of seconds above 0"
    )
    assert (root / "package.json").read_bytes() == before
    assert not pids_file.exists()
