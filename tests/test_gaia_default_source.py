"""With no --source, a GAIA project's releases come from GAIA's GitHub releases: the
``gaia-vX.Y.Z.tar.gz`` asset, fetched with ``gh release download``.

``gh`` is a stand-in script (the real one needs the network and an account): it records its
argv and serves real local tarballs for ``release download``. It tests what tether asks gh
for and how it reads the answer, never gh itself."""

from __future__ import annotations

import json
import os
import sys

from builders import git, run_tether, write_files
from helpers_sources import release_tar

GH_STAND_IN = """#!{python}
import json, os, shutil, sys
args = sys.argv[1:]
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[:2] == ["release", "list"]:
    print("\\n".join(os.environ["GH_TAGS"].split()))
elif args[:2] == ["release", "download"]:
    asset = args[args.index("--pattern") + 1]
    folder = args[args.index("--dir") + 1]
    source = os.path.join(os.environ["GH_ASSETS"], asset)
    if not os.path.exists(source):
        sys.stderr.write("no assets match the file pattern\\n")
        sys.exit(1)
    shutil.copy(source, folder)
elif args[:2] == ["pr", "list"]:
    print("[]")  # no open pull request (asked for the trailer count)
else:
    sys.exit("gh stand-in: unexpected call " + " ".join(args))
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
    (bin_dir / "gh").write_text(GH_STAND_IN.format(python=sys.executable))
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
    calls = [json.loads(line) for line in log.read_text().splitlines()]
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
    (bin_dir / "gh").write_text(GH_STAND_IN.format(python=sys.executable))
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
