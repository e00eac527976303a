"""With no --source, a GAIA project's releases come from GAIA's GitHub releases: the
``gaia-vX.Y.Z.tar.gz`` asset, fetched with ``gh release download``.

``gh`` is a stand-in script (the real one needs the network and an account): it records its
argv and serves real local tarballs for ``release download``. It tests what tether asks gh
for and how it reads the answer, never gh itself."""

from __future__ import annotations

import json
import os
import re
import shutil

from builders import git, run_tether, write_files
from helpers_gh import recorded_gh_calls
from helpers_sources import GitHubReleases, release_tar, serve_github_releases

# A shell script, not Python: a shell starts in about 1 ms of CPU, an interpreter in 10 ms
# and more. Each call is recorded as the number of its arguments and the arguments, each
# ending in a NUL byte (``recorded_gh_calls`` reads them back).
GH_STAND_IN = r"""#!/bin/sh
printf '%s\0' "$#" "$@" >> "$GH_LOG"
option() {  # the argument after the option named $1, among the rest
    name=$1; shift
    while [ "$#" -gt 1 ]; do
        [ "$1" = "$name" ] && { printf '%s' "$2"; return; }
        shift
    done
}
if [ "$1 $2" = "release list" ]; then
    printf '%s\n' $GH_TAGS
elif [ "$1 $2" = "release download" ]; then
    asset=$(option --pattern "$@")
    folder=$(option --dir "$@")
    if [ ! -e "$GH_ASSETS/$asset" ]; then
        echo "no assets match the file pattern" >&2
        exit 1
    fi
    cp "$GH_ASSETS/$asset" "$folder"
elif [ "$1 $2" = "pr list" ]; then
    echo "[]"  # no open pull request (asked for the trailer count)
else
    echo "gh stand-in: unexpected call $*" >&2
    exit 1
fi
"""


CLASSES = {"agents/auditor.md": "shared", "wiki/index.md": "wiki-owned"}


def release_files(version: str) -> dict[str, str]:
    files = {"agents/auditor.md": f"auditor {version}\n", "wiki/index.md": "index\n"}
    manifest = {"version": version, "files": CLASSES}
    return {
        **files,
        ".gaia/manifest.json": json.dumps(manifest, indent=2) + "\n",
        ".gaia/VERSION": f"{version}\n",
        "CHANGELOG.md": "# changes\n",
    }


def test_gaia_update_without_source_uses_the_github_release_asset(tmp_path, monkeypatch):
    assets = tmp_path / "assets"
    assets.mkdir()
    for version in ("1.0.0", "1.1.0"):
        release_tar(assets / f"gaia-v{version}.tar.gz", release_files(version), f"gaia-{version}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN)
    (bin_dir / "gh").chmod(0o755)
    log = tmp_path / "gh.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.setenv("GH_TAGS", "v1.1.0 v1.0.0")
    monkeypatch.setenv("GH_ASSETS", str(assets))
    # A GAIA project tether never installed: 1.0.0's files and markers, committed.
    project = tmp_path / "proj"
    write_files(project, release_files("1.0.0"))
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "gaia 1.0.0")

    result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert (doc["from_version"], doc["to_version"]) == ("1.0.0", "1.1.0")
    assert (project / "agents/auditor.md").read_text() == "auditor 1.1.0\n"
    assert (project / ".gaia/VERSION").read_text() == "1.1.0\n"
    calls = recorded_gh_calls(log)
    downloads = [c for c in calls if c[:2] == ["release", "download"]]
    assert [c[c.index("--pattern") + 1] for c in downloads] == [
        "gaia-v1.0.0.tar.gz",
        "gaia-v1.1.0.tar.gz",
    ]
    releases = [c for c in calls if c[0] == "release"]
    assert all(c[c.index("--repo") + 1] == "gaia-react/gaia" for c in releases)
    state = json.loads((project / ".gaia/local/tether/state.json").read_text())
    assert state["source"] == "gh-release:gaia-react/gaia"


def test_gaia_default_source_failure_says_to_pass_source(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(tmp_path / "gh.log"))
    monkeypatch.setenv("GH_TAGS", "v1.0.0")
    monkeypatch.setenv("GH_ASSETS", str(tmp_path))  # no tarballs there
    project = tmp_path / "proj"
    write_files(project, release_files("1.0.0"))
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 1
    assert "gh-release:gaia-react/gaia" in result.stderr and "pass --source" in result.stderr
    assert result.stderr.count("\n") == 1


