"""A failed ``tether init`` leaves the filesystem exactly as it found it: no project folder,
no ``.tether/`` and no cache from a bad source, version, flag or release, and never a
missing parent folder created on the way."""

import json
import os
import shutil

import pytest

from builders import make_release, run_tether, write_files
from helpers_sources import commit_release, init_repo, listing, read_tree

FILES = {"docs/guide.md": "guide\n", "bin/run.sh": "echo run\n", "z-last.md": "last\n"}


def snapshot(root):
    """Every name under root, and every regular file's bytes."""
    files = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            full = os.path.join(dirpath, name)
            if os.path.isfile(full) and not os.path.islink(full):
                with open(full, "rb") as handle:
                    files[os.path.relpath(full, root)] = handle.read()
    return listing(root), files


@pytest.fixture(scope="module")
def built_sources(tmp_path_factory):
    """``sources``, built once per module."""
    tmp_path = tmp_path_factory.mktemp("sources")
    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", FILES, sentinels={"CHANGELOG.md": "# log\n"})
    bad = tmp_path / "bad-shelf"
    root = make_release(bad, "1.0.0", FILES)
    manifest = json.loads((root / ".tether/manifest.json").read_text())
    # The last file's recorded sha256 is wrong: the first files are written before it is met.
    manifest["files"]["z-last.md"] = {"class": "shared", "sha256": "0" * 64}
    (root / ".tether/manifest.json").write_text(json.dumps(manifest))
    repo = init_repo(tmp_path / "upstream")
    commit_release(repo, read_tree(shelf / "1.0.0"), "v1.0.0")
    return {"shelf": shelf, "bad": bad, "git": repo}


@pytest.fixture
def sources(tmp_path, built_sources):
    """A shelf, a shelf whose release fails validation half-way through installing, and a
    git repository with tags (fetching from it fills the project's release cache): this
    test's copies of the module's."""
    return {
        kind: shutil.copytree(built, tmp_path / built.name, symlinks=True)
        for kind, built in built_sources.items()
    }


def project_folder(tmp_path, kind):
    project = tmp_path / "proj"
    if kind == "existing":
        write_files(project, {"mine.txt": "my own file\n", "docs/notes.md": "notes\n"})
    return project


FAILURES = {
    "bad source": (["--source", "{tmp}/nope", "--to", "1.0.0"], 1, "nope"),
    "unknown version": (["--source", "{shelf}", "--to", "9.9.9"], 1, "9.9.9"),
    "unknown git tag": (["--source", "{git}", "--to", "7.0.0"], 1, "7.0.0"),
    "no --to, no versions": (["--source", "{tmp}"], 1, "offers no versions"),
    "unknown profile": (["--source", "{shelf}", "--to", "1.0.0", "--profile", "x"], 2, "x"),
    "unknown flag": (["--source", "{shelf}", "--to", "1.0.0", "--bogus"], 2, "--bogus"),
    "release fails validation": (["--source", "{bad}", "--to", "1.0.0"], 1, "sha256"),
}


@pytest.mark.parametrize("folder", ["new", "existing"])
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failed_init_leaves_everything_as_it_was(tmp_path, sources, folder, failure):
    args, code, message = FAILURES[failure]
    project = project_folder(tmp_path, folder)
    spelled = [a.format(tmp=tmp_path, **sources) for a in args]
    before = snapshot(tmp_path)
    result = run_tether("init", *spelled, "-C", str(project))
    assert (result.returncode, message in result.stderr) == (code, True), result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("source", ["shelf", "git"])
def test_a_target_that_is_a_folder_is_refused_and_the_fetched_cache_removed(
    tmp_path, sources, source
):
    # The release is fetched (a git source fills .tether/cache) before the clash is found.
    project = project_folder(tmp_path, "existing")
    (project / "z-last.md").mkdir()
    (project / "z-last.md/inside.txt").write_text("kept\n")
    before = snapshot(tmp_path)
    result = run_tether(
        "init", "--source", str(sources[source]), "--to", "1.0.0", "-C", str(project)
    )
    assert result.returncode == 1 and "is a directory" in result.stderr
    assert snapshot(tmp_path) == before


def test_validation_failure_after_writing_removes_only_what_init_wrote(tmp_path, sources):
    project = project_folder(tmp_path, "existing")
    (project / "docs/guide.md").write_text("my guide\n")  # customised: never touched
    before = snapshot(tmp_path)
    result = run_tether(
        "init", "--source", str(sources["bad"]), "--to", "1.0.0", "-C", str(project)
    )
    assert result.returncode == 1 and "z-last.md" in result.stderr
    assert snapshot(tmp_path) == before


def test_a_late_write_failure_restores_the_records_init_rewrote(tmp_path, sources):
    # A reinstall over an install whose state file cannot be written (a folder stands
    # there): the manifest copy and ignore rules were already rewritten when it fails.
    project = project_folder(tmp_path, "existing")
    write_files(
        project,
        {
            ".tether/manifest.json": '{"schema_version": 1, "name": "old", "files": {}}\n',
            ".tether/.gitignore": "# my own rules\n",
            ".tether/state.json/keep.txt": "x\n",
        },
    )
    before = snapshot(tmp_path)
    result = run_tether(
        "init", "--force", "--source", str(sources["shelf"]), "--to", "1.0.0", "-C", str(project)
    )
    assert result.returncode == 1, result.stderr
    assert "state.json" in result.stderr and "nothing was installed" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before


def test_a_missing_parent_is_refused_not_created(tmp_path, sources):
    before = snapshot(tmp_path)
    target = tmp_path / "a/b/proj"
    result = run_tether(
        "init", "--source", str(sources["shelf"]), "--to", "1.0.0", "-C", str(target)
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"tether: {tmp_path / 'a/b'}: no such directory; "
        "tether init creates the project folder, not its parents"
    ]
    assert snapshot(tmp_path) == before


def test_a_parent_that_is_a_file_is_refused(tmp_path, sources):
    (tmp_path / "plain").write_text("x\n")
    before = snapshot(tmp_path)
    target = tmp_path / "plain/proj"
    result = run_tether(
        "init", "--source", str(sources["shelf"]), "--to", "1.0.0", "-C", str(target)
    )
    assert result.returncode == 1 and f"{tmp_path / 'plain'}: not a directory" in result.stderr
    assert snapshot(tmp_path) == before


def test_the_project_folder_is_created_when_its_parent_exists(tmp_path, sources):
    target = tmp_path / "proj"
    result = run_tether(
        "init", "--source", str(sources["shelf"]), "--to", "1.0.0", "-C", str(target)
    )
    assert result.returncode == 0, result.stderr
    assert (target / "docs/guide.md").read_text() == "guide\n"
