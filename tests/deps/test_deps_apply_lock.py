"""``tether deps apply`` holds the project lock ``update`` and ``init`` take while it works on
a project: a second tether run on that project is refused (exit 1, the holder named), and a
project that is not tether's keeps no trace of the lock.

The install step is a stand-in ``npm`` (first on PATH) that, while deps apply holds the
lock, runs a real second tether process on the same project and records its exit code and
stderr; it then exits 0 like a finished install."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from builders import call, make_release
from fixtures.deps.kit import calls, project, registry_file, run_json, setup_cli, stand_in
from fixtures.deps.loopback import LoopbackRegistry
from tether.state.lock import lock_holder


def npm_running(tmp: Path, monkeypatch: pytest.MonkeyPatch, *tether_args: str) -> Path:
    """An ``npm`` stand-in that runs ``tether <tether_args>`` and records the outcome (read
    with ``outcome``). A shell script: a Python one cost an interpreter start besides the
    second tether's."""
    record = tmp / "second-run"
    record.mkdir()
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "npm"
    second = shlex.join([sys.executable, "-m", "tether", *tether_args])
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s' \"$*\" > {shlex.quote(str(record / 'argv'))}\n"
        f"{second} > /dev/null 2> {shlex.quote(str(record / 'stderr'))}\n"
        f"echo $? > {shlex.quote(str(record / 'code'))}\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return record


def outcome(record: Path) -> dict[str, Any]:
    """What the second tether run did: its exit code, its stderr, and npm's arguments."""
    return {
        "code": int((record / "code").read_text()),
        "stderr": (record / "stderr").read_text(),
        "argv": (record / "argv").read_text().split(),
    }


def apply(registry: Path, server: LoopbackRegistry) -> tuple[int, dict[str, Any]]:
    return run_json(
        "deps",
        "apply",
        "--level",
        "minor",
        "--yes",
        "--registry",
        str(registry),
        "--npm-registry",
        server.url,
        "--pypi-index",
        server.url + "/pypi",
    )


NPM_PROJECT = {
    "package.json": {"name": "web", "dependencies": {"alpha": "^1.0.0"}},
    "package-lock.json": {},
}


def test_a_second_run_on_a_tether_project_is_refused_while_deps_apply_holds_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"README.md": "hello\n"})
    root = tmp_path / "web"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    project(root, NPM_PROJECT)
    second = npm_running(tmp_path, monkeypatch, "update", "--yes", "--to", "1.0.0", "-C", str(root))
    code, doc = apply(registry_file(tmp_path / "projects.json", {"web": root}), server)
    assert code == 0, doc
    assert [p["name"] for p in doc["applied"]] == ["web"]
    refused = outcome(second)
    assert refused["argv"] == ["install"]
    assert refused["code"] == 1, refused
    assert "another tether run is in progress (pid " in refused["stderr"]
    assert lock_holder(root / ".tether/lock") is None  # released at the end
    assert call("update", "--yes", "--to", "1.0.0", "-C", str(root)) == 0


def test_a_project_that_is_not_tethers_is_locked_where_init_would_and_left_without_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    setup_cli(monkeypatch, tmp_path)
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"README.md": "hello\n"})
    root = project(tmp_path / "web", NPM_PROJECT)
    second = npm_running(
        tmp_path, monkeypatch, "init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)
    )
    code, doc = apply(registry_file(tmp_path / "projects.json", {"web": root}), server)
    assert code == 0, doc
    refused = outcome(second)
    assert refused["code"] == 1, refused
    assert "another tether run is in progress (pid " in refused["stderr"]
    assert not (root / ".tether").exists()  # neither the lock nor the refused init's
    assert json.loads((root / "package.json").read_text())["dependencies"] == {"alpha": "^1.2.3"}


def test_a_project_whose_lock_is_held_is_failed_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    from tether.state.lock import ProjectLock

    setup_cli(monkeypatch, tmp_path)
    root = project(tmp_path / "web", NPM_PROJECT)
    before = (root / "package.json").read_bytes()
    second = stand_in(tmp_path, monkeypatch, "npm")
    with ProjectLock(root / ".tether/lock", command="update"):
        code, doc = apply(registry_file(tmp_path / "projects.json", {"web": root}), server)
    assert code == 1
    [failed] = doc["failed"]
    assert (failed["name"], failed["step"], failed["exit_code"]) == ("web", "lock", 1)
    assert "another tether run is in progress" in failed["error"]
    assert (root / "package.json").read_bytes() == before
    assert calls(second) == []  # no install ran


def test_what_a_killed_run_left_is_swept_by_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """A run killed while it held the lock of a project that is not tether's leaves
    ``.tether/lock`` naming it, and one killed mid-write a temporary file beside the
    manifest (kill -9 skips every clean-up). The next run removes both: tether leaves no lock
    in a folder it does not manage. (tests/deps/test_deps_crash.py kills real runs at every
    step.)"""
    setup_cli(monkeypatch, tmp_path)
    install = stand_in(tmp_path, monkeypatch, "npm")
    root = project(tmp_path / "web", NPM_PROJECT)
    lock = root / ".tether" / "lock"
    lock.parent.mkdir()
    lock.write_text(
        '{"pid": 999999999, "started": "2025-06-01T00:00:00Z", "command": "deps apply"}\n'
    )
    temp = root / ".package.json.0badf00d.tether-tmp"
    temp.write_text('{"name": "web", "depend')
    code, doc = apply(registry_file(tmp_path / "projects.json", {"web": root}), server)
    assert code == 0, doc
    assert sorted(p.name for p in root.iterdir()) == ["package-lock.json", "package.json"]
    assert json.loads((root / "package.json").read_text())["dependencies"] == {"alpha": "^1.2.3"}
    assert [c["argv"] for c in calls(install)] == [["install"]]
