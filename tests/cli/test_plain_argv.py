"""``status``, ``check`` and ``update`` read their command line without argparse
(``cli/plain_argv.py``) when they understand it whole, and hand every other line to
argparse: what they read must be what argparse makes of the same line, and a run must print,
write and exit the same either way."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import call, make_release, run_forked, run_tether, schema_validator
from tether.cli import main as cli_main
from tether.cli.main import build_parser
from tether.cli.parsing import ACTIVE_PARSER, STRAY_WORDS, is_removed
from tether.cli.plain_argv import GLOBAL_SWITCHES, SWITCHES, VALUED, plain_arguments
from tether.cli.usage_errors import CommandLineError
from tether.errors import command_exits
from tether.state import crashpoint

# Lines read without argparse.
READ = [
    ["status"],
    ["check"],
    ["status", "--json"],
    ["check", "--json", "--strict"],
    ["-q", "status"],
    ["-v", "--no-color", "--quiet", "check", "-v"],
    ["status", "-C", "proj", "--all", "--check-latest", "--no-regions"],
    ["status", "--project", "a", "--project=b"],
    ["status", "--source=", "--profile", "gaia"],
    ["status", "--source", "", "--answers-file", "answers.yml", "--trust"],
    ["status", "--source", "x=y", "--json", "--json"],
    ["check", "--fail-on", "owned-drift,leftovers", "--fail-on", " leftovers , action-required"],
    ["check", "--fail-on=", "--strict"],
    ["check", "--fail-on", ","],
    ["status", "--profile", "native", "--profile", "gbrain"],
    ["check", "--source", "/a b/c", "-C", "with space"],
    ["update"],
    ["update", "--yes", "--json"],
    ["-q", "update", "-y", "--dry-run", "--all"],
    ["update", "--to", "1.1.0", "-C", "proj", "--source=shelf", "--switch-upstream"],
    ["update", "--auto", "ours", "--auto=take-theirs", "--conflict", "patch"],
    ["update", "--conflict=markers", "--delete-removed", "--allow-dirty", "--branch", "b"],
    ["update", "--no-branch", "--no-regions", "--no-programs", "--skip-migrations"],
    ["update", "--abandon", "--profile", "gaia", "--project", "p", "-v"],
    ["update", "--data", "a=1", "--data=b=c=2", "--answers-file", "x.yml", "--trust"],
    ["update", "--to=", "--branch=", "--json", "--no-color"],
]
# Lines argparse refuses (exit 2, its usage line): left to it.
REFUSED = [
    ["status", "DIR"],
    ["status", "--bogus"],
    ["status", "--jso"],
    ["status", "--json=yes"],
    ["status", "--strict"],  # check's flag only
    ["status", "--fail-on", "x"],
    ["status", "-C"],
    ["status", "--source"],
    ["status", "--source", "-x"],
    ["status", "--", "-C", "x"],
    ["--json", "status"],
    ["-C", "proj", "status"],
    ["status", "status"],
    ["check", "--fail-on"],
    ["update", "DIR"],
    ["update", "--pr"],
    ["update", "--dry"],
    ["update", "--auto", "mine"],
    ["update", "--auto"],
    ["update", "--conflict", "bogus"],
    ["update", "--branch", "b", "--no-branch"],
    ["update", "--no-branch", "--branch=b"],
    ["update", "--yes=1"],
    ["update", "--strict"],
    ["update", "--check-latest"],
    ["--yes", "update"],
]
# Lines left to argparse that it takes: help, other commands, spellings not read here.
LEFT = [
    *REFUSED,
    [],
    ["--help"],
    ["-V"],
    ["status", "-h"],
    ["check", "--help"],
    ["status", "-qv"],
    ["status", "-Cproj"],
    ["status", "-C=proj"],
    ["status", "-C", "-"],
    ["update", "-yq"],
    ["update", "--help"],
    ["update", "-Cproj"],
    ["update", "--data", "-x"],
    ["update", "--to", "-1"],  # argparse takes it (nothing here looks like a negative number)
    ["init", "--json"],
    ["diff"],
]


def argparse_values(argv: list[str]) -> dict[str, object] | None:
    """What argparse's parser makes of ``argv``, None when it refuses it or leaves words over
    (the entry point then stops with a usage error)."""
    parser = build_parser(argv)
    try:
        args, extras = parser.parse_known_args(argv)
    except CommandLineError:
        return None
    except SystemExit:  # --help, --version
        return None
    if extras or not getattr(args, "_run", None):
        return None
    return {
        key: value
        for key, value in vars(args).items()
        if key not in {ACTIVE_PARSER, "_run", STRAY_WORDS}
    }


@pytest.mark.parametrize("argv", READ, ids=" ".join)
def test_a_line_read_without_argparse_means_what_argparse_makes_of_it(argv: list[str]) -> None:
    read = plain_arguments(argv)
    assert read is not None, "this line should be read without argparse"
    assert read == argparse_values(argv)


@pytest.mark.parametrize("argv", LEFT, ids=lambda argv: " ".join(argv) or "(nothing)")
def test_every_other_line_is_left_to_argparse(argv: list[str]) -> None:
    assert plain_arguments(argv) is None


@pytest.mark.parametrize("command", sorted(SWITCHES))
def test_the_tables_hold_every_flag_argparse_gives_the_command(command: str) -> None:
    """A flag added to the command's parser and not here would be left to argparse (slower,
    never wrong); one here that argparse does not take would be read wrongly."""
    args, _ = build_parser([command]).parse_known_args([command])
    parser = getattr(args, ACTIVE_PARSER)
    switches, valued = {}, {}
    for action in parser._actions:
        if is_removed(action) or action.dest == "help":
            continue
        for spelling in action.option_strings:
            (switches if action.nargs == 0 else valued)[spelling] = action.dest
    assert switches == {**SWITCHES[command], **GLOBAL_SWITCHES}
    assert valued == VALUED[command]


# --- the same run either way ---------------------------------------------------------------

V1 = {
    "a.txt": "one\ntwo\nthree\n",
    "b.txt": "owned\n",
    "c.txt": "c\n",
    "d.txt": "dropped later\n",
    "e.txt": "e\n",
}
V2 = {
    "a.txt": "one\nTWO upstream\nthree\n",
    "b.txt": "owned\n",
    "c.txt": "c changed upstream\n",
    "e.txt": "e\n",
}


def installed(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", V1, {"b.txt": "owned"})
    make_release(shelf, "1.1.0", V2, {"b.txt": "owned"})
    project = tmp_path / "project"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def scenario(name: str, tmp_path: Path) -> Path:
    """A project in the state ``name`` says."""
    if name == "not a project":
        (tmp_path / "empty").mkdir()
        return tmp_path / "empty"
    project = installed(tmp_path)
    if name == "drift":
        (project / "b.txt").write_text("owned, edited here\n")
        (project / "c.txt").unlink()
        (project / "new.txt").write_text("added here\n")
    elif name == "conflicts and leftovers":
        (project / "a.txt").write_text("one\nTWO mine\nthree\n")
        (project / "d.txt").write_text("dropped later, edited here\n")
        update = ["update", "--yes", "--no-branch", "--to", "1.1.0", "-C", str(project)]
        assert call(*update) == 4  # the conflict in a.txt is left for a person
        assert "<<<<<<<" in (project / "a.txt").read_text()
        assert (project / "d.txt").exists()  # edited, so left here as a leftover
    elif name == "interrupted run":
        update = ["update", "--yes", "--no-branch", "--to", "1.1.0", "-C", str(project)]
        crashed = run_forked(*update, crash="file-written:1")
        assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    return project


SCENARIOS = ["clean", "drift", "conflicts and leftovers", "interrupted run", "not a project"]
LINES = [
    ["status"],
    ["status", "--json"],
    ["status", "--all", "-v"],
    ["check"],
    ["check", "--json"],
    ["check", "--strict", "--fail-on", "leftovers,owned-drift"],
    ["status", "--check-latest", "--json"],
    ["check", "--check-latest"],
]


def both_ways(
    argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The run read without argparse, then the same run with argparse's parser."""
    read = []

    def recorded(line: list[str]) -> dict[str, object] | None:
        read.append(plain_arguments(line))
        return read[-1]

    with monkeypatch.context() as patch:
        patch.setattr(cli_main, "plain_arguments", recorded)
        plain = run_tether(*argv, cwd=cwd)
    assert read and read[0] is not None, "the run was not read without argparse"
    with monkeypatch.context() as patch:
        patch.setattr(cli_main, "plain_arguments", lambda line: None)
        full = run_tether(*argv, cwd=cwd)
    return _seen(plain), _seen(full)