# --- without gh, or when gh fails: GitHub's REST API (GAIA Step 2's fallback) -------------
# The API is a loopback server (helpers_sources.GitHubReleases) imitating GitHub's answers.

FAILING_GH = """#!/bin/sh
echo "HTTP 401: Bad credentials (https://api.github.com/graphql)" >&2
exit 1
"""


def without_gh(tmp_path, monkeypatch):
    """A PATH holding git and nothing else: no gh anywhere."""
    bin_dir = tmp_path / "no-gh-bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bin_dir))


def failing_gh(tmp_path, monkeypatch):
    """A gh that fails every call as a logged-out gh does."""
    bin_dir = tmp_path / "failing-gh-bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAILING_GH)
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def gaia_1_0_0_project(tmp_path):
    project = tmp_path / "proj"
    write_files(project, release_files("1.0.0"))
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "gaia 1.0.0")
    return project


def github_with(tmp_path, versions, **options):
    assets = tmp_path / "assets"
    assets.mkdir(exist_ok=True)
    for version in versions:
        release_tar(assets / f"gaia-v{version}.tar.gz", release_files(version), f"gaia-{version}")
    bodies = {f"v{v}": f"Published notes of {v}." for v in reversed(versions)}
    return GitHubReleases("gaia-react/gaia", assets, bodies, **options)


def test_without_gh_the_releases_come_from_githubs_rest_api(tmp_path, monkeypatch):
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0"])
    project = gaia_1_0_0_project(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "tok-123")
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert (doc["from_version"], doc["to_version"]) == ("1.0.0", "1.1.0")
    assert (project / "agents/auditor.md").read_text() == "auditor 1.1.0\n"
    assert (project / ".gaia/VERSION").read_text() == "1.1.0\n"
    paths = [path for path, _ in api.requests]
    assert "/repos/gaia-react/gaia/releases?per_page=100&page=1" in paths
    assert {"/storage/gaia-v1.0.0.tar.gz", "/storage/gaia-v1.1.0.tar.gz"} <= set(paths)
    # The token goes to the API, never along the redirect to where the asset is stored.
    for path, headers in api.requests:
        if path.startswith("/repos/"):
            assert headers.get("Authorization") == "Bearer tok-123", path
        else:
            assert "Authorization" not in headers, path
    assert "tok-123" not in result.stdout + result.stderr


def test_when_gh_fails_the_rest_api_is_asked_and_the_report_says_so(tmp_path, monkeypatch):
    failing_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0"])
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        result = run_tether("update", "--yes", "--no-branch", "--json", "-C", str(project))
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert doc["to_version"] == "1.1.0"
    assert (project / "agents/auditor.md").read_text() == "auditor 1.1.0\n"
    assert any("Bad credentials" in n and "through GitHub's API" in n for n in doc["notes"])
    assert all("Authorization" not in headers for _, headers in api.requests)  # no token set


def test_to_works_when_no_listing_works(tmp_path, monkeypatch):
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0"], fail_listing=True)
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        unnamed = run_tether("update", "--yes", "--no-branch", "-C", str(project))
        named = run_tether("update", "--yes", "--no-branch", "--to", "1.1.0", "-C", str(project))
    # Without a version there is nothing to go by: one line naming both ways that failed.
    assert unnamed.returncode == 1
    assert unnamed.stderr.count("\n") == 1, unnamed.stderr
    assert "cannot list the releases of gh-release:gaia-react/gaia" in unnamed.stderr
    assert "gh: not installed" in unnamed.stderr and "HTTP 500" in unnamed.stderr
    assert unnamed.stderr.rstrip().endswith("name the release to install with --to VERSION")
    # Named, the release is fetched by its tag all the same.
    assert named.returncode == 0, named.stdout + named.stderr
    assert (project / ".gaia/VERSION").read_text() == "1.1.0\n"
    assert (project / "agents/auditor.md").read_text() == "auditor 1.1.0\n"


