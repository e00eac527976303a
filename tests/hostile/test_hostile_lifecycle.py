"""Hostile release lifecycles (docs/lifecycle.md, docs/security.md): what a release's lifecycle
steps may run and write. A release runs no program in a dry run or under --no-programs, names
none of tether's own paths, prints nothing raw to the terminal, writes nothing it has not
listed and backed up, and cannot steer a write through a link a program made."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether, tree_digest

BASE = {"app.txt": "one\n"}


def shelf_with(tmp_path: Path, lifecycle: dict[str, object], files: dict[str, str]) -> Path:
    """Releases 1.0.0 (plain) and 2.0.0 (``files`` added, ``lifecycle`` declared)."""
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", BASE)
    make_release(shelf, "2.0.0", {"app.txt": "two\n", **files}, extra=lifecycle)
    return shelf


def installed(tmp_path: Path, shelf: Path, mine: dict[str, str] | None = None) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    for rel, text in (mine or {}).items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


def project_files(project: Path) -> dict[str, bytes]:
    """The project and tether's records, without the lock and the release cache."""
    return {
        rel: data
        for rel, data in tree_digest(project).items()
        if not rel.startswith((".tether/lock", ".tether/cache", ".git/"))
    }


# --- item 4: every lifecycle path obeys the reserved-path rule, at manifest load ------------


@pytest.mark.parametrize(
    ("lifecycle", "where"),
    [
        (
            {"post_update": [{"file": ".tether/state.json", "set": {"source": "evil"}}]},
            "post_update[0].file: '.tether/state.json'",
        ),
        (
            {"templates": [{"target": ".tether/state.json", "template": "t.tmpl"}]},
            "templates[0].target: '.tether/state.json'",
        ),
        (
            {"templates": [{"target": ".TETHER/journal.jsonl", "template": "t.tmpl"}]},
            "templates[0].target: '.TETHER/journal.jsonl'",
        ),
        (
            {"ownership": [{"paths": [".tether/lock"], "when": {"exists": "app.txt"}}]},
            "ownership[0].paths: '.tether/lock'",
        ),
        (
            {
                "notices": [
                    {"id": "n", "when": {"file": ".tether/state.json", "matches": "x"}, "text": "t"}
                ]
            },
            "notices[0] (n).when.file: '.tether/state.json'",
        ),
        (
            {"post_update": [{"file": ".git/config", "set": {"a": 1}}]},
            "post_update[0].file: '.git/config'",
        ),
    ],
)
def test_a_lifecycle_path_in_tethers_records_is_refused_at_manifest_load(
    tmp_path, lifecycle, where
):
    shelf = shelf_with(tmp_path, lifecycle, {"t.tmpl": "x\n"})
    project = installed(tmp_path, shelf)
    before = project_files(project)
    for args in (("--dry-run",), ("--yes", "--no-branch")):
        result = run_tether("update", *args, "-C", str(project))
        assert result.returncode == 1, result.stdout
        manifest = shelf / "2.0.0/.tether/manifest.json"
        assert result.stderr.startswith(f"tether: {manifest}: {where}: "), result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert project_files(project) == before
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["source"] == str(shelf) and state["version"] == "1.0.0"


def test_manifest_build_refuses_a_post_update_on_tethers_state(tmp_path, capsys):
    from builders import write_files

    repo = tmp_path / "upstream"
    config = (
        'name = "kit"\nversion = "2.0.0"\n\n[[post_update]]\nfile = ".tether/state.json"\n'
        'set = { source = "https://evil.example/kit.tar.gz" }\n'
    )
    write_files(repo, {"app.txt": "x\n", "tether.toml": config})
    assert call("manifest", "build", "-C", str(repo)) == 1
    err = capsys.readouterr().err
    assert "tether.toml: post_update[0].file: '.tether/state.json': path is reserved" in err
    assert err.count("\n") == 1
    assert not (repo / ".tether/manifest.json").exists()


# --- item 1: a release runs nothing without consent ----------------------------------------


