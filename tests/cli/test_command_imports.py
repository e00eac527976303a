"""What ``status`` and ``check`` import on a clean project (docs/performance.md, "Small
projects"): on a project of a few hundred files most of their time is the interpreter
importing modules, so each imports only what it uses. A module added to their path must be
one they use; add it here with the reason, or import it where it is needed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders import call, make_release
from tether.state.statcache import RACY_MARGIN_NS

# tether's modules (without the ``tether.`` prefix) every one of the four runs imports.
COMMON = {
    "cli",
    "cli.common",
    "cli.main",
    "cli.plain_argv",  # the command line read without argparse
    "cli.usage_errors",
    "errors",
    "flows",
    "flows.baseline",
    "flows.conflicts",  # is a conflict an earlier update left settled?
    "flows.project",
    "flows.safety",
    "flows.status",
    "fsio",
    "model",
    # The manifest's and the profile's lifecycle set, empty here: the declarations' types and
    # their parser (model.lifecycle_declarations) only for a release or profile declaring one.
    "model.lifecycle",
    "model.manifest",
    "parselimits",
    "pathrules",
    "profiles",
    "profiles.gaia",  # the profile table holds GAIA's profile
    "progress",
    "report",
    "report.progress",
    "report.style",
    "state",
    "state.pristine",  # the pristine cache: the bytes of a file that differs
    "state.config",  # .tether/config.toml (the TOML parser only when the file exists)
    "state.lock",  # is another run holding the project?
    "state.statcache",
    "state.store",
    "templates",  # is this a copier or cruft project?
    "templates.records",
    "valueclass",  # their values, made without dataclasses
    "versions",
}
# What reading the journal takes, for a project where an update ran (a never-updated one has
# no journal, and its status loads none of them): is an interrupted run waiting there?
JOURNAL = {"flows.replay", "state.crashpoint", "state.journal"}
# status and check share the words of a run in flight (report.status).
# report.notes words the notes a flow found as facts (their types only once one is found).
HUMAN = {
    "report.lifecycle_steps",
    "report.listing",
    "report.notes",
    "report.printable",
    "report.status",
    "report.status_document",
}
JSON = {"report.documents", "report.notes", "report.status_document"}
EXPECTED = {
    ("status",): COMMON | HUMAN | {"cli.status_cmd"},
    ("status", "--json"): COMMON | JSON | {"cli.status_cmd"},
    ("check",): COMMON | HUMAN | {"cli.check_cmd", "flows.check", "report.check"},
    ("check", "--json"): COMMON | JSON | {"cli.check_cmd", "flows.check"},
}
# Standard-library modules no clean status or check has a use for: starting programs, the
# TOML parser without a config file, temp names, worker pools, copying trees (argparse's own
# width question imported shutil, with bz2, lzma and zlib), argparse itself (their command
# line is read by cli/plain_argv.py), dataclasses with inspect, ast and dis (their values
# are value classes: tether/valueclass.py), typing (names for annotations only), datetime,
# and hashlib (OpenSSL's start alone is ~2 ms): a clean project known to the stat cache has
# nothing to hash. pathlib comes without urllib.parse and ipaddress (cli/main.py,
# import_pathlib_alone), and the one handler the entry point sets (SIGTERM) without the signal
# module's enums; contextlib (~0.7 ms) is not needed for a few blocks and ignored errors, nor
# the Unicode database for a project whose paths are all ASCII (pathrules.collision_key).
NEVER = {
    "hashlib",
    "urllib.parse",
    "ipaddress",
    "signal",
    "contextlib",
    "unicodedata",
    "argparse",
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "typing",
    "datetime",
    "subprocess",
    "concurrent.futures",
    "tomllib",
    "secrets",
    "logging",
    "tempfile",
    "shutil",
}

# The command's output set aside without contextlib (which the runs must not import either).
SCRIPT = """
import io, sys
from tether.cli.main import main
sys.stdout = io.StringIO()
try:
    code = main(sys.argv[1:])
finally:
    sys.stdout = sys.__stdout__
print(code)
print(" ".join(sorted(m for m in sys.modules)))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imports")
    files = {f"docs/page{i}.md": f"page {i}\n" for i in range(5)}
    make_release(root / "shelf", "1.0.0", files, {"docs/page0.md": "owned"})
    project = root / "project"
    assert call("init", "--source", str(root / "shelf"), "--to", "1.0.0", "-C", str(project)) == 0
    # As a project where tether ran before: a status learnt that the installed manifest hands
    # nothing over, and the files are older than the stat cache's racy window (the cache is
    # dated as if saved later), so the runs below read, hash and parse no file or manifest.
    assert call("status", "-C", str(project)) == 0
    cache = project / ".tether/cache/stat.json"
    doc = json.loads(cache.read_text())
    assert doc["facts"]
    doc["written_ns"] = time.time_ns() + 10 * RACY_MARGIN_NS
    cache.write_text(json.dumps(doc))
    return project


