"""One dialect of flags: a walk over every (sub)command's parser asserts each flag keeps one
meaning and says what it is, list flags take commas and repetition alike, flags are taken only
as spelled, the removed spellings are refused in one line naming their replacement, the global
flags work before and after the command, and the prompts, ``-v``, ``-V`` and the completion
scripts behave.

Prompt tests put a real pseudo-terminal on tether's stdin and read its stdout and stderr
through separate pipes; completion tests run the real shells (zsh and fish when installed).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import shutil
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import NamedTuple

import pytest

from builders import (
    ForkedChild,
    call,
    git,
    make_release,
    run_tether,
    tree_digest,
    write_files,
)
from tether import __version__
from tether.cli.common import JOBS_DEFAULT_TEXT, project_dir
from tether.cli.main import COMMANDS, build_full_parser
from tether.cli.main import main as tether_main
from tether.cli.parsing import REMOVED, is_removed
from tether.errors import TetherError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def walk(
    parser: argparse.ArgumentParser, path: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser under ``parser`` with the words that lead to it ("" for tether)."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += walk(sub, f"{path} {name}".strip())
    return found


# One parser for the module: parsing never changes it.
FULL_PARSER = build_full_parser()
PARSERS = dict(walk(FULL_PARSER))


def sub_commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return found[0] if found else None


def runnable(path: str) -> bool:
    """A command a person runs: not tether itself, not a group that needs a sub-command."""
    subs = sub_commands(PARSERS[path])
    return bool(path) and (subs is None or not subs.required)


def option(path: str, spelling: str) -> argparse.Action | None:
    for action in PARSERS[path]._actions:
        if spelling in action.option_strings:
            return action
    return None


# --- one meaning per flag ----------------------------------------------------------------


class Meaning(NamedTuple):
    dest: str
    takes_value: bool
    metavars: frozenset[str] | None = None  # None: any
    help: str | None = None  # a fragment every use's help contains


def meaning(dest: str, value: bool, metavars: str = "", help: str | None = None) -> Meaning:
    return Meaning(dest, value, frozenset(metavars.split()) if metavars else None, help)


PROJECT = meaning("project", True, "DIR")
JOBS = meaning("jobs", True, "N", f"(default: {JOBS_DEFAULT_TEXT})")
CANONICAL: dict[str, Meaning] = {
    "-C": PROJECT,
    "--project": PROJECT,
    "--to": meaning("to", True, "V"),
    "--version": meaning("version", True, "V"),  # a release's version; tether's own: the top
    "--base-ref": meaning("base_ref", True, "REF SHA BRANCH"),
    "--baseline": meaning("baseline", True, "FILE"),
    "--latest": meaning("latest", True, "FILE"),
    "--current": meaning("current", True, "FILE"),
    "--result": meaning("result", True, "FILE"),
    "-j": JOBS,
    "--jobs": JOBS,
    "--exclude": meaning("exclude", True, "GLOB"),
    "--json": meaning("json", False, help="print one JSON document"),
    "-q": meaning("quiet", False),
    "--quiet": meaning("quiet", False),
    "-v": meaning("verbose", False),
    "--verbose": meaning("verbose", False),
    "--no-color": meaning("no_color", False),
    "-h": meaning("help", False),
    "--help": meaning("help", False),
    "-y": meaning("yes", False, help="apply without asking"),
    "--yes": meaning("yes", False, help="apply without asking"),
    "--dry-run": meaning("dry_run", False),
    "--source": meaning("source", True, "SRC"),
    "--profile": meaning("profile", True),
    "--all": meaning("list_all", False),
    "--check-latest": meaning("check_latest", False),
    "--no-regions": meaning("no_regions", False),
    "--conflict": meaning("conflict", True),
    "--auto": meaning("auto", True),
    "--abandon": meaning("abandon", False),
    "--allow-dirty": meaning("allow_dirty", False),
    "--delete-removed": meaning("delete_removed", False),
    "--continue-on-failure": meaning("continue_on_failure", False),
    "--isolate": meaning("isolate", True),
    "--out": meaning("out", True, "FILE DIR"),
    "--preset": meaning("preset", True, "P"),
    "--member": meaning("member", True, "NAME"),
    "--remit": meaning("remit", True, "GLOB"),
    "--remit-file": meaning("remit_file", True, "FILE"),
    "--machinery": meaning("machinery", True, "GLOB"),
    "--vocabulary": meaning("vocabulary", True),
    # the multi-project commands (fleet, deps, projects)
    "--registry": meaning("registry", True),
    "--projects": meaning("projects", True),
    # every campaign sub-command: the folder campaign folders live in. Elsewhere --dir is
    # only the removed spelling of -C, never a current one.
    "--dir": meaning("dir", True, "DIR"),
    # a project copier or cruft generated: update, status, check, diff (docs/templates.md)
    "--answers-file": meaning("answers_file", True, "PATH"),
    "--trust": meaning("trust", False),
    "--keyword": meaning("keyword", True),
    "--level": meaning("level", True),
    "--target-level": meaning("target_level", True, "L"),
    "--converge-engines": meaning("converge_engines", False),
    "--conflict-policy": meaning("conflict_policy", True),
    "--min-release-age": meaning("min_release_age", True),
    "--node-index": meaning("node_index", True),
    "--npm-registry": meaning("npm_registry", True),
    "--pypi-index": meaning("pypi_index", True),
    "--overrides": meaning("overrides", True),
    "--plan-dir": meaning("plan_dir", True),
    "--retries": meaning("retries", True),
    "--timeout": meaning("timeout", True),
}

# deps apply keeps a hidden --exclude that refuses package names with a pointer to
# --skip-package (docs/deps.md); nothing else may differ.
NOT_YET_UNIFIED = {("deps apply", "--exclude")}


def current_spellings(action: argparse.Action) -> list[str]:
    return [] if is_removed(action) else list(action.option_strings)


def uses() -> list[tuple[str, str, argparse.Action]]:
    """(command, spelling, action) for every current spelling on every parser below the top."""
    return [
        (path, spelling, action)
        for path, parser in PARSERS.items()
        if path
        for action in parser._actions
        for spelling in current_spellings(action)
    ]


def test_every_shared_flag_has_one_registered_meaning() -> None:
    where: dict[str, set[str]] = {}
    for path, spelling, _ in uses():
        where.setdefault(spelling, set()).add(path)
    shared = {spelling for spelling, paths in where.items() if len(paths) > 1}
    assert shared - set(CANONICAL) == set(), "a flag on several commands needs a meaning here"


def test_each_flag_means_the_same_on_every_command() -> None:
    wrong = []
    for path, spelling, action in uses():
        expected = CANONICAL.get(spelling)
        if expected is None or (path, spelling) in NOT_YET_UNIFIED:
            continue
        seen = Meaning(action.dest, action.nargs != 0, None, None)
        if (seen.dest, seen.takes_value) != (expected.dest, expected.takes_value):
            wrong.append((path, spelling, seen.dest, seen.takes_value))
        if expected.metavars is not None and action.metavar not in expected.metavars:
            wrong.append((path, spelling, "metavar", action.metavar))
        if expected.help is not None and expected.help not in (action.help or ""):
            wrong.append((path, spelling, "help", action.help))
    assert wrong == []


def test_not_yet_unified_flags_are_still_there() -> None:
    """The exemptions above name real flags (remove each one when its flag is unified)."""
    for path, spelling in NOT_YET_UNIFIED:
        assert option(path, spelling) is not None, (path, spelling)


# deps apply's --exclude refuses package names with a pointer to --skip-package, hidden.
HIDDEN = {("deps apply", "--exclude")}


def test_every_flag_and_argument_says_what_it_is() -> None:
    silent = [
        (path, action.option_strings or action.dest)
        for path, parser in PARSERS.items()
        for action in parser._actions
        if not is_removed(action)
        and not isinstance(action, argparse._SubParsersAction)
        and not set(action.option_strings) & {spelling for p, spelling in HIDDEN if p == path}
        and (not action.help or action.help == argparse.SUPPRESS or not action.help.strip())
    ]
    assert silent == []


# Flags taking globs, paths or KEY=VALUE pairs: one value each (a comma is legal in them).
ONE_VALUE_EACH = {"GLOB", "PATH", "KEY=VALUE", None}


def list_flags() -> list[tuple[str, str]]:
    """(command, flag) for every flag that collects several values."""
    return [
        (path, action.option_strings[-1])
        for path, parser in PARSERS.items()
        for action in parser._actions
        if (path, action.option_strings[-1] if action.option_strings else "") not in HIDDEN
        and (isinstance(action, argparse._AppendAction) or type(action).__name__ == "NameList")
    ]


def test_a_flag_collecting_names_takes_commas_and_repetition_alike() -> None:
    names = {
        (path, flag)
        for path, flag in list_flags()
        if option(path, flag).metavar not in ONE_VALUE_EACH
    }
    assert {flag for _, flag in names} == {
        "--projects",
        "--keyword",
        "--skip-package",
        "--select",
        "--override-action",
        "--members",
        "--fail-on",
    }
    for path, flag in names:
        action = option(path, flag)
        assert type(action).__name__ == "NameList", (path, flag)  # cli/common.add_list
        required = {
            "deps scan": ["--level", "minor"],
            "deps plan": ["--level", "minor"],
            "deps apply": ["--level", "minor"],
            "campaign start": ["c", "--upstream", "u", "--to", "1"],
            "projects add": ["p"],
        }.get(path, [])
        words = path.split()
        both = parse(*words, *required, flag, "a,b", flag, " c ,a,")
        apart = parse(*words, *required, flag, "a", flag, "b", flag, "c")
        assert both == apart and both[action.dest] == ["a", "b", "c"], (path, flag)


def test_flags_taking_globs_or_paths_keep_commas() -> None:
    for path, flag in list_flags():
        action = option(path, flag)
        if action.metavar in ONE_VALUE_EACH:
            assert isinstance(action, argparse._AppendAction), (path, flag)
    assert parse("snapshot", "--exclude", "a,b.txt")["exclude"] == ["a,b.txt"]
    lists = DOCS.read_text(encoding="utf-8").split("### Lists", 1)[1].split("\n#", 1)[0]
    for flag in {flag for _, flag in list_flags()} - {"--data"}:
        assert f"`{flag}" in lists or f" {flag}`" in lists, flag


def test_keyword_lists_select_alike_in_fleet_and_campaign(tmp_path: Path) -> None:
    make_release(tmp_path / "rel", "1.0.0", {"a.txt": "a\n"})
    registry = str(tmp_path / "projects.json")
    for name, keywords in (("web", ["--keyword", "web"]), ("both", ["--keyword", "web,API"])):
        project = str(tmp_path / name)
        assert call("init", "--source", str(tmp_path / "rel"), "--to", "1.0.0", "-C", project) == 0
        assert call("projects", "add", project, *keywords, "--registry", registry) == 0
    for selection in (["--keyword", "api,web"], ["--keyword", "web", "--keyword", "api"]):
        status = run_tether("fleet", "status", "--json", "--registry", registry, *selection)
        assert [p["name"] for p in json.loads(status.stdout)["projects"]] == ["both"]
    start = ["campaign", "start", "--upstream", "u", "--to", "1", "--registry", registry]
    where = ["--dir", str(tmp_path / "campaigns"), "--json"]
    started = run_tether(*start, "c1", "--keyword", "web,api", *where)
    assert started.returncode == 0, started.stderr
    assert [r["name"] for r in json.loads(started.stdout)["repositories"]] == ["both"]
    none = run_tether(*start, "c2", "--keyword", "nope", *where)
    assert none.returncode == 1 and "carries every keyword (nope)" in none.stderr
    assert not (tmp_path / "campaigns" / "c2").exists()


def test_no_file_is_called_base() -> None:
    for path, spelling, action in uses():
        assert spelling != "--base", (path, action.dest)
    for path in PARSERS:
        base = option(path, "--base")
        if base is not None:  # only as the removed spelling of --base-ref or --baseline
            assert is_removed(base), path
    for path in PARSERS:
        ref = option(path, "--base-ref")
        if ref is not None:
            assert ref.metavar != "FILE", path


PROJECT_COMMANDS = {
    "init",
    "status",
    "check",
    "diff",
    "own",
    "update",
    "migrations",
    "refresh",
    "reapply",
    "changelog",
    "manifest build",
    "release pack",
    "audit scope",
    "audit shell",
    "audit findings write",
    "audit digest",
    "audit clear",
    "audit gate",
    "snapshot",
    "snapshot check",
    "demo",
    "pr",
}


def test_project_folder_is_minus_c_on_exactly_the_project_commands() -> None:
    with_c = {path for path in PARSERS if option(path, "-C") is not None}
    assert with_c == PROJECT_COMMANDS
    audit = {path for path in PARSERS if path.startswith("audit ") and runnable(path)}
    assert audit <= PROJECT_COMMANDS  # every audit sub-command
    for path in PROJECT_COMMANDS:
        action = option(path, "-C")
        assert action is not None and "--project" in action.option_strings, path


def test_target_version_is_to() -> None:
    for path in ("init", "update", "refresh", "fleet update", "changelog"):
        assert option(path, "--to") is not None, path


def test_three_versions_of_a_file_are_baseline_latest_current() -> None:
    for path in ("merge-fields", "region-compare"):
        for spelling in ("--baseline", "--latest", "--current"):
            assert option(path, spelling) is not None, (path, spelling)
    for spelling in ("--baseline", "--current", "--result"):
        assert option("verify", spelling) is not None, spelling


def test_every_command_takes_json_and_the_global_flags() -> None:
    for path in PARSERS:
        for spelling in ("-q", "-v", "--no-color"):
            assert option(path, spelling) is not None, (path, spelling)
        if runnable(path):
            assert option(path, "--json") is not None, path


def test_every_command_of_the_table_is_parsed() -> None:
    assert set(COMMANDS) == {path for path in PARSERS if path and " " not in path}


# --- removed spellings: refused in one line naming what to write instead ------------------

# (command, removed spelling) -> the end of its line. "DIR" is a project folder given as an
# argument (``tether init DIR``).
REMOVED_SPELLINGS: dict[tuple[str, str], str] = {
    ("update", "--pr"): "commit the update, then run 'tether pr'",
    ("fleet update", "--pr"): "commit in each project, then run 'tether pr' there",
    **{
        (f"audit {command}", "--root"): "use -C DIR"
        for command in ("scope", "shell", "findings write", "digest", "clear", "gate")
    },
    ("audit scope", "--base"): "use --base-ref REF",
    ("audit shell", "--base"): "use --base-ref REF",
    ("audit findings write", "--base"): "use --base-ref SHA",
    ("pr", "--base"): "use --base-ref BRANCH",
    ("verify", "--base"): "use --baseline FILE",
    ("verify", "--ours"): "use --current FILE",
    ("reapply", "--target"): "use -C DIR",
    ("snapshot", "--dir"): "use -C DIR",
    ("snapshot check", "--dir"): "use -C DIR",
    ("demo", "--dir"): "use -C DIR",
    ("init", "--version"): "use --to V",
    ("projects add", "--keywords"): "use --keyword K",
    **{
        (command, "DIR"): "give the project folder as -C DIR"
        for command in (
            "init",
            "status",
            "check",
            "update",
            "refresh",
            "pr",
            "changelog",
            "migrations",
            "manifest build",
            "release pack",
        )
    },
}


def removed_spellings() -> set[tuple[str, str]]:
    return {
        (path, getattr(action, REMOVED))
        for path, parser in PARSERS.items()
        for action in parser._actions
        if is_removed(action)
    }


def test_the_removed_spellings_are_the_listed_ones() -> None:
    assert removed_spellings() == set(REMOVED_SPELLINGS)


def removed_line(command: str, spelling: str, given: str) -> str:
    instead = REMOVED_SPELLINGS[command, spelling]
    if spelling == "DIR":
        return f"tether {command}: unexpected argument {given!r}: {instead}"
    return f"tether {command}: {spelling} was removed; {instead}"


@pytest.mark.parametrize(("command", "spelling"), sorted(REMOVED_SPELLINGS))
def test_a_removed_spelling_is_refused_in_one_line_naming_what_replaced_it(
    tmp_path: Path, command: str, spelling: str
) -> None:
    words = command.split()
    if spelling == "DIR":
        forms = [[*words, "p"], [*words, "-q", "p"]]
    else:
        forms = [[*words, spelling], [*words, spelling, "p"], [*words, f"{spelling}=p"]]
    for argv in forms:
        result = run_tether(*argv, cwd=tmp_path)
        assert result.returncode == 2, argv
        assert result.stderr == removed_line(command, spelling, "p") + "\n", argv
        assert result.stdout == ""
    as_json = run_tether(*words, "--json", *forms[-1][len(words) :], cwd=tmp_path)
    assert as_json.returncode == 2
    error = json.loads(as_json.stdout)["error"]
    assert (error["kind"], error["exit_code"]) == ("usage", 2)
    assert as_json.stderr == f"tether {command}: {error['message']}\n"
    assert list(tmp_path.iterdir()) == []  # nothing ran


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("update", "--too", "2.0"), "unrecognized argument --too; did you mean --to?"),
        (("status", "p", "--al"), "unrecognized argument --al; did you mean --all?"),
        (("init", "p"), "unexpected argument 'p': give the project folder as -C DIR"),
        (("status", "--", "p"), "unexpected argument 'p': give the project folder as -C DIR"),
    ],
)
def test_a_stray_word_is_blamed_only_when_no_flag_was_mistyped(
    tmp_path: Path, argv: tuple[str, ...], line: str
) -> None:
    """After a mistyped flag the word is most likely its value: the flag is what to fix. A
    stray word is still named when a required flag is missing (``init`` without
    ``--source``) and after ``--``."""
    result = run_tether(*argv, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"tether {argv[0]}: {line}"
    assert list(tmp_path.iterdir()) == []


def test_removed_spellings_are_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Removed spellings", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    for command, spelling in REMOVED_SPELLINGS:
        shown = "a project folder as an argument" if spelling == "DIR" else f"`{spelling}"
        assert any(shown in row and f"`{command}`" in row for row in rows), (command, spelling)


# --- the old spellings parse to what the new ones do ------------------------------------


def parse(*argv: str) -> dict[str, object]:
    namespace = FULL_PARSER.parse_args(list(argv))
    return {k: v for k, v in vars(namespace).items() if not k.startswith("_")}


@pytest.mark.parametrize("command", ["init", "status", "check", "update", "refresh", "pr"])
def test_minus_c_and_project_name_the_same_folder(command: str) -> None:
    extra = ("--source", "S") if command == "init" else ()
    given = [
        FULL_PARSER.parse_args([command, *extra, *where])
        for where in (["-C", "p"], ["--project", "p"], ["--project=p"])
    ]
    assert {project_dir(args) for args in given} == {Path("p")}


def test_snapshot_check_takes_minus_c_before_or_after_check() -> None:
    before = parse("snapshot", "-C", "d", "check", "--baseline", "b")
    after = parse("snapshot", "check", "-C", "d", "--baseline", "b")
    assert before == after and before["project"] == "d"


@pytest.mark.parametrize(
    "argv",
    [
        ("-v", "--no-color", "-q", "status"),
        ("status", "-v", "--no-color", "-q"),
        ("-v", "snapshot", "--no-color", "check", "-q", "--baseline", "b"),
        ("audit", "findings", "write", "-vq", "--no-color", "--member", "m"),
    ],
)
def test_global_flags_before_and_after_the_command(argv: tuple[str, ...]) -> None:
    parsed = parse(*argv, *(("--base-ref", "x", "--findings", "-") if "write" in argv else ()))
    assert (parsed["verbose"], parsed["no_color"], parsed["quiet"]) == (True, True, True)
    assert parse("status")["verbose"] is False and parse("status")["no_color"] is False


# --- flags are taken only as spelled ----------------------------------------------------


def test_no_parser_takes_a_shortened_flag() -> None:
    assert [path for path, parser in PARSERS.items() if parser.allow_abbrev] == []


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (("update", "--yes", "--dry"), "--dry-run"),
        (("status", "--al"), "--all"),
        (("fleet", "update", "--yes", "--dry"), "--dry-run"),
    ],
)
def test_a_shortened_flag_is_refused_with_the_full_one_suggested(
    tmp_path: Path, shelf: Path, argv: tuple[str, ...], meant: str
) -> None:
    project = tmp_path / "p"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    registry = tmp_path / "projects.json"
    call("projects", "add", str(project), "--registry", str(registry))
    before = tree_digest(tmp_path)
    where = ("--registry", str(registry)) if argv[0] == "fleet" else ("-C", str(project))
    result = run_tether(*argv, *where)
    assert result.returncode == 2
    command = " ".join(word for word in argv if not word.startswith("-"))
    shortened = argv[-1]
    assert result.stderr.splitlines()[-1] == (
        f"tether {command}: unrecognized argument {shortened}; did you mean {meant}?"
    )
    assert result.stdout == ""
    assert tree_digest(tmp_path) == before


# --- end to end: the canonical spellings do the work ----------------------------------------


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "a1\n", "b.txt": "b1\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a2\n", "b.txt": "b1\n"})
    return shelf


def test_init_with_to_and_minus_c_installs(tmp_path: Path, shelf: Path) -> None:
    new = tmp_path / "new"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(new)) == 0
    assert (new / "a.txt").read_text() == "a1\n"
    assert (new / ".tether/state.json").is_file()
    refused = run_tether("init", "--source", str(shelf), "--version", "1.0.0", "-C", str(new))
    assert refused.returncode == 2 and "--version was removed; use --to V" in refused.stderr


def project_files(root: Path) -> dict[str, bytes]:
    """The files a project holds, without the run locks (tether's runtime folder, gbrain's
    refresh lock: empty files a run leaves behind, as every run does) and the cache."""
    return {
        k: v
        for k, v in tree_digest(root).items()
        if not k.startswith(".tether/") and not k.endswith(".gbrain-source.refresh.lock")
    }


def test_audit_scope_with_minus_c_and_base_ref(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"s/a.sh": "echo a\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "switch", "-qc", "feature")
    write_files(repo, {"s/a.sh": "echo b\n", "s/new.sh": "echo n\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    new = run_tether("audit", "scope", "--json", "-C", str(repo), "--base-ref", "main")
    assert new.returncode == 0, new.stderr
    assert json.loads(new.stdout)["files"] == ["s/a.sh", "s/new.sh"]
    sub = run_tether("audit", "scope", "-C", str(repo / "s"), "--base-ref", "main")
    assert sub.returncode == 2 and f"-C {repo / 's'} is not the top of a checkout" in sub.stderr


def test_snapshot_with_minus_c_records_and_checks(tmp_path: Path) -> None:
    tree, out = tmp_path / "tree", tmp_path / "snap.json"
    write_files(tree, {"a.txt": "a\n", "keep.log": "x\n"})
    recorded = run_tether("snapshot", "-C", str(tree), "--exclude", "*.log", "--out", str(out))
    assert recorded.returncode == 0, recorded.stderr
    assert "keep.log" not in json.loads(out.read_text())["files"]
    (tree / "a.txt").write_text("changed\n")
    checked = run_tether("snapshot", "-C", str(tree), "check", "--json", "--baseline", str(out))
    assert checked.returncode == 3
    assert json.loads(checked.stdout)["changed"] == [{"path": "a.txt", "change": "modified"}]
    missing = run_tether("snapshot", "check", "--baseline", str(out))
    assert missing.returncode == 2 and "needs -C DIR" in missing.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("audit", "shell", "-j", "0", "-C", "."),
        ("campaign", "run", "c1", "--dir", ".", "-j", "0"),
        ("deps", "scan", "--level", "minor", "-j", "0", "--registry", "r.json"),
    ],
)
def test_jobs_below_one_is_a_usage_error(tmp_path: Path, argv: tuple[str, ...]) -> None:
    result = run_tether(*argv, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "tether: --jobs must be at least 1\n"


def test_every_command_running_work_side_by_side_takes_the_one_jobs_flag() -> None:
    with_jobs = {path for path in PARSERS if option(path, "-j") is not None}
    assert with_jobs == {
        "audit shell",
        "fleet status",
        "fleet update",
        "campaign run",
        "deps scan",
        "deps plan",
        "deps apply",
        "deps notes",
    }
    for path in with_jobs:
        action = option(path, "-j")
        assert action is not None and action.default is None, path  # default_jobs() decides
    docs_row = next(line for line in DOCS.read_text().splitlines() if line.startswith("| `-j N`"))
    assert all(f"`{path}`" in docs_row for path in with_jobs)


def test_deps_requests_run_default_jobs_at_once() -> None:
    from tether.cli.common import default_jobs, jobs

    args = FULL_PARSER.parse_args(["deps", "scan", "--level", "minor"])
    assert jobs(args) == default_jobs()


def gbrain_host(tmp_path: Path) -> tuple[Path, Path]:
    """A recipe folder (version 0.4.0) installed into a host with ``--profile gbrain``."""
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
    return recipe, host


def test_refresh_to_must_name_the_recipe_folders_version(tmp_path: Path) -> None:
    recipe, host = gbrain_host(tmp_path)
    (recipe / "src/rules.md").write_text("one\ntwo\nthree\n")
    before = project_files(host)
    wrong = run_tether("refresh", "--yes", "--to", "9.9.9", "-C", str(host))
    assert wrong.returncode == 1
    assert wrong.stderr == (f"tether: {recipe}: the recipe folder holds version 0.4.0, not 9.9.9\n")
    assert project_files(host) == before
    right = run_tether("refresh", "--yes", "--json", "--to", "0.4.0", "-C", str(host))
    assert right.returncode == 0, right.stderr
    assert (host / "tools/gbrain/rules.md").read_text() == "one\ntwo\nthree\n"


def test_init_to_another_version_of_a_recipe_folder_installs_nothing(tmp_path: Path) -> None:
    recipe, _host = gbrain_host(tmp_path)
    target = tmp_path / "second"
    result = run_tether(
        "init", "--profile", "gbrain", "--source", str(recipe), "--to", "1.0", "-C", str(target)
    )
    assert result.returncode == 1 and "holds version 0.4.0, not 1.0" in result.stderr
    assert not target.exists()


# --- -V, -v ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags(flag: str) -> None:
    result = run_tether(flag)
    assert (result.returncode, result.stdout) == (0, f"tether {__version__}\n")


def test_verbose_names_the_folder_and_the_time(tmp_path: Path, shelf: Path) -> None:
    project = tmp_path / "p"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    result = run_tether("status", "--json", "-v", "-C", str(project))
    assert result.returncode == 0
    json.loads(result.stdout)  # stdout stays the one document
    lines = result.stderr.splitlines()
    assert lines[0] == f"tether: project {project}"
    assert re.fullmatch(r"tether: exit 0 after \d+\.\d\d s", lines[-1])
    assert run_tether("status", "-C", str(project)).stderr == ""


def test_verbose_shows_the_traceback_behind_an_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    quiet = run_tether("status", "-C", missing)
    loud = run_tether("-v", "status", "-C", missing)
    assert quiet.returncode == loud.returncode == 1
    assert "Traceback" not in quiet.stderr
    assert "Traceback (most recent call last)" in loud.stderr
    assert f"tether: {missing}: no such directory\n" in loud.stderr
    assert quiet.stderr == f"tether: {missing}: no such directory\n"


# --- prompts: one module, always on stderr ------------------------------------------------


def on_terminal_stdin(argv: list[str], prompt: str, reply: str) -> tuple[int, str, str]:
    """tether in a forked child with a pseudo-terminal as stdin (stderr a pipe, stdout
    captured): wait for ``prompt`` on stderr, type ``reply``; exit code, stdout, stderr."""
    leader, follower = pty.openpty()
    reader, writer = os.pipe()
    child = ForkedChild(partial(tether_main, list(argv)), stdin_fd=follower, stderr_fd=writer)
    os.close(follower)
    os.close(writer)
    err = b""
    deadline = time.monotonic() + 60
    try:
        while prompt.encode() not in err and time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], 0.5)
            if ready:
                chunk = os.read(reader, 4096)
                if not chunk:
                    break
                err += chunk
        assert prompt.encode() in err, err.decode()
        os.write(leader, reply.encode() + b"\n")
        while chunk := os.read(reader, 4096):
            err += chunk
        done = child.wait(timeout=60)
    finally:
        os.close(leader)
        os.close(reader)
        if child.poll() is None:
            child.kill()
            child.wait()
    return done.returncode, done.stdout, err.decode()


def test_refresh_json_on_a_terminal_asks_on_stderr(tmp_path: Path) -> None:
    """Consent is one rule for update and refresh, with or without --json (docs/cli.md,
    "Prompts and --yes"): on a terminal the question goes to stderr; "n" writes nothing and
    stdout holds the one document."""
    recipe, host = gbrain_host(tmp_path)
    (recipe / "src/rules.md").write_text("one\ntwo\nthree\n")
    argv = ["refresh", "--json", "-C", str(host)]
    code, out, err = on_terminal_stdin(argv, "Refresh these files? [y/N]", "n")
    assert code == 0, err
    assert json.loads(out)["status"] == "cancelled"  # stdout: one document, no question
    assert (host / "tools/gbrain/rules.md").read_text() != "one\ntwo\nthree\n"


def test_update_prompt_and_plan_go_to_stderr(tmp_path: Path, shelf: Path) -> None:
    project = tmp_path / "p"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    code, out, err = on_terminal_stdin(
        ["update", "-C", str(project)], "Apply this update? [y/N]", "n"
    )
    assert code == 0, err
    assert "Apply this update?" in err and "1.0.0 → 2.0.0" in err  # the plan, to answer
    assert "Apply this update?" not in out and out.strip()  # stdout: the report only
    assert (project / "a.txt").read_text() == "a1\n"


@pytest.mark.parametrize("command", ["update", "refresh"])
def test_no_terminal_and_no_yes_is_refused_in_one_wording(tmp_path: Path, command: str) -> None:
    if command == "refresh":
        _recipe, project = gbrain_host(tmp_path)
        action = "refresh"
    else:
        project = tmp_path / "p"
        make_release(tmp_path / "rel", "1.0.0", {"a.txt": "a\n"})
        make_release(tmp_path / "rel", "2.0.0", {"a.txt": "b\n"})
        call("init", "--source", str(tmp_path / "rel"), "--to", "1.0.0", "-C", str(project))
        action = "apply the update"
    before = tree_digest(project)
    result = run_tether(command, "-C", str(project), input="y\n")
    assert result.returncode == 1
    assert result.stderr == (
        f"tether: not running on a terminal: pass --yes to {action} (nothing was written)\n"
    )
    assert tree_digest(project) == before


def test_end_of_input_at_a_conflict_prompt_stops_before_writing(tmp_path: Path) -> None:
    from tether.cli.interact import choose_conflicts
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update

    make_release(tmp_path / "rel", "1.0.0", {"f.txt": "1\n2\n3\n"})
    make_release(tmp_path / "rel", "2.0.0", {"f.txt": "1\ntheirs\n3\n"})
    project = tmp_path / "p"
    call("init", "--source", str(tmp_path / "rel"), "--to", "1.0.0", "-C", str(project))
    (project / "f.txt").write_text("1\nmine\n3\n")
    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate)
    asked: list[str] = []

    def closed_input(prompt: str) -> str:
        asked.append(prompt)
        return ""

    with pytest.raises(TetherError, match="end of input"):
        choose_conflicts(prepared, closed_input, asked.append)
    assert len(asked) == 1  # asked once, not forever
    assert (project / "f.txt").read_text() == "1\nmine\n3\n"


# --- shell completion ---------------------------------------------------------------------


def completion_script(shell: str, tmp_path: Path) -> Path:
    result = run_tether("completion", shell)
    assert result.returncode == 0, result.stderr
    path = tmp_path / f"tether.{shell}"
    path.write_text(result.stdout)
    return path


def bash_complete(script: Path, line: str) -> list[str]:
    """What the bash completion offers for ``line`` (the cursor at its end)."""
    program = (
        f"source {script}\n"
        'read -ra COMP_WORDS <<< "$LINE"\n'
        '[[ "$LINE" == *" " ]] && COMP_WORDS+=("")\n'
        "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
        "_tether\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program],
        env={**os.environ, "LINE": line},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [word for word in done.stdout.splitlines() if word]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion(tmp_path: Path) -> None:
    script = completion_script("bash", tmp_path)
    assert bash_complete(script, "tether ") == list(COMMANDS)
    assert bash_complete(script, "tether up") == ["update"]
    assert bash_complete(script, "tether audit sc") == ["scope"]
    assert bash_complete(script, "tether audit findings ") == ["write"]
    assert bash_complete(script, "tether -q update --con") == ["--conflict"]
    assert bash_complete(script, "tether update -C /tmp --conflict ") == ["markers", "patch"]
    assert bash_complete(script, "tether completion ") == ["bash", "zsh", "fish"]
    offered = bash_complete(script, "tether audit scope --")
    assert "--base-ref" in offered and "--project" in offered
    assert "--base" not in offered and "--root" not in offered  # removed: not offered
    assert bash_complete(script, "tether status -C ") == []  # a folder: bash's file names


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_fish_completion(tmp_path: Path) -> None:
    script = completion_script("fish", tmp_path)

    def complete(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C {json.dumps(line)}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert complete("tether up") == ["update"]
    assert sorted(complete("tether audit ")) == sorted(
        ["scope", "shell", "findings", "digest", "clear", "gate"]
    )
    assert complete("tether audit scope --base") == ["--base-ref"]
    assert complete("tether update --conflict ") == ["markers", "patch"]
    assert complete("tether -q update -C /tmp --t") == ["--to"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_zsh_completion(tmp_path: Path) -> None:
    """An interactive zsh on a pseudo-terminal: type, press Tab, print the line it made (one
    shell for every line typed)."""
    script = completion_script("zsh", tmp_path)
    typed_and_expected = {
        "tether audit sc": "tether audit scope",
        "tether update --conf": "tether update --conflict",
        "tether update --conflict mar": "tether update --conflict markers",
        "tether audit scope --base-": "tether audit scope --base-ref",
    }
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvpe("zsh", ["zsh", "-f", "-i"], {**os.environ, "TERM": "dumb"})
    try:
        setup = f"autoload -Uz compinit; compinit -u -D; source {script}; echo READY\n"
        os.write(fd, setup.encode())
        _read_until(fd, b"\nREADY")
        for index, (typed, expected) in enumerate(typed_and_expected.items()):
            os.write(fd, typed.encode() + b"\t")
            # The completion has run once its text is drawn: only then the keys that follow.
            _read_until(fd, expected.removeprefix(typed).encode())
            # Ctrl-A, then wrap what the line became in an echo numbered for this line.
            os.write(fd, f'\x01echo "@{index}@\x05@@"\n'.encode())
            marker = re.compile(rf"\n@{index}@(.*?)@@".encode())
            found = marker.search(_read_until(fd, marker))
            assert found is not None
            # zsh drops its added space on Ctrl-A
            assert found.group(1).decode().rstrip() == expected
        os.write(fd, b"exit\n")
    finally:
        os.close(fd)  # a failure above leaves zsh running: the hang-up ends it
        os.waitpid(pid, 0)


def _read_until(fd: int, wanted: bytes | re.Pattern[bytes], timeout: float = 30) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (wanted in seen) if isinstance(wanted, bytes) else wanted.search(seen):
            return seen
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            seen += os.read(fd, 4096)
    raise AssertionError(f"never saw {wanted!r} in {seen!r}")


def test_completion_json_holds_the_script() -> None:
    result = run_tether("completion", "--json", "fish")
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["shell"] == "fish"
    assert document["script"] == run_tether("completion", "fish").stdout