def program(name: str) -> str:
    """A release program that appends its name to ``$PROOF``: a file outside the project, so
    nothing tether puts back in the project (a dry run's undo, a region's confinement) can
    hide that it ran."""
    return f'#!/bin/bash\necho {name} >> "$PROOF"\nexit 0\n'


START, END = "<!-- gen:start -->", "<!-- gen:end -->"
LIFECYCLE = {
    "migrations": [
        {
            "id": "early",
            "version": "2.0.0",
            "when": "before",
            "run": ["bash", "mig/early.sh"],
            "dry_run_args": ["--check"],
        },
        {"id": "late", "version": "2.0.0", "when": "after", "run": ["bash", "mig/late.sh"]},
    ],
    "regions": [
        {
            "id": "toc",
            "startMarker": START,
            "endMarker": END,
            "paths": ["doc.md"],
            "regenerate": {"interpreter": "bash", "operand": "gen/toc.sh", "args": []},
        }
    ],
}
PROGRAMS = {
    "mig/early.sh": program("early"),
    "mig/late.sh": program("late"),
    "gen/toc.sh": program("toc"),
    "doc.md": f"# Doc\n{START}\n{END}\n",
}


@pytest.fixture
def proof(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "proof.log"
    monkeypatch.setenv("PROOF", str(path))
    return path


def programs_project(tmp_path: Path) -> Path:
    return installed(tmp_path, shelf_with(tmp_path, LIFECYCLE, PROGRAMS))


def ran(proof: Path) -> list[str]:
    return sorted(proof.read_text().split()) if proof.exists() else []


def test_the_three_release_programs_run_on_a_plain_update(tmp_path, proof):
    """The fixture's programs do run when nothing stops them (so the tests below, where
    none runs, prove a switch at work and not a broken fixture)."""
    project = programs_project(tmp_path)
    result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert ran(proof) == ["early", "late", "toc"]
    assert json.loads(result.stdout)["programs_off"] is None


def test_a_dry_run_runs_no_release_program_and_lists_each(tmp_path, proof):
    project = programs_project(tmp_path)
    before = project_files(project)
    result = run_tether("update", "--dry-run", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert ran(proof) == [] and project_files(project) == before
    out = result.stdout
    assert "Programs the release ships that this update runs (3):" in out
    assert "bash mig/early.sh (migration early, before the merge, the release's copy)" in out
    assert "bash mig/late.sh (migration late, after the merge, from your tree)" in out
    assert "bash gen/toc.sh (region toc, after the merge, from your tree)" in out


@pytest.mark.parametrize(
    ("args", "env", "switch"),
    [
        (("--no-programs",), {}, "--no-programs"),
        (("--no-regions",), {}, "--no-regions"),
        ((), {"TETHER_NO_PROGRAMS": "1"}, "TETHER_NO_PROGRAMS=1"),
        ((), {"TETHER_NO_REGIONS": "1"}, "TETHER_NO_REGIONS=1"),
    ],
)
def test_a_switch_stops_every_release_program_and_says_so(
    tmp_path, monkeypatch, proof, args, env, switch
):
    project = programs_project(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    argv = ("update", "--yes", "--no-branch", *args, "-C", str(project))
    result = run_tether(*argv, "--json")
    assert result.returncode == 0, result.stderr
    assert ran(proof) == []  # neither migration, nor the region program
    doc = json.loads(result.stdout)
    assert doc["programs_off"] == switch and doc["migrations_skipped"] is True
    assert {(m["id"], m["status"], m["reason"]) for m in doc["migrations"]} == {
        ("early", "skipped", switch),
        ("late", "skipped", switch),
    }
    assert (project / "app.txt").read_text() == "two\n"  # the files were updated
    state = json.loads((project / ".tether/state.json").read_text())
    assert {k: v["status"] for k, v in state["applied_migrations"].items()} == {
        "early": "skipped",
        "late": "skipped",
    }
    if switch in ("--no-programs", "TETHER_NO_PROGRAMS=1"):  # region awareness stays on
        [region] = doc["regenerated"]
        assert region["status"] == "skipped" and switch in region["reason"]


def test_the_plan_a_person_confirms_names_each_program_and_the_switch(tmp_path):
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.report.update import render_plan_summary

    project = programs_project(tmp_path)
    for no_programs, title in (
        (False, "Programs the release ships that this update runs (3):"),
        (True, "Programs the release ships, not run (--no-programs) (3):"),
    ):
        prepared = prepare_update(UpdateRequest(project, no_programs=no_programs))
        assert isinstance(prepared, PreparedUpdate)
        plan = render_plan_summary(prepared.report("plan"))
        assert title in plan
        assert "bash mig/early.sh (migration early, before the merge" in plan
        assert "bash gen/toc.sh (region toc" in plan
    result = run_tether("update", "--yes", "--no-branch", "--no-programs", "-C", str(project))
    assert "MIGRATIONS SKIPPED (--no-programs): 2 due migration(s) did not run" in result.stdout


# --- item 3: release-supplied text reaches the terminal escaped ----------------------------

ESC = "\x1b[1A\x1b[2K"  # cursor up, erase the line: hides the line above from the reader
RLO = "\u202e"  # right-to-left override: shows text reversed
HOSTILE = {
    "migrations": [
        {
            "id": "m",
            "version": "2.0.0",
            "when": "after",
            "run": ["bash", "mig/m.sh", f"--wipe{ESC}"],
            "label": f"Label{ESC}\n  Forged row:{RLO}ok",
            "exit": {"ok": [0], "conflict": [4]},
        }
    ],
    "notices": [{"id": "n", "when": {"exists": "app.txt"}, "text": f"hidden\rSHOWN{ESC}"}],
    "templates": [
        {"target": "ci.yml", "template": "ci.yml.tmpl", "after_refresh": f"after{ESC}refresh"}
    ],
    "ownership": [{"paths": ["own.txt"], "when": {"file": "app.txt", "matches": "o\x1b?ne"}}],
    "trailer_invalidations": [{"trailer_key": "Kit-Audit", "label": f"Trail{ESC}ers"}],
    "regions": [
        {
            "id": "toc",
            "startMarker": START,
            "endMarker": END,
            "paths": ["doc.md"],
            "regenerate": {"interpreter": "bash", "operand": "gen/toc.sh", "args": [f"-{ESC}"]},
        }
    ],
}
HOSTILE_FILES = {
    "mig/m.sh": f'#!/bin/bash\necho "stderr{ESC}line" >&2\nexit 4\n',
    "gen/toc.sh": "#!/bin/bash\nexit 0\n",
    "doc.md": f"# Doc\n{START}\n{END}\n",
    "ci.yml.tmpl": "new\n",
    "own.txt": "theirs\n",
    "CHANGELOG.md": (
        f"# Changelog\n\n## [2.0.0] - 2026-01-01{ESC}\n\n### Changed\n\n"
        f"- Body text{ESC}{RLO}.\n"
        f"- **Action required:** run `rm -rf build{ESC}` once\n"
    ),
}
HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_text_project(tmp_path: Path) -> Path:
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {**BASE, "ci.yml.tmpl": "old\n", "own.txt": "theirs\n"})
    make_release(shelf, "2.0.0", {"app.txt": "two\n", **HOSTILE_FILES}, extra=HOSTILE)
    return installed(tmp_path, shelf, {"ci.yml": "old\n"})


def assert_escaped(text: str) -> None:
    assert HIDDEN.findall(text) == [], text
    assert "\\x1b[1A\\x1b[2K" in text
    assert "Forged row" not in "".join(line.split("Label")[0] for line in text.splitlines())


def test_release_text_is_escaped_in_the_plan_the_dry_run_and_the_summary(tmp_path):
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.report.update import render_plan_summary

    project = hostile_text_project(tmp_path)
    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate)
    plan = render_plan_summary(prepared.report("plan"))  # what a person confirms
    assert_escaped(plan)
    assert "Label\\x1b[1A\\x1b[2K\\n  Forged row:\\u202eok" in plan
    assert "bash mig/m.sh '--wipe\\x1b[1A\\x1b[2K' (migration m" in plan
    assert "bash gen/toc.sh '-\\x1b[1A\\x1b[2K' (region toc" in plan
    assert "Notice: hidden\\rSHOWN\\x1b[1A\\x1b[2K" in plan
    assert "own.txt (adopter-owned: app.txt matches /o\\x1b?ne/)" in plan
    assert "Body text\\x1b[1A\\x1b[2K\\u202e." in plan

    dry = run_tether("update", "--dry-run", "-C", str(project))
    assert dry.returncode == 0, dry.stderr
    assert_escaped(dry.stdout)
    assert "Trail\\x1b[1A\\x1b[2Kers:" in dry.stdout
    assert "rm -rf build\\x1b[1A\\x1b[2K" in dry.stdout

    done = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert done.returncode == 4, done.stdout + done.stderr  # the migration's conflict
    assert_escaped(done.stdout)
    assert "    stderr\\x1b[1A\\x1b[2Kline" in done.stdout
    assert "ci.yml was refreshed from this release's template. after\\x1b[1A" in done.stdout
    for command in (("status",), ("check",), ("migrations",), ("changelog", "--to", "2.0.0")):
        shown = run_tether(*command, "-C", str(project))
        assert HIDDEN.findall(shown.stdout) == [], (command, shown.stdout)


def test_the_escaping_rule():
    from tether.report.printable import lines_of, one_line, printable

    ordinary = "plain text, ünïcödé, emoji 👩\u200d💻"  # a joiner in an emoji stays
    assert one_line(ordinary) == ordinary
    assert one_line("a\x1b[2Kb\r\n\t\x7f\x9b\u202e\u2066\u2028") == (
        "a\\x1b[2Kb\\r\\n\\t\\x7f\\x9b\\u202e\\u2066\\u2028"
    )
    assert lines_of("one\x07\ntwo") == ["one\\x07", "two"]
    assert printable("row 1\nrow\x1b[2K 2\n") == "row 1\nrow\\x1b[2K 2\n"


def test_text_python_calls_printable_holds_nothing_to_escape():
    """``one_line`` and ``printable`` hand back text ``str.isprintable`` accepts as it is,
    without their pattern: every character the pattern escapes must be one it rejects."""
    import array
    import re
    import sys

    from tether.report import printable as rule

    # Every code point but the surrogates, decoded from their UTF-32 code units in one call
    # (a chr() per code point took 0.15 s).
    units = array.array("I", range(0xD800))
    units.extend(range(0xE000, 0x110000))
    assert units.itemsize == 4
    every = units.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")
    assert len(every) == 0x110000 - 0x800
    escaped = set(re.findall(rule._HIDDEN, every)) | set(
        re.findall(rule._HIDDEN_BUT_NEWLINE, every)
    )
    assert len(escaped) == 32 + 33 + 14
    assert not any(char.isprintable() for char in escaped)


# --- item 5: every file a lifecycle step writes is listed, backed up, restorable ------------

PACKAGE = '{\n  "name": "my-app",\n  "dependencies": {"left-pad": "1.3.0"}\n}\n'
POST_ON_PACKAGE = {"post_update": [{"file": "package.json", "set": {"kit": "{to_version}"}}]}


def package_project(tmp_path: Path) -> Path:
    """The adopter's own package.json, which no release ships, and a release whose
    post-update write rewrites it."""
    shelf = shelf_with(tmp_path, POST_ON_PACKAGE, {})
    return installed(tmp_path, shelf, {"package.json": PACKAGE})


def test_a_post_update_write_is_in_the_plan_and_backed_up_first(tmp_path):
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.report.update import render_plan_summary

    project = package_project(tmp_path)
    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate)
    plan = render_plan_summary(prepared.report("plan"))
    assert "Will update package.json:" in plan and "backed up first" in plan
    dry = run_tether("update", "--dry-run", "--json", "-C", str(project))
    assert json.loads(dry.stdout)["post_update"] == [{"file": "package.json", "status": "planned"}]
    assert (
        "Would update package.json:" in run_tether("update", "--dry-run", "-C", str(project)).stdout
    )

    result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert json.loads((project / "package.json").read_text()) == {"kit": "2.0.0"}
    assert "package.json" in doc["backed_up"]
    backup = project / doc["backup_dir"] / "package.json"
    assert backup.read_text() == PACKAGE


