"""Projects cruft links to a cookiecutter template, updated by tether with no ``tether
init``: real cookiecutter renders both sides; real cruft creates the projects and, for the
comparisons, runs ``cruft update`` itself; real git template repositories in tmp_path."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from builders import git, run_forked, run_tether, write_files
from tether.state import crashpoint

# cruft is imported by the tests that run it, not when the module is collected: every
# test process collects every module, and most run none of these tests.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cruft") is None, reason="the cruft extra is not installed"
)

SLUG = "{{cookiecutter.project_slug}}"
V1 = {
    "cookiecutter.json": json.dumps({"project_name": "Demo", "project_slug": "demo"}),
    f"{SLUG}/README.md": "# {{cookiecutter.project_name}}\n\nintro\n\nfooter\n",
    f"{SLUG}/setup.cfg": "[metadata]\nname = {{cookiecutter.project_slug}}\n",
    f"{SLUG}/local.txt": "template default\n",
}
V2 = {
    **V1,
    f"{SLUG}/README.md": "# {{cookiecutter.project_name}}\n\nintro\n\nfooter v2\n",
    f"{SLUG}/local.txt": "template default v2\n",
    f"{SLUG}/NEW.md": "added upstream\n",
}


def template_repo(root: Path, versions: list[dict[str, str]], prefix: str = "") -> list[str]:
    """A git template repository, one commit per version; returns the commits."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commits = []
    for files in versions:
        for old in git(root, "ls-files", "-z").split("\0"):
            if old:
                (root / old).unlink()
        write_files(root, {f"{prefix}{k}": v for k, v in files.items()})
        git(root, "add", "-A")
        git(root, "commit", "-qm", "version")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return commits


@pytest.fixture(scope="module")
def built_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The V1, V2 template repository, built once per module and never used itself: each
    test that asks for ``versions`` gets a copy of its own."""
    root = tmp_path_factory.mktemp("template") / "tpl"
    return root, template_repo(root, [V1, V2])


@pytest.fixture
def versions(built_template: tuple[Path, list[str]], tmp_path: Path) -> list[str]:
    """This test's own copy of the V1, V2 template repository, at ``tmp_path / "tpl"`` (a
    test may branch or commit in it); its two commits."""
    built, commits = built_template
    shutil.copytree(built, tmp_path / "tpl", symlinks=True)
    return commits


# What cruft made of a template commit and arguments earlier in this module: the template's
# path it recorded, and a copy of the project as cruft left it (in the folder the module's
# fixture below gives, the last item).
_CREATED: dict[tuple[str, str], tuple[Path, Path]] = {}
_CREATIONS: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def cruft_outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The folder ``create`` keeps cruft's outputs in, for this module's tests only."""
    _CREATIONS.append(tmp_path_factory.mktemp("cruft-output"))
    yield
    _CREATED.clear()
    _CREATIONS.clear()


def create(template: Path, out: Path, commit: str, **kwargs: object) -> Path:
    """A project as ``cruft create`` makes it at ``commit``, committed on main.

    cruft runs once per template commit and arguments in this module; a later project of
    the same two (tests copy one built template) is a copy of that committed project with
    the record naming this test's template, the one file in which the two differ, and the
    commit amended to hold it. A template whose hook names a test's own files is a commit
    of that test's alone: cruft runs for it."""
    import cruft

    out.mkdir()
    key = (commit, repr(sorted(kwargs.items())))
    if key in _CREATED:
        source, created = _CREATED[key]
        project = Path(shutil.copytree(created, out / created.name, symlinks=True))
        naming = [rel for rel, data in tree(project).items() if str(source).encode() in data]
        assert naming == [".cruft.json"], naming  # and nothing else
        record = project / ".cruft.json"
        record.write_text(record.read_text().replace(str(source), str(template)))
        git(project, "commit", "-qa", "--amend", "--no-edit")
        return project
    project = cruft.create(str(template), out, checkout=commit, no_input=True, **kwargs)
    record = json.loads((project / ".cruft.json").read_text())
    record["checkout"] = None  # follow the default branch, as a plain ``cruft create``
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "created")
    created = _CREATIONS[-1] / str(len(_CREATED)) / project.name
    shutil.copytree(project, created, symlinks=True)
    _CREATED[key] = (template, created)
    return project


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".git", ".tether")
    }


