"""``tether merge-fields``: verdict JSON, --write, and errors that name the role."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from builders import run_process
from tether.cli import merge_fields_cmd
from tether.cli.main import main
from tether.errors import Exit, TetherError

BASE = (
    '{\n  "version": "1.0.0",\n  "scripts": {"a": "1", "b": "1"},\n'
    '  "packageManager": "pnpm@9"\n}\n'
)
LATEST = (
    '{\n  "version": "1.1.0",\n  "scripts": {"a": "2", "b": "2", "c": "3"},\n'
    '  "packageManager": "pnpm@10"\n}\n'
)
CURRENT = (
    '{\n    "name": "mine",\n    "scripts": {"b": "mine", "a": "1"},\n'
    '    "packageManager": "pnpm@9"\n}\n'
)


def files(tmp_path: Path, current: str = CURRENT) -> dict[str, Path]:
    paths = {
        "baseline": tmp_path / "base" / "package.json",
        "latest": tmp_path / "latest" / "package.json",
        "current": tmp_path / "package.json",
    }
    for role, text in (("baseline", BASE), ("latest", LATEST), ("current", current)):
        paths[role].parent.mkdir(parents=True, exist_ok=True)
        paths[role].write_text(text)
    return paths


def argv(paths: dict[str, Path], *extra: str) -> list[str]:
    return [
        "--preset",
        "npm-package",
        "--baseline",
        str(paths["baseline"]),
        "--latest",
        str(paths["latest"]),
        "--current",
        str(paths["current"]),
        *extra,
    ]


def run_in_process(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tether merge-fields")
    merge_fields_cmd.add_arguments(parser)
    return merge_fields_cmd.run(parser.parse_args(args))


def test_json_report_sorted_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = files(tmp_path)
    assert run_in_process(argv(paths, "--json")) == Exit.CONFLICTS  # scripts b is left
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "applied": [
            {
                "kind": "key",
                "key": "packageManager",
                "baseline": "pnpm@9",
                "latest": "pnpm@10",
                "adopter": "pnpm@9",
            },
            {
                "kind": "entry",
                "section": "scripts",
                "key": "a",
                "baseline": "1",
                "latest": "2",
                "adopter": "1",
            },
        ],
        "conflicts": [
            {
                "kind": "entry",
                "section": "scripts",
                "key": "b",
                "baseline": "1",
                "latest": "2",
                "adopter": "mine",
            }
        ],
        "suggestions": [
            {"kind": "entry", "section": "scripts", "key": "c", "latest": "3", "reason": "added"}
        ],
    }
    assert paths["current"].read_text() == CURRENT


def test_write_applies_in_place_and_keeps_the_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = files(tmp_path)
    paths["current"].chmod(0o640)
    assert run_in_process(argv(paths, "--write")) == Exit.CONFLICTS
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "package.json: 2 applied, 1 conflict, 1 suggestion".replace(
        "package.json", str(paths["current"])
    )
    assert f"wrote {paths['current']}" in out
    assert paths["current"].read_text() == CURRENT.replace('"a": "1"', '"a": "2"').replace(
        '"pnpm@9"', '"pnpm@10"'
    )
    assert paths["current"].stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "latest", "package.json"]


def test_human_output_without_write_says_nothing_was_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = files(tmp_path)
    assert run_in_process(argv(paths)) == Exit.CONFLICTS
    out = capsys.readouterr().out
    assert "applied:\n  packageManager\n  scripts a\n" in out
    assert "conflicts:\n  scripts b\n" in out
    assert "suggestions:\n  scripts c (added)\n" in out
    assert "nothing written (add --write to apply)" in out
    assert paths["current"].read_text() == CURRENT


@pytest.mark.parametrize("write", [False, True])
def test_conflicts_left_exit_4_and_a_clean_merge_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], write: bool
) -> None:
    """Conflicts left for a person end as in every command (4), with or without --write;
    the applied items are written all the same."""
    extra = ("--write",) if write else ()
    paths = files(tmp_path)
    assert main(["merge-fields", *argv(paths, "--json", *extra)]) == Exit.CONFLICTS
    assert len(json.loads(capsys.readouterr().out)["conflicts"]) == 1
    assert ('"pnpm@10"' in paths["current"].read_text()) is write
    clean = files(tmp_path / "clean", CURRENT.replace('"b": "mine"', '"b": "1"'))
    assert main(["merge-fields", *argv(clean, "--json", *extra)]) == Exit.OK
    assert json.loads(capsys.readouterr().out)["conflicts"] == []


@pytest.mark.parametrize("role", ["baseline", "latest", "current"])
def test_missing_file_names_the_role(tmp_path: Path, role: str) -> None:
    paths = files(tmp_path)
    paths[role].unlink()
    with pytest.raises(TetherError) as missing:
        run_in_process(argv(paths))
    assert str(missing.value) == (
        f"{paths[role]}: cannot read the {role} file (No such file or directory)"
    )


@pytest.mark.parametrize("role", ["baseline", "latest", "current"])
def test_unparsable_file_names_the_role_and_nothing_is_written(tmp_path: Path, role: str) -> None:
    paths = files(tmp_path)
    paths[role].write_text('{"scripts": {"a": 1, "a": 2}}')
    before = paths["current"].read_bytes()
    with pytest.raises(TetherError, match=f"^{role} file does not parse: invalid JSON: duplicate"):
        run_in_process(argv(paths, "--write", "--json"))
    assert paths["current"].read_bytes() == before


def test_unknown_preset_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        run_in_process(["--preset", "nope", "--baseline", "a", "--latest", "b", "--current", "c"])
    assert caught.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_exit_codes_through_the_command_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = files(tmp_path)
    assert main(["merge-fields", *argv(paths, "--json")]) == Exit.CONFLICTS
    assert json.loads(capsys.readouterr().out)["conflicts"][0]["key"] == "b"
    paths["current"].write_text("[]")
    assert main(["merge-fields", *argv(paths, "--json")]) == 1
    captured = capsys.readouterr()
    message = "current file does not parse: the top level is a list, not a mapping"
    assert captured.err == f"tether: {message}\n"
    # With --json the error is also the one JSON document on stdout.
    assert json.loads(captured.out) == {
        "schema_version": 1,
        "error": {"message": message, "kind": "error", "exit_code": 1},
    }


def test_through_the_tether_program(tmp_path: Path) -> None:
    paths = files(tmp_path)
    env: dict[str, str | None] = {"PYTHONPATH": str(Path(merge_fields_cmd.__file__).parents[2])}
    command = ["merge-fields", *argv(paths, "--json", "--write")]
    done = run_process(*command, env=env)
    assert done.returncode == Exit.CONFLICTS, done.stderr
    assert [item["key"] for item in json.loads(done.stdout)["applied"]] == ["packageManager", "a"]
    assert '"pnpm@10"' in paths["current"].read_text()
    paths["latest"].write_text("{")
    done = run_process(*command, env=env)
    assert done.returncode == 1
    assert done.stderr.startswith("tether: latest file does not parse: invalid JSON")
    message = json.loads(done.stdout)["error"]["message"]
    assert done.stderr.rstrip("\n").endswith(": " + message)
    paths["latest"].unlink()
    done = run_process(*command, env=env)
    assert done.returncode == 1
    assert done.stderr == (
        f"tether: {paths['latest']}: cannot read the latest file (No such file or directory)\n"
    )