def crash_points_of(tmp_path: Path, make) -> tuple[list[str], list[dict]]:
    """Every journal step of an uninterrupted update of a project ``make`` builds."""
    from tether.state import crashpoint
    from tether.state.journal import read_records

    where = tmp_path / "reference"
    where.mkdir()
    project = make(where)
    done = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert done.returncode == 0, done.stderr
    records = read_records(project / ".tether/journal.jsonl")
    return crashpoint.points(records), records


def test_abandon_after_a_kill_puts_the_post_update_file_back(tmp_path):
    from builders import run_forked
    from tether.state import crashpoint

    points, records = crash_points_of(tmp_path, package_project)
    written = [p for p, r in zip(points, records, strict=True) if r.get("path") == "package.json"]
    assert any(p.startswith("file-written:") for p in written), written
    for n, point in enumerate(written):
        where = tmp_path / f"crash-{n}"
        where.mkdir()
        project = package_project(where)
        before = project_files(project)
        argv = ("update", "--yes", "--no-branch", "-C", str(project))
        assert run_forked(*argv, crash=point).returncode == crashpoint.EXIT_CODE, point
        abandoned = run_tether("update", "--abandon", "-C", str(project))
        assert abandoned.returncode == 0, (point, abandoned.stderr)
        assert (project / "package.json").read_text() == PACKAGE, point
        after = project_files(project)
        assert {k: v for k, v in after.items() if not k.startswith(".tether/")} == {
            k: v for k, v in before.items() if not k.startswith(".tether/")
        }, point


