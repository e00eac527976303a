"""Records tether did not write in this run (a committed state file, a release's manifest, a
journal) can never make it read, write or delete outside the project, claim tether's own
records, or write into ``.git``. Each hostile record ends the command with exit 1 and one
line naming the file and the record; a tree of sentinel files beside the project is checked
byte for byte before and after."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import call, git, make_release, run_forked, write_files
from reapply_builders import PLANNER, PLANNER_OURS, PLANNER_V1, PLANNER_V2, make_gsd
from tether.pathrules import project_path_problem
from tether.profiles import get_profile
from tether.state import crashpoint
from tether.state.journal import new_run_id

V1 = {"a.txt": "a1\n", "b.txt": "b1\n", "gone.txt": "gone\n"}
V2 = {"a.txt": "a2\n", "b.txt": "b1\n"}
SECRET = b"secret beside the project\n"
HOOK = "#!/bin/sh\necho pwned > /tmp/pwned\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def outside_tree(tmp_path: Path, project: Path) -> dict[str, str]:
    """Every folder, file and link under ``tmp_path`` except the project: what must not move."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != project]
        for name in dirnames + filenames:
            path = here / name
            rel = path.relative_to(tmp_path).as_posix()
            if path.is_symlink():
                found[rel] = "link to " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "folder"
            else:
                found[rel] = sha(path.read_bytes())
    return found


