"""Releases without a manifest: any git repository with version tags (or a shelf folder)
is a source; every regular file is ``shared``, except version-control metadata, the
release's ``.tetherignore`` and the adopter's ``--exclude`` patterns (recorded for later
updates). Real git repositories, real init/status/diff/update/fleet runs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from builders import call, git, run_tether, write_files
from tether.model.implicit import implicit_manifest, upstream_name
from tether.profiles import NATIVE


def tagged_repo(root: Path, releases: list[tuple[str, dict[str, str]]]) -> Path:
    """A git repository with one commit and tag ``v<version>`` per release, each commit
    holding exactly that release's files."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for version, files in releases:
        for old in git(root, "ls-files").split():
            (root / old).unlink()
        write_files(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"release {version}", "--allow-empty")
        git(root, "tag", f"v{version}")
    return root


V1 = {
    "README.md": "title\n\nintro\n",
    "src/app.py": "def main():\n    return 1\n",
    ".tetherignore": "# the publisher's build output\nbuild/\n*.log\n",
    "build/out.bin": "generated\n",
    "debug.log": "noise\n",
    "docs/notes.txt": "draft\n",
}
V2 = {
    **V1,
    "README.md": "title\n\nintro\n\nmore\n",
    "src/app.py": "def main():\n    return 2\n",
    "docs/notes.txt": "draft 2\n",
    "docs/extra.txt": "new and excluded\n",
    "NEW.md": "added upstream\n",
}


@pytest.fixture(scope="module")
def built_upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tagged repository of V1 and V2, built once per module and never used itself."""
    return tagged_repo(
        tmp_path_factory.mktemp("upstream") / "kit.git", [("1.0.0", V1), ("2.0.0", V2)]
    )


@pytest.fixture
def upstream(built_upstream: Path, tmp_path: Path) -> Path:
    """This test's own copy of the tagged repository of V1 and V2."""
    return Path(shutil.copytree(built_upstream, tmp_path / "kit.git", symlinks=True))


def init(source: Path, project: Path, *extra: str) -> None:
    result = run_tether(
        "init", "--source", str(source), "--to", "1.0.0", *extra, "-C", str(project)
    )
    assert result.returncode == 0, result.stderr


def test_init_from_a_tagged_repository_without_a_manifest(upstream: Path, tmp_path: Path) -> None:
    project = tmp_path / "app"
    init(upstream, project, "--exclude", "docs/*.txt")
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["upstream"] == "kit"
    assert state["version"] == "1.0.0"
    # Every regular file is shared; the ignore file, what it names and --exclude stay out.
    assert state["files"].keys() == {"README.md", "src/app.py"}
    assert {r["class"] for r in state["files"].values()} == {"shared"}
    for left_out in (".tetherignore", "build/out.bin", "debug.log", "docs/notes.txt"):
        assert not (project / left_out).exists()
    copy = json.loads((project / ".tether/manifest.json").read_text())
    assert copy["implicit"] is True and copy["exclude"] == ["docs/*.txt"]


def test_update_merges_every_file_and_keeps_the_exclude(upstream: Path, tmp_path: Path) -> None:
    project = tmp_path / "app"
    init(upstream, project, "--exclude", "docs/")
    (project / "README.md").write_text("my title\n\nintro\n")
    status = run_tether("status", "--json", "-C", str(project))
    assert json.loads(status.stdout)["modified"] == ["README.md"]
    diff = run_tether("diff", "-C", str(project))
    assert "-title\n+my title" in diff.stdout
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["to_version"] == "2.0.0"
    assert doc["buckets"]["merged"] == ["README.md"]
    assert doc["buckets"]["update"] == ["src/app.py"]
    assert doc["buckets"]["add"] == ["NEW.md"]
    assert (project / "README.md").read_text() == "my title\n\nintro\n\nmore\n"
    # The patterns given at init still apply to the next release.
    assert not (project / "docs").exists()


def test_a_file_the_adopter_already_had_is_never_overwritten(
    upstream: Path, tmp_path: Path
) -> None:
    project = tmp_path / "app"
    init(upstream, project)
    (project / "NEW.md").write_text("mine before upstream shipped it\n")
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 4
    [conflict] = json.loads(result.stdout)["buckets"]["conflict"]
    assert conflict["path"] == "NEW.md" and conflict["class"] == "shared"
    assert "mine before upstream shipped it" in (project / "NEW.md").read_text()