# --- item 6: writes are checked at write time, after every program --------------------------


def link_out(target: str) -> str:
    """A release program that replaces ``target`` (a folder of the project) with a link to
    ``$OUTSIDE``, a folder beside the project."""
    return f'#!/bin/bash\nrm -rf "{target}"\nln -s "$OUTSIDE" "{target}"\nexit 0\n'


@pytest.fixture
def outside(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "kit-check.json").write_text('{"mine": "outside the project"}\n')
    monkeypatch.setenv("OUTSIDE", str(folder))
    return folder


def test_a_post_update_write_is_not_made_through_a_link_a_migration_just_made(tmp_path, outside):
    lifecycle = {
        "migrations": [
            {"id": "swap", "version": "2.0.0", "when": "after", "run": ["bash", "mig/swap.sh"]}
        ],
        "post_update": [{"file": "cache/kit-check.json", "set": {"current": "{to_version}"}}],
    }
    # The release also ships a file in cache/: the update writes it, judging the folder
    # fine, before the migration swaps it for a link.
    files = {"mig/swap.sh": link_out("cache"), "cache/README": "kit cache\n"}
    shelf = shelf_with(tmp_path, lifecycle, files)
    project = installed(tmp_path, shelf, {"cache/kit-check.json": '{"current": "1.0.0"}\n'})
    before = tree_digest(outside)
    result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert tree_digest(outside) == before  # nothing written through the link
    doc = json.loads(result.stdout)
    [post] = doc["post_update"]
    assert post["status"] == "failed: cache is a link pointing outside the project", post
    assert (project / "cache").is_symlink()  # the program's link is left, never followed


