"""The last unlocked or unchecked corners: file modes a release may set, region declarations
of the wrong shape, a writer that takes no lock, conflict records a reinstall would drop, and
tags that do not name a commit. Real folders, real git, the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from builders import (
    call,
    git,
    make_release,
    run_forked,
    run_tether,
    tree_digest,
    write_files,
)
from tether.errors import TetherError
from tether.model.manifest import parse_manifest

FILES = {"docs/guide.md": "one\ntwo\nthree\n", "bin/run.sh": "#!/bin/sh\necho hi\n"}


def native(files: dict[str, object], **extra: object) -> dict[str, object]:
    return {"schema_version": 1, "name": "kit", "version": "1.0.0", "files": files, **extra}


def installed(tmp_path: Path, v2_extra: dict[str, object] | None = None) -> Path:
    """Release 1.0.0 installed in ``proj``; 2.0.0 on the shelf with ``v2_extra`` in its
    manifest."""
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", FILES)
    make_release(shelf, "2.0.0", {**FILES, "docs/guide.md": "one\nTWO\nthree\n"}, extra=v2_extra)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


# --- file modes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        (0, "unreadable by its owner"),
        ("0000", "unreadable by its owner"),
        ("0200", "unreadable by its owner"),
        (0.0, "not an octal file mode"),
        (420.5, "not an octal file mode"),
        (True, "not an octal file mode"),
        (False, "not an octal file mode"),
        ("rw-r--r--", "not an octal file mode"),
        ("04755", "not an octal file mode"),
        ("0o1644", "not an octal file mode"),
        (0o1644, "out of range"),
        (-1, "out of range"),
        (None, "not an octal file mode"),
    ],
)
def test_manifest_refuses_modes_nobody_can_read_or_that_are_not_modes(mode, problem):
    doc = native({"run.sh": {"class": "owned", "mode": mode}})
    with pytest.raises(TetherError) as error:
        parse_manifest(doc, "kit/manifest.json")
    assert "kit/manifest.json" in str(error.value) and "files['run.sh']" in str(error.value)
    assert problem in str(error.value)


@pytest.mark.parametrize(
    ("mode", "value"),
    [("0644", 0o644), ("755", 0o755), ("0o600", 0o600), (0o644, 0o644), (0o400, 0o400)],
)
def test_manifest_accepts_octal_strings_and_integers_in_range(mode, value):
    doc = native({"run.sh": {"class": "owned", "mode": mode}})
    assert parse_manifest(doc, "m").modes == {"run.sh": value}


def test_update_refuses_a_release_whose_manifest_sets_mode_zero(tmp_path):
    project = installed(tmp_path)
    manifest = tmp_path / "releases/2.0.0/.tether/manifest.json"
    doc = json.loads(manifest.read_text())
    doc["files"]["docs/guide.md"] = {"class": "shared", "mode": 0}
    manifest.write_text(json.dumps(doc))
    before = tree_digest(project)
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "manifest.json" in line and "mode 0" in line and "unreadable" in line
    assert tree_digest(project) == before


def test_manifest_build_check_refuses_a_committed_manifest_with_a_bad_mode(tmp_path, capsys):
    upstream = tmp_path / "up"
    write_files(
        upstream,
        {
            "tether.toml": 'name = "kit"\nversion = "1.0.0"\ndefault_class = "shared"\n',
            "a.md": "a\n",
        },
    )
    assert call("manifest", "build", "-C", str(upstream)) == 0
    assert call("manifest", "build", "--check", "-C", str(upstream)) == 0
    manifest = upstream / ".tether/manifest.json"
    doc = json.loads(manifest.read_text())
    doc["files"]["a.md"] = {"class": "shared", "mode": 0.0}
    manifest.write_text(json.dumps(doc))
    capsys.readouterr()
    assert call("manifest", "build", "--check", "-C", str(upstream)) == 1
    err = capsys.readouterr().err
    assert str(manifest) in err and "mode 0.0 is not an octal file mode" in err


# --- region declarations of the wrong shape ------------------------------------------------


@pytest.mark.parametrize(
    ("regions", "kind"),
    [
        (
            {"id": "remit", "paths": ["docs/guide.md"], "startMarker": "<a>", "endMarker": "<b>"},
            "dict",
        ),
        (7, "int"),
        (True, "bool"),
    ],
)
def test_regions_that_are_not_a_list_are_reported_not_ignored(tmp_path, regions, kind):
    project = installed(tmp_path, {"regions": regions})
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["regions"]["malformed_declarations"] == [
        f"regions: expected a list, got {kind}; none loaded"
    ]


@pytest.mark.parametrize("regions", [None, "", []])
def test_absent_or_empty_regions_report_nothing(regions):
    manifest = parse_manifest(native({"a.md": "shared"}, regions=regions), "m")
    assert manifest.region_declarations() == []


# --- init takes the project lock -----------------------------------------------------------

HOLDER = """
import sys, time
from pathlib import Path
from tether.state.lock import ProjectLock
with ProjectLock(Path(sys.argv[1]), command="update"):
    print("locked", flush=True)
    time.sleep(60)
