"""The command line's front: typo suggestions, usage of the failing subcommand, JSON error
documents, ``--json`` on demo, merge-driver and snapshot, and one document per command."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest

from builders import (
    ForkedChild,
    call,
    make_release,
    run_tether,
    tree_digest,
    write_files,
)
from tether.cli.main import main as tether_main


def error_document(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The JSON error document on stdout; its message is the line stderr ends with."""
    document = json.loads(result.stdout)
    assert list(document) == ["schema_version", "error"]
    assert document["schema_version"] == 1
    error = document["error"]
    assert set(error) == {"message", "kind", "exit_code"}
    assert error["exit_code"] == result.returncode
    # The stderr line is the message behind the program's (and command's) name.
    last = result.stderr.splitlines()[-1]
    assert last.startswith("tether") and last.endswith(f": {error['message']}")
    return error


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "a1\n", "b.txt": "b1\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a2\n", "b.txt": "b1\n"})
    root = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    return root


# --- typos ---


def test_unknown_command_suggests_the_closest() -> None:
    result = run_tether("updte")
    assert result.returncode == 2
    assert result.stderr == "tether: unknown command 'updte'; did you mean 'update'?\n"
    assert result.stdout == ""


def test_unknown_command_without_a_close_one_points_to_help() -> None:
    result = run_tether("frobnicate", "--yes")
    assert result.returncode == 2
    assert result.stderr == (
        "tether: unknown command 'frobnicate'; see 'tether --help' for the commands\n"
    )


def test_unknown_flag_shows_the_subcommand_usage_and_the_closest_flag(project: Path) -> None:
    before = tree_digest(project)
    result = run_tether("update", "--dryrun", "-C", str(project))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("usage: tether update [-h]")
    assert "--dry-run" in result.stderr.split("tether update: ")[0]  # the usage lists it
    assert lines[-1] == "tether update: unrecognized argument --dryrun; did you mean --dry-run?"
    assert "usage: tether [-h]" not in result.stderr
    assert tree_digest(project) == before


def test_unknown_flag_of_a_nested_subcommand_shows_its_usage(tmp_path: Path) -> None:
    result = run_tether(
        "snapshot", "check", "-C", str(tmp_path), "--baseline", "b.json", "--alow", "x"
    )
    assert result.returncode == 2
    assert result.stderr.startswith("usage: tether snapshot check ")
    assert result.stderr.splitlines()[-1] == (
        "tether snapshot check: unrecognized arguments --alow, 'x'; did you mean --allow?"
    )


def test_bad_choice_suggests_the_closest_value(project: Path) -> None:
    result = run_tether("update", "--conflict", "marker", "-C", str(project))
    assert result.returncode == 2
    assert result.stderr.startswith("usage: tether update ")
    assert result.stderr.splitlines()[-1] == (
        "tether update: argument --conflict: invalid choice: 'marker' "
        "(choose from 'markers', 'patch'); did you mean 'markers'?"
    )


def test_mistyped_nested_command_suggests_the_closest() -> None:
    result = run_tether("fleet", "stauts")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: tether fleet ")
    assert result.stderr.rstrip().endswith("did you mean 'status'?")


def test_unknown_flag_before_the_command_shows_the_top_usage() -> None:
    result = run_tether("--frobnicate")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: tether [-h]")
    assert result.stderr.splitlines()[-1] == "tether: unrecognized argument --frobnicate"


def test_several_unrecognized_arguments_are_all_named(project: Path) -> None:
    result = run_tether("status", "--jsn", "--chek-latest", "-C", str(project))
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "tether status: unrecognized arguments --jsn, --chek-latest; "
        "did you mean --json, --check-latest?"
    )


# --- JSON error documents ---


def test_usage_error_under_json_is_a_document(project: Path) -> None:
    result = run_tether("update", "--json", "--dryrun", "-C", str(project))
    error = error_document(result)
    assert error == {
        "message": "unrecognized argument --dryrun; did you mean --dry-run?",
        "kind": "usage",
        "exit_code": 2,
    }
    assert result.stderr.startswith("usage: tether update ")