@pytest.mark.parametrize("kind", ["migration", "region"])
def test_tethers_own_folder_linked_out_by_a_program_stops_the_run(tmp_path, outside, kind):
    """The first program links .tether/logs out; the second program's log (and anything
    else tether would write there) never goes through it: tether's own folders are judged
    again after every program, and the run stops there."""
    if kind == "migration":
        lifecycle: dict[str, object] = {
            "migrations": [
                {"id": m, "version": "2.0.0", "when": "after", "run": ["bash", f"mig/{m}.sh"]}
                for m in ("first", "second")
            ]
        }
    else:
        lifecycle = {
            "regions": [
                {
                    "id": m,
                    "startMarker": START,
                    "endMarker": END,
                    "paths": [f"{m}.md"],
                    "regenerate": {"interpreter": "bash", "operand": f"mig/{m}.sh", "args": []},
                }
                for m in ("first", "second")
            ]
        }
    files = {
        "mig/first.sh": link_out(".tether/logs"),
        "mig/second.sh": "#!/bin/bash\necho second\nexit 0\n",
        "first.md": f"{START}\n{END}\n",
        "second.md": f"{START}\n{END}\n",
    }
    project = installed(tmp_path, shelf_with(tmp_path, lifecycle, files))
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 1, result.stdout + result.stderr
    logs = project / ".tether/logs"
    assert result.stderr == (
        f"tether: {logs}: is a symbolic link; tether keeps its own files only in plain "
        "folders, after the release's program bash mig/first.sh ran; the update stopped "
        "before writing anything more there (remove it, then run 'tether update' again to "
        "finish, or 'tether update --abandon')\n"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["kit-check.json"]  # no log there
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["version"] == "1.0.0"  # the run stopped before its new state
    logs.unlink()  # fixed by hand: the unfinished run can be abandoned
    abandoned = run_tether("update", "--abandon", "-C", str(project))
    assert abandoned.returncode == 0, abandoned.stdout + abandoned.stderr
    assert (project / "app.txt").read_text() == "one\n"
    assert sorted(p.name for p in outside.iterdir()) == ["kit-check.json"]


def test_a_log_opened_through_a_link_is_refused_even_without_the_check(tmp_path):
    """The log writer itself follows no link on the way (made between a check and the
    open, say): the open fails, the program does not start."""
    from tether.flows.lifecycle_plan import ProgramCode
    from tether.flows.regen import run_program
    from tether.report.lifecycle_steps import program_reason

    root, away = tmp_path / "proj", tmp_path / "away"
    root.mkdir()
    away.mkdir()
    (root / ".tether").mkdir()
    (root / ".tether/logs").symlink_to(away)
    run = run_program(
        root, ("true",), {"PATH": "/usr/bin:/bin"}, timeout=10, log_path=root / ".tether/logs/x.log"
    )
    assert not run.started and "cannot write the log" in program_reason(run.end)
    assert run.end.code is ProgramCode.LOG_FAILED and "symbolic link" in run.end.detail
    assert list(away.iterdir()) == []


# --- item 10: release patterns are matched within a bound ----------------------------------

CATASTROPHIC = "^(x+x+)+y$"  # backtracks for ever on a line of x's with no y
XS = "x" * 40 + "\n"
# The patterns' deadline in the commands below (5 s in a real run): each of them waits for
# it, burning a core, and what it decides does not depend on its length (the backtracking
# pattern is asked first, so nothing after it is answered however fast the machine is, and
# a child stopped before it answered anything answers the same): so it is short.
SHORT_DEADLINE = 0.1


@pytest.fixture
def short_pattern_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    from tether import parselimits

    assert parselimits.PATTERN_SECONDS == 5.0  # the deadline docs/lifecycle.md names
    monkeypatch.setattr(parselimits, "PATTERN_SECONDS", SHORT_DEADLINE)


@pytest.mark.usefixtures("short_pattern_deadline")
def test_a_backtracking_notice_pattern_does_not_hang_a_dry_run(tmp_path):
    from builders import run_forked

    lifecycle = {
        "notices": [
            {"id": "slow", "when": {"file": "xs.txt", "matches": CATASTROPHIC}, "text": "slow"},
            {"id": "fast", "when": {"file": "app.txt", "matches": "^one$"}, "text": "fast"},
        ],
        "ownership": [{"paths": ["app.txt"], "when": {"file": "xs.txt", "matches": CATASTROPHIC}}],
    }
    project = installed(tmp_path, shelf_with(tmp_path, lifecycle, {}), {"xs.txt": XS})
    # A forked child, stopped at 60 s: a hang fails the test instead of holding the run.
    dry = run_forked("update", "--dry-run", "--json", "-C", str(project), timeout=60)
    assert dry.returncode == 0, dry.stderr
    doc = json.loads(dry.stdout)
    # Both patterns went to one bounded child; the slow one stopped it, so neither holds.
    assert doc["notices"] == []
    assert "app.txt" in doc["buckets"]["update"]  # the hand-off did not hold: merged as usual
    notes = [n for n in doc["notes"] if f"could not be matched within {SHORT_DEADLINE} s" in n]
    assert any(n.startswith("notice:slow: its pattern") for n in notes), doc["notes"]
    assert any(n.startswith("ownership[0]: its pattern") for n in notes), doc["notes"]
    status = run_forked("status", "--json", "-C", str(project), timeout=60)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["adopter_owned"] == []


@pytest.mark.usefixtures("short_pattern_deadline")
def test_a_pattern_left_undecided_is_a_fact_of_the_snapshot(tmp_path):
    """The flow records each condition the bound left undecided as a fact (report/notes.py
    words it, as above): both patterns went to the one child the slow one stopped."""
    from tether.flows.lifecycle_steps import take_snapshot
    from tether.flows.notes import PatternUndecided
    from tether.flows.project import open_project
    from tether.model.lifecycle import Lifecycle
    from tether.model.lifecycle_declarations import Condition, Notice

    project = installed(tmp_path, shelf_with(tmp_path, {}, {}), {"xs.txt": XS})
    slow = Condition(file="xs.txt", matches=CATASTROPHIC)
    fast = Condition(file="app.txt", matches="^one$")
    lifecycle = Lifecycle(notices=(Notice("slow", slow, "slow"), Notice("fast", fast, "fast")))
    held, notes = take_snapshot(open_project(project), lifecycle)
    assert held == {"notice:slow": False, "notice:fast": False}
    assert notes == [
        PatternUndecided("notice:slow", SHORT_DEADLINE, slow),
        PatternUndecided("notice:fast", SHORT_DEADLINE, fast),
    ]


@pytest.mark.usefixtures("short_pattern_deadline")
def test_a_backtracking_summary_pattern_leaves_the_declared_default(tmp_path):
    from builders import run_forked

    lifecycle = {
        "migrations": [
            {
                "id": "m",
                "version": "2.0.0",
                "when": "after",
                "run": ["bash", "mig/m.sh"],
                "summary_pattern": CATASTROPHIC,
                "summary_default": "unknown",
            }
        ]
    }
    files = {"mig/m.sh": f"#!/bin/bash\nprintf '{XS}'\nexit 0\n"}
    project = installed(tmp_path, shelf_with(tmp_path, lifecycle, files))
    argv = ("update", "--yes", "--no-branch", "--json", "-C", str(project))
    result = run_forked(*argv, timeout=60)
    assert result.returncode == 0, result.stderr
    [migration] = json.loads(result.stdout)["migrations"]
    assert (migration["status"], migration["summary"]) == ("ok", "unknown")


def test_a_release_pattern_longer_than_the_bound_is_refused_at_load(tmp_path):
    lifecycle = {
        "notices": [{"id": "n", "when": {"file": "app.txt", "matches": "a" * 1001}, "text": "t"}]
    }
    project = installed(tmp_path, shelf_with(tmp_path, lifecycle, {}))
    result = run_tether("update", "--dry-run", "-C", str(project))
    assert result.returncode == 1
    assert "notices[0] (n).when.matches: pattern longer than 1000 characters" in result.stderr


def test_the_pattern_child_answers_what_it_matched_before_the_deadline():
    from tether.pattern_child import CAPTURE, SEARCH, UNDECIDED, PatternAnswer, match_in_child

    answers = match_in_child(
        [
            ("^b", "a\nb\n", SEARCH),
            (r"migrated (\d+)", "spec-folderize: migrated 3 SPEC artifact(s)", CAPTURE),
            ("z", "abc", SEARCH),
            (CATASTROPHIC, XS, SEARCH),
            ("a", "a", SEARCH),
        ],
        # Long enough for a bare interpreter to start and answer the first three on a
        # loaded machine (a few milliseconds idle); the fourth burns a core until then.
        seconds=1,
        memory_bytes=1 << 30,
    )
    assert answers == [
        PatternAnswer(True, True),
        PatternAnswer(True, True, "3"),
        PatternAnswer(True, False),
        UNDECIDED,
        UNDECIDED,  # after the one the deadline stopped: not told, not guessed
    ]