@pytest.mark.parametrize("argv", sorted(EXPECTED), ids=" ".join)
def test_status_and_check_import_only_what_they_use(project: Path, argv: tuple[str, ...]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv, "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    code, modules = result.stdout.splitlines()[-2:]
    assert code == "0"
    loaded = set(modules.split())
    ours = {name.removeprefix("tether.") for name in loaded if name.startswith("tether.")}
    assert ours == EXPECTED[argv], (
        f"imported but not expected: {sorted(ours - EXPECTED[argv])}; "
        f"expected but not imported: {sorted(EXPECTED[argv] - ours)}"
    )
    assert not loaded & NEVER, sorted(loaded & NEVER)


def test_status_reads_the_journal_where_an_update_ran(project: Path) -> None:
    """Where a journal exists, status loads what reads it (an unfinished run is looked for)."""
    journal = project / ".tether/journal.jsonl"
    journal.write_text("")
    try:
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT, "status", "-C", str(project)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        journal.unlink()
    assert result.returncode == 0, result.stderr
    loaded = {name.removeprefix("tether.") for name in result.stdout.split()}
    assert loaded >= JOURNAL


# Modules a plain update (no field-by-field merge, not abandoned) has no use for: the abandon
# flow and what puts an update back, the structured merge's model and the renderer of its rows;
# for a release and a profile declaring no lifecycle step, the steps, the declarations' types,
# their rules and the bounded pattern matcher; for releases declaring no generated region, the
# region engine and the masked comparison; with --yes, the prompts; without a clean merge of a
# JSON, YAML or TOML file, the syntax checker; init's own flow (the version markers an update
# writes last are flows/version_markers.py); a profile's update ping and gbrain's record.
UPDATE_NEVER = {
    "flows.abandon",
    "flows.restore",
    "engine.structured",
    "engine.structured.model",
    "engine.structured.notes",
    "flows.lifecycle_steps",
    "model.lifecycle_declarations",
    "engine.lifecycle_rules",
    "pattern_child",
    "engine.regions",
    "flows.regions_step",
    "cli.interact",
    "engine.syntaxcheck",
    "flows.install",
    "flows.ping",
    "flows.gbrain_record",
}


# A command line cli/plain_argv.py reads whole needs no argparse (nor the parser module).
UPDATE_NEVER_STDLIB = {
    "dataclasses",
    "inspect",
    "tempfile",
    "shutil",
    "random",
    "datetime",
    "argparse",
    "tether.cli.parsing",
    "typing",  # names its modules use only in annotations are imported for the type checker
    "difflib",  # only where a dropped and an added file are compared for a rename
    "shlex",  # only to word a program's command line in a message
    "urllib.parse",  # pathlib's one use of it is Path.as_uri (cli/main.py)
    "ipaddress",
}


def test_update_imports_neither_abandon_nor_the_structured_renderer(tmp_path: Path) -> None:
    files = {f"docs/page{i}.md": f"page {i}\n" for i in range(5)}
    make_release(tmp_path / "shelf", "1.0.0", files)
    make_release(tmp_path / "shelf", "1.1.0", {**files, "docs/page1.md": "page one\n"})
    project = tmp_path / "project"
    assert (
        call("init", "--source", str(tmp_path / "shelf"), "--to", "1.0.0", "-C", str(project)) == 0
    )
    argv = ["update", "--yes", "--no-branch", "--json", "-C", str(project)]
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    code, modules = result.stdout.splitlines()[-2:]
    assert code == "0"
    assert (project / "docs/page1.md").read_text() == "page one\n"  # the update did run
    ours = {name.removeprefix("tether.") for name in modules.split() if name.startswith("tether.")}
    assert "flows.update" in ours
    assert not ours & UPDATE_NEVER, sorted(ours & UPDATE_NEVER)
    # Its values are value classes (no dataclasses, so no inspect); git's programs and the
    # backups need no temp files and no tree copies; the journal's times come from time; the
    # command line is read without argparse.
    assert not set(modules.split()) & UPDATE_NEVER_STDLIB


AS_URI = """
import contextlib, io, sys
from tether.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
before = sorted(m for m in ("urllib", "urllib.parse", "ipaddress") if m in sys.modules)
from pathlib import Path
uri = Path("/a b/\u00e9").as_uri()
import urllib.parse
reachable = sys.modules["urllib"].parse is urllib.parse
print(before, uri, urllib.parse.urlsplit("https://h/p").netloc, reachable)
"""


def test_pathlib_without_urllib_parse_still_makes_uris(project: Path) -> None:
    """The stand-in for urllib.parse while pathlib is imported (cli/main.py) is gone once the
    command runs: Path.as_uri quotes as before, and urllib.parse imported later is the real
    module, reachable from its package."""
    result = subprocess.run(
        [sys.executable, "-c", AS_URI, "status", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "file:///a%20b/%C3%A9", "h", "True"]


FALLBACK = """
import sys
sys.path.insert(0, sys.argv[1])  # a pathlib of a later Python, wanting more of urllib.parse
from tether.cli.main import import_pathlib_alone
import_pathlib_alone()
import pathlib, urllib.parse
print(pathlib.WANTED is urllib.parse.unquote_to_bytes, sys.modules["urllib"].parse is urllib.parse)
"""


def test_a_pathlib_wanting_more_of_urllib_parse_is_imported_plainly(tmp_path: Path) -> None:
    """The stand-in has only quote_from_bytes: a pathlib importing another name from
    urllib.parse fails against it, and is then imported with the real module."""
    (tmp_path / "pathlib.py").write_text(
        "from urllib.parse import quote_from_bytes, unquote_to_bytes as WANTED\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", FALLBACK, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