"""


@contextmanager
def lock_held(lock_path: Path) -> Iterator[int]:
    """A real second process holding the project lock (as a running update does)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_init_force_is_refused_while_another_run_holds_the_lock(tmp_path):
    project = installed(tmp_path)
    (project / "docs/guide.md").write_text("mine\n")
    before = tree_digest(project)
    with lock_held(project / ".tether/lock") as pid:
        result = run_tether(
            "init",
            "--force",
            "--source",
            str(tmp_path / "releases"),
            "--to",
            "2.0.0",
            "-C",
            str(project),
        )
        assert result.returncode == 1, result.stdout
        [line] = result.stderr.strip().splitlines()
        assert f"pid {pid}" in line
        after = tree_digest(project)
    after.pop(".tether/lock"), before.pop(".tether/lock")  # the holder's record in it
    assert after == before


def test_fresh_init_refused_by_the_lock_leaves_the_holders_folder(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", FILES)
    project = tmp_path / "proj"
    project.mkdir()
    with lock_held(project / ".tether/lock"):
        assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 1
        assert (project / ".tether/lock").is_file()
        assert sorted(p.name for p in project.iterdir()) == [".tether"]
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0


# --- a reinstall keeps open conflicts --------------------------------------------------------


def conflicted(tmp_path: Path) -> Path:
    """An update to 2.0.0 left conflict markers in docs/guide.md."""
    project = installed(tmp_path)
    (project / "docs/guide.md").write_text("one\nmine\nthree\n")
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(project))
    assert result.returncode == 4, result.stderr
    return project


def check_reasons(project: Path) -> tuple[int, list[str]]:
    result = run_tether("check", "--json", "-C", str(project))
    return result.returncode, json.loads(result.stdout)["reasons"]


def test_init_force_keeps_the_records_of_conflicts_still_open(tmp_path):
    project = conflicted(tmp_path)
    shelf = str(tmp_path / "releases")
    assert call("init", "--force", "--source", shelf, "--to", "2.0.0", "-C", str(project)) == 0
    assert "<<<<<<< ours" in (project / "docs/guide.md").read_text()
    assert check_reasons(project) == (3, ["unresolved-conflicts"])
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert [c["path"] for c in status["conflicts"]] == ["docs/guide.md"]

    (project / "docs/guide.md").write_text("one\nmine and TWO\nthree\n")  # resolved
    assert check_reasons(project) == (0, [])
    assert call("init", "--force", "--source", shelf, "--to", "2.0.0", "-C", str(project)) == 0
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["conflicts"] == {}  # a resolved conflict is not carried over


# --- tags that name no commit ---------------------------------------------------------------