def test_tether_error_under_json_is_a_document(tmp_path: Path) -> None:
    result = run_tether("status", "--json", "-C", str(tmp_path))
    error = error_document(result)
    assert error["kind"] == "error" and error["exit_code"] == 1
    assert str(error["message"]).startswith(f"{tmp_path}")
    assert "tether init" in str(error["message"])


def test_usage_error_raised_by_a_command_under_json(tmp_path: Path) -> None:
    result = run_tether("fleet", "status", "--json", "-j", "0", cwd=tmp_path)
    error = error_document(result)
    assert error == {"message": "--jobs must be at least 1", "kind": "usage", "exit_code": 2}


def test_unknown_command_under_json_is_a_document() -> None:
    error = error_document(run_tether("updte", "--json"))
    assert error["kind"] == "usage" and error["exit_code"] == 2


def test_errors_without_json_print_nothing_on_stdout(tmp_path: Path) -> None:
    result = run_tether("status", "-C", str(tmp_path))
    assert result.returncode == 1 and result.stdout == ""


def test_interrupt_at_the_prompt_under_json_is_a_document(project: Path) -> None:
    """SIGINT while ``update`` waits for its answer on a terminal (a real pseudo-terminal
    is its stdin): exit 130 and the ``interrupted`` document."""
    master, slave = pty.openpty()
    reader, writer = os.pipe()
    work = partial(tether_main, ["update", "--json", "-C", str(project)])
    child = ForkedChild(work, stdin_fd=slave, stderr_fd=writer)
    os.close(slave)
    os.close(writer)
    try:
        seen = b""
        deadline = time.monotonic() + 60
        while b"Apply this update? [y/N]" not in seen and time.monotonic() < deadline:
            seen += os.read(reader, 4096)
        child.send_signal(signal.SIGINT)
        rest = b""
        while chunk := os.read(reader, 4096):
            rest += chunk
        done = child.wait(timeout=60)
    finally:
        os.close(master)
        os.close(reader)
    out, err = done.stdout, rest.decode()
    assert done.returncode == 130
    assert json.loads(out) == {
        "schema_version": 1,
        "error": {"message": "interrupted", "kind": "interrupted", "exit_code": 130},
    }
    assert err.splitlines()[-1] == "tether: interrupted"
    assert (project / "a.txt").read_text() == "a1\n"


# --- demo, merge-driver and snapshot take --json ---