def project_tree(project: Path) -> dict[str, bytes]:
    """The project's files, tether's lock aside (a run creates and removes it)."""
    found: dict[str, bytes] = {}
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).as_posix()
        runtime = rel.startswith(".git/") or rel in (".tether/lock", ".gaia/local/tether/lock")
        if path.is_file() and not path.is_symlink() and not runtime:
            found[rel] = path.read_bytes()
    return found


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("tether: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """(tmp_path, project): a project with release 1.0.0 installed, 1.1.0 on the shelf, and
    sentinel files beside it (a victim file and a folder of secrets)."""
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", V1)
    make_release(shelf, "1.1.0", V2)
    write_files(tmp_path, {"victim.txt": SECRET, "outside/secret.txt": SECRET})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return tmp_path, project


def edit_state(project: Path, change: Callable[[dict[str, object]], None]) -> None:
    path = project / ".tether/state.json"
    state = json.loads(path.read_text())
    change(state)
    path.write_text(json.dumps(state))


# --- the rule itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [".git/hooks/pre-commit", ".GIT/config", "a/.Git/x", ".git", ".git./x", ".git /x",
     "GIT~1/config", ".g\u200cit/config", "\ufeff.git/config"],
)  # fmt: skip
def test_every_spelling_of_git_s_folder_is_refused(path: str) -> None:
    assert project_path_problem(path) == "path lies in git's own folder (.git)"


@pytest.mark.parametrize(
    "path", [".gitignore", ".github/workflows/ci.yml", ".gitattributes", "digit.txt", "a.git/x"]
)
def test_names_that_merely_start_with_git_are_project_files(path: str) -> None:
    assert project_path_problem(path) is None


@pytest.mark.parametrize(
    ("profile", "reserved", "free"),
    [
        pytest.param(
            "native",
            [".tether/state.json", ".Tether/journal.jsonl", ".tether/backup/r/a", ".tether"],
            [".tetherrc", "docs/.tether/x", ".gbrain-source.json", ".gaia-backup/x"],
            id="native",
        ),
        pytest.param(
            "gaia",
            [".gaia/local/tether/state.json", ".gaia-backup/r/a", ".gaia-merge/a.patch",
             ".gaia/local/cache/shared/update-gaia/x", ".tether/x"],
            [".gaia/VERSION", ".gaia/manifest.json", ".gitignore", ".gaia/local/notes.md",
             ".gaia-backups/x"],
            id="gaia",
        ),
        pytest.param(
            "gbrain",
            [".gbrain-source.json", ".GBRAIN-SOURCE.JSON", ".tether/gbrain/state.json"],
            ["install/manifest.json", "tools/gbrain/a.md"],
            id="gbrain",
        ),
    ],
)  # fmt: skip
def test_each_profile_reserves_its_own_paths_and_no_more(
    profile: str, reserved: list[str], free: list[str]
) -> None:
    paths = get_profile(profile).reserved_paths()
    assert all(paths.problem(p) for p in reserved), [p for p in reserved if not paths.problem(p)]
    assert [p for p in free if paths.problem(p)] == []


# --- hostile state records × commands ------------------------------------------------------

HOSTILE_PATHS = [
    pytest.param("../victim.txt", "path contains '..'", id="dotdot"),
    pytest.param("{tmp}/victim.txt", "path is absolute", id="absolute"),
    pytest.param("a\x00b.txt", "NUL byte", id="nul"),
    pytest.param("C:/victim.txt", "path is absolute", id="drive-letter"),
    pytest.param("..\\victim.txt", "backslash", id="backslash"),
    pytest.param(".git/hooks/pre-commit", "git's own folder", id="git-hook"),
    pytest.param(".GIT/config", "git's own folder", id="git-upper-case"),
    pytest.param(".tether/journal.jsonl", "reserved for tether's own records", id="journal"),
    pytest.param(".tether/state.json", "reserved for tether's own records", id="state"),
]

STATE_COMMANDS = [
    pytest.param(("status",), id="status"),
    pytest.param(("check",), id="check"),
    pytest.param(("diff",), id="diff"),
    pytest.param(("update", "--yes"), id="update"),
    pytest.param(("update", "--yes", "--delete-removed"), id="update-delete-removed"),
]


@pytest.mark.parametrize("command", STATE_COMMANDS)
@pytest.mark.parametrize(("hostile", "problem"), HOSTILE_PATHS)
def test_a_hostile_file_record_stops_every_command_before_it_touches_anything(
    world: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    hostile: str,
    problem: str,
    command: tuple[str, ...],
) -> None:
    tmp_path, project = world
    path = hostile.format(tmp=tmp_path)
    # The victim's own hash: to tether the file would look unchanged, so removable.
    record = {"class": "shared", "sha256": sha(SECRET), "mode": "0o644"}
    edit_state(project, lambda state: state["files"].update({path: record}))  # type: ignore[attr-defined]
    outside, inside = outside_tree(tmp_path, project), project_tree(project)
    capsys.readouterr()
    assert call(*command, "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert ".tether/state.json: file record " + repr(path) in line
    assert problem in line
    assert outside_tree(tmp_path, project) == outside
    assert project_tree(project) == inside
    assert (tmp_path / "victim.txt").read_bytes() == SECRET


def test_abandon_reads_no_state_and_touches_nothing_beside_a_hostile_one(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``update --abandon`` replays the journal only; with no interrupted run it says so."""
    tmp_path, project = world
    record = {"class": "shared", "sha256": sha(SECRET), "mode": "0o644"}
    edit_state(project, lambda state: state["files"].update({"../victim.txt": record}))  # type: ignore[attr-defined]
    outside = outside_tree(tmp_path, project)
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 1
    assert "no interrupted update to abandon" in one_line_error(capsys.readouterr().err)
    assert outside_tree(tmp_path, project) == outside


def _conflict(path: str, artifact: str) -> Callable[[dict[str, object]], None]:
    def change(state: dict[str, object]) -> None:
        state["conflicts"] = {path: {"style": "patch", "artifact": artifact, "version": "1.0.0"}}

    return change


@pytest.mark.parametrize(
    ("change", "named"),
    [
        pytest.param(
            lambda s: s.update(sentinels=["{tmp}/victim.txt"]), "sentinel '{tmp}/victim.txt'"
        ),
        pytest.param(lambda s: s.update(held=["../victim.txt"]), "held path '../victim.txt'"),
        pytest.param(
            lambda s: s.update(customised_at_install=[".git/config"]),
            "customised path '.git/config'",
        ),
        pytest.param(
            _conflict("../victim.txt", ".tether/merge/x.patch"), "conflict record '../victim.txt'"
        ),
        pytest.param(
            _conflict("a.txt", "../victim.txt"),
            "conflict record 'a.txt': artifact '../victim.txt'",
            id="artifact-outside",
        ),
        pytest.param(
            _conflict("a.txt", ".tether/state.json"),
            "conflict record 'a.txt': artifact '.tether/state.json': a conflict artifact is "
            "the file itself or lies in .tether/merge/",
            id="artifact-not-in-merge-folder",
        ),
    ],
)
def test_every_path_a_state_file_names_is_checked(
    world: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, object]], None],
    named: str,
) -> None:
    tmp_path, project = world

    def hostile(state: dict[str, object]) -> None:
        change(state)
        for key in ("sentinels",):
            state[key] = [str(p).format(tmp=tmp_path) for p in state[key]]  # type: ignore[attr-defined]

    edit_state(project, hostile)
    outside = outside_tree(tmp_path, project)
    for command in (("status",), ("update", "--yes")):
        capsys.readouterr()
        assert call(*command, "-C", str(project)) == 1
        assert named.format(tmp=tmp_path) in one_line_error(capsys.readouterr().err)
    assert outside_tree(tmp_path, project) == outside