def _seen(result: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """The exit code and output of a run, the time -v reports taken out."""
    return result.returncode, result.stdout, re.sub(r"after [0-9.]+ s", "after N s", result.stderr)


@pytest.mark.parametrize("name", SCENARIOS)
def test_status_and_check_print_the_same_without_argparse(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = scenario(name, tmp_path)
    for argv in LINES:
        plain, full = both_ways(argv, project, monkeypatch)
        assert plain == full, argv
        code, out, err = plain
        if name == "not a project":
            assert code == 1 and "tether:" in err, argv
            continue
        if "--json" in argv:
            schema_validator(argv[0]).validate(json.loads(out))
        if name == "clean":
            newer = argv[0] == "check" and "--check-latest" in argv  # 1.1.0 is on the shelf
            assert code == (3 if newer else 0), (argv, out, err)
        if name == "drift":
            assert code == (3 if argv[0] == "check" else 0), (argv, out, err)
        if name in {"conflicts and leftovers", "interrupted run"} and argv[0] == "check":
            assert code == 3, (argv, out, err)


def test_drift_is_reported_without_argparse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the run read without argparse reports, spelled out: every kind of drift."""
    project = scenario("drift", tmp_path)
    plain, _ = both_ways(["status", "--json", "-C", str(project)], tmp_path, monkeypatch)
    document = json.loads(plain[1])
    assert document["modified"] == ["b.txt"]
    assert document["modified_owned"] == ["b.txt"]
    assert document["deleted"] == ["c.txt"]
    assert document["clean"] == 3


def test_conflicts_leftovers_and_an_interrupted_run_without_argparse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = scenario("conflicts and leftovers", tmp_path / "left")
    plain, _ = both_ways(["status", "--json"], left, monkeypatch)
    document = json.loads(plain[1])
    assert [item["path"] for item in document["conflicts"]] == ["a.txt"]
    assert document["leftovers"] == ["d.txt"]
    stopped = scenario("interrupted run", tmp_path / "stopped")
    plain, _ = both_ways(["check", "--json"], stopped, monkeypatch)
    assert plain[0] == 3
    assert json.loads(plain[1])["unfinished"]["to_version"] == "1.1.0"


# Update lines run both ways, each on a fresh project in the state named.
UPDATE_LINES = [
    ("clean", ["update", "--yes", "--no-branch"]),
    ("clean", ["update", "--yes", "--json", "--no-branch"]),
    ("clean", ["update", "--dry-run"]),
    ("clean", ["update", "--dry-run", "--json", "--to", "1.1.0"]),
    ("clean", ["update", "--json", "--no-branch"]),  # no terminal, no --yes: refused
    ("clean", ["update", "-y", "--to", "1.0.0", "--no-branch"]),  # already there
    ("clean", ["update", "-y", "--to", "9.9.9", "--no-branch"]),  # no such release
    ("drift", ["update", "--yes", "--json", "--no-branch", "--all"]),
    ("conflict", ["update", "--yes", "--no-branch", "--json"]),
    ("conflict", ["update", "--yes", "--no-branch", "--auto", "theirs", "--json"]),
    ("conflict", ["update", "-y", "--no-branch", "--auto=keep-mine", "--conflict", "patch"]),
    ("conflict", ["update", "-y", "--no-branch", "--conflict=patch", "--delete-removed"]),
    ("conflict", ["-q", "update", "-y", "-C", "project", "--no-branch", "--to", "1.1.0"]),
    ("interrupted run", ["update", "--yes", "--no-branch", "--json"]),
    ("interrupted run", ["update", "--abandon", "--json"]),
    ("not a project", ["update", "--yes", "--json"]),
]


def _update_scenario(name: str, where: Path) -> Path:
    if name != "conflict":
        return scenario(name, where)
    project = installed(where)
    (project / "a.txt").write_text("one\nTWO mine\nthree\n")
    (project / "d.txt").write_text("dropped later, edited here\n")
    return project


def _tree(root: Path) -> dict[str, bytes]:
    """The project's files with their bytes, tether's records left out (they hold run ids
    and times)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".tether" not in path.relative_to(root).parts
    }


def _same_words(text: str, root: Path) -> str:
    """A run's output with what differs between two runs taken out: the folder it ran in,
    run ids, times and the time -v reports."""
    text = text.replace(str(root), "WHERE")
    text = re.sub(r"\d{8}T\d{6}Z?[-\w]*", "RUN", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[.\d]*(Z|[+-]\d\d:\d\d)?", "TIME", text)
    return re.sub(r"after [0-9.]+ s", "after N s", text)


@pytest.mark.parametrize(
    ("name", "argv"), UPDATE_LINES, ids=lambda x: " ".join(x) if isinstance(x, list) else x
)
def test_update_prints_and_writes_the_same_without_argparse(
    name: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same update line on two copies of one project, read without argparse and with
    it: the same exit code, output and resulting files."""
    seen = []
    for way in ("plain", "argparse"):
        where = tmp_path / way
        where.mkdir()
        project = _update_scenario(name, where)
        read: list[dict[str, object] | None] = []

        def recorded(
            line: list[str], way: str = way, read: list[dict[str, object] | None] = read
        ) -> dict[str, object] | None:
            read.append(plain_arguments(line) if way == "plain" else None)
            return read[-1]

        with monkeypatch.context() as patch:
            patch.setattr(cli_main, "plain_arguments", recorded)
            result = run_tether(*argv, cwd=project if "-C" not in argv else project.parent)
        if way == "plain":
            assert read and read[0] is not None, "the run was not read without argparse"
        seen.append(
            (
                result.returncode,
                _same_words(result.stdout, where),
                _same_words(result.stderr, where),
                _tree(project),
            )
        )
    assert seen[0] == seen[1]
    code, out, err, _ = seen[0]
    assert code in command_exits("update"), (code, err)
    if "--json" in argv and out:
        json.loads(out)


@pytest.mark.parametrize("argv", REFUSED, ids=" ".join)
def test_a_line_argparse_refuses_is_refused_as_before(argv: list[str], tmp_path: Path) -> None:
    """Left to argparse, a wrong line ends as argparse's parser ends it: its usage, one line
    naming the command, exit 2."""
    assert argparse_values(argv) is None
    result = run_tether(*argv, cwd=tmp_path)
    assert result.returncode == 2, (argv, result.stderr)
    assert result.stderr.splitlines()[-1].startswith("tether"), result.stderr


def _words_of_the_tables() -> list[str]:
    """Every flag the hand reader knows, and values that look like flags, choices or none."""
    flags = set(GLOBAL_SWITCHES)
    for table in (*SWITCHES.values(), *VALUED.values()):
        flags |= set(table)
    values = [
        "",
        "x",
        "-x",
        "--",
        "a=b",
        "ours",
        "theirs",
        "take-theirs",
        "markers",
        "1.1.0",
        "owned-drift,leftovers",
        ",",
        "-1",
        "status",
        "update",
        "check",
        "with space",
    ]
    return (
        sorted(flags)
        + [f"{flag}={value}" for flag in sorted(flags) for value in ("", "x")]
        + values
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(GLOBAL_SWITCHES)).map(lambda flag: [flag]) | st.just([]),
    st.sampled_from(sorted(SWITCHES)),
    st.lists(st.sampled_from(_words_of_the_tables()), max_size=6),
)
def test_any_line_the_hand_reader_takes_means_what_argparse_makes_of_it(
    before: list[str], command: str, words: list[str]
) -> None:
    """Lines drawn from the tables' own flags and tricky values: whenever the hand reader
    takes a line, argparse makes the same values of it (it may leave any line to argparse)."""
    argv = [*before, command, *words]
    read = plain_arguments(argv)
    if read is not None:
        assert read == argparse_values(argv), argv