def test_demo_json(tmp_path: Path) -> None:
    result = run_tether("demo", "--json", "-C", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["demo_dir"] == str(tmp_path / "demo")
    assert doc["upstream"] == {"name": "acme-kit", "releases": ["1.0.0", "1.1.0"]}
    assert doc["init"]["version"] == "1.0.0" and len(doc["init"]["added"]) == 8
    assert {c["path"] for c in doc["customised"]} >= {"docs/guide.md", "notes/team.md"}
    assert doc["status_before"]["latest_version"] == "1.1.0"
    assert doc["update"]["from_version"] == "1.0.0" and doc["update"]["to_version"] == "1.1.0"
    assert doc["update"]["status"] == "updated"
    assert doc["status_after"]["installed_version"] == "1.1.0"
    assert Path(doc["project_dir"], ".tether/state.json").is_file()


def test_demo_human_output_still_walks_through_the_steps(tmp_path: Path) -> None:
    result = run_tether("demo", "-C", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    for step in ("=== tether init", "=== the adopter customises", "=== tether update --yes"):
        assert step in result.stdout


def test_demo_refuses_a_folder_with_files_and_writes_nothing(tmp_path: Path) -> None:
    write_files(tmp_path / "mine", {"keep.txt": "mine\n"})
    before = tree_digest(tmp_path / "mine")
    result = run_tether("demo", "--json", "-C", str(tmp_path / "mine"))
    error = error_document(result)
    assert error["kind"] == "error" and error["exit_code"] == 1
    assert "is not an empty folder" in str(error["message"])
    assert tree_digest(tmp_path / "mine") == before


def merge_driver(tmp_path: Path, ours: str, theirs: str, path: str = "f.txt", *extra: str):
    write_files(tmp_path, {"base": "a\nb\nc\n", "ours": ours, "theirs": theirs})
    return run_tether(
        "merge-driver",
        "--json",
        *extra,
        str(tmp_path / "base"),
        str(tmp_path / "ours"),
        str(tmp_path / "theirs"),
        path,
        cwd=tmp_path,
    )


def test_merge_driver_json_clean_and_conflicting(tmp_path: Path) -> None:
    clean = merge_driver(tmp_path, "A\nb\nc\n", "a\nb\nC\n")
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout) == {
        "schema_version": 1,
        "path": "f.txt",
        "written": str(tmp_path / "ours"),
        "merge": "lines",
        "clean": True,
        "conflicts": 0,
        "binary": False,
    }
    assert (tmp_path / "ours").read_text() == "A\nb\nC\n"
    conflict = merge_driver(tmp_path, "a\nmine\nc\n", "a\ntheirs\nc\n")
    assert conflict.returncode == 4  # conflicts left; 1 is kept for errors
    doc = json.loads(conflict.stdout)
    assert doc["clean"] is False and doc["conflicts"] == 1 and doc["merge"] == "lines"


def test_merge_driver_json_field_merge(tmp_path: Path) -> None:
    def pkg(alpha: str, beta: str) -> str:
        return json.dumps({"name": "x", "dependencies": {"alpha": alpha, "beta": beta}}, indent=2)

    write_files(tmp_path, {"base": pkg("1", "1"), "ours": pkg("2", "1"), "theirs": pkg("1", "2")})
    result = run_tether(
        "merge-driver",
        "--json",
        "--preset",
        "npm-package",
        *(str(tmp_path / n) for n in ("base", "ours", "theirs")),
        "package.json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["merge"] == "fields"
    assert json.loads((tmp_path / "ours").read_text())["dependencies"] == {
        "alpha": "2",
        "beta": "2",
    }


def test_merge_driver_error_under_json(tmp_path: Path) -> None:
    result = run_tether(
        "merge-driver",
        "--json",
        str(tmp_path / "nope"),
        str(tmp_path / "a"),
        str(tmp_path / "b"),
        "f.txt",
    )
    error = error_document(result)
    assert error["kind"] == "error" and error["exit_code"] == 1
    assert "cannot read the ancestor version" in str(error["message"])


def test_snapshot_record_json_and_check_json_in_either_place(tmp_path: Path) -> None:
    write_files(tmp_path / "tree", {"a.txt": "a\n", "d/b.txt": "b\n"})
    out = tmp_path / "snap.json"
    result = run_tether("snapshot", "--json", "-C", str(tmp_path / "tree"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    expected = {"schema_version": 1, "project_dir": doc["project_dir"], "out": str(out)}
    assert doc == {**expected, "files": 2}
    assert Path(doc["project_dir"]).resolve() == (tmp_path / "tree").resolve()
    for args in (("snapshot", "--json", "check"), ("snapshot", "check", "--json")):
        result = run_tether(*args, "-C", str(tmp_path / "tree"), "--baseline", str(out))
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["changed"] == []


def test_snapshot_usage_error_under_json(tmp_path: Path) -> None:
    error = error_document(run_tether("snapshot", "--json", "-C", str(tmp_path)))
    assert error["kind"] == "usage" and error["exit_code"] == 2
    assert "--out" in str(error["message"])


# --- every --json prints one document ---


def test_everyday_commands_print_one_json_document(tmp_path: Path, project: Path) -> None:
    shelf = tmp_path / "releases"
    commands = [
        ("init", "--json", "--source", str(shelf), "--to", "1.0.0", "-C", str(tmp_path / "p2")),
        ("status", "--json", "-C", str(project)),
        ("check", "--json", "--check-latest", "-C", str(project)),
        ("update", "--json", "--dry-run", "-C", str(project)),
        ("update", "--json", "--yes", "-C", str(project)),
        ("status", "--json", "-q", "-C", str(project)),
    ]
    for args in commands:
        result = run_tether(*args)
        assert result.returncode in (0, 3), (args, result.stderr)
        assert isinstance(json.loads(result.stdout), dict), args
        assert "error" not in json.loads(result.stdout), args