@pytest.mark.parametrize("command", ["status", "check"])
def test_an_absolute_record_is_never_read(world: tuple[Path, Path], command: str) -> None:
    """A FIFO outside the project: reading it would wait forever, so the bounded run
    proves the record was refused before any read."""
    tmp_path, project = world
    fifo = tmp_path / "outside" / "pipe"
    os.mkfifo(fifo)
    record = {"class": "shared", "sha256": sha(SECRET), "mode": "0o644"}
    edit_state(project, lambda state: state["files"].update({str(fifo): record}))  # type: ignore[attr-defined]
    result = run_forked(command, "-C", str(project), timeout=60)
    assert result.returncode == 1
    assert f"file record {str(fifo)!r}: path is absolute" in one_line_error(result.stderr)


# --- releases that claim tether's records or git's folder ----------------------------------

RESERVED = "path is reserved for tether's own records"
IN_GIT = "path lies in git's own folder (.git)"
NATIVE_CLAIMS = [
    pytest.param(".tether/journal.jsonl", RESERVED, id="journal"),
    pytest.param(".tether/state.json", RESERVED, id="state"),
    pytest.param(".git/hooks/pre-commit", IN_GIT, id="git-hook"),
    pytest.param(".GIT/config", IN_GIT, id="git-upper-case"),
]


@pytest.mark.parametrize(("claimed", "problem"), NATIVE_CLAIMS)
def test_init_refuses_a_release_claiming_a_reserved_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], claimed: str, problem: str
) -> None:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {**V1, claimed: HOOK})
    project = tmp_path / "proj"
    capsys.readouterr()
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert f".tether/manifest.json: files: {claimed!r}: {problem}" in line
    assert not project.exists() or project_tree(project) == {}


