"""One exit-code table, obeyed: docs/cli.md's per-command table is ``COMMAND_EXITS``, every
command is in it, and a command ending with a code outside its row is refused while the
suite runs (``TETHER_CHECK_EXITS``, set in conftest.py), so every run the tests make checks
the table against what the code returns."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from builders import call, make_release, run_tether, tree_digest, write_files
from tests.architecture.test_json_schemas import SCHEMA_OF
from tether.cli import main as cli_main
from tether.cli.main import CHECK_EXITS
from tether.errors import COMMAND_EXITS, EVERY_COMMAND, Exit, command_exits

DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
COLUMNS = (Exit.FOUND, Exit.CONFLICTS)


def documented_table() -> dict[str, frozenset[Exit]]:
    section = DOCS_CLI.read_text().split("### Exit codes per command", 1)[1].split("\n## ")[0]
    table: dict[str, frozenset[Exit]] = {}
    for line in section.splitlines():
        row = re.match(r"^\| `([a-z -]+)` \|(.*)\|$", line)
        if row is None:
            continue
        cells = [cell.strip() for cell in row.group(2).split("|")]
        assert len(cells) == len(COLUMNS), line
        named = zip(COLUMNS, cells, strict=True)
        table[row.group(1)] = frozenset(code for code, cell in named if cell != "—")
    return table


def test_the_documented_table_is_the_code_table() -> None:
    assert documented_table() == COMMAND_EXITS


def test_every_command_has_a_row() -> None:
    """A new command (or subcommand) needs a row: the commands are those that take --json,
    which is every one (tests/architecture/test_json_schemas.py holds that list to the parser)."""
    assert set(COMMAND_EXITS) == set(SCHEMA_OF)


def _runnable(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[str]:
    """Every command a command line can run: a parser with no sub-commands, or whose
    sub-command may be left out (``snapshot`` and ``snapshot check``)."""
    choices: dict[str, argparse.ArgumentParser] = {}
    required = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            choices, required = dict(action.choices), action.required
    found = [" ".join(words)] if words and not required else []
    for word, sub in choices.items():
        found += _runnable(sub, (*words, word))
    return found


def test_every_command_the_parser_runs_has_a_row() -> None:
    """Also one that takes no --json: a command without a row would be held to no table."""
    from tether.cli.main import build_full_parser

    assert sorted(set(_runnable(build_full_parser())) - set(COMMAND_EXITS)) == []


def test_rows_name_only_the_codes_beyond_every_commands() -> None:
    assert all(row <= {Exit.FOUND, Exit.CONFLICTS} for row in COMMAND_EXITS.values())
    assert command_exits("merge-fields") == EVERY_COMMAND | {Exit.CONFLICTS}
    assert command_exits("nothing") == EVERY_COMMAND  # a bare `tether`: its help, exit 2


def test_a_code_outside_its_row_is_refused_while_checking(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A table whose status row leaves out 0: a clean ``status`` is then refused."""
    project = native_project(tmp_path)
    monkeypatch.setattr(cli_main, "command_exits", lambda command: frozenset({Exit.ERROR}))
    monkeypatch.setenv(CHECK_EXITS, "1")
    with pytest.raises(AssertionError, match="tether status ended with 0, not in its"):
        cli_main.main(["status", "-C", str(project)])
    monkeypatch.delenv(CHECK_EXITS)
    assert cli_main.main(["status", "-C", str(project)]) == Exit.OK  # unchecked outside tests


# --- the fixes the table brought ---------------------------------------------------------


def gbrain_host(tmp_path: Path) -> Path:
    """A recipe installed into a host with the gbrain profile, then changed upstream."""
    recipe = tmp_path / "recipe"
    manifest = {
        "recipe": "brain-sync",
        "gbrain_version": "0.4.0",
        "target_root_relative_to_host_repo": "tools/gbrain",
        "files": [{"src": "src/rules.md", "target": "tools/gbrain/rules.md", "mode": "0644"}],
    }
    write_files(
        recipe, {"src/rules.md": "one\ntwo\n", "install/manifest.json": json.dumps(manifest)}
    )
    host = tmp_path / "host"
    host.mkdir()
    assert call("init", "--profile", "gbrain", "--source", str(recipe), "-C", str(host)) == 0
    (recipe / "src/rules.md").write_text("one\ntwo\nthree\n")
    return host


def native_project(tmp_path: Path) -> Path:
    make_release(tmp_path / "rel", "1.0.0", {"a.txt": "a\n"})
    make_release(tmp_path / "rel", "2.0.0", {"a.txt": "b\n"})
    project = tmp_path / "p"
    assert call("init", "--source", str(tmp_path / "rel"), "--to", "1.0.0", "-C", str(project)) == 0
    return project


@pytest.mark.parametrize("command", ["update", "refresh"])
def test_json_without_yes_ends_the_same_in_update_and_refresh(tmp_path: Path, command: str) -> None:
    """No terminal to ask on and no --yes: both stop before writing with the same code (1)
    and the same words, and --json changes nothing but the error document on stdout."""
    project = gbrain_host(tmp_path) if command == "refresh" else native_project(tmp_path)
    action = "refresh" if command == "refresh" else "apply the update"
    before = tree_digest(project)
    done = run_tether(command, "--json", "-C", str(project), input="y\n")
    message = f"not running on a terminal: pass --yes to {action} (nothing was written)"
    assert (done.returncode, done.stderr) == (Exit.ERROR, f"tether: {message}\n")
    error = json.loads(done.stdout)["error"]
    assert error == {"message": message, "kind": "error", "exit_code": Exit.ERROR}
    assert tree_digest(project) == before
