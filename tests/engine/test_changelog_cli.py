"""`tether changelog` through the real entry point: from a file, a source, the recorded source."""

from __future__ import annotations

import json

import pytest

from builders import call, make_release, write_files
from tether.cli import main as cli_main

LOG = """\
# Changelog

## [Unreleased]
- wip

## [1.2.0] - 2024-03-01
### Removed
- Dropped left-pad. **Action required:** `pnpm remove left-pad`
- Old script: `rm scripts/old.sh`

## [1.1.0] - 2024-02-01
### Changed
- `pnpm remove is-odd` (already gone in the project below)

## [1.0.0] - 2024-01-01
- first

[1.2.0]: https://example.org/v1.2.0
"""


def test_command_is_registered():
    assert "changelog" in cli_main.COMMANDS


def run_json(capsys, *args):
    code = call("changelog", *args, "--json")
    out = capsys.readouterr().out
    return code, (json.loads(out) if code == 0 else out)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "package.json": '{"dependencies": {"left-pad": "1.3.0"}}',
            "scripts/old.sh": "echo old\n",
        },
    )
    return root


def test_from_file_json_shows_range_and_applicable_actions(tmp_path, project, capsys):
    log = tmp_path / "CHANGELOG.md"
    log.write_text(LOG)
    code, doc = run_json(
        capsys, "--from", "1.0.0", "--to", "1.2.0", "--file", str(log), "-C", str(project)
    )
    assert code == 0
    assert (doc["from_version"], doc["to_version"], doc["changelog_found"]) == (
        "1.0.0",
        "1.2.0",
        True,
    )
    assert [s["version"] for s in doc["sections"]] == ["1.2.0", "1.1.0"]
    assert doc["sections"][0]["date"] == "2024-03-01"
    assert "https://example.org" not in doc["sections"][-1]["body"]
    # is-odd is not declared in the project any more, so its removal is not suggested.
    assert [(a["kind"], a["target"]) for a in doc["actions"]] == [
        ("remove-package", "left-pad"),
        ("remove-file", "scripts/old.sh"),
    ]


def test_actions_disappear_once_done(tmp_path, project, capsys):
    log = tmp_path / "CHANGELOG.md"
    log.write_text(LOG)
    (project / "package.json").write_text('{"dependencies": {}}')
    (project / "scripts/old.sh").unlink()
    _, doc = run_json(
        capsys, "--from", "1.0.0", "--to", "1.2.0", "--file", str(log), "-C", str(project)
    )
    assert doc["actions"] == []


def test_human_output(tmp_path, project, capsys):
    log = tmp_path / "CHANGELOG.md"
    log.write_text(LOG)
    assert (
        call(
            "changelog", "--from", "1.1.0", "--to", "1.2.0", "--file", str(log), "-C", str(project)
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "## 1.2.0 - 2024-03-01" in out
    assert "## 1.1.0" not in out
    assert "Suggested follow-ups" in out
    assert "1.2.0: pnpm remove left-pad" in out


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    files = {"docs/guide.md": "guide\n"}
    make_release(shelf, "1.0.0", files, sentinels={"CHANGELOG.md": "## [1.0.0]\n- first\n"})
    make_release(shelf, "1.2.0", files, sentinels={"CHANGELOG.md": LOG})
    make_release(shelf, "1.3.0", files)  # a release without any changelog
    make_release(
        shelf,
        "1.4.0",
        {**files, "docs/CHANGES.md": "## [1.4.0]\n- moved\n"},
        extra={"changelog": "docs/CHANGES.md"},
    )
    return shelf


def test_from_a_source_reads_release_b(tmp_path, shelf, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["--from", "1.0.0", "--to", "1.2.0", "--source", str(shelf), "-C", str(empty)]
    code, doc = run_json(capsys, *args)
    assert code == 0
    assert [s["version"] for s in doc["sections"]] == ["1.2.0", "1.1.0"]
    assert "CHANGELOG.md of release 1.2.0" in doc["changelog"]
    assert list(empty.iterdir()) == []  # not a project: nothing cached in it


def test_manifest_names_the_changelog(tmp_path, shelf, capsys):
    code, doc = run_json(capsys, "--from", "1.3.0", "--to", "1.4.0", "--source", str(shelf))
    assert code == 0
    assert [s["version"] for s in doc["sections"]] == ["1.4.0"]
    assert doc["changelog"].startswith("docs/CHANGES.md")


def test_gaia_release_names_its_changelog_in_its_own_manifest(tmp_path, capsys):
    """A GAIA release has no .tether/manifest.json: the changelog it names in
    .gaia/manifest.json is the one read, not the default CHANGELOG.md beside it."""
    gaia = tmp_path / "gaia-releases"
    make_release(
        gaia,
        "2.0.0",
        {"wiki/HISTORY.md": "## [2.0.0]\n- from the named file\n"},
        sentinels={"CHANGELOG.md": "## [2.0.0]\n- from the default file\n"},
        extra={"changelog": "wiki/HISTORY.md"},
        profile="gaia",
    )
    code, doc = run_json(capsys, "--from", "1.0.0", "--to", "2.0.0", "--source", str(gaia))
    assert code == 0
    assert doc["changelog"].startswith("wiki/HISTORY.md of release 2.0.0")
    assert [s["body"] for s in doc["sections"]] == ["- from the named file"]


def test_release_without_changelog_is_not_an_error(shelf, capsys):
    code, doc = run_json(capsys, "--from", "1.2.0", "--to", "1.3.0", "--source", str(shelf))
    assert code == 0
    assert (doc["changelog_found"], doc["sections"], doc["actions"]) == (False, [], [])
    assert call("changelog", "--from", "1.2.0", "--to", "1.3.0", "--source", str(shelf)) == 0
    assert "no changelog" in capsys.readouterr().out


def test_recorded_source_of_the_project(tmp_path, shelf, capsys):
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    capsys.readouterr()
    code, doc = run_json(capsys, "--from", "1.0.0", "--to", "1.2.0", "-C", str(project))
    assert code == 0
    assert [s["version"] for s in doc["sections"]] == ["1.2.0", "1.1.0"]


def test_no_recorded_source_is_a_usage_error(tmp_path, capsys):
    assert call("changelog", "--from", "1.0.0", "--to", "1.2.0", "-C", str(tmp_path)) == 2
    assert "--file PATH or --source SRC" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("versions", "message"),
    [(("one", "1.2.0"), "not a version"), (("2.0.0", "1.0.0"), "newer than --to")],
)
def test_bad_range_is_a_usage_error(tmp_path, capsys, versions, message):
    log = tmp_path / "CHANGELOG.md"
    log.write_text(LOG)
    assert call("changelog", "--from", versions[0], "--to", versions[1], "--file", str(log)) == 2
    assert message in capsys.readouterr().err


def test_missing_file_is_an_error(tmp_path, capsys):
    assert (
        call("changelog", "--from", "1.0.0", "--to", "1.2.0", "--file", str(tmp_path / "nope.md"))
        == 1
    )
    missing = tmp_path / "nope.md"
    assert capsys.readouterr().err == (
        f"tether: {missing}: cannot read the changelog (No such file or directory)\n"
    )