def update(project: Path, *args: str) -> tuple[int, dict]:
    result = run_tether("update", "--yes", "--no-branch", "--json", *args, "-C", str(project))
    doc = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.returncode, doc | {"stderr": result.stderr}


def commit_all(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-qm", "work")


def test_update_merges_and_records_the_commit(tmp_path: Path, versions: list[str]) -> None:
    v1, v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    (project / "README.md").write_text("# Demo, ours\n\nintro\n\nfooter\n")
    commit_all(project)
    code, doc = update(project)
    assert code == 0, doc["stderr"]
    assert doc["buckets"]["merged"] == ["README.md"]
    assert (project / "README.md").read_text() == "# Demo, ours\n\nintro\n\nfooter v2\n"
    record = json.loads((project / ".cruft.json").read_text())
    assert record["commit"] == v2
    assert record["context"]["cookiecutter"]["_commit"] == v2


def test_byte_identical_to_cruft_update_when_neither_conflicts(
    tmp_path: Path, versions: list[str]
) -> None:
    import cruft

    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    (project / "README.md").write_text("# Demo, ours\n\nintro\n\nfooter\n")
    (project / "ours.txt").write_text("ours alone\n")
    commit_all(project)
    by_cruft = tmp_path / "by-cruft"
    shutil.copytree(project, by_cruft, symlinks=True)
    assert cruft.update(by_cruft, skip_apply_ask=True) is True
    code, doc = update(project)
    assert code == 0, doc["stderr"]
    assert tree(project) == tree(by_cruft)


def test_skip_is_never_written(tmp_path: Path, versions: list[str]) -> None:
    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1, skip=["local.txt"])
    code, doc = update(project)
    assert code == 0, doc["stderr"]
    assert (project / "local.txt").read_text() == "template default\n"
    assert (project / "NEW.md").exists()


def test_a_template_in_a_directory_and_changed_answers(tmp_path: Path) -> None:
    v1, v2 = template_repo(tmp_path / "tpl", [V1, V2], prefix="templates/python/")
    project = create(tmp_path / "tpl", tmp_path / "out", v1, directory="templates/python")
    code, doc = update(project, "--data", "project_name=Renamed")
    assert code == 0, doc["stderr"]
    assert (project / "README.md").read_text() == "# Renamed\n\nintro\n\nfooter v2\n"
    record = json.loads((project / ".cruft.json").read_text())
    assert record["commit"] == v2
    assert record["directory"] == "templates/python"
    assert record["context"]["cookiecutter"]["project_name"] == "Renamed"


def test_check_is_honest_after_cruft_recorded_a_conflicted_update(
    tmp_path: Path, versions: list[str]
) -> None:
    import cruft

    v1, v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    (project / "README.md").write_text("# Demo\n\nintro\n\nfooter, ours\n")
    commit_all(project)
    cruft.update(project, skip_apply_ask=True)
    assert json.loads((project / ".cruft.json").read_text())["commit"] == v2
    result = run_tether("check", "--json", "-C", str(project))
    assert result.returncode == 3, result.stderr
    doc = json.loads(result.stdout)
    assert "unresolved-conflicts" in doc["reasons"]
    assert [c["path"] for c in doc["conflicts"]] == ["README.md"]


def test_tether_records_the_commit_only_after_a_conflicted_run_finished(
    tmp_path: Path, versions: list[str]
) -> None:
    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    (project / "README.md").write_text("# Demo\n\nintro\n\nfooter, ours\n")
    commit_all(project)
    crashed = run_forked(
        "update", "--yes", "--no-branch", "-C", str(project), crash="file-written:1"
    )
    assert crashed.returncode == crashpoint.EXIT_CODE, crashed.stderr
    assert json.loads((project / ".cruft.json").read_text())["commit"] == v1
    code, doc = update(project)
    assert code == 4, doc["stderr"]
    assert doc["resumed"] is True
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 3


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("directory", "../outside", "'directory' '../outside': path contains '..'"),
        ("commit", "--upload-pack=touch /tmp/x", "would read as an option to git"),
        ("checkout", "-b", "would read as an option to git"),
    ],
)
def test_a_hostile_record_is_refused_before_git_or_cookiecutter_runs(
    tmp_path: Path, versions: list[str], key: str, value: str, words: str
) -> None:
    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    record = json.loads((project / ".cruft.json").read_text())
    record[key] = value
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    commit_all(project)
    before = tree(project)
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree(project) == before
    assert not (tmp_path / "render-cache").exists()


