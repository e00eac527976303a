"""A copier template fetched over the network: copier clones it itself, so tether renders
it in a child process stopped at ``TETHER_LIMIT_NETWORK_SECONDS`` (templates/copier_child).

The template is a real git repository served by a real HTTP server on 127.0.0.1 over git's
plain ("dumb") HTTP protocol; its objects trickle one byte every 50 ms when the test says
so, and the server gives up on its own after a few seconds, so that a render without the
bound fails this test with another message instead of hanging it. The project is made by
real copier from the same template and then pointed at the served URL.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from builders import git, run_tether, write_files
from helpers_sources import bare_for_http, serve_bare_repository
from tether.sources import limits

# copier is imported by the tests that run it, not when the module is collected: every test
# process collects every module, and most run none of these tests (~0.2 s of imports).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("copier") is None, reason="the copier extra is not installed"
)

COPIER_YML = "project_name:\n  type: str\n  default: demo\n"
ANSWERS = "# Changes here will be overwritten by Copier\n{{ _copier_answers|to_nice_yaml -}}\n"
V1 = {
    "copier.yml": COPIER_YML,
    "{{_copier_conf.answers_file}}.jinja": ANSWERS,
    "README.md.jinja": "# {{ project_name }}\n\nintro\n",
}
V2 = {**V1, "README.md.jinja": "# {{ project_name }}\n\nintro\n\nmore upstream\n"}


@pytest.fixture(scope="module")
def built_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project copier made from v1.0.0, and the bare template repository to serve, built
    once per module and never used themselves: each test gets copies of its own."""
    import copier

    root = tmp_path_factory.mktemp("served-project")
    template = root / "tpl"
    template.mkdir()
    git(template, "init", "-q", "-b", "main")
    for tag, files in (("v1.0.0", V1), ("v2.0.0", V2)):
        write_files(template, files)
        git(template, "add", "-A")
        git(template, "commit", "-qm", tag)
        git(template, "tag", tag)
    project = root / "app"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(root / "home"))  # no user settings of copier's
        copier.run_copy(str(template), project, vcs_ref="v1.0.0", defaults=True, quiet=True)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "generated")
    return project, bare_for_http(template, root / "served" / "tpl.git")


@pytest.fixture
def served_project(
    built_project: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """This test's own copies of the project copier made from v1.0.0 (its answers name the
    module's template until the test points them at the served URL) and of the bare template
    repository to serve."""
    monkeypatch.setenv("TETHER_RENDER_CACHE", str(tmp_path / "render-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user settings of copier's
    project, bare = built_project
    return (
        Path(shutil.copytree(project, tmp_path / "app", symlinks=True)),
        Path(shutil.copytree(bare, tmp_path / "served" / "tpl.git", symlinks=True)),
    )


def _point_at(project: Path, url: str) -> None:
    answers = project / ".copier-answers.yml"
    lines = [
        f"_src_path: {url}" if line.startswith("_src_path:") else line
        for line in answers.read_text().splitlines()
    ]
    answers.write_text("\n".join(lines) + "\n")
    git(project, "commit", "-qam", "template served over http")


def _files(project: Path) -> dict[str, bytes]:
    return {
        p.relative_to(project).as_posix(): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and p.relative_to(project).parts[0] not in (".git", ".tether")
    }


def test_a_trickling_template_stops_the_render_at_the_time_bound_and_writes_nothing(
    served_project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, bare = served_project
    monkeypatch.setenv(limits.NETWORK_SECONDS, "2")
    temporary = project.parent / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))  # where copier makes its clone
    with serve_bare_repository(bare, "/objects/") as url:
        _point_at(project, url)
        before, head = _files(project), git(project, "rev-parse", "HEAD")
        done = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert done.returncode == 1, done.stdout
    # Only the bound says "took longer": without it copier's clone fails when the server
    # gives up, with git's words.
    assert done.stderr == (
        f"tether: copier could not render {url} at v1.0.0: copier took longer than 2 s "
        f"({limits.NETWORK_SECONDS} sets it)\n"
    )
    assert _files(project) == before
    # Stopped with an interrupt first, copier removed its temporary clone.
    assert sorted(p.name for p in temporary.iterdir() if p.name.startswith("copier")) == []
    assert git(project, "rev-parse", "HEAD") == head
    # tether's own folder (its lock, its log) aside, git sees no change.
    changed = git(project, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in changed if not line[3:].startswith(".tether/")] == []


def test_a_template_within_the_bound_is_rendered_in_the_child_and_updated(
    served_project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, bare = served_project
    monkeypatch.setenv(limits.NETWORK_SECONDS, "60")
    with serve_bare_repository(bare) as url:
        _point_at(project, url)
        done = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["to_version"] == "v2.0.0"
    assert (project / "README.md").read_text() == "# demo\n\nintro\n\nmore upstream\n"
    assert "_commit: v2.0.0\n" in (project / ".copier-answers.yml").read_text()
