"""The hostile-tree sweep: every command against a project whose tree or records were made
hostile, one case at a time.

For each case one forked child process runs every command in turn through tether's own entry point
(`tether.cli.main.main`), so a hang anywhere fails the case at its timeout instead of hanging
the suite. Every command must end with a documented exit code and no traceback, and nothing
beside the project (a sentinel tree of secrets and folders a link points into) may be
created, changed or removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import call, git, in_forked_child, make_release, run_forked
from tether.cli.main import main
from tether.engine.textmerge import PURE_MERGE_MAX_BYTES
from tether.flows.renames import MAX_BYTES as RENAME_MAX_BYTES
from tether.parselimits import SYNTAX_CHECK_MAX_BYTES

DOCUMENTED_EXITS = {0, 1, 2, 3, 4}
V1 = {
    "a.txt": "a\nb\nc\n",
    "docs/guide.md": "g1\n",
    "run.sh": "#!/bin/sh\necho hi\n",
    "package.json": '{"name": "x", "dependencies": {"left-pad": "1.0.0"}}\n',
}
V2 = {
    "a.txt": "a\ntheirs\nc\n",
    "docs/guide.md": "g2\n",
    "run.sh": "#!/bin/sh\necho hi2\n",
    "package.json": '{"name": "x", "dependencies": {"left-pad": "1.0.1"}}\n',
}


def run_each(commands: list[list[str]]) -> int:
    """Every command through tether's entry point in this process, one after another; prints
    each one's exit code, output and any traceback that escaped as one JSON document."""
    results = []
    for argv in commands:
        # Text streams over bytes, as a terminal's are: some commands write bytes (diff).
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
        crashed = ""
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 1
            except BaseException:
                code, crashed = -1, traceback.format_exc()
        out.flush()
        err.flush()
        stdout = out.buffer.getvalue().decode("utf-8", "replace")
        stderr = err.buffer.getvalue().decode("utf-8", "replace")
        results.append(
            {"argv": argv, "code": code, "stdout": stdout, "stderr": stderr, "crashed": crashed}
        )
    print(json.dumps(results))
    return 0


def tree_state(root: Path) -> dict[str, str]:
    """Every entry under ``root``, links not followed: kind and bytes (or link target)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = "special"
    return found


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A committed project at 1.0.0 (2.0.0 is out), a registry naming it, and the tree
    beside it that nothing may touch."""
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", V1, {"run.sh": "owned"})
    make_release(shelf, "2.0.0", V2, {"run.sh": "owned"})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    outside = tmp_path / "outside"
    (outside / "docs").mkdir(parents=True)
    (outside / "secret.txt").write_text("secret\n")
    (outside / "docs/guide.md").write_text("not the project's\n")
    (tmp_path / "victim.txt").write_text("victim\n")
    registry = tmp_path / "registry.json"
    assert call("projects", "add", str(project), "--registry", str(registry)) == 0
    (tmp_path / "npm").mkdir()
    (tmp_path / "patches").mkdir()
    return {"tmp": tmp_path, "project": project, "outside": outside, "registry": registry}


def _replace(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            _replace(child)
        path.rmdir()
    else:
        path.unlink()


def link_file_out(w: dict[str, Path]) -> None:
    _replace(w["project"] / "a.txt")
    (w["project"] / "a.txt").symlink_to(w["outside"] / "secret.txt")


def link_folder_out(w: dict[str, Path]) -> None:
    _replace(w["project"] / "docs")
    (w["project"] / "docs").symlink_to(w["outside"] / "docs", target_is_directory=True)


def fifo(w: dict[str, Path]) -> None:
    _replace(w["project"] / "a.txt")
    os.mkfifo(w["project"] / "a.txt")


def unix_socket(w: dict[str, Path]) -> None:
    _replace(w["project"] / "a.txt")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(w["project"] / "a.txt"))
    server.close()  # the socket file stays


def read_only_file(w: dict[str, Path]) -> None:
    (w["project"] / "a.txt").write_text("a\nmine\nc\n")
    (w["project"] / "a.txt").chmod(0o444)


def read_only_folder(w: dict[str, Path]) -> None:
    (w["project"] / "docs").chmod(0o555)


def file_became_folder(w: dict[str, Path]) -> None:
    _replace(w["project"] / "a.txt")
    (w["project"] / "a.txt").mkdir()
    (w["project"] / "a.txt/inner.txt").write_text("inner\n")


def invalid_utf8(w: dict[str, Path]) -> None:
    (w["project"] / "a.txt").write_bytes(b"a\n\xff\xfe\xc3(\nc\n")


