"""Crash-safety of ``tether deps apply``: a run killed at any of its durable steps, then run
again, ends exactly like an uninterrupted run: the same manifests, an install that saw the
final manifests, no install owed, no temporary file, and no lock left in a folder tether
does not manage.

The crash points are not kept by hand: an uninterrupted run writes its steps to its run
folder (``tether.deps.steps``), and every one of them becomes a ``TETHER_CRASH_AFTER`` point
(``tether.state.crashpoint``) at which a rerun dies with ``os._exit`` (the nearest thing to
kill -9 from inside); one test kills a run held at a step with a real SIGKILL. tether runs in
children forked from the test's process.

Three projects, none of them tether's: ``app`` outside git (changed in place), ``web`` in
its own repository and ``mono/apps/web`` in a pnpm workspace (both on the run's branch; the
workspace's catalog and the package's manifest are two files). Packuments come from a
loopback registry on 127.0.0.1; ``npm`` and ``pnpm`` are stand-in programs first on PATH that
write what they were run on (the manifests they see) into ``installed.txt``, so the final
tree shows the install ran after the last manifest was written. The projects are built (git
init, add, commit) once per module and copied for each run; the uninterrupted run every
crashed one is compared with is made once per module too.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from builders import git, run_forked, start_forked, tree_digest
from fixtures.deps.kit import project, registry_file, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.owed import OWED_FILE
from tether.deps.steps import STEPS_FILE
from tether.state import crashpoint

BRANCH = "deps/minor-2025-06-01"
# What the stand-in install writes: its arguments, then each manifest of the folder it runs
# in as it sees it, byte for byte (the shell's own read and printf: the last line is written
# as it was, with or without its line break). A shell script without other programs: the
# crash sweep runs about 200 installs, and a Python stand-in cost an interpreter start (~20 ms
# of CPU) for each, a ``cat`` a process for each manifest.
INSTALLER = """\
#!/bin/sh
{
  printf 'argv: %s' "$*"
  for manifest in package.json pnpm-workspace.yaml; do
    if [ -f "$manifest" ]; then
      printf '\\n=== %s\\n' "$manifest"
      line=
      while IFS= read -r line; do printf '%s\\n' "$line"; done < "$manifest"
      printf '%s' "$line"
    fi
  done
} > installed.txt
"""


def _tools(monkeypatch: pytest.MonkeyPatch, tmp: Path) -> None:
    setup_cli(monkeypatch, tmp)
    folder = tmp / "bin"
    folder.mkdir()
    for name in ("npm", "pnpm"):
        script = folder / name
        script.write_text(INSTALLER)
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(monkeypatch, tmp_path)


def _committed(top: Path) -> None:
    (top / ".gitignore").write_text("installed.txt\n")
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "start")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three projects, built once for the module; ``world`` copies them."""
    base = tmp_path_factory.mktemp("built")
    project(
        base / "app",
        {
            "package.json": {"name": "app", "dependencies": {"alpha": "^1.0.0", "beta": "0.1.0"}},
            "package-lock.json": {},
        },
    )
    web = project(
        base / "web",
        {
            "package.json": {"name": "web", "dependencies": {"gamma": "^4.0.0"}},
            "package-lock.json": {},
        },
    )
    _committed(web)
    mono = project(
        base / "mono",
        {
            "package.json": {"name": "mono", "private": True},
            "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
            "pnpm-workspace.yaml": "packages:\n  - apps/*\ncatalog:\n  alpha: ^1.0.0\n",
            "apps/web/package.json": {
                "name": "mono-web",
                "dependencies": {"alpha": "catalog:", "gamma": "^4.0.0"},
            },
        },
    )
    _committed(mono)
    return base


def world(built: Path, base: Path) -> Path:
    """A copy of the three projects under ``base``, and the projects registry naming them."""
    shutil.copytree(built, base, symlinks=True)
    projects = {"app": base / "app", "web": base / "web", "mono-web": base / "mono/apps/web"}
    return registry_file(base / "projects.json", projects)


def apply(base: Path, server: LoopbackRegistry, crash: str | None = None) -> Any:
    args = ("deps", "apply", "--level", "minor", "--yes", "--json")
    where = ("--registry", str(base / "projects.json"), "--npm-registry", server.url)
    return run_forked(*args, *where, crash=crash, env={"XDG_STATE_HOME": str(base / "state")})


def trees(base: Path) -> dict[str, Any]:
    """What a person finds afterwards: every project file (git's folder aside) and branch."""
    found: dict[str, Any] = {}
    for name in ("app", "web", "mono"):
        files = tree_digest(base / name)
        found[name] = {k: v for k, v in files.items() if not k.startswith(".git/")}
    for name in ("web", "mono"):
        found[f"{name} branch"] = git(base / name, "branch", "--show-current").strip()
    return found


def leftovers(base: Path) -> list[str]:
    """Owed installs still recorded, temporary files, tether's folders in these projects."""
    state = base / "state" / "tether" / "runs"
    found = [str(p) for p in state.glob(f"*/{OWED_FILE}")]
    found += [str(p) for p in base.rglob("*.tether-tmp")]
    found += [str(p) for p in base.rglob(".tether") if "state" not in p.parts]
    return found