@pytest.fixture(scope="module")
def released_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Releases 1.0.0 and 2.0.0 as commits, built once per module (``tagged_repo`` copies)."""
    from helpers_sources import commit_release, init_repo

    repo = init_repo(tmp_path_factory.mktemp("built") / "upstream")
    manifest = json.dumps({"schema_version": 1, "name": "kit", "files": {"a.md": "shared"}})
    for version, text in (("1.0.0", "one\n"), ("2.0.0", "two\n")):
        commit_release(repo, {"a.md": text, ".tether/manifest.json": manifest}, f"v{version}")
    return repo


def tagged_repo(tmp_path: Path, released: Path, kind: str) -> Path:
    """A copy of ``released``: releases 1.0.0 and 2.0.0 as commits; the newest tag, v3.0.0,
    names a blob or a tree (or an annotated tag of one)."""
    repo = shutil.copytree(released, tmp_path / "upstream", symlinks=True)
    if kind == "blob":
        blob = git(repo, "hash-object", "-w", "a.md").strip()
        git(repo, "tag", "v3.0.0", blob)
    elif kind == "tree":
        git(repo, "tag", "v3.0.0", "HEAD^{tree}")
    else:
        git(repo, "tag", "-a", "-m", "a tree", "v3.0.0", "HEAD^{tree}")
    return repo


@pytest.mark.parametrize(
    ("kind", "named"), [("blob", "blob"), ("tree", "tree"), ("annotated", "tree")]
)
def test_plain_update_skips_a_newest_tag_that_names_no_commit(tmp_path, released_repo, kind, named):
    repo = tagged_repo(tmp_path, released_repo, kind)
    project = tmp_path / "proj"
    assert call("init", "--source", str(repo), "--to", "1.0.0", "-C", str(project)) == 0
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["to_version"] == "2.0.0"
    assert (
        f"{repo}: tag v3.0.0 names a {named}, not a commit, so it is no release; skipped"
        in doc["notes"]
    )
    assert (project / "a.md").read_text() == "two\n"
    status = json.loads(run_tether("status", "--json", "--check-latest", "-C", str(project)).stdout)
    assert status["latest_version"] == "2.0.0"
    assert any("v3.0.0 names a" in note for note in status["notes"])
    # The source says it as a fact, worded in report/notes.py.
    from tether.model.source_notes import SourceNote, SourceSaid
    from tether.sources import open_source

    source = open_source(str(repo), tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "2.0.0"]
    said = SourceNote(SourceSaid.TAG_NOT_A_COMMIT, str(repo), "v3.0.0", kind=named)
    assert source.notes == [said]


def test_asking_for_a_tag_that_names_no_commit_is_one_line(tmp_path, released_repo):
    repo = tagged_repo(tmp_path, released_repo, "blob")
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(repo), "--to", "3.0.0", "-C", str(project))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "3.0.0" in line and "Traceback" not in result.stderr
    assert not project.exists()


# --- tether's own folders (covered for update/refresh/reapply in test_write_guard.py) -------


@pytest.mark.parametrize("folder", [".tether/backup", ".tether/merge"])
@pytest.mark.parametrize("shape", ["link", "file"])
def test_init_force_refuses_when_its_own_folder_is_a_link_or_a_file(tmp_path, folder, shape):
    project = installed(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    if shape == "link":
        (project / folder).symlink_to(outside, target_is_directory=True)
    else:
        (project / folder).write_text("not a folder\n")
    before = tree_digest(project)
    result = run_tether(
        "init",
        "--force",
        "--source",
        str(tmp_path / "releases"),
        "--to",
        "2.0.0",
        "-C",
        str(project),
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    problem = "is a symbolic link" if shape == "link" else "is not a folder"
    assert f"{project / folder}: {problem}" in line
    assert tree_digest(project) == before
    assert tree_digest(outside) == {"keep.txt": b"keep\n"}


# --- init makes its writes durable per phase, not per file ----------------------------------


def test_init_syncs_per_phase_not_per_file(tmp_path, monkeypatch):
    """Counted with the real calls wrapped (they still run): the speed itself is a benchmark
    row (bench/install.py), never a timed test."""
    import os

    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {f"f/{i:03d}.txt": f"file {i}\n" for i in range(300)})
    calls = {"fsync": 0, "sync": 0}
    real_fsync, real_sync = os.fsync, os.sync

    def counted_fsync(fd: int) -> None:
        calls["fsync"] += 1
        real_fsync(fd)

    def counted_sync() -> None:
        calls["sync"] += 1
        real_sync()

    monkeypatch.setattr(os, "fsync", counted_fsync)
    monkeypatch.setattr(os, "sync", counted_sync)
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(tmp_path / "proj")) == 0
    assert calls["fsync"] + calls["sync"] <= 12, calls  # pack, index, state: never per file
    assert len(list((tmp_path / "proj/f").iterdir())) == 300


# --- merges past the pure engine's bounds ----------------------------------------------------


def big_merge(tmp_path: Path) -> tuple[Path, bytes, bytes, bytes]:
    """A shared file past the pure line merge's bounds, changed on both sides apart."""
    from tether.engine.textmerge import PURE_MERGE_MAX_LINES

    lines = [f"line {i % 50}\n" for i in range(PURE_MERGE_MAX_LINES + 500)]
    base = "".join(lines)
    theirs = base.replace("line 7\n", "upstream 7\n", 1)
    ours = "".join(lines[:-10]) + "mine\n" + "".join(lines[-10:])
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"big.txt": base})
    make_release(shelf, "2.0.0", {"big.txt": theirs})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "big.txt").write_text(ours)
    return project, base.encode(), ours.encode(), theirs.encode()