def crlf_bom(w: dict[str, Path]) -> None:
    (w["project"] / "a.txt").write_bytes(b"\xef\xbb\xbfa\r\nmine\r\nc\r\n")


# Three times the largest size tether reads a project file whole for (a syntax check):
# above every in-memory limit, so each command meets the file on its large-file path.
BIG_FILE_BYTES = 3 * max(PURE_MERGE_MAX_BYTES, SYNTAX_CHECK_MAX_BYTES, RENAME_MAX_BYTES)


def big_sparse_file(w: dict[str, Path]) -> None:
    with open(w["project"] / "a.txt", "wb") as handle:
        handle.truncate(BIG_FILE_BYTES)


def state_truncated(w: dict[str, Path]) -> None:
    state = w["project"] / ".tether/state.json"
    state.write_bytes(state.read_bytes()[: len(state.read_bytes()) // 2])


def state_garbage(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/state.json").write_bytes(b"\x00\xffnot json" * 10)


def state_hostile_path(w: dict[str, Path]) -> None:
    state_path = w["project"] / ".tether/state.json"
    text = state_path.read_text()
    digest = hashlib.sha256((w["tmp"] / "victim.txt").read_bytes()).hexdigest()
    record = {"class": "shared", "sha256": digest}
    data = json.loads(text)
    data["files"]["../victim.txt"] = record
    state_path.write_text(json.dumps(data))


def state_deep(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/state.json").write_text("[" * 100_000 + "]" * 100_000)


def journal_garbage(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/journal.jsonl").write_bytes(b"{not json\n\x00\xff\n")


def journal_truncated_run(w: dict[str, Path]) -> None:
    start = {
        "run": "20260101T000000000000Z-abcdef",
        "step": "run-started",
        "seq": 1,
        "at": "2026-01-01T00:00:00Z",
        "from_version": "1.0.0",
        "to_version": "2.0.0",
        "plan_digest": "x",
        "command": "update",
    }
    (w["project"] / ".tether/journal.jsonl").write_text(json.dumps(start) + '\n{"run": "2026')


def journal_hostile_paths(w: dict[str, Path]) -> None:
    run = "20260101T000000000000Z-abcdef"
    records = [
        {"step": "run-started", "from_version": "1.0.0", "to_version": "2.0.0", "plan_digest": "x"},
        {
            "step": "file-backed-up",
            "path": "../victim.txt",
            "backup": str(w["outside"] / "secret.txt"),
            "sha256": "0" * 64,
        },
        {"step": "file-written", "path": "/etc/hostname", "target": "/etc/hostname", "sha256": "0"},
    ]
    lines = [
        json.dumps({"run": run, "seq": n, "at": "2026-01-01T00:00:00Z", "command": "update", **r})
        for n, r in enumerate(records, 1)
    ]
    (w["project"] / ".tether/journal.jsonl").write_text("\n".join(lines) + "\n")


def stat_cache_garbage(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/cache/stat.json").write_bytes(b"\xff" * 64)


def lock_is_folder(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/lock").unlink(missing_ok=True)
    (w["project"] / ".tether/lock").mkdir()


def backup_links_out(w: dict[str, Path]) -> None:
    (w["project"] / ".tether/backup").symlink_to(w["outside"], target_is_directory=True)


AUDIT = ("--remit", "*.sh", "--member", "shell")


def audit_marker_fifo(w: dict[str, Path]) -> None:
    """A FIFO where the clearance marker of the current digest would be."""
    done = run_forked("audit", "digest", "-C", str(w["project"]), *AUDIT)
    assert done.returncode == 0, done.stderr
    digest = done.stdout.strip()
    (w["project"] / ".tether/audit").mkdir()
    os.mkfifo(w["project"] / f".tether/audit/{digest}.shell.ok")


def registry_garbage(w: dict[str, Path]) -> None:
    w["registry"].write_text('{"version": 2, "projects": {"x": {"path": "\\u0000"}}}')


CASES: list[Callable[[dict[str, Path]], None]] = [
    link_file_out,
    link_folder_out,
    fifo,
    unix_socket,
    read_only_file,
    read_only_folder,
    file_became_folder,
    invalid_utf8,
    crlf_bom,
    big_sparse_file,
    state_truncated,
    state_garbage,
    state_hostile_path,
    state_deep,
    journal_garbage,
    journal_truncated_run,
    journal_hostile_paths,
    stat_cache_garbage,
    lock_is_folder,
    backup_links_out,
    audit_marker_fifo,
    registry_garbage,
]


# Exit codes a case must give for some commands ("first two words": code).
_UNREADABLE = {"check -C": 3}
_BROKEN_STATE = {"status -C": 1, "check -C": 1, "update --yes": 1, "diff -C": 1}
EXPECTED: dict[str, dict[str, int]] = {
    "link_file_out": _UNREADABLE,
    "link_folder_out": _UNREADABLE,
    "fifo": _UNREADABLE,
    "unix_socket": _UNREADABLE,
    "state_truncated": _BROKEN_STATE,
    "state_garbage": _BROKEN_STATE,
    "state_hostile_path": _BROKEN_STATE,
    "state_deep": _BROKEN_STATE,
    "journal_truncated_run": {"check -C": 3},
    "journal_hostile_paths": {"status -C": 1, "update --abandon": 1},
    "backup_links_out": {"status -C": 1, "update --yes": 1},
    "registry_garbage": {"fleet status": 1, "deps scan": 1},
    "audit_marker_fifo": {"audit gate": 3},
}


def commands(w: dict[str, Path]) -> list[list[str]]:
    project, registry, npm = str(w["project"]), str(w["registry"]), str(w["tmp"] / "npm")
    return [
        ["status", "-C", project],
        ["status", "--json", "-C", project],
        ["check", "-C", project],
        ["diff", "-C", project],
        ["update", "--dry-run", "-C", project],
        ["update", "--yes", "--delete-removed", "--no-branch", "--allow-dirty", "-C", project],
        ["update", "--abandon", "-C", project],
        ["refresh", "--yes", "-C", project],
        ["reapply", "--patches", str(w["tmp"] / "patches"), "-C", project],
        ["audit", "shell", "-C", project],
        ["audit", "gate", "-C", project, *AUDIT],
        ["deps", "scan", "--level", "patch", "--registry", registry, "--npm-registry", npm],
        ["fleet", "status", "--registry", registry],
        ["fleet", "update", "--yes", "--registry", registry],
    ]


def run_all(w: dict[str, Path]) -> list[dict[str, object]]:
    done = in_forked_child(
        lambda: run_each(commands(w)),
        env={"XDG_STATE_HOME": str(w["tmp"] / "state-home")},
        cwd=w["tmp"],
        timeout=120,  # a hang on any command fails the case here
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, object]] = json.loads(done.stdout)
    return results


@pytest.mark.parametrize("make_hostile", CASES, ids=[c.__name__ for c in CASES])
def test_every_command_against_a_hostile_tree(world, make_hostile):
    make_hostile(world)
    beside = {name: tree_state(world["tmp"] / name) for name in ("outside", "rel")}
    victim = (world["tmp"] / "victim.txt").read_bytes()
    try:
        results = run_all(world)
    finally:
        for folder in ("docs",):
            path = world["project"] / folder
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
    for result in results:
        argv, code, stderr = result["argv"], result["code"], str(result["stderr"])
        assert not result["crashed"], (argv, result["crashed"])
        assert "Traceback" not in stderr, (argv, stderr)
        assert code in DOCUMENTED_EXITS, (argv, code, stderr)
        if code in (1, 2):
            # Either one line saying what stopped the run, or a report naming what failed.
            last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
            reported = bool(str(result["stdout"]).strip())
            assert last.startswith("tether") or reported, (argv, stderr)
    for result in results:  # nothing outside the project was read into a report
        assert "secret" not in str(result["stdout"]), result["argv"]
        assert "not the project's" not in str(result["stdout"]), result["argv"]
    codes = {" ".join(map(str, r["argv"][:2])): r["code"] for r in results}
    for command, code in EXPECTED.get(make_hostile.__name__, {}).items():
        assert codes[command] == code, (command, codes)
    assert {name: tree_state(world["tmp"] / name) for name in ("outside", "rel")} == beside
    assert (world["tmp"] / "victim.txt").read_bytes() == victim
    assert not (world["tmp"] / "proj.tether").exists()


def test_an_unexpected_environment_error_is_one_line(tmp_path, monkeypatch, capsys):
    """The last resort in the entry point: an OSError no flow expected (here, injected in
    status) is one line naming the path, exit 1, with a JSON document under --json."""
    from tether.cli.main import main
    from tether.flows import status

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "somewhere"))

    monkeypatch.setattr(status, "project_status", refused)
    assert main(["status", "-C", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"tether: {tmp_path / 'somewhere'}: Permission denied\n"
    assert main(["status", "--json", "-C", str(tmp_path)]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error == {
        "message": f"{tmp_path / 'somewhere'}: Permission denied",
        "kind": "error",
        "exit_code": 1,
    }
