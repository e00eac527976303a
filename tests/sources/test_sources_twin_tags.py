"""When two names at a source spell one version (tags ``v2.0.0`` and ``2.0.0``, shelf folders
alike), the unprefixed one is used, and ``init`` and ``update`` say so in a note: also when
the tree is read back from the release cache in a later run. Real git repositories and
shelf folders, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders import make_release, run_tether
from helpers_sources import commit_release, init_repo

GUIDE = "docs/guide.md"


def _release_files(tmp_path: Path, version: str, text: str) -> dict[str, str]:
    folder = make_release(tmp_path / "build" / text, version, {GUIDE: text})
    return {
        p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def built_twin_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Releases 1.0.0 (tag v1.0.0) and 2.0.0 twice (tags v2.0.0 and 2.0.0, different
    trees), built once per module; each test copies it (``_twin_repo``)."""
    tmp_path = tmp_path_factory.mktemp("built")
    repo = init_repo(tmp_path / "upstream")
    commit_release(repo, _release_files(tmp_path, "1.0.0", "one\n"), "v1.0.0")
    commit_release(repo, _release_files(tmp_path, "2.0.0", "from v2.0.0\n"), "v2.0.0")
    commit_release(repo, _release_files(tmp_path, "2.0.0", "from 2.0.0\n"), "2.0.0")
    return repo


def _twin_repo(tmp_path: Path, built: Path) -> Path:
    """This test's copy of the module's twin-tag repository, at ``tmp_path/upstream``."""
    return shutil.copytree(built, tmp_path / "upstream", symlinks=True)


def _note(spec: Path | str) -> str:
    return (
        f"{spec}: both 2.0.0 and v2.0.0 name version 2.0.0; 2.0.0 was used "
        "(a name without a leading v wins)"
    )


def test_update_says_which_of_two_tags_it_installed_also_from_the_cache(
    tmp_path: Path, built_twin_repo: Path
) -> None:
    repo = _twin_repo(tmp_path, built_twin_repo)
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--json", "--source", str(repo), "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["notes"] == []  # one tag names 1.0.0: nothing to say
    dry = run_tether("update", "--dry-run", "--json", "--to", "2.0.0", "-C", str(project))
    assert dry.returncode == 0, dry.stderr
    assert _note(repo) in json.loads(dry.stdout)["notes"]
    real = run_tether("update", "--yes", "--to", "2.0.0", "-C", str(project))  # a cache hit
    assert real.returncode == 0, real.stderr
    assert f"note: {_note(repo)}" in real.stdout
    assert (project / GUIDE).read_text() == "from 2.0.0\n"


def test_init_says_which_of_two_tags_it_installed(tmp_path: Path, built_twin_repo: Path) -> None:
    repo = _twin_repo(tmp_path, built_twin_repo)
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--source", f"file://{repo}", "--to", "2.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert f"note: {_note(f'file://{repo}')}" in done.stdout
    assert (project / GUIDE).read_text() == "from 2.0.0\n"


def test_a_shelf_with_two_folders_of_one_version_says_which_was_used(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    make_release(shelf, "2.0.0", {GUIDE: "from 2.0.0\n"})
    (shelf / "2.0.0").rename(shelf / "v2.0.0")
    make_release(shelf, "2.0.0", {GUIDE: "plain\n"})
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--json", "--source", str(shelf), "--to", "2.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["notes"] == [_note(shelf)]
    assert (project / GUIDE).read_text() == "plain\n"


def test_a_note_in_the_cache_that_is_not_one_printable_line_is_not_printed(
    tmp_path: Path,
    built_twin_repo: Path,
) -> None:
    """The note kept beside a cached tree is read back into reports: one rewritten by
    someone else to carry a terminal escape is left out, never printed."""
    repo = _twin_repo(tmp_path, built_twin_repo)
    project = tmp_path / "app"
    project.mkdir()
    assert (
        run_tether("init", "--source", str(repo), "--to", "1.0.0", "-C", str(project)).returncode
        == 0
    )
    assert run_tether("update", "--dry-run", "--to", "2.0.0", "-C", str(project)).returncode == 0
    (note,) = (project / ".tether/cache/releases").glob("*/.2.0.0.note")
    note.write_text("\x1b]0;owned\x07 all is well\n")
    dry = run_tether("update", "--dry-run", "--json", "--to", "2.0.0", "-C", str(project))
    assert dry.returncode == 0, dry.stderr
    assert not [n for n in json.loads(dry.stdout)["notes"] if "\x1b" in n]


def test_a_twin_is_a_fact_of_the_source_also_read_back_from_the_cache(
    tmp_path: Path, built_twin_repo: Path
) -> None:
    """The source says which name it used as a fact (``model/source_notes.py``); the cache
    keeps the names beside the tree, so a later run's source says the same."""
    from tether.model.source_notes import SourceNote, SourceSaid
    from tether.report.notes import worded_notes
    from tether.sources import open_source

    repo = _twin_repo(tmp_path, built_twin_repo)
    said = SourceNote(SourceSaid.TWIN_NAMES, str(repo), "2.0.0", "v2.0.0", "2.0.0")
    first = open_source(str(repo), tmp_path / "cache")
    first.fetch("2.0.0")
    assert first.notes == [said]
    again = open_source(str(repo), tmp_path / "cache")
    again.fetch("2.0.0")  # from the cache: nothing is asked of the repository
    assert again.notes == [said]
    assert worded_notes(again.notes) == [_note(repo)]


def test_a_cached_note_of_another_shape_says_nothing(tmp_path: Path, built_twin_repo: Path) -> None:
    """A note an older tether kept beside the tree (one line of words) is no fact: it is
    not read, and the tree itself is still used."""
    from tether.sources import open_source

    repo = _twin_repo(tmp_path, built_twin_repo)
    open_source(str(repo), tmp_path / "cache").fetch("2.0.0")
    (note,) = (tmp_path / "cache").glob("*/.2.0.0.note")
    note.write_text(_note(repo) + "\n")
    source = open_source(str(repo), tmp_path / "cache")
    assert (source.fetch("2.0.0").root / GUIDE).read_text() == "from 2.0.0\n"
    assert source.notes == []
