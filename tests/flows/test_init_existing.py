"""``init`` into an existing project: shipped files the project lacks are not re-created
without asking (listed; off a terminal recorded as the adopter's deletion unless
``--restore-missing``); ``--to`` is optional (the newest release, as ``update`` picks)."""

import json

import pytest

from builders import make_release, pty_session, run_tether, write_files

V1 = {"a.txt": "a\n", "docs/gone.md": "gone\n", "bin/tool.sh": "tool\n"}


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", V1, {"bin/tool.sh": "owned"})
    make_release(
        shelf, "1.1.0", {**V1, "docs/gone.md": "gone, changed\n"}, {"bin/tool.sh": "owned"}
    )
    return shelf


@pytest.fixture
def existing(tmp_path):
    """A project made from the release by hand long ago: it deleted docs/gone.md and
    bin/tool.sh since."""
    project = tmp_path / "proj"
    write_files(project, {"a.txt": "a\n", "src/mine.py": "mine\n"})
    return project


def init(project, shelf, *args):
    return run_tether("init", "--source", str(shelf), "--to", "1.0.0", *args, "-C", str(project))


def test_off_a_terminal_the_deleted_files_stay_deleted_and_are_recorded(existing, shelf):
    result = init(existing, shelf, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["left_deleted"] == ["bin/tool.sh", "docs/gone.md"]
    assert report["identical"] == ["a.txt"] and report["added"] == []
    assert not (existing / "docs/gone.md").exists() and not (existing / "bin/tool.sh").exists()
    assert "docs/gone.md" in (existing / ".tether/config.toml").read_text()
    status = json.loads(run_tether("status", "--json", "-C", str(existing)).stdout)
    assert status["yours_deleted"] == ["bin/tool.sh", "docs/gone.md"] and status["deleted"] == []
    assert run_tether("check", "-C", str(existing)).returncode == 0
    update = run_tether("update", "--yes", "-C", str(existing))
    assert update.returncode == 0, update.stderr
    assert not (existing / "docs/gone.md").exists()  # never re-created
    human = init(existing, shelf, "--force").stdout
    assert "Left deleted" not in human  # already recorded: nothing new to say


def test_restore_missing_writes_them(existing, shelf):
    result = init(existing, shelf, "--restore-missing", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["left_deleted"] == []
    assert (existing / "docs/gone.md").read_text() == "gone\n"
    assert not (existing / ".tether/config.toml").exists()


def test_an_empty_folder_gets_every_file(tmp_path, shelf):
    project = tmp_path / "fresh"
    write_files(project, {"README.md": "not the release's\n"})
    result = init(project, shelf, "--json")
    assert sorted(json.loads(result.stdout)["added"]) == ["a.txt", "bin/tool.sh", "docs/gone.md"]


@pytest.mark.parametrize(("reply", "restored"), [("y", True), ("n", False)])
def test_on_a_terminal_init_asks(existing, shelf, reply, restored):
    argv = ["init", "--source", str(shelf), "--to", "1.0.0", "-C", str(existing)]
    code, out = pty_session(argv, [("Restore them from the release? [y/N]", reply)])
    assert code == 0, out
    assert "docs/gone.md" in out.split("Restore them")[0]  # listed before the question
    assert (existing / "docs/gone.md").exists() is restored
    assert (existing / ".tether/config.toml").exists() is not restored


def test_to_is_optional_and_takes_the_newest(existing, shelf, tmp_path):
    project = tmp_path / "new"
    result = run_tether("init", "--source", str(shelf), "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["version"] == "1.1.0"
    help_text = " ".join(run_tether("init", "--help").stdout.split())
    assert "default: the newest the source offers" in help_text


def test_ctrl_c_at_the_question_leaves_the_project_as_it_was(existing, shelf):
    """Interrupted while asking, init has written nothing: no install, no cache, the
    project's own files byte for byte as they were."""
    from builders import tree_digest

    before = tree_digest(existing)
    argv = ["init", "--source", str(shelf), "--to", "1.0.0", "-C", str(existing)]
    code, out = pty_session(argv, [("Restore them from the release? [y/N]", "\x03")])
    assert code == 130, out
    assert tree_digest(existing) == before
