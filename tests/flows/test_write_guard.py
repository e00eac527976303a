"""One path guard for every writer: nothing tether writes, restores or removes goes through a
folder that is a link leading out of the project, and tether's own folders (backups, merge
artifacts, cache, logs, journal and lock) must be plain folders.

Every test keeps a sentinel tree beside the project (``elsewhere/``) and proves, entry by
entry (kind, mode, bytes or link target), that it is exactly as it was after the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from builders import call, make_release, run_forked, run_tether, write_files
from reapply_builders import PLANNER, standard
from tests.update.test_update_regions import GEN, agent, regions_release
from tether.engine.regions import RegenSpec, RegionDecl
from tether.flows.apply import RunContext, execute_plan
from tether.flows.backups import prune_backups
from tether.flows.project import Project, open_project
from tether.flows.regen import NotRestored, Restore, run_regeneration
from tether.flows.safety import PathGuard, UnsafePath
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FileAction, Op, UpdatePlan
from tether.profiles import NATIVE
from tether.report.reasons import regen_document
from tether.state import crashpoint
from tether.state.journal import Journal

OUTSIDE_FILES = {
    "guide.md": "the outside guide\n",
    "a.md": "a2\n",  # the bytes an interrupted update wrote into the project's docs/a.md
    "new.md": "new\n",
    "notes.md": "outside notes\n",
    "20240101T000000Z-old/keep.txt": "an old folder that looks like a backup run\n",
    "secret.txt": "outside secret\n",
}


def fingerprint(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``root``: folders with their mode, files with mode and sha256,
    links with their target (never followed)."""
    found: dict[str, tuple[object, ...]] = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            rel = os.path.relpath(full, root)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                with open(full, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
                found[rel] = ("file", stat.S_IMODE(info.st_mode), digest)
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    root = tmp_path / "elsewhere"
    write_files(root, dict(OUTSIDE_FILES))
    return root


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tether: "), result.stderr
    return lines[0]


def link(path: Path, target: Path) -> None:
    """Replace whatever stands at ``path`` with a link to ``target``."""
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


V1 = {"docs/guide.md": "guide\n", "docs/a.md": "a1\n", "README.md": "readme\n"}
V2 = {"docs/guide.md": "guide v2\n", "docs/a.md": "a2\n", "docs/new.md": "new\n"}
V2 |= {"README.md": "readme v2\n"}


def shelf_with(tmp_path: Path, **kwargs: object) -> Path:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", V1, **kwargs)  # type: ignore[arg-type]
    make_release(shelf, "2.0.0", V2, **kwargs)  # type: ignore[arg-type]
    return shelf


def installed(tmp_path: Path) -> Path:
    shelf = shelf_with(tmp_path)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def init(shelf: Path, project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_tether("init", "--source", str(shelf), "--to", "1.0.0", *extra, "-C", str(project))


# --- the guard itself ---------------------------------------------------------------------


def test_guard_writes_and_makes_the_missing_folders(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    guard = PathGuard(root)
    guard.write("a/b/c.txt", b"one\n", mode=0o600)
    assert (root / "a/b/c.txt").read_bytes() == b"one\n"
    assert stat.S_IMODE(os.stat(root / "a/b/c.txt").st_mode) == 0o600
    guard.write("a/b/c.txt", b"two\n")  # an existing file keeps its mode
    assert stat.S_IMODE(os.stat(root / "a/b/c.txt").st_mode) == 0o600
    guard.write("a/d.txt", b"new\n", new_mode=0o640)
    assert stat.S_IMODE(os.stat(root / "a/d.txt").st_mode) == 0o640


def test_guard_refuses_a_folder_linked_out_and_creates_nothing(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    link(root / "docs", outside)
    before = fingerprint(outside)
    guard = PathGuard(root)
    with pytest.raises(UnsafePath) as raised:
        guard.write("docs/deep/guide.md", b"x\n")
    assert str(raised.value) == (
        f"{root / 'docs/deep/guide.md'}: docs is a link pointing outside the project"
    )
    with pytest.raises(UnsafePath):
        guard.remove("docs/guide.md")
    assert fingerprint(outside) == before


def test_guard_refuses_a_link_as_target_unless_told_to_replace_it(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    link(root / "secret.txt", outside / "secret.txt")
    before = fingerprint(outside)
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        PathGuard(root).write("secret.txt", b"mine\n")
    PathGuard(root).write("secret.txt", b"mine\n", replace_link=True)
    assert not (root / "secret.txt").is_symlink()
    assert (root / "secret.txt").read_bytes() == b"mine\n"
    link(root / "alias.txt", outside / "secret.txt")
    assert PathGuard(root).remove("alias.txt") is True  # the link goes, not its target
    assert not os.path.lexists(root / "alias.txt")
    assert fingerprint(outside) == before


def test_a_folder_that_turns_into_a_link_after_it_was_judged_missing_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    """The hole in ``mkdir(parents=True)``: judged missing, then made a link by someone else
    before the write. The guard makes each folder itself and judges again when one exists."""
    root = tmp_path / "proj"
    root.mkdir()
    guard = PathGuard(root)
    assert guard.problem("late/guide.md") is None  # missing: nothing in the way yet
    link(root / "late", outside)
    before = fingerprint(outside)
    with pytest.raises(UnsafePath, match="late is a link pointing outside the project"):
        guard.write("late/guide.md", b"x\n")
    assert fingerprint(outside) == before
    assert guard.problem("plain/guide.md") is None
    (root / "plain").mkdir()  # made by someone else meanwhile, a real folder: fine
    guard.write("plain/guide.md", b"x\n")
    assert (root / "plain/guide.md").read_bytes() == b"x\n"


# --- init and init --force --------------------------------------------------------------------


def test_init_refuses_a_folder_linked_out_of_the_project(tmp_path: Path, outside: Path) -> None:
    shelf = shelf_with(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()
    link(project / "docs", outside)
    before, before_project = fingerprint(outside), fingerprint(project)
    result = init(shelf, project)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "docs is a link pointing outside the project" in line, line
    assert fingerprint(outside) == before
    assert fingerprint(project) == before_project  # nothing installed, no .tether/


def test_init_refuses_a_sentinel_under_a_folder_linked_out(tmp_path: Path, outside: Path) -> None:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"README.md": "r\n"}, sentinels={"notes/CHANGELOG.md": "# l\n"})
    project = tmp_path / "proj"
    project.mkdir()
    link(project / "notes", outside)
    before, before_project = fingerprint(outside), fingerprint(project)
    result = init(shelf, project)
    assert result.returncode == 1
    assert "notes is a link pointing outside the project" in one_line_error(result)
    assert fingerprint(outside) == before and fingerprint(project) == before_project


def test_init_refuses_a_managed_file_that_is_a_link_out(tmp_path: Path, outside: Path) -> None:
    shelf = shelf_with(tmp_path)
    project = tmp_path / "proj"
    link(project / "docs/guide.md", outside / "guide.md")
    before = fingerprint(outside)
    result = init(shelf, project)
    assert result.returncode == 1
    assert "is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before


def test_init_force_refuses_a_folder_linked_out(tmp_path: Path, outside: Path) -> None:
    project = installed(tmp_path)
    link(project / "docs", outside)
    before, state = fingerprint(outside), (project / ".tether/state.json").read_bytes()
    result = init(tmp_path / "shelf", project, "--force")
    assert result.returncode == 1
    assert "docs is a link pointing outside the project" in one_line_error(result)
    assert fingerprint(outside) == before
    assert (project / ".tether/state.json").read_bytes() == state


@pytest.mark.parametrize("folder", [".tether", ".tether/cache"])
def test_init_refuses_when_its_own_folder_is_a_link(
    tmp_path: Path, outside: Path, folder: str
) -> None:
    shelf = shelf_with(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()
    link(project / folder, outside)
    before = fingerprint(outside)
    result = init(shelf, project)
    assert result.returncode == 1
    line = one_line_error(result)
    assert f"{project / folder}: is a symbolic link" in line, line
    assert fingerprint(outside) == before
    assert not (project / "docs").exists()


# --- update and its own folders ---------------------------------------------------------------


def update(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_tether("update", "--yes", "-C", str(project), *args)


@pytest.mark.parametrize("variant", ["folder", "file"])
def test_update_fails_the_file_behind_a_link_and_writes_nothing_outside(
    tmp_path: Path, outside: Path, variant: str
) -> None:
    project = installed(tmp_path)
    if variant == "folder":
        link(project / "docs", outside)
    else:
        link(project / "docs/guide.md", outside / "guide.md")
    before = fingerprint(outside)
    result = update(project, "--json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    failed = {f["path"]: f["reason"] for f in json.loads(result.stdout)["buckets"]["failed"]}
    expected = "outside the project" if variant == "folder" else "symbolic link"
    assert expected in failed["docs/guide.md"]
    assert fingerprint(outside) == before


@pytest.mark.parametrize("folder", [".tether/merge", ".tether/backup", ".tether/logs"])
def test_update_refuses_when_its_own_folder_is_a_link(
    tmp_path: Path, outside: Path, folder: str
) -> None:
    project = installed(tmp_path)
    (project / "docs/guide.md").write_text("my guide\n")  # a conflict: a patch in merge/
    link(project / folder, outside)
    before = fingerprint(outside)
    result = update(project, "--conflict", "patch")
    assert result.returncode == 1
    assert f"{project / folder}: is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before
    assert (project / "README.md").read_text() == "readme\n"  # nothing applied
    assert json.loads((project / ".tether/state.json").read_text())["version"] == "1.0.0"


def test_update_refuses_when_its_journal_is_a_link(tmp_path: Path, outside: Path) -> None:
    project = installed(tmp_path)
    link(project / ".tether/journal.jsonl", outside / "notes.md")
    before = fingerprint(outside)
    result = update(project)
    assert result.returncode == 1
    line = one_line_error(result)
    assert f"{project / '.tether/journal.jsonl'}: is a symbolic link" in line, line
    assert fingerprint(outside) == before


@pytest.mark.parametrize("folder", [".gaia-backup", ".gaia-merge", ".gaia/local"])
def test_gaia_update_refuses_when_its_own_folder_is_a_link(
    tmp_path: Path, outside: Path, folder: str
) -> None:
    shelf = tmp_path / "rel"
    for version, text in (("1.0.0", "v1\n"), ("2.0.0", "v2\n")):
        make_release(shelf, version, {"agents/auditor.md": text}, profile="gaia")
    project = tmp_path / "proj"
    init_args = ("init", "--profile", "gaia", "--source", str(shelf), "--to", "1.0.0")
    assert call(*init_args, "-C", str(project)) == 0
    (project / "agents/auditor.md").write_text("mine\n")  # a conflict: backup and patch
    if folder == ".gaia/local":
        (project / folder).rename(outside / "local")
        link(project / folder, outside / "local")
    else:
        link(project / folder, outside)
    before = fingerprint(outside)
    result = update(project)
    assert result.returncode == 1
    assert f"{project / folder}: is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before
    assert (project / "agents/auditor.md").read_text() == "mine\n"


def test_update_refuses_when_its_backup_folder_is_a_file(tmp_path: Path) -> None:
    project = installed(tmp_path)
    (project / ".tether/backup").write_text("not a folder\n")
    result = update(project)
    assert result.returncode == 1
    assert f"{project / '.tether/backup'}: is not a folder" in one_line_error(result)
    assert (project / "README.md").read_text() == "readme\n"


def test_status_refuses_when_the_cache_folder_is_a_link(tmp_path: Path, outside: Path) -> None:
    project = installed(tmp_path)
    link(project / ".tether/cache", outside)
    before = fingerprint(outside)
    result = run_tether("status", "-C", str(project))
    assert result.returncode == 1
    assert f"{project / '.tether/cache'}: is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before


def test_pruning_never_follows_a_link(tmp_path: Path, outside: Path) -> None:
    project = installed(tmp_path)
    backups = project / ".tether/backup"
    for n in range(8):
        write_files(backups / f"20240101T00000{n}Z-run", {"f.txt": "old\n"})
    link(backups / "20200101T000000Z-linked", outside)  # sorts first: the oldest "run"
    before = fingerprint(outside)
    prune_backups(open_project(project), keep=2)
    assert fingerprint(outside) == before
    left = sorted(p.name for p in backups.iterdir())
    assert left == ["20200101T000000Z-linked", "20240101T000006Z-run", "20240101T000007Z-run"]


def test_pruning_a_backup_root_that_is_a_link_deletes_nothing(
    tmp_path: Path, outside: Path
) -> None:
    project = installed(tmp_path)
    link(project / ".tether/backup", outside)
    before = fingerprint(outside)
    prune_backups(Project(project, NATIVE), keep=0)  # open_project would refuse it already
    assert fingerprint(outside) == before


def test_apply_refuses_a_planned_write_or_removal_through_a_linked_folder(
    tmp_path: Path, outside: Path
) -> None:
    """The executor guards every write itself: a plan made before the link appeared (or by
    a caller that forgot to check) still cannot reach outside."""
    project_dir = installed(tmp_path)
    link(project_dir / "docs", outside)
    before = fingerprint(outside)
    project = open_project(project_dir)
    actions = [
        FileAction("docs/new.md", FileClass.SHARED, Bucket.ADD, Op.WRITE, b"new\n", 0o644),
        FileAction("docs/guide.md", FileClass.SHARED, Bucket.UPDATE, Op.WRITE, b"v2\n", 0o644),
        FileAction("docs/a.md", FileClass.SHARED, Bucket.DELETED, Op.REMOVE),
        FileAction("README.md", FileClass.SHARED, Bucket.UPDATE, Op.WRITE, b"readme v2\n", 0o644),
    ]
    ctx = RunContext(project, Journal(project_dir / ".tether/journal.jsonl"), "run-1", "update")
    outcome = execute_plan(ctx, UpdatePlan("kit", "1.0.0", "2.0.0", actions))
    failed = {a.path: a.reason for a in outcome.failed}
    assert set(failed) == {"docs/new.md", "docs/guide.md", "docs/a.md"}
    assert all(r == "docs is a link pointing outside the project" for r in failed.values())
    assert (project_dir / "README.md").read_text() == "readme v2\n"  # the rest applied
    assert fingerprint(outside) == before


# --- refresh (gbrain) ---------------------------------------------------------------------------


def gbrain_host(tmp_path: Path) -> tuple[Path, Path]:
    rec = tmp_path / "recipe"
    manifest = {
        "recipe": "brain-sync",
        "gbrain_version": "0.4.0",
        "target_root_relative_to_host_repo": "tools/gbrain",
        "files": [
            {"src": "src/rules.md", "target": "tools/gbrain/rules.md", "mode": "0644"},
            {
                "src": "src/skills/triage.md",
                "target": "tools/gbrain/skills/triage.md",
                "mode": "0644",
            },
        ],
    }
    write_files(rec, {"src/rules.md": "rules\n", "src/skills/triage.md": "triage\n"})
    write_files(rec, {"install/manifest.json": json.dumps(manifest)})
    host = tmp_path / "host"
    host.mkdir()
    result = run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    assert result.returncode == 0, result.stderr
    write_files(rec, {"src/rules.md": "rules v2\n", "src/skills/triage.md": "triage v2\n"})
    return rec, host


def test_refresh_fails_the_files_behind_a_linked_folder(tmp_path: Path, outside: Path) -> None:
    _rec, host = gbrain_host(tmp_path)
    link(host / "tools/gbrain/skills", outside)
    before = fingerprint(outside)
    result = run_tether("refresh", "--yes", "--json", "-C", str(host))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    failed = {f["path"]: f["reason"] for f in json.loads(result.stdout)["buckets"]["failed"]}
    assert "outside the project" in failed["tools/gbrain/skills/triage.md"]
    assert fingerprint(outside) == before


def test_refresh_refuses_when_its_backup_folder_is_a_link(tmp_path: Path, outside: Path) -> None:
    _rec, host = gbrain_host(tmp_path)
    link(host / ".tether/gbrain/backup", outside)
    before = fingerprint(outside)
    result = run_tether("refresh", "--yes", "-C", str(host))
    assert result.returncode == 1
    assert f"{host / '.tether/gbrain/backup'}: is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before
    assert (host / "tools/gbrain/rules.md").read_text() == "rules\n"


# --- reapply --------------------------------------------------------------------------------------


def reapply(*argv: str) -> subprocess.CompletedProcess[str]:
    return run_tether("reapply", *argv)


def test_reapply_fails_the_file_behind_a_linked_folder(tmp_path: Path, outside: Path) -> None:
    gsd = standard(tmp_path)
    link(gsd.target / "agents", outside)
    before = fingerprint(outside)
    result = reapply(
        "--patches", str(gsd.patches), "-C", str(gsd.target),
        "--pristine", str(gsd.pristine), "--json",
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    results = {r["file"]: r for r in json.loads(result.stdout)["results"]}
    assert results[PLANNER]["status"] == "failed"
    assert "agents is a link pointing outside the project" in results[PLANNER]["reason"]
    assert fingerprint(outside) == before


@pytest.mark.parametrize("folder", ["tether-reapply-backup", ".tether"])
def test_reapply_refuses_when_its_own_folder_is_a_link(
    tmp_path: Path, outside: Path, folder: str
) -> None:
    gsd = standard(tmp_path)
    link(gsd.target / folder, outside)
    before, planner = fingerprint(outside), gsd.read(PLANNER)
    result = reapply(
        "--patches", str(gsd.patches), "-C", str(gsd.target),
        "--pristine", str(gsd.pristine), "--conflict", "patch",
    )  # fmt: skip
    assert result.returncode == 1
    assert f"{gsd.target / folder}: is a symbolic link" in one_line_error(result)
    assert fingerprint(outside) == before
    assert gsd.read(PLANNER) == planner


# --- update --abandon -------------------------------------------------------------------------


def test_abandon_refuses_to_restore_through_a_folder_that_became_a_link(
    tmp_path: Path, outside: Path
) -> None:
    project = installed(tmp_path)
    crashed = run_forked("update", "--yes", "-C", str(project), crash="file-written:3")
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    assert (project / "docs/a.md").read_text() == "a2\n"  # written by the interrupted run
    # The folder the run wrote into is now a link to a folder holding the same bytes.
    (project / "docs").rename(tmp_path / "docs-moved")
    link(project / "docs", outside)
    before = fingerprint(outside)
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 1
    line = one_line_error(result)
    assert "docs is a link pointing outside the project" in line and "nothing was" in line, line
    assert fingerprint(outside) == before
    # Still unfinished: once the link is gone, the abandon goes through.
    (project / "docs").unlink()
    (tmp_path / "docs-moved").rename(project / "docs")
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert (project / "docs/a.md").read_text() == "a1\n"


# --- regeneration restore -------------------------------------------------------------------


def regen_project(tmp_path: Path, body: str) -> Path:
    root = tmp_path / "project"
    write_files(
        root,
        {
            "scripts/gen.sh": "set -eu\n" + body,
            "out.md": "old region\n",
            "keep.txt": "adopter notes\n",
            "docs/notes.md": "the project's notes\n",
            "gen/out.md": "old generated\n",
        },
    )
    return root


def regen(root: Path, outside: Path, paths: tuple[str, ...] = ("out.md",)):  # type: ignore[no-untyped-def]
    decl = RegionDecl(
        "gen", "# s", "# e", paths, RegenSpec("bash", "scripts/gen.sh", (str(outside),))
    )
    return run_regeneration(root, decl, {"scripts/gen.sh", *paths})


def test_regeneration_restore_does_not_write_through_a_folder_made_a_link(
    tmp_path: Path, outside: Path
) -> None:
    root = regen_project(tmp_path, 'echo regenerated > out.md\nrm -rf docs\nln -s "$1" docs\n')
    before = fingerprint(outside)
    outcome = regen(root, outside)
    assert outcome.status == "regenerated"
    assert fingerprint(outside) == before  # notes.md out there is not the project's copy
    assert "docs/notes.md" not in outcome.reverted_paths
    assert outcome.unrestored_paths == ("docs/notes.md",)
    assert outcome.unrestored == (
        NotRestored("docs/notes.md", Restore.UNSAFE, "docs is a link pointing outside the project"),
    )
    assert outcome.new_outside_paths == ("docs",)  # the link itself is reported, and kept
    assert regen_document(outcome)["unrestored_reasons"] == {
        "docs/notes.md": "docs is a link pointing outside the project; not written through it"
    }


def test_failed_regeneration_does_not_restore_a_declared_path_through_a_link(
    tmp_path: Path, outside: Path
) -> None:
    root = regen_project(tmp_path, 'echo half > gen/out.md\nrm -rf gen\nln -s "$1" gen\nexit 1\n')
    write_files(outside, {"out.md": "outside out\n"})
    before = fingerprint(outside)
    outcome = regen(root, outside, ("gen/out.md",))
    assert outcome.status == "failed"
    assert fingerprint(outside) == before
    assert outcome.unrestored_paths == ("gen/out.md",)
    assert "gen/out.md" not in outcome.reverted_paths


def test_regeneration_restore_replaces_a_file_made_a_link_without_following_it(
    tmp_path: Path, outside: Path
) -> None:
    root = regen_project(tmp_path, 'echo x > out.md\nrm keep.txt\nln -s "$1/secret.txt" keep.txt\n')
    before = fingerprint(outside)
    outcome = regen(root, outside)
    assert fingerprint(outside) == before
    assert "keep.txt" in outcome.reverted_paths
    assert not (root / "keep.txt").is_symlink()
    assert (root / "keep.txt").read_text() == "adopter notes\n"


def test_update_reports_files_its_regeneration_could_not_put_back(
    tmp_path: Path, outside: Path
) -> None:
    """The regeneration program shipped with 2.0.0 replaces the project's docs/ folder with a
    link to a folder outside; the update puts nothing back through it and says so."""
    shelf = tmp_path / "rel"
    intro = agent("# Reviewer\n", "default remit\n")
    regions_release(shelf, "1.0.0", intro)
    regions_release(shelf, "2.0.0", agent("# Reviewer v2\n", "default remit\n"))
    sabotage = GEN + f"rm -rf docs\nln -s {outside} docs\n"
    (shelf / "2.0.0/scripts/gen.sh").write_text(sabotage)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    write_files(project, {"docs/notes.md": "the project's notes\n"})
    before = fingerprint(outside)
    result = update(project)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert fingerprint(outside) == before
    assert "Not put back after regeneration" in result.stdout, result.stdout
    assert (
        "docs/notes.md: docs is a link pointing outside the project; not written through it"
        in result.stdout
    )


@pytest.mark.parametrize("rel", ["../victim.txt", "/tmp/victim.txt", "a/./b.txt", ""])
def test_guard_refuses_a_path_that_is_not_a_plain_relative_one(tmp_path: Path, rel: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    before = fingerprint(tmp_path)
    with pytest.raises(UnsafePath):
        PathGuard(root).write(rel, b"x\n")
    with pytest.raises(UnsafePath):
        PathGuard(root).remove(rel)
    assert fingerprint(tmp_path) == before


def test_dependency_edits_are_not_written_through_a_linked_folder(
    tmp_path: Path, outside: Path
) -> None:
    from tether.deps.edit import write as write_edits

    root = tmp_path / "proj"
    write_files(root, {"package.json": "{}\n"})
    write_files(outside, {"package.json": '{"name": "outside"}\n'})
    link(root / "web", outside)
    before = fingerprint(outside)
    with pytest.raises(UnsafePath, match="web is a link pointing outside the project"):
        write_edits(root, {"web/package.json": b'{"version": "2"}\n'})
    assert fingerprint(outside) == before
