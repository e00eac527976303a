"""The notes a flow finds are facts (``flows/notes.py``) in the release's, baseline's, plan's
or report's ``notes``; ``report/notes.py`` words each kind once, for every report that shows
it (status, check, update, diff, init) and their JSON documents; what a source said is a
fact too (``model/source_notes.py``). The flow-level tests of each fact sit with the area
that makes it (update, templates, lifecycle); status's own are here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from builders import make_release, run_tether
from tether.flows.notes import (
    Fact,
    GbrainRecordAdopted,
    HooksNotRun,
    MarkerWins,
    MigrationInterrupted,
    NoLongerRegular,
    NotRead,
    PatternUndecided,
    ProgramsOff,
    ReleasePageShown,
    TemplateProgramsNotRun,
    UpstreamSwitched,
)
from tether.flows.status import StatusReport, project_status
from tether.model.lifecycle_declarations import Condition
from tether.report.diff import render_diff
from tether.report.init import init_document, render_init
from tether.report.notes import note_words, worded_notes
from tether.report.status import render_status
from tether.report.status_document import status_document

LINK = "is a symbolic link; tether does not read through links"

# Each kind of fact and its words, as the flows wrote them before they became facts.
WORDED: list[tuple[Fact, str]] = [
    (
        MarkerWins(".gaia/VERSION", "1.8.0", "1.7.0"),
        ".gaia/VERSION says 1.8.0 but tether's record says 1.7.0: the marker wins, so release "
        "1.8.0 is the installed baseline for this run",
    ),
    (NotRead("docs/a.md", LINK), f"docs/a.md: {LINK}; not read"),
    (NoLongerRegular("cfg/app.yml"), "cfg/app.yml: no longer a regular file"),
    (
        UpstreamSwitched("acme-kit", "other-kit", "/shelf"),
        "switched upstream from acme-kit to other-kit (--switch-upstream): /shelf is recorded "
        "as the source",
    ),
    (
        ReleasePageShown("1.1.0", "1.0.0"),
        "the changelog of release 1.1.0 has no section after 1.0.0: the release notes shown "
        "are the ones published with the release",
    ),
    (
        HooksNotRun("gh:o/t", "0123456789ab", ("pre.py", "post.py"), ProgramsOff.NO_PROGRAMS),
        "template gh:o/t at 0123456789ab rendered without its hooks (--no-programs): pre.py, "
        "post.py not run, so files they would write or remove may differ",
    ),
    (
        HooksNotRun("gh:o/t", "v2", ("post.py",), ProgramsOff.DRY_RUN),
        "template gh:o/t at v2 rendered without its hooks (a dry run runs no template "
        "program): post.py not run, so files they would write or remove may differ",
    ),
    (
        HooksNotRun("gh:o/t", "v2", ("post.py",), ProgramsOff.UNTRUSTED),
        "template gh:o/t at v2 rendered without its hooks (pass --trust to run them): post.py "
        "not run, so files they would write or remove may differ",
    ),
    (
        TemplateProgramsNotRun(
            "/tpl", ("migrations", "tasks"), "v1.0.0", "v2.0.0", ProgramsOff.NO_PROGRAMS
        ),
        "not run (--no-programs): the migrations and tasks of template /tpl (v1.0.0 to "
        "v2.0.0); the answers file is recorded without them, as after 'copier update "
        "--skip-tasks'",
    ),
    (
        TemplateProgramsNotRun("/tpl", ("tasks",), "v1.0.0", "v2.0.0", ProgramsOff.DRY_RUN),
        "not run in a dry run: the tasks of template /tpl (v1.0.0 to v2.0.0)",
    ),
    (
        TemplateProgramsNotRun(
            "/tpl", ("tasks",), "v1.0.0", "v2.0.0", ProgramsOff.DRY_RUN, needs_trust=True
        ),
        "not run in a dry run: the tasks of template /tpl (v1.0.0 to v2.0.0); the update "
        "needs --trust for them",
    ),
    (
        MigrationInterrupted("m15"),
        "migration m15 was interrupted while it ran; it runs again",
    ),
    (
        PatternUndecided("notice:slow", 5.0, Condition(file="xs.txt", matches="^(x+x+)+y$")),
        "notice:slow: its pattern could not be matched within 5 s (xs.txt matches "
        "/^(x+x+)+y$/); the condition is taken as not holding",
    ),
    (
        GbrainRecordAdopted("/host/.gbrain/install.json", "1.2.0", 3),
        "adopted gbrain's record of the install (/host/.gbrain/install.json, version 1.2.0): 3 "
        "file(s) as gbrain copied them; nothing was copied, run tether refresh",
    ),
]


@pytest.mark.parametrize(("fact", "words"), WORDED, ids=lambda v: type(v).__name__)
def test_each_kind_of_fact_is_worded_as_the_flow_worded_it(fact: Fact, words: str) -> None:
    assert note_words(fact) == words


def test_notes_keep_their_order() -> None:
    notes: list[Fact] = [MigrationInterrupted("m1"), NotRead("a", LINK), MigrationInterrupted("m0")]
    assert worded_notes(notes) == [
        note_words(notes[0]),
        f"a: {LINK}; not read",
        note_words(notes[2]),
    ]


def test_every_report_words_a_fact_among_its_notes() -> None:
    """status (text and JSON), init (text and JSON) and diff word the same fact the same way;
    the flow's own list holds the fact, and a report object's to_json() no words of it."""
    from tether.flows.install import InitReport
    from tether.flows.localdiff import DiffReport

    fact, words = WORDED[0]
    first = MigrationInterrupted("m1")
    status = StatusReport("gaia", "GAIA", "/shelf", "1.8.0", notes=[first, fact])
    said = note_words(first)
    assert status_document(status)["notes"] == [said, words]
    assert render_status(status).splitlines()[-2:] == [f"note: {said}", f"note: {words}"]
    assert status.to_json()["notes"] == []
    init = InitReport("gaia", "GAIA", "/shelf", "1.8.0", notes=[fact])
    assert init_document(init)["notes"] == [words]
    assert render_init(init).splitlines()[-1] == f"note: {words}"
    diff = DiffReport("gaia", "GAIA", "/shelf", "1.8.0", notes=[fact])
    assert render_diff(diff) == f"# note: {words}\n"


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A project whose managed docs/a.md was replaced by a link."""
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"docs/a.md": "a\n", "docs/b.md": "b\n"})
    project = tmp_path / "proj"
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 0, result.stderr
    os.unlink(project / "docs/a.md")
    os.symlink("/dev/zero", project / "docs/a.md")
    return project