def test_version_control_metadata_and_links_are_not_release_content(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    write_files(
        shelf / "1.0.0",
        {"a.txt": "a\n", ".hg/store": "hg\n", "sub/.svn/entries": "svn\n", "sub/b.txt": "b\n"},
    )
    os.symlink("a.txt", shelf / "1.0.0" / "link.txt")
    project = tmp_path / "app"
    init(shelf, project)
    state = json.loads((project / ".tether/state.json").read_text())
    assert sorted(state["files"]) == ["a.txt", "sub/b.txt"]
    assert state["upstream"] == "shelf"


def test_exclude_is_refused_for_a_release_with_a_manifest(tmp_path: Path) -> None:
    from builders import make_release

    shelf = tmp_path / "shelf"
    make_release(shelf, "1.0.0", {"a.txt": "a\n"})
    project = tmp_path / "app"
    result = run_tether(
        "init", "--source", str(shelf), "--to", "1.0.0", "--exclude", "a.txt", "-C", str(project)
    )
    assert result.returncode == 1
    assert "--exclude applies only to a release without one" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not project.exists()


def test_an_unreadable_ignore_file_is_one_line(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    write_files(shelf / "1.0.0", {"a.txt": "a\n"})
    (shelf / "1.0.0" / ".tetherignore").write_bytes(b"\xff\xfe bad\n")
    project = tmp_path / "app"
    result = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1
    assert ".tetherignore: cannot read (not UTF-8 text)" in result.stderr
    assert not project.exists()


def test_a_publisher_adding_a_manifest_later_takes_over(tmp_path: Path) -> None:
    manifest = json.dumps({"schema_version": 1, "name": "kit", "files": {"a.txt": "owned"}})
    repo = tagged_repo(
        tmp_path / "kit",
        [
            ("1.0.0", {"a.txt": "a\n", "b.txt": "b\n"}),
            ("2.0.0", {"a.txt": "a2\n", "b.txt": "b\n", ".tether/manifest.json": manifest}),
        ],
    )
    project = tmp_path / "app"
    init(repo, project)
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 0, result.stderr
    state = json.loads((project / ".tether/state.json").read_text())
    assert {path: record["class"] for path, record in state["files"].items()} == {"a.txt": "owned"}
    # b.txt is no longer shipped: listed for deletion, never removed on its own.
    assert json.loads(result.stdout)["buckets"]["delete"] == ["b.txt"]
    assert (project / "b.txt").read_text() == "b\n"


def test_fleet_updates_projects_of_a_manifestless_source(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_REGISTRY", str(tmp_path / "registry.json"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    projects = []
    for name in ("p1", "p2"):
        root = tmp_path / name
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        init(upstream, root)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "install")
        assert call("projects", "add", str(root)) == 0
        projects.append(root)
    assert call("fleet", "update", "--yes", "--isolate", "none") == 0
    for root in projects:
        assert json.loads((root / ".tether/state.json").read_text())["version"] == "2.0.0"
        assert (root / "NEW.md").read_text() == "added upstream\n"


def test_the_manifest_rules_are_pure() -> None:
    manifest = implicit_manifest(
        "kit",
        "1.0.0",
        ["a", ".git/config", "x/.hg/y", ".tether/state.json", "b.log", "c/d", ".tetherignore"],
        ["*.log"],
        ["c/"],
        NATIVE.reserved_paths(),
    )
    assert list(manifest.files) == ["a"]
    assert upstream_name("https://example.com/org/my-kit.git") == "my-kit"
    assert upstream_name("git@example.com:org/kit.git/") == "kit"
    assert upstream_name("/rel/kit-{version}.tar.gz") == "kit"


def test_a_campaign_over_repositories_of_a_manifestless_source(
    upstream: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    registry: dict[str, object] = {"version": 2, "projects": {}}
    projects: dict[str, object] = {}
    for name in ("r1", "r2"):
        seed = tmp_path / "seeds" / name
        seed.mkdir(parents=True)
        git(seed, "init", "-q", "-b", "main")
        init(upstream, seed)
        (seed / "README.md").write_text("title, ours\n\nintro\n")
        git(seed, "add", "-A")
        git(seed, "commit", "-qm", "install")
        bare = tmp_path / "remotes" / f"{name}.git"
        git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
        projects[name] = {"name": name, "url": bare.as_uri()}
    registry["projects"] = projects
    (tmp_path / "registry.json").write_text(json.dumps(registry))
    where = ["--registry", str(tmp_path / "registry.json"), "--dir", str(tmp_path / "c")]
    started = run_tether("campaign", "start", "c1", "--upstream", "kit", "--to", "2.0.0", *where)
    assert started.returncode == 0, started.stdout + started.stderr
    ran = run_tether("campaign", "run", "c1", "--dir", str(tmp_path / "c"), "-j", "1", "--json")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    from tether.campaign.store import CampaignFolder

    records = json.loads(ran.stdout)["repositories"]
    assert len(records) == 2
    for record in records:
        assert record["status"] == "updated", record
        mirror = CampaignFolder(tmp_path / "c" / "c1").mirror_path(record["url"])
        state = json.loads(git(mirror, "show", f"{record['commit']}:.tether/state.json"))
        assert state["version"] == "2.0.0"
        assert git(mirror, "show", f"{record['commit']}:NEW.md") == "added upstream\n"
        readme = git(mirror, "show", f"{record['commit']}:README.md")
        assert readme == "title, ours\n\nintro\n\nmore\n"
