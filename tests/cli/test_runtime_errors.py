"""Damaged records, tether's own paths of the wrong kind, and files tether may not read or
write give the documented one-line error and exit code: no traceback, nothing written.

The permission cases need a user the kernel holds to file modes. Run as root, the tether
process (a child forked from the test's) drops to uid/gid 65534 and the project lies in a
folder that user can enter; run as any other user, they run as that user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import call, in_forked_child, make_release, run_tether, tree_digest
from helpers_sources import file_entry, write_tar
from tether.cli.main import main as tether_main

DEEP = "[" * 100_000 + "]" * 100_000
NOBODY = 65534
# Created by every writing run and left on disk by design (see state/lock.py); status
# refreshes the stat cache. Neither is a project file or one of tether's records.
RUNTIME_LEFTOVERS = (".tether/lock", ".tether/cache/")


def project_files(root: Path) -> dict[str, bytes]:
    return {
        rel: data
        for rel, data in tree_digest(root).items()
        if not rel.startswith(RUNTIME_LEFTOVERS)
    }


def installed(parent: Path) -> Path:
    """acme-kit 1.0.0 installed, 2.0.0 on the shelf; three files, one in a subfolder."""
    shelf = parent / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\n", "d/b.txt": "b\n", "e.txt": "e\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a2\n", "d/b.txt": "b2\n", "e.txt": "e2\n"})
    project = parent / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tether: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


# -------------------------------------------------------------- records nested too deeply


@pytest.mark.parametrize("command", [["status", "-C"], ["check", "-C"], ["update", "--yes", "-C"]])
def test_a_deeply_nested_state_file_is_one_line(tmp_path: Path, command: list[str]) -> None:
    project = installed(tmp_path)
    (project / ".tether/state.json").write_text(DEEP)
    before = project_files(project)
    result = run_tether(*command, str(project))
    one_line_error(result, "state.json", "state file does not parse (nested too deeply)")
    assert project_files(project) == before


@pytest.mark.parametrize("command", [["status", "-C"], ["update", "--yes", "-C"]])
def test_a_deeply_nested_journal_line_is_one_line(tmp_path: Path, command: list[str]) -> None:
    project = installed(tmp_path)
    (project / ".tether/journal.jsonl").write_text('{"run": ' + DEEP + "}\n")
    before = project_files(project)
    one_line_error(run_tether(*command, str(project)), "journal.jsonl: line 1 is damaged")
    assert project_files(project) == before


@pytest.mark.parametrize("payload", [DEEP, "[" * 150 + "]" * 150])
def test_a_deeply_nested_registry_is_one_line(tmp_path: Path, payload: str) -> None:
    registry = tmp_path / "projects.json"
    registry.write_text('{"version": 2, "projects": {}, "extra": ' + payload + "}")
    before = registry.read_bytes()
    result = run_tether("projects", "list", "--registry", str(registry))
    one_line_error(result, "registry file is not valid JSON", str(registry))
    assert registry.read_bytes() == before


@pytest.mark.parametrize("payload", [DEEP, "[" * 150 + "]" * 150])
def test_a_deeply_nested_tether_toml_is_one_line(tmp_path: Path, payload: str) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "tether.toml").write_text(f'name = "kit"\nextra = {payload}\n')
    result = run_tether("manifest", "build", "-C", str(tmp_path))
    one_line_error(result, "tether.toml: not valid TOML (nested")
    assert not (tmp_path / ".tether").exists()


@pytest.mark.parametrize("payload", [DEEP, "[" * 150 + "]" * 150])
def test_a_deeply_nested_release_manifest_is_one_line(tmp_path: Path, payload: str) -> None:
    project = installed(tmp_path)
    manifest = tmp_path / "rel/2.0.0/.tether/manifest.json"
    document = manifest.read_text().rstrip().removesuffix("}")
    manifest.write_text(document + ', "notes": ' + payload + "}\n")
    before = project_files(project)
    result = run_tether("update", "--yes", "-C", str(project))
    one_line_error(result, "manifest is not valid JSON (nested")
    assert project_files(project) == before


# ------------------------------------------------------- tether's own paths, wrong kind


def _folder(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.mkdir()


def _file(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.write_text("not tether's\n")


def _link(path: Path) -> None:
    """A link to a folder outside the project (which must stay empty)."""
    shutil.rmtree(path, ignore_errors=True)
    outside = path.parents[2] / "outside"
    outside.mkdir()
    path.symlink_to(outside, target_is_directory=True)


WRONG_KINDS = [
    (".tether/journal.jsonl", _folder, "a folder stands where tether keeps its journal"),
    (".tether/lock", _folder, "a folder stands where tether keeps its lock file"),
    (".tether/backup", _file, "is not a folder; tether keeps its own files there"),
    (".tether/merge", _file, "is not a folder; tether keeps its own files there"),
    (".tether/cache", _file, "is not a folder; tether keeps its own files there"),
    (".tether/backup", _link, "is a symbolic link; tether keeps its own files only in plain"),
]


@pytest.mark.parametrize(
    ("rel", "make", "message"), WRONG_KINDS, ids=[f"{w[0]}-{w[1].__name__}" for w in WRONG_KINDS]
)
def test_a_runtime_path_of_the_wrong_kind_stops_update_first(
    tmp_path: Path, rel: str, make: object, message: str
) -> None:
    project = installed(tmp_path)
    (project / "a.txt").write_text("mine\n")  # a backup and a conflict would be written
    assert callable(make)
    make(project / rel)
    before = project_files(project)
    result = run_tether("update", "--yes", "-C", str(project))
    one_line_error(result, str(project / rel), message)
    assert project_files(project) == before
    assert not (tmp_path / "outside").exists() or not any((tmp_path / "outside").iterdir())


def test_status_names_a_journal_that_is_a_folder(tmp_path: Path) -> None:
    project = installed(tmp_path)
    _folder(project / ".tether/journal.jsonl")
    one_line_error(
        run_tether("status", "-C", str(project)), "is a folder, not tether's journal file"
    )


# ---------------------------------------------------------- as a user the modes apply to


@dataclass(frozen=True)
class Setup:
    """A folder the unprivileged user can enter, and the environment tether runs with there."""

    folder: Path
    env: dict[str, str | None]


@pytest.fixture
def unprivileged() -> Iterator[Setup]:
    """A folder the unprivileged user can enter and tether's environment there. Everything
    made under the folder is handed to that user by ``give_away`` (a no-op when the tests
    do not run as root); ``run_as`` runs tether as that user."""
    folder = Path(tempfile.mkdtemp(prefix="tether-unprivileged-"))
    folder.chmod(0o755)
    env: dict[str, str | None] = {
        "HOME": str(folder),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_CACHE_HOME": str(folder / "cache"),
    }
    try:
        yield Setup(folder, env)
    finally:
        for dirpath, dirnames, _ in os.walk(folder):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(folder)


def give_away(root: Path) -> None:
    """Hand ``root`` and everything in it to the unprivileged user (when we are root)."""
    if os.geteuid() != 0:
        return
    for dirpath, _, filenames in os.walk(root):
        os.chown(dirpath, NOBODY, NOBODY)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)


def run_as(setup: Setup, *args: str) -> subprocess.CompletedProcess[str]:
    """tether in a child forked from this process that, when this one is root, first drops to
    the unprivileged user (uid and gid 65534, no supplementary groups) as ``setpriv`` would:
    from then on the kernel holds it to file modes."""

    def as_the_user() -> int:
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        return tether_main(list(args))

    return in_forked_child(as_the_user, cwd=setup.folder, env=setup.env)


@pytest.fixture
def restricted(unprivileged: Setup) -> tuple[Setup, Path]:
    """An installed project that belongs to the unprivileged user."""
    project = installed(unprivileged.folder)
    give_away(project)
    return unprivileged, project


@pytest.mark.parametrize("command", ["status", "check"])
@pytest.mark.parametrize(("path", "rel"), [("a.txt", "a.txt"), ("d", "d/b.txt")])
def test_an_unreadable_managed_file_stops_status_with_one_line(
    restricted: tuple[Setup, Path], command: str, path: str, rel: str
) -> None:
    setup, project = restricted
    (project / path).chmod(0)
    before = project_files(project)
    one_line_error(
        run_as(setup, command, "-C", str(project)), f"{rel}: cannot read (Permission denied)"
    )
    assert project_files(project) == before


@pytest.mark.parametrize(("path", "rel"), [("a.txt", "a.txt"), ("d", "d/b.txt")])
def test_an_unreadable_managed_file_fails_alone_in_an_update(
    restricted: tuple[Setup, Path], path: str, rel: str
) -> None:
    """Per-file problems are data in an update: the other files are updated."""
    setup, project = restricted
    (project / path).chmod(0)
    result = run_as(setup, "update", "--yes", "--json", "-C", str(project))
    assert "Traceback" not in result.stderr and result.stderr == ""
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["buckets"]["failed"] == [{"path": rel, "reason": "cannot read (Permission denied)"}]
    assert (project / "e.txt").read_text() == "e2\n"
    (project / path).chmod(0o755 if path == "d" else 0o644)
    assert (project / rel).read_text() == rel.split("/")[-1][0] + "\n"  # untouched


def test_an_unreadable_release_file_is_one_line(restricted: tuple[Setup, Path]) -> None:
    setup, project = restricted
    release_file = setup.folder / "rel/2.0.0/a.txt"
    release_file.chmod(0)
    before = project_files(project)
    result = run_as(setup, "update", "--yes", "-C", str(project))
    one_line_error(result, "release 2.0.0", "a.txt: cannot read (Permission denied)")
    assert project_files(project) == before


def test_init_from_a_release_with_an_unreadable_file_is_one_line(unprivileged: Setup) -> None:
    folder = unprivileged.folder
    make_release(folder / "rel", "1.0.0", {"a.txt": "a\n", "d/b.txt": "b\n"})
    (folder / "rel/1.0.0/a.txt").chmod(0)
    target = folder / "proj"
    target.mkdir()
    give_away(target)
    result = run_as(
        unprivileged, "init", "--source", str(folder / "rel"), "--to", "1.0.0", "-C", str(target)
    )
    one_line_error(result, "release 1.0.0", "a.txt: cannot read (Permission denied)")
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("lock_exists", [False, True])
def test_a_read_only_state_folder_is_one_line(
    restricted: tuple[Setup, Path], lock_exists: bool
) -> None:
    setup, project = restricted
    if lock_exists:
        (project / ".tether/lock").write_bytes(b"")
        give_away(project)
    else:
        (project / ".tether/lock").unlink(missing_ok=True)  # init leaves one, as update does
    (project / ".tether").chmod(0o555)
    before = tree_digest(project)
    result = run_as(setup, "update", "--yes", "-C", str(project))
    if lock_exists:
        one_line_error(result, str(project / ".tether"), "cannot write in this folder")
    else:
        one_line_error(result, "cannot lock", "Permission denied")
    assert tree_digest(project) == before


def test_an_unwritable_cache_folder(restricted: tuple[Setup, Path]) -> None:
    """Read-only commands do without saving the stat cache; a writing run refuses first."""
    setup, project = restricted
    (project / "a.txt").write_text("a changed here\n")
    cache = project / ".tether/cache"
    cache.mkdir(exist_ok=True)
    give_away(project)
    cache.chmod(0o555)
    before, cached = project_files(project), tree_digest(cache)
    status = run_as(setup, "status", "--json", "-C", str(project))
    assert status.returncode == 0 and status.stderr == ""
    assert json.loads(status.stdout)["modified"] == ["a.txt"]
    result = run_as(setup, "update", "--yes", "-C", str(project))
    one_line_error(result, str(cache), "cannot write in this folder (permission denied)")
    assert project_files(project) == before
    assert tree_digest(cache) == cached


def test_an_unwritable_release_cache_is_one_line(unprivileged: Setup) -> None:
    folder = unprivileged.folder
    for version, text in (("1.0.0", "a\n"), ("2.0.0", "a2\n")):
        manifest = {
            "schema_version": 1,
            "name": "kit",
            "version": version,
            "files": {"a.txt": "shared"},
        }
        entries = [
            file_entry("a.txt", text),
            file_entry(".tether/manifest.json", json.dumps(manifest)),
        ]
        write_tar(folder / "dist" / f"kit-{version}.tar", entries)
    project = folder / "proj"
    spec = str(folder / "dist" / "kit-{version}.tar")
    assert call("init", "--source", spec, "--to", "1.0.0", "-C", str(project)) == 0
    shutil.rmtree(project / ".tether/cache/releases", ignore_errors=True)
    give_away(project)
    (project / ".tether/cache").chmod(0o555)
    before = tree_digest(project)
    result = run_as(unprivileged, "update", "--dry-run", "-C", str(project))
    one_line_error(result, "cannot store release 2.0.0 there (Permission denied)")
    assert tree_digest(project) == before