def test_status_finds_a_path_it_does_not_read_as_a_fact(linked: Path) -> None:
    report = project_status(linked)
    assert report.notes == [NotRead("docs/a.md", LINK)]
    assert report.not_regular == ["docs/a.md"]


def test_status_and_check_json_word_the_path_not_read(linked: Path) -> None:
    for command in ("status", "check"):
        result = run_tether(command, "--json", "-C", str(linked))
        notes = json.loads(result.stdout)["notes"]
        assert notes == [f"docs/a.md: {LINK}; not read"], result.stdout


def test_diff_finds_a_file_it_does_not_read_as_a_fact_and_words_it(linked: Path) -> None:
    """The file's own note: in the text after its path, in the JSON without it."""
    from tether.flows.localdiff import local_diff

    [item] = local_diff(linked).files
    assert item.unread == NotRead("docs/a.md", LINK)
    [entry] = json.loads(run_tether("diff", "--json", "-C", str(linked)).stdout)["files"]
    assert entry["note"] == f"{LINK}; not read"
    text = run_tether("diff", "-C", str(linked)).stdout
    assert text.startswith(f"# docs/a.md: {LINK}; not read\n")


def test_diff_finds_a_folder_where_a_file_was_as_a_fact(linked: Path) -> None:
    from tether.flows.localdiff import local_diff

    (linked / "docs/a.md").unlink()
    (linked / "docs/a.md").mkdir()
    [item] = local_diff(linked).files
    assert item.unread == NoLongerRegular("docs/a.md")
