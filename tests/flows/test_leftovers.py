"""Files removed or renamed upstream that an update left in place stay visible until they
are deleted or taken over: ``status``, ``check --strict``, every later update, and
``update --delete-removed`` after the update that reported them."""

import json

import pytest

from builders import make_release, run_tether

GUIDE = "".join(f"guide line {n}\n" for n in range(20))


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    v1 = {"a.txt": "a\n", "old.md": "old\n", "docs/guide.md": GUIDE}
    make_release(shelf, "1.0.0", v1)
    # 2.0.0 drops old.md and renames docs/guide.md to docs/manual.md (same text): the old
    # copy of the renamed file is left here too, a leftover like old.md
    make_release(shelf, "2.0.0", {"a.txt": "a2\n", "docs/manual.md": GUIDE})
    make_release(shelf, "2.1.0", {"a.txt": "a3\n", "docs/manual.md": GUIDE})
    return shelf


def run_json(*args):
    result = run_tether(*args, "--json")
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_leftovers_stay_listed_until_removed(project):
    code, update = run_json("update", "--to", "2.0.0", "--yes", "-C", str(project))
    assert code == 0, update
    both = ["docs/guide.md", "old.md"]
    assert update["buckets"]["delete"] == both
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == both and status["leftovers_unmodified"] == both
    assert "Removed upstream, still here" in run_tether("status", "-C", str(project)).stdout
    assert run_tether("check", "-C", str(project)).returncode == 0  # listed, not failing
    strict = run_tether("check", "--strict", "-C", str(project))
    assert strict.returncode == 3 and "tether own old.md" in strict.stdout
    # Nothing newer: the update still names it, and --delete-removed removes it now.
    code, again = run_json("update", "--to", "2.0.0", "--yes", "-C", str(project))
    assert again["status"] == "up-to-date" and again["buckets"]["delete"] == both
    assert "old.md" in run_tether("update", "--to", "2.0.0", "-C", str(project)).stdout
    code, removed = run_json(
        "update", "--to", "2.0.0", "--yes", "--delete-removed", "-C", str(project)
    )
    assert code == 0, removed
    assert removed["buckets"]["deleted"] == both
    assert not (project / "old.md").exists() and not (project / "docs/guide.md").exists()
    assert (project / removed["backup_dir"] / "old.md").read_text() == "old\n"
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == []
    assert run_tether("check", "--strict", "-C", str(project)).returncode == 0


def test_a_later_update_lists_them_again_and_a_changed_one_is_never_removed(project):
    run_tether("update", "--to", "2.0.0", "--yes", "-C", str(project))
    (project / "docs/guide.md").unlink()
    (project / "old.md").write_text("old, and mine now\n")
    code, update = run_json(
        "update", "--to", "2.1.0", "--yes", "--delete-removed", "-C", str(project)
    )
    assert code == 0, update
    assert update["buckets"]["delete"] == ["old.md"] and update["buckets"]["deleted"] == []
    assert (project / "old.md").read_text() == "old, and mine now\n"
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == ["old.md"] and status["leftovers_unmodified"] == []


def test_taking_one_over_or_deleting_it_ends_the_listing(project):
    run_tether("update", "--to", "2.0.0", "--yes", "-C", str(project))
    (project / "docs/guide.md").unlink()
    assert run_tether("own", "-C", str(project), "old.md").returncode == 0
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == [] and status["yours"] == ["old.md"]
    assert run_tether("check", "--strict", "-C", str(project)).returncode == 0
    run_tether("own", "--undo", "-C", str(project), "old.md")
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == ["old.md"]
    (project / "old.md").unlink()
    _code, status = run_json("status", "-C", str(project))
    assert status["leftovers"] == []
    _code, update = run_json("update", "--to", "2.1.0", "--yes", "-C", str(project))
    assert update["buckets"]["delete"] == []
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["leftovers"] == {}


def test_the_old_copy_of_a_renamed_file_you_edited_is_a_leftover(project):
    (project / "docs/guide.md").write_text(GUIDE + "my note\n")
    code, update = run_json("update", "--to", "2.0.0", "--yes", "-C", str(project))
    assert code == 0, update
    assert (project / "docs/manual.md").read_text() == GUIDE + "my note\n"
    _code, status = run_json("status", "-C", str(project))
    assert "docs/guide.md" in status["leftovers"]