def _seen(record: bytes) -> dict[str, str]:
    """The stand-in install's record: its arguments (``argv``) and each manifest it saw."""
    argv, *manifests = record.decode().split("\n=== ")
    return {"argv": argv.removeprefix("argv: "), **dict(m.split("\n", 1) for m in manifests)}


def _steps_logged(path: Path) -> list[dict[str, Any]]:
    """The step records a run folder's log holds, one JSON object per line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, built: Path, server: LoopbackRegistry
) -> tuple[dict, list[str]]:
    """What an uninterrupted run leaves, and its crash points: made once for the module
    (with the stand-ins and settings of ``tools``, undone before the tests set their own)."""
    tmp = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as patch:
        _tools(patch, tmp)
        base = tmp / "reference"
        world(built, base)
        done = apply(base, server)
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert [p["name"] for p in doc["applied"]] == ["app", "web", "mono-web"]
        steps = _steps_logged(Path(doc["run_dir"]) / STEPS_FILE)
        assert leftovers(base) == []
        return trees(base), crashpoint.points(steps)


def test_crash_points_come_from_the_runs_steps(reference: tuple[dict, list[str]]) -> None:
    expected, points = reference
    assert {p.split(":")[0] for p in points} == {
        "project-locked",
        "project-isolated",
        "install-owed",
        "manifest-written",
        "install-finished",
        "install-settled",
        "project-released",
    }
    assert points.count("manifest-written:1") == 1 and "manifest-written:4" in points
    seen = _seen(expected["mono"]["installed.txt"])
    assert "alpha: ^1.2.3" in seen["pnpm-workspace.yaml"]  # the install saw the bumped catalog
    assert _seen(expected["app"]["installed.txt"])["argv"] == "install"
    assert expected["web branch"] == expected["mono branch"] == BRANCH


SHARDS = 3  # the crash points split so parallel workers share them; together: every point


@pytest.mark.parametrize("shard", range(SHARDS))
def test_a_rerun_after_a_crash_at_any_step_ends_like_an_uninterrupted_run(
    reference: tuple[dict, list[str]],
    tmp_path: Path,
    tools: None,
    built: Path,
    server: LoopbackRegistry,
    shard: int,
) -> None:
    expected, points = reference
    mine = points[shard::SHARDS]
    for n, point in enumerate(mine):
        base = tmp_path / f"crash{n}"
        world(built, base)
        crashed = apply(base, server, crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        rerun = apply(base, server)
        assert rerun.returncode == 0, (point, rerun.stdout, rerun.stderr)
        assert trees(base) == expected, point
        assert leftovers(base) == [], point


def test_kill_9_while_a_project_is_locked_leaves_no_lock_after_the_rerun(
    tmp_path: Path, tools: None, built: Path, server: LoopbackRegistry
) -> None:
    """A real SIGKILL while the run holds app's lock (held there by ``TETHER_PAUSE_AT``):
    the lock file it leaves in a folder tether does not manage is gone after the rerun, which
    also removes what an interrupted write left beside the manifest."""
    base = tmp_path / "killed"
    world(built, base)
    gate = tmp_path / "hold"
    gate.touch()
    held = start_forked(
        "deps", "apply", "--level", "minor", "--yes",
        "--registry", str(base / "projects.json"), "--npm-registry", server.url,
        env={
            "XDG_STATE_HOME": str(base / "state"),
            crashpoint.PAUSE_VAR: f"project-locked:1@{gate}",
        },
    )  # fmt: skip
    lock = base / "app" / ".tether" / "lock"
    deadline = time.monotonic() + 60
    while not lock.exists() and time.monotonic() < deadline and held.poll() is None:
        time.sleep(0.01)
    assert lock.exists(), "the run ended before it could be killed"
    held.kill()
    held.wait()
    gate.unlink()
    assert lock.exists()  # what kill -9 leaves
    stale = base / "app" / ".package.json.5eed1e55.tether-tmp"
    stale.write_text("half of a write")

    rerun = apply(base, server)
    assert rerun.returncode == 0, rerun.stderr
    assert not (base / "app" / ".tether").exists()
    assert not stale.exists()
    assert leftovers(base) == []
    bumped = json.loads((base / "app" / "package.json").read_text())["dependencies"]
    assert bumped == {"alpha": "^1.2.3", "beta": "0.3.1"}


def test_a_stale_lock_is_swept_even_when_nothing_is_left_to_apply(
    tmp_path: Path, tools: None, built: Path, server: LoopbackRegistry
) -> None:
    """Killed after app's work was done but before its lock went: the rerun has nothing to
    do there, and still takes the stale lock away. A lock another command left is not
    deps apply's to remove."""
    base = tmp_path / "late"
    world(built, base)
    crashed = apply(base, server, crash="install-settled:1")  # app's, its lock still held
    assert crashed.returncode == crashpoint.EXIT_CODE
    assert (base / "app" / ".tether" / "lock").exists()
    rerun = apply(base, server)
    assert rerun.returncode == 0, rerun.stderr
    assert not (base / "app" / ".tether").exists()

    other = base / "app" / ".tether" / "lock"
    other.parent.mkdir()
    left = '{"pid": 1, "started": "2025-01-01T00:00:00Z", "command": "init"}\n'
    other.write_text(left)
    again = apply(base, server)
    assert again.returncode == 0 and json.loads(again.stdout)["status"] == "nothing"
    assert other.read_text() == left