@pytest.mark.parametrize(("claimed", "problem"), NATIVE_CLAIMS)
def test_update_refuses_a_release_claiming_a_reserved_path(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str], claimed: str, problem: str
) -> None:
    tmp_path, project = world
    make_release(tmp_path / "shelf", "1.2.0", {**V2, claimed: HOOK})
    git(project, "init", "-q", "-b", "main")
    before = project_tree(project)
    capsys.readouterr()
    assert call("update", "--yes", "--to", "1.2.0", "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert f".tether/manifest.json: files: {claimed!r}: {problem}" in line
    assert project_tree(project) == before
    assert not (project / ".git/hooks/pre-commit").exists()


@pytest.mark.parametrize(
    "claimed", [".gaia-backup/x", ".gaia/local/tether/journal.jsonl", ".gaia-merge/a.patch"]
)
def test_gaia_init_and_update_refuse_a_release_claiming_gaia_runtime_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], claimed: str
) -> None:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"agents/a.md": "a\n"}, profile="gaia")
    make_release(shelf, "1.1.0", {"agents/a.md": "a\n", claimed: "x\n"}, profile="gaia")
    fresh = tmp_path / "fresh"
    argv = ("--profile", "gaia", "--source", str(shelf))
    capsys.readouterr()
    assert call("init", *argv, "--to", "1.1.0", "-C", str(fresh)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert f".gaia/manifest.json: files: {claimed!r}: path is reserved" in line
    assert not fresh.exists() or project_tree(fresh) == {}
    project = tmp_path / "proj"
    assert call("init", *argv, "--to", "1.0.0", "-C", str(project)) == 0
    before = project_tree(project)
    capsys.readouterr()
    assert call("update", "--yes", "--to", "1.1.0", "-C", str(project)) == 1
    assert f"files: {claimed!r}: path is reserved" in one_line_error(capsys.readouterr().err)
    assert project_tree(project) == before


def test_gbrain_init_and_refresh_refuse_a_recipe_claiming_its_source_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = tmp_path / "recipe"

    def write_recipe(targets: list[str]) -> None:
        entries = [{"src": "src/a.md", "target": t, "mode": "0644"} for t in targets]
        manifest = {"recipe": "r", "gbrain_version": "0.1.0", "files": entries}
        write_files(recipe, {"src/a.md": "a\n", "install/manifest.json": json.dumps(manifest)})

    write_recipe(["tools/a.md", ".gbrain-source.json"])
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    capsys.readouterr()
    assert call("init", "--profile", "gbrain", "--source", str(recipe), "-C", str(fresh)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "install/manifest.json: files[1]: '.gbrain-source.json': path is reserved" in line
    assert project_tree(fresh) == {}
    write_recipe(["tools/a.md"])
    host = tmp_path / "host"
    host.mkdir()
    assert call("init", "--profile", "gbrain", "--source", str(recipe), "-C", str(host)) == 0
    record = (host / ".gbrain-source.json").read_bytes()
    write_recipe(["tools/a.md", ".gbrain-source.json"])
    capsys.readouterr()
    assert call("refresh", "--yes", "-C", str(host)) == 1
    assert "'.gbrain-source.json': path is reserved" in one_line_error(capsys.readouterr().err)
    assert (host / ".gbrain-source.json").read_bytes() == record


def test_a_manifest_copy_claiming_tether_paths_is_refused_as_the_baseline(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The installed manifest is read back from the project's copy when the cache is gone
    (a fresh clone): it passes the same rule as a fetched one."""
    _, project = world
    copy = project / ".tether/manifest.json"
    manifest = json.loads(copy.read_text())
    manifest["files"][".tether/journal.jsonl"] = "owned"
    copy.write_text(json.dumps(manifest))
    edit_state(project, lambda state: state.update(manifest_sha256=sha(copy.read_bytes())))
    shutil.rmtree(project / ".tether/cache")  # a fresh clone: the cache is git-ignored
    capsys.readouterr()
    assert call("update", "--yes", "-C", str(project)) == 1
    assert "files: '.tether/journal.jsonl': path is reserved" in one_line_error(
        capsys.readouterr().err
    )


# --- manifest build ------------------------------------------------------------------------

PUBLISHER_CONFIG = 'name = "acme-kit"\nversion = "1.0.0"\ndefault_class = "shared"\n'


@pytest.mark.parametrize(
    ("files", "config", "named"),
    [
        pytest.param({".gaia-backup/x": "x\n"}, "", "files: '.gaia-backup/x'", id="gaia-backup"),
        pytest.param({".gbrain-source.json": "{}\n"}, "", "files: '.gbrain-source.json'"),
        pytest.param(
            {".gaia/local/tether/state.json": "{}\n"}, "", "files: '.gaia/local/tether/state.json'"
        ),
        pytest.param(
            {}, 'sentinels = [".tether/journal.jsonl"]\n', "sentinels: '.tether/journal.jsonl'"
        ),
        pytest.param(
            {}, 'sentinels = [".git/hooks/pre-commit"]\n', "'sentinels': '.git/hooks/pre-commit'"
        ),
        pytest.param({}, '[merge]\n".tether/state.json" = { preset = "npm-package" }\n', "merge"),
        pytest.param(
            {}, '[[renames]]\nfrom = ".GIT/config"\nto = "a.txt"\n', "'.GIT/config'", id="rename"
        ),
    ],
)
def test_manifest_build_refuses_reserved_and_git_paths(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    config: str,
    named: str,
) -> None:
    upstream = tmp_path / "upstream"
    write_files(upstream, {"tether.toml": PUBLISHER_CONFIG + config, "a.txt": "a\n", **files})
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", "-A")
    capsys.readouterr()
    assert call("manifest", "build", "-C", str(upstream)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "tether.toml" in line and named in line
    assert not (upstream / ".tether/manifest.json").exists()


def test_manifest_build_outside_git_refuses_an_upper_case_git_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = tmp_path / "upstream"
    write_files(upstream, {"tether.toml": PUBLISHER_CONFIG, "a.txt": "a\n", ".GIT/config": "x"})
    capsys.readouterr()
    assert call("manifest", "build", "-C", str(upstream)) == 1
    assert "files: '.GIT/config': path lies in git's own folder" in one_line_error(
        capsys.readouterr().err
    )


# --- hostile journals ----------------------------------------------------------------------

RUN = new_run_id()


def forge_journal(project: Path, run: str, records: list[dict[str, object]]) -> None:
    """A journal tether did not write: an unfinished update to 1.1.0 and ``records``."""
    start = {"step": "run-started", "from_version": "1.0.0", "to_version": "1.1.0",
             "plan_digest": "x", "command": "update", "git": None}  # fmt: skip
    lines = [
        json.dumps({"run": run, "seq": seq, "at": "2025-01-01T00:00:00Z", **record})
        for seq, record in enumerate([start, *records], 1)
    ]
    write_files(project, {".tether/journal.jsonl": "\n".join(lines) + "\n"})


def backed_up(path: str, backup: str) -> dict[str, object]:
    return {"step": "file-backed-up", "path": path, "backup": backup, "sha256": sha(SECRET)}


def planted_backup(project: Path, run: str = RUN) -> str:
    """A backup file where the run would keep one, holding bytes an attacker chose."""
    rel = f".tether/backup/{run}/a.txt"
    write_files(project, {rel: SECRET})
    return rel


JOURNALS: list[object] = [
    pytest.param(
        lambda tmp, proj: [backed_up(str(tmp / "victim.txt"), planted_backup(proj))],
        "path '{tmp}/victim.txt': path is absolute",
        id="absolute-path",
    ),
    pytest.param(
        lambda tmp, proj: [backed_up("../victim.txt", planted_backup(proj))],
        "path '../victim.txt': path contains '..'",
        id="dotdot-path",
    ),
    pytest.param(
        lambda tmp, proj: [backed_up("a.txt", "../outside/secret.txt")],
        "backup '../outside/secret.txt': a backup of 'a.txt' lies at .tether/backup/",
        id="backup-outside",
    ),
    pytest.param(
        lambda tmp, proj: [backed_up("a.txt", str(tmp / "outside/secret.txt"))],
        "backup '{tmp}/outside/secret.txt'",
        id="backup-absolute",
    ),
    pytest.param(
        lambda tmp, proj: [backed_up("a.txt", "b.txt")],
        "backup 'b.txt': a backup of 'a.txt' lies at",
        id="backup-elsewhere-in-the-project",
    ),
    pytest.param(
        lambda tmp, proj: [
            {
                "step": "file-written",
                "path": "a.txt",
                "target": "../victim.txt",
                "sha256": sha(SECRET),
            }
        ],
        "target '../victim.txt': path contains '..'",
        id="written-outside",
    ),
    pytest.param(
        lambda tmp, proj: [
            {"step": "file-intent", "path": "a.txt", "target": "b.txt", "sha256": sha(SECRET)}
        ],
        "target 'b.txt': a write goes to the path itself or to a conflict artifact",
        id="target-another-file",
    ),
    pytest.param(
        lambda tmp, proj: [{"step": "file-deleted", "path": ".git/config"}],
        "path '.git/config': path lies in git's own folder",
        id="git-path",
    ),
    pytest.param(
        lambda tmp, proj: [{"step": "file-skipped", "path": ".tether/state.json", "reason": ""}],
        "path '.tether/state.json': path is reserved",
        id="reserved-path",
    ),
    pytest.param(
        lambda tmp, proj: [{"step": "file-backed-up", "backup": "x", "sha256": ""}],
        "path None: missing or not a string",
        id="no-path",
    ),
]


@pytest.mark.parametrize(
    "command",
    [("update", "--abandon"), ("update", "--yes"), ("status",)],
    ids=["abandon", "resume", "status"],
)
@pytest.mark.parametrize(("records", "named"), JOURNALS)
def test_a_hostile_journal_is_refused_before_anything_is_replayed(
    world: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    records: Callable[[Path, Path], list[dict[str, object]]],
    named: str,
    command: tuple[str, ...],
) -> None:
    tmp_path, project = world
    forge_journal(project, RUN, records(tmp_path, project))
    outside, inside = outside_tree(tmp_path, project), project_tree(project)
    capsys.readouterr()
    assert call(*command, "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"tether: .tether/journal.jsonl: run {RUN}, record 2 (")
    assert named.format(tmp=tmp_path) in line and line.endswith("not replaying that run")
    assert outside_tree(tmp_path, project) == outside
    assert project_tree(project) == inside


@pytest.mark.parametrize("command", [("update", "--abandon"), ("update", "--yes")])
def test_a_run_id_tether_does_not_make_is_refused(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    """The run id names the backup folder: ``../../outside`` would put backups (and the
    sweep of stale temp files) outside the project."""
    tmp_path, project = world
    run = "../../../outside"
    forge_journal(project, run, [backed_up("a.txt", f".tether/backup/{run}/a.txt")])
    outside = outside_tree(tmp_path, project)
    capsys.readouterr()
    assert call(*command, "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert f"run id {run!r} is not one tether makes" in line
    assert outside_tree(tmp_path, project) == outside


def test_a_journal_that_is_a_link_out_of_the_project_is_not_read_or_appended_to(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path, project = world
    (project / ".tether/journal.jsonl").symlink_to(tmp_path / "outside/secret.txt")
    outside = outside_tree(tmp_path, project)
    capsys.readouterr()
    assert call("update", "--yes", "-C", str(project)) == 1
    assert ".tether/journal.jsonl: is a symbolic link" in one_line_error(capsys.readouterr().err)
    assert outside_tree(tmp_path, project) == outside


# The journals below come from real interrupted runs, then something about them changes.


def interrupted(tmp_path: Path) -> Path:
    """A committed project whose update to 1.1.0 died right after its first write."""
    project = tmp_path / "proj"
    git(project, "init", "-q", "-b", "main")
    (project / "b.txt").write_text("b mine\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    result = run_forked(
        "update", "--yes", "--no-branch", "-C", str(project), crash="file-written:1"
    )
    assert result.returncode == crashpoint.EXIT_CODE, result.stderr
    return project


def test_a_journal_tracked_by_git_is_not_a_run_tether_started_here(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """tether's journal is git-ignored: a tracked one arrived through a commit."""
    tmp_path, project = world
    interrupted(tmp_path)
    git(project, "add", "-f", ".tether/journal.jsonl")
    git(project, "commit", "-qm", "a journal from elsewhere")
    inside = project_tree(project)
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert ".tether/journal.jsonl is tracked by git" in line
    assert "tether did not start this run here" in line
    assert project_tree(project) == inside


def test_a_tracked_backup_folder_is_refused_too(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path, project = world
    interrupted(tmp_path)
    git(project, "add", "-f", ".tether/backup")
    inside = project_tree(project)
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 1
    assert "/a.txt is tracked by git" in one_line_error(capsys.readouterr().err)
    assert project_tree(project) == inside


def test_abandon_restores_a_backup_only_when_its_bytes_are_the_ones_backed_up(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path, project = world
    interrupted(tmp_path)
    [backup] = [p for p in (project / ".tether/backup").rglob("*") if p.is_file()]
    backup.write_bytes(SECRET)
    inside = project_tree(project)
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "(its bytes are not the ones the run backed up); nothing was restored" in line
    assert project_tree(project) == inside


def test_abandon_puts_back_only_the_index_entry_of_the_path_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"c.txt": "a\nb\nc\n", "d.txt": "d\n"})
    make_release(shelf, "1.1.0", {"c.txt": "a\ntheirs\nc\n", "d.txt": "d\n"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    git(project, "init", "-q", "-b", "main")
    (project / "c.txt").write_text("a\nmine\nc\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    update = ("update", "--yes", "--no-branch", "--conflict", "markers", "-C", str(project))
    run_forked(*update, crash="file-written:1")
    journal = project / ".tether/journal.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    [saved] = [r for r in records if r["step"] == "index-saved"]
    saved["repo_path"], saved["entries"] = "d.txt", []  # would drop d.txt from git's index
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    index = git(project, "ls-files", "-s", "d.txt")
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 1
    line = one_line_error(capsys.readouterr().err)
    assert "names the index path 'd.txt' for 'c.txt'" in line
    assert git(project, "ls-files", "-s", "d.txt") == index


def test_abandon_never_deletes_a_branch_whose_commits_are_not_on_the_start_branch(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A journal's git context says which branch the run created; deleting that branch
    must never lose a commit, whatever the context claims."""
    _, project = world
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    git(project, "switch", "-q", "-c", "feature")
    (project / "work.txt").write_text("a day of work\n")
    git(project, "add", "work.txt")
    git(project, "commit", "-qm", "work")
    head = git(project, "rev-parse", "HEAD").strip()
    context = {"start_branch": "main", "created_branch": "feature", "start_commit": head}
    start = {"run": RUN, "seq": 1, "step": "run-started", "from_version": "1.0.0",
             "to_version": "1.1.0", "plan_digest": "x", "command": "update",
             "git": context}  # fmt: skip
    write_files(project, {".tether/journal.jsonl": json.dumps(start) + "\n"})
    capsys.readouterr()
    assert call("update", "--abandon", "-C", str(project)) == 0
    assert "feature" in git(project, "branch", "--format=%(refname:short)").split()
    assert git(project, "rev-parse", "feature").strip() == head


def test_a_real_interrupted_run_still_abandons(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The checks accept what tether itself journals."""
    tmp_path, project = world
    interrupted(tmp_path)
    capsys.readouterr()
    assert call("status", "-C", str(project)) == 0
    assert call("update", "--abandon", "-C", str(project)) == 0
    assert git(project, "status", "--porcelain") == ""


# --- patch folders (reapply) ---------------------------------------------------------------


def test_reapply_never_writes_into_git_or_tether_paths_a_patch_folder_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    hook = gsd.target / ".git/hooks/pre-commit"
    write_files(gsd.target, {".git/hooks/pre-commit": "#!/bin/sh\n"})
    write_files(gsd.patches, {".git/hooks/pre-commit": HOOK, ".tether/lock": "x"})
    gsd.set_meta(files=[PLANNER, ".git/hooks/pre-commit", ".tether/lock"])
    capsys.readouterr()
    code = call("reapply", "--patches", str(gsd.patches), "-C", str(gsd.target), "--json")
    doc = json.loads(capsys.readouterr().out)
    reasons = {r["file"]: r["reason"] for r in doc["results"]}
    assert code == 1
    assert "git's own folder" in reasons[".git/hooks/pre-commit"]
    assert "reserved for tether's own records" in reasons[".tether/lock"]
    assert hook.read_text() == "#!/bin/sh\n"


def test_reapply_refuses_a_journal_run_id_it_does_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    journal = gsd.target / ".tether/journal.jsonl.reapply"
    start = {"run": "../../../outside", "step": "run-started", "seq": 1, "plan_digest": "x"}
    write_files(gsd.target, {".tether/journal.jsonl.reapply": json.dumps(start) + "\n"})
    outside = outside_tree(tmp_path, gsd.target)
    capsys.readouterr()
    argv = ("--patches", str(gsd.patches), "-C", str(gsd.target))
    assert call("reapply", *argv) == 1
    assert "run id '../../../outside' is not one tether makes" in one_line_error(
        capsys.readouterr().err
    )
    assert outside_tree(tmp_path, gsd.target) == outside
    assert journal.is_file()


def test_reapply_reads_a_backup_only_from_its_own_backup_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A resumed reapply takes the installed bytes from the run's first backup; a journal
    naming a file elsewhere (a secret) must not have it merged into the target."""
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    write_files(tmp_path, {"secret.txt": SECRET})
    from tether.flows.reapply import load_patch_set
    from tether.fsio import sha256_bytes

    patch_set = load_patch_set(gsd.patches)
    digest = sha256_bytes(
        f"{patch_set.root.resolve()}\0{patch_set.meta_sha256}\0{gsd.target.resolve()}".encode()
    )
    run = new_run_id()
    records = [
        {"step": "run-started", "plan_digest": digest},
        {
            "step": "file-backed-up",
            "path": PLANNER,
            "backup": str(tmp_path / "secret.txt"),
            "sha256": sha(SECRET),
        },
    ]
    lines = [json.dumps({"run": run, "seq": n, **r}) for n, r in enumerate(records, 1)]
    write_files(gsd.target, {".tether/journal.jsonl.reapply": "\n".join(lines) + "\n"})
    capsys.readouterr()
    argv = ("--patches", str(gsd.patches), "-C", str(gsd.target), "--json")
    assert call("reapply", *argv) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert "not in this run's backup folder" in result["reason"]
    assert SECRET.decode() not in gsd.read(PLANNER)


# --- registries and sidecars ---------------------------------------------------------------


def test_a_registry_path_with_a_nul_byte_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = tmp_path / "projects.json"
    document = {"version": 2, "projects": {"a": {"name": "a", "path": "/tmp/x\x00y"}}}
    registry.write_text(json.dumps(document))
    for argv in (("fleet", "status"), ("projects", "list")):
        capsys.readouterr()
        assert call(*argv, "--registry", str(registry)) == 1
        line = one_line_error(capsys.readouterr().err)
        assert str(registry) in line and "project 'a': path contains a NUL byte" in line


def test_a_finding_must_name_a_file_of_the_checkout() -> None:
    from tether.audit.sidecar import validate_findings
    from tether.errors import UsageError

    finding = {
        **{key: "text" for key in ("finding_class", "title", "failure_mode", "verified_by")},
        **{"suggested_fix": "s", "severity": "error", "line": 1, "path": "../../etc/passwd"},
    }
    with pytest.raises(UsageError, match=r"findings\[0\]: path '../../etc/passwd': path contains"):
        validate_findings([finding])


def test_reapply_does_not_append_to_a_journal_linked_out_of_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = make_gsd(tmp_path, {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    write_files(tmp_path, {"outside/notes.txt": ""})  # empty: a journal to append to
    write_files(gsd.target, {".tether/.keep": ""})
    (gsd.target / ".tether/journal.jsonl.reapply").symlink_to(tmp_path / "outside/notes.txt")
    outside = outside_tree(tmp_path, gsd.target)
    capsys.readouterr()
    assert call("reapply", "--patches", str(gsd.patches), "-C", str(gsd.target)) == 1
    assert ".tether/journal.jsonl.reapply: is a symbolic link" in one_line_error(
        capsys.readouterr().err
    )
    assert outside_tree(tmp_path, gsd.target) == outside
    assert gsd.read(PLANNER) == PLANNER_V2