def test_a_merge_past_the_bounds_gives_the_pure_engines_bytes(tmp_path):
    from tether.engine.textmerge import merge3

    project, base, ours, theirs = big_merge(tmp_path)
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["buckets"]["merged"] == ["big.txt"]
    expected = merge3(base, ours, theirs)
    assert expected.conflicts == 0
    assert (project / "big.txt").read_bytes() == expected.merged


def stand_in_git(tmp_path: Path, merge_file_exit: int | None) -> tuple[dict[str, str], Path]:
    """A stand-in ``git`` first on PATH: it records its argv, then runs the real git, except
    for ``merge-file`` when ``merge_file_exit`` is given (it fails with that status, as a
    git that cannot merge the file would)."""
    import os
    import shutil

    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "stand-in"
    folder.mkdir()
    log = tmp_path / "git-argv.log"
    fail = ""
    if merge_file_exit is not None:
        fail = 'if [ "$1" = merge-file ]; then echo "error: cannot merge" >&2; '
        fail += f"exit {merge_file_exit}; fi\n"
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n{fail}exec "{real}" "$@"\n')
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}, log


def update_with(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The update in a child process with ``env`` as its environment's changes."""
    return run_forked(
        "update", "--yes", "--json", "--conflict", "markers", "-C", str(project), env={**env}
    )


def test_a_merge_past_the_bounds_goes_to_git_merge_file(tmp_path):
    project, _base, _ours, _theirs = big_merge(tmp_path)
    env, log = stand_in_git(tmp_path, None)
    result = update_with(project, env)
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    assert [c for c in calls if c.startswith("merge-file")] == [
        next(c for c in calls if c.startswith("merge-file --diff3 -p -L ours -L base -L theirs"))
    ]


def test_a_merge_past_the_bounds_git_cannot_do_is_a_whole_file_conflict_with_a_note(tmp_path):
    project, base, ours, theirs = big_merge(tmp_path)
    env, _log = stand_in_git(tmp_path, 255)
    result = update_with(project, env)
    assert result.returncode == 4, result.stderr
    doc = json.loads(result.stdout)
    [entry] = doc["buckets"]["conflict"]
    assert (entry["path"], entry["decision"]) == ("big.txt", "markers")
    assert entry["reason"] == (
        "too large for tether's own line merge, and git merge-file failed: error: cannot merge: "
        "the whole file is one conflict"
    )
    assert (project / "big.txt").read_bytes() == (
        b"<<<<<<< ours\n"
        + ours
        + b"||||||| base\n"
        + base
        + b"=======\n"
        + theirs
        + b">>>>>>> theirs\n"
    )


def test_a_merge_whose_line_merge_would_pass_4x_its_size_is_a_whole_file_conflict():
    from tether.engine import textmerge
    from tether.flows.merging import merge_sides
    from tether.model.plan import MergeNote, MergeNoteCode
    from tether.report.reasons import merge_note

    per_side = textmerge.MERGE_MEMORY_FLOOR // textmerge.GIT_MERGE_BYTES_PER_LINE // 3 + 1000
    base = b"x\n" * per_side
    ours, theirs = b"mine\n" + base, base + b"upstream\n"
    assert not textmerge.within_memory_bounds(base, ours, theirs)
    result, note = merge_sides(base, ours, theirs)
    assert result.conflicts == 1
    assert result.merged == (
        b"<<<<<<< ours\n"
        + ours
        + b"||||||| base\n"
        + base
        + b"=======\n"
        + theirs
        + b">>>>>>> theirs\n"
    )
    assert note == MergeNote(MergeNoteCode.MEMORY_BOUND)
    assert merge_note(note) == (
        "too large for tether's own line merge, and a line merge would take more than 4x its "
        "size in memory: the whole file is one conflict"
    )
    settled, favored = merge_sides(base, ours, theirs, favor="theirs")
    assert (settled.merged, favored) == (
        theirs,
        MergeNote(MergeNoteCode.MEMORY_BOUND, favor="theirs"),
    )
    assert merge_note(favored).endswith(": the whole file is theirs")
    # Long lines hold the same estimate far under the bound: git merges those.
    wide = b"x" * 400 + b"\n"
    assert textmerge.within_memory_bounds(wide * per_side, wide * per_side, wide * per_side)