def test_check_latest_sees_a_newer_template_commit(tmp_path: Path, versions: list[str]) -> None:
    v1, v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    result = run_tether("check", "--check-latest", "--json", "-C", str(project))
    assert result.returncode == 3, result.stderr
    doc = json.loads(result.stdout)
    assert doc["reasons"] == ["update-available"] and doc["latest_version"] == v2


# --- hooks: programs the template ships, run only with the user's consent ---------------

HOOK = """\
import pathlib

with open({witness!r}, "a") as log:
    log.write("post_gen ran\\n")
if "{{{{ cookiecutter.with_docs }}}}" == "no":
    pathlib.Path("DOCS.md").unlink()
"""


def hooked_template(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A template whose post_gen hook removes DOCS.md when the answer says so, and writes
    a line to a witness file outside every project each time it runs."""
    witness = tmp_path / "hook-witness.log"
    hook = {"hooks/post_gen_project.py": HOOK.format(witness=str(witness))}
    context = json.dumps({"project_name": "Demo", "project_slug": "demo", "with_docs": "no"})
    v1 = {**V1, **hook, "cookiecutter.json": context, f"{SLUG}/DOCS.md": "docs\n"}
    v2 = {**V2, **hook, "cookiecutter.json": context, f"{SLUG}/DOCS.md": "docs v2\n"}
    commits = template_repo(tmp_path / "tpl", [v1, v2])
    return tmp_path / "tpl", witness, commits


def hooked_project(tmp_path: Path) -> tuple[Path, Path]:
    template, witness, (v1, _v2) = hooked_template(tmp_path)
    project = create(template, tmp_path / "out", v1)
    assert witness.read_text() == "post_gen ran\n"  # cruft create ran it: the person did
    witness.unlink()
    assert not (project / "DOCS.md").exists()
    return project, witness


def test_an_update_runs_no_hook_without_trust_and_names_it(tmp_path: Path) -> None:
    project, witness = hooked_project(tmp_path)
    before = tree(project)
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "ships hooks/post_gen_project.py, which runs programs: pass --trust" in result.stderr
    assert not witness.exists()
    assert tree(project) == before
    # A second try finds the refusal again (no render made without the hook is taken).
    again = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert again.returncode == 1 and not witness.exists()


def test_with_trust_the_hooks_run_and_the_tree_is_cruft_updates(tmp_path: Path) -> None:
    import cruft

    project, witness = hooked_project(tmp_path)
    by_cruft = tmp_path / "by-cruft"
    shutil.copytree(project, by_cruft, symlinks=True)
    assert cruft.update(by_cruft, skip_apply_ask=True) is True
    witness.unlink()
    code, doc = update(project, "--trust")
    assert code == 0, doc["stderr"]
    assert witness.read_text() == "post_gen ran\npost_gen ran\n"  # both sides rendered
    assert tree(project) == tree(by_cruft)
    assert not (project / "DOCS.md").exists()


def test_no_programs_renders_without_the_hooks_and_says_so(tmp_path: Path) -> None:
    project, witness = hooked_project(tmp_path)
    code, doc = update(project, "--no-programs")
    assert code == 0, doc["stderr"]
    assert not witness.exists()
    assert any(
        "rendered without its hooks (--no-programs): hooks/post_gen_project.py not run" in n
        for n in doc["notes"]
    ), doc["notes"]
    record = json.loads((project / ".cruft.json").read_text())
    assert record["commit"] == git(tmp_path / "tpl", "rev-parse", "HEAD").strip()


def test_a_dry_run_and_the_read_commands_run_no_hook(tmp_path: Path) -> None:
    project, witness = hooked_project(tmp_path)
    before = tree(project)
    for argv in (
        ["update", "--dry-run", "--trust", "--json"],
        ["status", "--json"],
        ["check", "--json"],
        ["diff"],
    ):
        result = run_tether(*argv, "-C", str(project))
        assert result.returncode in (0, 3), (argv, result.stderr)
        assert "hooks/post_gen_project.py not run" in result.stdout, argv
        assert not witness.exists(), argv
    assert tree(project) == before
    # With --trust a read command may render with the hooks (it was asked to).
    result = run_tether("status", "--trust", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert witness.read_text() == "post_gen ran\n"
    assert json.loads(result.stdout)["notes"] == []
    # A dry run then takes that render from the cache: still no hook runs, and no note.
    witness.unlink()
    code, doc = update(project, "--dry-run")
    assert code == 0, doc["stderr"]
    assert not witness.exists()


def test_the_second_render_in_one_process_compiles_only_what_changed(
    tmp_path: Path, versions: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two sides of an update (and a fleet's renders) share what Jinja compiled and
    binaryornot decided for the same source; the output stays cookiecutter's."""
    import cruft
    import jinja2

    from tether.templates.cruft_render import render
    from tether.templates.records import parse_cruft_record

    v1, v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "out", v1)
    record = parse_cruft_record((project / ".cruft.json").read_bytes(), ".cruft.json")
    from tether.templates import jinja_sharing

    monkeypatch.setattr(jinja_sharing, "_COMPILED", {})  # what earlier tests compiled
    parsed: list[tuple[str, str | None]] = []
    real = jinja2.Environment._parse

    def parse(self: jinja2.Environment, source: str, name: str | None, filename: str | None):  # type: ignore[no-untyped-def]
        parsed.append((source, name))
        return real(self, source, name, filename)

    monkeypatch.setattr(jinja2.Environment, "_parse", parse)
    render(record, v1, record.answers, tmp_path / "one")
    first = list(parsed)
    parsed.clear()
    render(record, v2, record.answers, tmp_path / "two")
    # The answers themselves are rendered by cookiecutter's prompt, before the files.
    answers_ = set(record.answers.values())
    again = {(source, name) for source, name in set(parsed) & set(first) if source not in answers_}
    assert not again, "the second version compiled a source again"
    changed = "# {{cookiecutter.project_name}}\n\nintro\n\nfooter v2\n"
    assert changed in [source for source, _name in parsed]
    by_cruft = tmp_path / "by-cruft"
    cruft.create(str(tmp_path / "tpl"), by_cruft, checkout=v2, no_input=True)
    made = tree(by_cruft / "demo")
    made.pop(".cruft.json")
    assert tree(tmp_path / "two") == made