def test_neither_gh_nor_the_api_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    without_gh(tmp_path, monkeypatch)  # GITHUB_API_URL: a loopback port where nothing listens
    project = gaia_1_0_0_project(tmp_path)
    result = run_tether("update", "--yes", "--no-branch", "--to", "1.1.0", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert "(the releases could not be listed): gh: not installed; GitHub's API: " in result.stderr
    assert "http://127.0.0.1:9/repos/gaia-react/gaia/releases/tags/v1.0.0: " in result.stderr
    assert git(project, "status", "--porcelain") == "?? .gaia/local/\n"  # tether's own folder
    assert (project / "agents/auditor.md").read_text() == "auditor 1.0.0\n"


def test_token_travels_only_over_https_or_to_this_machine():
    from tether.sources.github_api import may_carry_token

    assert may_carry_token("https://api.github.com/repos/a/b/releases")
    assert may_carry_token("https://ghe.example/api/v3/repos/a/b/releases")
    assert may_carry_token("http://127.0.0.1:8080/repos/a/b/releases")
    assert may_carry_token("http://localhost/repos/a/b/releases")
    assert may_carry_token("http://[::1]:80/repos")
    assert not may_carry_token("http://api.github.example/repos/a/b/releases")
    assert not may_carry_token("http://10.0.0.1/repos/a/b/releases")
    assert not may_carry_token("ftp://127.0.0.1/repos")


def test_an_empty_changelog_range_shows_the_notes_published_with_the_release(tmp_path, monkeypatch):
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0"])  # CHANGELOG.md has no version sections
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        shown = run_tether("update", "--dry-run", "-C", str(project))
        doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert shown.returncode == 0, shown.stderr
    assert "Published notes of 1.1.0." in shown.stdout
    assert doc["release_notes"] == [
        {"version": "1.1.0", "date": "", "body": "Published notes of 1.1.0."}
    ]
    assert any("no section after 1.0.0" in note for note in doc["notes"])


def test_the_published_notes_standing_in_are_a_fact_of_the_update(tmp_path, monkeypatch):
    """The plan carries the fact (report/notes.py words it, as above)."""
    from tether.flows.notes import ReleasePageShown
    from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
    from tether.flows.update_report import UpdateStatus

    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0"])  # CHANGELOG.md has no version sections
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        prepared = prepare_update(UpdateRequest(project, dry_run=True))
    assert isinstance(prepared, PreparedUpdate)
    assert prepared.report(UpdateStatus.DRY_RUN).notes == [ReleasePageShown("1.1.0", "1.0.0")]


def test_a_changelog_with_the_range_shows_it_not_the_published_notes(tmp_path, monkeypatch):
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0"])
    files = release_files("1.1.0") | {"CHANGELOG.md": "# changes\n\n## [1.1.0]\n\n- Auditor.\n"}
    release_tar(api.assets / "gaia-v1.1.0.tar.gz", files, "gaia-1.1.0")
    api.bodies = {"v1.1.0": "Published notes of 1.1.0.", **api.bodies}
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        doc = json.loads(run_tether("update", "--dry-run", "--json", "-C", str(project)).stdout)
    assert doc["release_notes"] == [{"version": "1.1.0", "date": "", "body": "- Auditor."}]
    assert not any("no section after" in note for note in doc["notes"])


def test_a_baseline_release_that_cannot_be_fetched_says_how_to_compare_by_hand(
    tmp_path, monkeypatch
):
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.1.0"])  # 1.0.0 published no asset (an older release)
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert "release 1.0.0 was not installed by tether and fetching it" in result.stderr
    shown = re.search(
        r"compare the project by hand with release 1\.1\.0, fetched to (\S+) ", result.stderr
    )
    assert shown, result.stderr
    tree = project / shown.group(1)
    assert (tree / "agents/auditor.md").read_text() == "auditor 1.1.0\n"
    assert f"diff -ru {shown.group(1)} ." in result.stderr
    assert git(project, "status", "--porcelain") == "?? .gaia/local/\n"  # the cache alone


def test_the_newest_release_is_the_highest_version_not_the_last_published(tmp_path, monkeypatch):
    """GitHub lists the most recently published first: a backport (1.0.1 after 1.1.0) and a
    prerelease come before 1.1.0. The newest release is the highest version, prereleases
    left out (docs/update.md, "Differences from GAIA's /update-gaia")."""
    without_gh(tmp_path, monkeypatch)
    api = github_with(tmp_path, ["1.0.0", "1.1.0", "1.0.1", "1.2.0-rc.1"])
    project = gaia_1_0_0_project(tmp_path)
    with serve_github_releases(api) as url:
        monkeypatch.setenv("GITHUB_API_URL", url)
        listed = json.loads(api.answer("/repos/gaia-react/gaia/releases?page=1")[2])
        assert [r["tag_name"] for r in listed][:2] == ["v1.2.0-rc.1", "v1.0.1"]
        result = run_tether("update", "--dry-run", "--json", "-C", str(project))
    assert json.loads(result.stdout)["to_version"] == "1.1.0", result.stdout + result.stderr
