"""A rerun finishes the install an earlier run owes: the manifests were bumped, the install
failed, so a fresh plan finds nothing to bump, yet the install must still run.

``npm`` here is a stand-in script first on PATH that records its argv and working folder and
fails until a marker file exists (a real npm cannot be made to fail, then succeed, on cue).
Packuments come from a loopback registry on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from fixtures.deps.kit import (
    calls,
    in_place_apply,
    project,
    registry_file,
    run_cli,
    run_json,
    setup_cli,
    stand_in,
)
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.owed import OWED_FILE


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(registry file, the project, the marker that lets the npm stand-in succeed)."""
    setup_cli(monkeypatch, tmp_path)
    marker = tmp_path / "npm-works"
    stand_in(tmp_path, monkeypatch, "npm", fail_unless=marker)
    root = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    return registry_file(tmp_path / "projects.json", {"app": root}), root, marker


def test_the_same_command_finishes_the_owed_install(
    world: tuple[Path, Path, Path], server: LoopbackRegistry
) -> None:
    registry, root, marker = world
    code, first = run_json(*in_place_apply(registry, server.url))
    assert code == 1
    [failed] = first["failed"]
    assert failed["step"] == "install"
    assert (
        failed["error"] == "Manifests already bumped; install pending (npm install exited with 1)"
    )
    assert json.loads((root / "package.json").read_text())["dependencies"]["alpha"] == "^1.2.3"
    assert (Path(first["run_dir"]) / OWED_FILE).is_file()

    marker.touch()
    code, second = run_json(*in_place_apply(registry, server.url))
    assert code == 0, second
    [applied] = second["applied"]
    assert applied["bumps"] == []  # nothing left to bump: only the owed install ran
    assert [(s["step"], s["command"]) for s in applied["steps"]] == [("install", "npm install")]
    assert calls(root.parent / "npm-calls.record")[-1] == {"argv": ["install"], "cwd": str(root)}
    assert not (Path(first["run_dir"]) / OWED_FILE).exists()  # settled

    code, third = run_json(*in_place_apply(registry, server.url))
    assert (code, third["status"]) == (0, "nothing")


def test_resume_names_the_run_and_a_wrong_one_is_refused(
    world: tuple[Path, Path, Path], server: LoopbackRegistry
) -> None:
    registry, _, marker = world
    code, first = run_json(*in_place_apply(registry, server.url))
    assert code == 1
    code, _, err = run_cli(
        *in_place_apply(registry, server.url, "--resume", "20000101T000000000000Z-000000")
    )
    assert code == 1 and "--resume 20000101T000000000000Z-000000: no such run" in err
    marker.touch()
    code, second = run_json(*in_place_apply(registry, server.url, "--resume", first["run_id"]))
    assert code == 0, second
    assert [s["step"] for s in second["applied"][0]["steps"]] == ["install"]
    code, _, err = run_cli(*in_place_apply(registry, server.url, "--resume", first["run_id"]))
    assert code == 1 and "that run owes no install to the selected projects" in err


def test_the_text_says_the_install_is_pending(
    world: tuple[Path, Path, Path], server: LoopbackRegistry
) -> None:
    registry, _, _ = world
    code, out, _ = run_cli(*in_place_apply(registry, server.url))
    assert code == 1
    assert "FAILED at install (exit 1): Manifests already bumped; install pending" in out


def _owed_rows(state: Path) -> list[tuple[str, str]]:
    """Every owed install any run folder keeps: (run id, project)."""
    return [
        (path.parent.name, row["name"])
        for path in sorted((state / "tether" / "runs").glob(f"*/{OWED_FILE}"))
        for row in json.loads(path.read_text())
    ]


def test_a_retry_that_fails_before_the_install_keeps_what_is_owed(
    world: tuple[Path, Path, Path], server: LoopbackRegistry, tmp_path: Path
) -> None:
    """The record is cleared only once the install succeeded: a rerun refused at the lock,
    or one whose isolation is not possible, leaves it for the next run."""
    from tether.state.lock import ProjectLock

    registry, root, marker = world
    state = tmp_path / "state"
    code, first = run_json(*in_place_apply(registry, server.url))
    assert code == 1 and _owed_rows(state) == [(first["run_id"], "app")]

    with ProjectLock(root / ".tether" / "lock", command="update"):
        code, locked = run_json(*in_place_apply(registry, server.url))
    assert code == 1 and locked["failed"][0]["step"] == "lock"
    assert (first["run_id"], "app") in _owed_rows(state)

    code, skipped = run_json(
        *in_place_apply(registry, server.url, "--isolate", "worktree")
    )  # not in git
    assert code == 0 and [p["name"] for p in skipped["skipped_isolation"]] == ["app"]
    assert (first["run_id"], "app") in _owed_rows(state)
    assert calls(root.parent / "npm-calls.record") == [{"argv": ["install"], "cwd": str(root)}]

    code, failed_again = run_json(*in_place_apply(registry, server.url))
    assert code == 1 and failed_again["failed"][0]["step"] == "install"
    assert _owed_rows(state)  # still owed

    marker.touch()
    code, done = run_json(*in_place_apply(registry, server.url))
    assert code == 0, done
    assert [s["step"] for s in done["applied"][0]["steps"]] == ["install"]
    assert _owed_rows(state) == []
    code, after = run_json(*in_place_apply(registry, server.url))
    assert (code, after["status"]) == (0, "nothing")


def test_ctrl_c_during_the_install_leaves_it_owed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """Ctrl-C reaches tether while the install runs (the stand-in npm sends SIGINT to the
    tether process that started it, as a terminal sends it to the whole foreground group):
    exit 130 with the manifest bumped, and the install is owed, so the rerun runs it instead
    of finding nothing to update. tether runs in a child forked from the test's process."""
    from builders import run_forked

    setup_cli(monkeypatch, tmp_path)
    marker = tmp_path / "npm-works"
    folder = tmp_path / "bin"
    folder.mkdir()
    npm = folder / "npm"
    npm.write_text(
        "#!/bin/sh\n"  # records as kit.stand_in does
        f"{{ printf '%s\\0' \"$(pwd -P)\" \"$@\"; printf '\\n'; }}"
        f" >> {shlex.quote(str(tmp_path / 'npm-calls.record'))}\n"
        f"[ -e {shlex.quote(str(marker))} ] && exit 0\n"
        "kill -INT $PPID\n"
        "exec sleep 30\n"
    )
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    root = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    registry = registry_file(tmp_path / "projects.json", {"app": root})

    interrupted = run_forked(*in_place_apply(registry, server.url), "--json")
    assert interrupted.returncode == 130, interrupted.stderr
    doc = json.loads(interrupted.stdout)
    [failed] = doc["failed"]
    assert failed["step"] == "install" and "install pending" in failed["error"]
    assert json.loads((root / "package.json").read_text())["dependencies"]["alpha"] == "^1.2.3"
    assert _owed_rows(tmp_path / "state") == [(doc["run_id"], "app")]

    marker.touch()
    code, rerun = run_json(*in_place_apply(registry, server.url))
    assert code == 0, rerun
    assert [s["step"] for s in rerun["applied"][0]["steps"]] == ["install"]
    assert len(calls(tmp_path / "npm-calls.record")) == 2
    assert _owed_rows(tmp_path / "state") == []