def test_a_followed_branch_is_the_target_and_the_checkout_key_stays(
    tmp_path: Path, versions: list[str]
) -> None:
    """``checkout`` names the branch the project follows: the update goes to its newest
    commit, not to the default branch's, and the key is left as it was."""
    template = tmp_path / "tpl"
    v1, v2 = versions
    git(template, "checkout", "-q", "-b", "stable", v1)
    write_files(template, {f"{SLUG}/STABLE.md": "a fix on stable\n"})
    git(template, "add", "-A")
    git(template, "commit", "-qm", "stable fix")
    stable = git(template, "rev-parse", "HEAD").strip()
    git(template, "checkout", "-q", "main")
    project = create(template, tmp_path / "out", v1)
    record = json.loads((project / ".cruft.json").read_text())
    record["checkout"] = "stable"
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    commit_all(project)
    code, doc = update(project)
    assert code == 0, doc["stderr"]
    assert (project / "STABLE.md").read_text() == "a fix on stable\n"
    assert not (project / "NEW.md").exists()  # main's v2, not followed
    record = json.loads((project / ".cruft.json").read_text())
    assert record["commit"] == stable != v2
    assert record["checkout"] == "stable"


def test_a_fleet_of_cruft_projects_renders_each_commit_once(
    tmp_path: Path, versions: list[str], render_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from builders import call

    monkeypatch.setenv("TETHER_REGISTRY", str(tmp_path / "registry.json"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    v1, v2 = versions
    projects = [create(tmp_path / "tpl", tmp_path / name, v1) for name in ("p1", "p2", "p3")]
    (projects[0] / "README.md").write_text("# Demo, ours\n\nintro\n\nfooter\n")
    commit_all(projects[0])
    for number, project in enumerate(projects):
        assert call("projects", "add", str(project), "--name", f"p{number}") == 0
    result = run_tether("fleet", "update", "--yes", "--isolate", "none")
    assert result.returncode == 0, result.stdout + result.stderr
    for project in projects:
        assert json.loads((project / ".cruft.json").read_text())["commit"] == v2
        assert (project / "NEW.md").read_text() == "added upstream\n"
    assert (projects[0] / "README.md").read_text() == "# Demo, ours\n\nintro\n\nfooter v2\n"
    # Same template, same context: the two commits rendered once for the three projects.
    assert len(list(render_cache.iterdir())) == 2


def test_a_campaign_over_cruft_repositories_is_one_command(
    tmp_path: Path, versions: list[str], monkeypatch: pytest.MonkeyPatch, render_cache: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    v1, v2 = versions
    registry: dict[str, object] = {"version": 2, "projects": {}}
    projects: dict[str, object] = {}
    for name in ("r1", "r2"):
        (tmp_path / "seeds").mkdir(exist_ok=True)
        seed = create(tmp_path / "tpl", tmp_path / "seeds" / name, v1)
        bare = tmp_path / "remotes" / f"{name}.git"
        git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
        projects[name] = {"name": name, "url": bare.as_uri()}
    registry["projects"] = projects
    (tmp_path / "registry.json").write_text(json.dumps(registry))
    where = ["--registry", str(tmp_path / "registry.json"), "--dir", str(tmp_path / "c")]
    started = run_tether("campaign", "start", "c1", "--upstream", "tpl", "--to", v2, *where)
    assert started.returncode == 0, started.stdout + started.stderr
    ran = run_tether("campaign", "run", "c1", "--dir", str(tmp_path / "c"), "-j", "1", "--json")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    from tether.campaign.store import CampaignFolder

    records = json.loads(ran.stdout)["repositories"]
    assert len(records) == 2
    for record in records:
        assert record["status"] == "updated", record
        mirror = CampaignFolder(tmp_path / "c" / "c1").mirror_path(record["url"])
        recorded = json.loads(git(mirror, "show", f"{record['commit']}:.cruft.json"))
        assert recorded["commit"] == v2
        assert git(mirror, "show", f"{record['commit']}:NEW.md") == "added upstream\n"
    assert len(list(render_cache.iterdir())) == 2  # each commit rendered once for the two


def test_a_render_without_its_hooks_is_a_fact_of_the_baseline(tmp_path: Path) -> None:
    """status's baseline (rendered without the hooks: a read runs none) carries the fact,
    which status, check and diff word alike (report/notes.py)."""
    from tether.flows.notes import HooksNotRun, ProgramsOff
    from tether.flows.status import project_status

    project, witness = hooked_project(tmp_path)
    commit = json.loads((project / ".cruft.json").read_text())["commit"]
    template = json.loads((project / ".cruft.json").read_text())["template"]
    report = project_status(project)
    assert report.notes == [
        HooksNotRun(template, commit[:12], ("hooks/post_gen_project.py",), ProgramsOff.UNTRUSTED)
    ]
    assert not witness.exists()


def test_a_render_cache_entry_left_broken_is_rendered_again(
    tmp_path: Path, render_cache: Path, versions: list[str]
) -> None:
    """An entry of the render cache whose facts no longer read (cut short, edited by hand) is
    no render: tether renders the version again and puts the new entry in its place, instead
    of failing every later command of every project of that template."""
    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "p", v1)
    first = run_tether("status", "--json", "-C", str(project))
    assert first.returncode == 0, first.stderr
    (entry,) = render_cache.iterdir()
    (entry / "facts.json").write_bytes((entry / "facts.json").read_bytes()[:10])
    (entry / "tree" / "README.md").write_text("not what the template renders\n")
    again = run_tether("status", "--json", "-C", str(project))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["modified"] == json.loads(first.stdout)["modified"] == []
    assert [p.name for p in render_cache.iterdir()] == [entry.name]
    assert json.loads((entry / "facts.json").read_text())["commit"] == v1
    assert (entry / "tree" / "README.md").read_text() == (project / "README.md").read_text()


def test_a_render_cache_entry_tether_did_not_make_is_left_alone_and_named(
    tmp_path: Path, render_cache: Path, versions: list[str]
) -> None:
    """Under an entry's name, what tether never makes (facts that are a FIFO, a link) is
    neither opened, waited on nor removed: the command stops in one line naming it."""
    import os

    v1, _v2 = versions
    project = create(tmp_path / "tpl", tmp_path / "p", v1)
    assert run_tether("status", "-C", str(project)).returncode == 0
    (entry,) = render_cache.iterdir()
    (entry / "facts.json").unlink()
    os.mkfifo(entry / "facts.json")
    result = run_tether("status", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"tether: {entry}: a render cache entry tether can neither read nor replace (a link, "
        "a file, or facts that are no plain file); remove it to render again"
    ]
    assert (entry / "facts.json").is_fifo()
    assert [p.name for p in render_cache.iterdir()] == [entry.name]
