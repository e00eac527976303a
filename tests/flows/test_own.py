"""``tether own PATH…``: the adopter takes shipped files over. Updates never touch them,
status lists them as yours (never as drift), and the choice is committed in
``.tether/config.toml``."""

import json

import pytest

from builders import make_release, run_tether, tree_digest, write_files

V1 = {
    "docs/guide.md": "guide v1\n",
    "docs/faq.md": "faq v1\n",
    "bin/lint.sh": "lint v1\n",
    "old.md": "old\n",
}
V2 = {
    "docs/guide.md": "guide v2\n",
    "docs/faq.md": "faq v2\n",
    "bin/lint.sh": "lint v2\n",
}
CLASSES = {"bin/lint.sh": "owned"}


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", V1, CLASSES, sentinels={"CHANGELOG.md": "# log\n"})
    make_release(shelf, "2.0.0", V2, CLASSES, sentinels={"CHANGELOG.md": "# log\n"})
    return shelf


def tether_json(*args):
    result = run_tether(*args, "--json")
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_an_owned_file_is_never_updated_and_never_drift(project):
    (project / "docs/guide.md").write_text("my guide\n")
    (project / "bin/lint.sh").write_text("my lint\n")
    assert run_tether("check", "-C", str(project)).returncode == 3  # owned drift
    code, report = tether_json("own", "-C", str(project), "docs/guide.md", "bin/lint.sh")
    assert code == 0
    assert report["changed"] == ["bin/lint.sh", "docs/guide.md"]
    assert "bin/lint.sh" in (project / ".tether/config.toml").read_text()
    code, status = tether_json("status", "-C", str(project))
    assert status["yours"] == ["bin/lint.sh", "docs/guide.md"]
    assert status["modified"] == [] and status["modified_owned"] == []
    assert run_tether("check", "-C", str(project)).returncode == 0
    code, diff = tether_json("diff", "-C", str(project))
    assert diff["files"] == []
    code, update = tether_json("update", "--yes", "-C", str(project))
    assert code == 0, update
    assert (project / "docs/guide.md").read_text() == "my guide\n"
    assert (project / "bin/lint.sh").read_text() == "my lint\n"
    assert (project / "docs/faq.md").read_text() == "faq v2\n"  # the others are updated
    assert "docs/guide.md" not in update["backed_up"]
    assert update["buckets"]["conflict"] == []
    human = run_tether("status", "-C", str(project)).stdout
    assert "Yours (taken over with tether own; updates leave them alone) (2):" in human


def test_undo_gives_the_file_back(project):
    (project / "docs/guide.md").write_text("my guide\n")
    run_tether("own", "-C", str(project), "docs/guide.md")
    code, report = tether_json("own", "--undo", "-C", str(project), "docs/guide.md")
    assert code == 0 and report["changed"] == ["docs/guide.md"] and report["yours"] == []
    code, status = tether_json("status", "-C", str(project))
    assert status["modified"] == ["docs/guide.md"] and status["yours"] == []
    code, update = tether_json("update", "--yes", "--auto", "keep-mine", "-C", str(project))
    assert [c["path"] for c in update["buckets"]["conflict"]] == ["docs/guide.md"]


def test_a_deleted_file_taken_over_stays_deleted(project):
    (project / "bin/lint.sh").unlink()
    assert run_tether("check", "-C", str(project)).returncode == 3  # a deleted owned file
    _code, report = tether_json("own", "-C", str(project), "bin/lint.sh")
    assert report["deleted"] == ["bin/lint.sh"]
    _code, status = tether_json("status", "-C", str(project))
    assert status["yours_deleted"] == ["bin/lint.sh"] and status["deleted"] == []
    assert run_tether("check", "-C", str(project)).returncode == 0
    run_tether("update", "--yes", "-C", str(project))
    assert not (project / "bin/lint.sh").exists()


def test_a_folder_names_every_shipped_file_under_it_and_paths_come_from_here(project):
    result = run_tether("own", "--json", ".", cwd=project / "docs")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["yours"] == ["docs/faq.md", "docs/guide.md"]
    again = run_tether("own", "--json", "faq.md", cwd=project / "docs")
    assert json.loads(again.stdout)["unchanged"] == ["docs/faq.md"]


def test_a_dropped_file_taken_over_is_no_leftover_and_never_removed(project):
    run_tether("own", "-C", str(project), "old.md")
    code, update = tether_json("update", "--yes", "--delete-removed", "-C", str(project))
    assert code == 0
    assert update["buckets"]["delete"] == [] and update["buckets"]["deleted"] == []
    assert (project / "old.md").read_text() == "old\n"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("mine.txt", "no file of acme-kit 1.0.0 is at or under this path"),
        ("CHANGELOG.md", "a sentinel file"),
        ("../elsewhere", "outside the project"),
    ],
)
def test_a_path_that_is_no_shipped_file_is_refused_and_nothing_is_written(project, path, words):
    write_files(project, {"mine.txt": "mine\n"})
    before = tree_digest(project)
    result = run_tether("own", "-C", str(project), path)
    assert result.returncode == 2
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree_digest(project) == before


def test_the_config_keeps_what_the_adopter_wrote(project):
    config = project / ".tether/config.toml"
    write_files(project, {".tether/config.toml": "# our team's rules\n[check]\nfail_on = []\n"})
    run_tether("own", "-C", str(project), "docs/faq.md")
    text = config.read_text()
    assert text.startswith("# our team's rules\n[check]\nfail_on = []\n")
    assert 'paths = ["docs/faq.md"]' in text


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[own]\npaths = ["../victim.txt"]\n', "[own] paths: '../victim.txt'"),
        ('[own]\npaths = [".tether/state.json"]\n', "[own] paths: '.tether/state.json'"),
        ("[own]\npaths = 3\n", "[own] paths must be a list of strings"),
        ("[own\n", "not valid TOML"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_file(project, text, words):
    write_files(project, {".tether/config.toml": text})
    before = tree_digest(project)
    for command in (["status"], ["update", "--yes"], ["own", "docs/faq.md"]):
        result = run_tether(*command, "-C", str(project))
        assert result.returncode == 1, command
        line = result.stderr.strip()
        assert len(line.splitlines()) == 1 and "config.toml" in line and words in line
    assert tree_digest(project) == before
