"""`tether manifest build` on real git repositories (and a plain folder)."""

from __future__ import annotations

import json

import pytest

from builders import call, git, write_files
from tether.sources.manifest_file import load_manifest

CONFIG = """\
name = "acme-kit"
version_file = "VERSION"
default_class = "owned"
sentinels = ["CHANGELOG.md"]
exclude = ["internal/**", "docs/drafts/"]
changelog = "CHANGELOG.md"

[classes]
shared = ["docs/**", "/package.json"]
owned = ["docs/guide.md", "bin/**"]

[merge]
"package.json" = { preset = "npm-package" }

[[regions]]
id = "remit"
startMarker = "<!-- remit:start -->"
endMarker = "<!-- remit:end -->"
paths = ["docs/agent.md"]

[[renames]]
from = "docs/old.md"
to = "docs/guide.md"
"""

FILES = {
    "tether.toml": CONFIG,
    "VERSION": "2.0.0\n",
    "CHANGELOG.md": "## [2.0.0]\n- big\n",
    "package.json": "{}\n",
    "web/package.json": "{}\n",
    "docs/guide.md": "guide\n",
    "docs/agent.md": "<!-- remit:start -->\n<!-- remit:end -->\n",
    "docs/drafts/wip.md": "wip\n",
    "bin/lint.sh": "#!/bin/sh\n",
    "src/app.py": "print()\n",
    "internal/secret.txt": "s\n",
}


@pytest.fixture
def upstream(tmp_path):
    repo = tmp_path / "upstream"
    write_files(repo, FILES)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "release 2.0.0")
    return repo


def built(repo):
    return json.loads((repo / ".tether/manifest.json").read_text())


def test_build_classes_first_match_wins_exclude_and_sentinels(upstream):
    (upstream / "scratch.txt").write_text("untracked\n")
    assert call("manifest", "build", "-C", str(upstream)) == 0
    doc = built(upstream)
    assert doc["files"] == {
        "VERSION": "owned",  # default_class
        "bin/lint.sh": "owned",
        "docs/agent.md": "shared",
        # docs/** (shared) comes before docs/guide.md (owned) in the file: shared wins.
        "docs/guide.md": "shared",
        "package.json": "shared",
        "src/app.py": "owned",
        "web/package.json": "owned",  # "/package.json" is anchored to the top
    }
    assert doc["sentinels"] == ["CHANGELOG.md"]
    assert doc["merge"] == {"package.json": {"preset": "npm-package"}}
    assert doc["regions"][0]["id"] == "remit"
    assert doc["renames"] == [{"from": "docs/old.md", "to": "docs/guide.md"}]
    assert (doc["name"], doc["version"]) == ("acme-kit", "2.0.0")
    load_manifest(upstream / ".tether/manifest.json")  # the adopter side reads it


def test_class_order_in_the_file_decides(upstream):
    text = CONFIG.replace(
        'shared = ["docs/**", "/package.json"]\nowned = ["docs/guide.md", "bin/**"]',
        'owned = ["docs/guide.md", "bin/**"]\nshared = ["docs/**", "/package.json"]',
    )
    (upstream / "tether.toml").write_text(text)
    assert call("manifest", "build", "-C", str(upstream)) == 0
    assert built(upstream)["files"]["docs/guide.md"] == "owned"


def test_output_is_sorted_stable_and_ends_with_a_newline(upstream, capsys):
    write_files(upstream, {"Zeta.md": "z\n", "alpha.md": "a\n", "Ä.md": "ä\n"})
    git(upstream, "add", "-A")
    assert call("manifest", "build", "-C", str(upstream)) == 0
    first = (upstream / ".tether/manifest.json").read_bytes()
    assert first.endswith(b"}\n")
    paths = list(json.loads(first)["files"])
    assert paths == sorted(paths)  # code-point order: "Zeta.md" < "alpha.md" < "Ä.md"
    assert paths.index("Zeta.md") < paths.index("alpha.md") < paths.index("Ä.md")
    assert "wrote .tether/manifest.json" in capsys.readouterr().out
    assert call("manifest", "build", "-C", str(upstream)) == 0
    assert (upstream / ".tether/manifest.json").read_bytes() == first
    assert "up to date" in capsys.readouterr().out


def test_unmatched_file_without_default_class_is_named(upstream, capsys):
    (upstream / "tether.toml").write_text(CONFIG.replace('default_class = "owned"\n', ""))
    assert call("manifest", "build", "-C", str(upstream)) == 1
    err = capsys.readouterr().err
    assert "VERSION matches no class" in err
    assert "and 2 more" in err  # src/app.py and web/package.json match no class either
    assert not (upstream / ".tether/manifest.json").exists()


def test_check_stale_prints_the_difference_and_exits_3(upstream, capsys):
    assert call("manifest", "build", "--check", "-C", str(upstream)) == 3  # no manifest yet
    assert "+++ b/.tether/manifest.json" in capsys.readouterr().out
    assert call("manifest", "build", "-C", str(upstream)) == 0
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "manifest")
    capsys.readouterr()
    assert call("manifest", "build", "--check", "-C", str(upstream)) == 0
    assert "up to date" in capsys.readouterr().out

    write_files(upstream, {"docs/new.md": "new\n"})
    git(upstream, "add", "docs/new.md")
    before = (upstream / ".tether/manifest.json").read_bytes()
    assert call("manifest", "build", "--check", "-C", str(upstream)) == 3
    out = capsys.readouterr().out
    assert '+    "docs/new.md": "shared",' in out
    assert "is stale" in out
    assert (upstream / ".tether/manifest.json").read_bytes() == before  # --check writes nothing


def test_check_json(upstream, capsys):
    assert call("manifest", "build", "--check", "--json", "-C", str(upstream)) == 3
    doc = json.loads(capsys.readouterr().out)
    assert (doc["stale"], doc["written"], doc["files"]) == (True, False, 7)
    assert doc["diff"].startswith("--- /dev/null")


def test_config_elsewhere_and_subfolder_of_a_repository(tmp_path):
    repo = tmp_path / "mono"
    write_files(repo, {"README.md": "r\n", "kit/a.md": "a\n", "kit/b/c.md": "c\n"})
    write_files(
        tmp_path, {"conf/kit.toml": 'name = "kit"\nversion = "v1.0.0"\ndefault_class = "shared"\n'}
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    assert (
        call(
            "manifest",
            "build",
            "--config",
            str(tmp_path / "conf/kit.toml"),
            "-C",
            str(repo / "kit"),
        )
        == 0
    )
    doc = built(repo / "kit")
    assert doc["files"] == {"a.md": "shared", "b/c.md": "shared"}
    assert doc["version"] == "1.0.0"


def test_plain_folder_outside_git_is_walked(tmp_path):
    root = tmp_path / "plain"
    write_files(
        root,
        {
            "tether.toml": 'name = "kit"\nversion = "1.0.0"\ndefault_class = "owned"\n',
            "a.md": "a\n",
            "b/c.md": "c\n",
        },
    )
    write_files(root, {".git/HEAD": "not a repository\n"})  # skipped even when not a repository
    assert call("manifest", "build", "-C", str(root)) == 0
    assert built(root)["files"] == {"a.md": "owned", "b/c.md": "owned"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: 'colour = "red"\n' + c, "unknown key 'colour'"),
        (
            lambda c: c.replace(
                'version_file = "VERSION"', 'version = "1.0.0"\nversion_file = "VERSION"'
            ),
            "exactly one of",
        ),
        (lambda c: c.replace("owned = [", "own = ["), "unknown class 'own'"),
        (
            lambda c: c.replace('paths = ["docs/agent.md"]', 'paths = ["internal/secret.txt"]'),
            "not a shipped file",
        ),
        (
            lambda c: c.replace('startMarker = "<!-- remit:start -->"\n', ""),
            "missing field 'startMarker'",
        ),
        (lambda c: c.replace('sentinels = ["CHANGELOG.md"]', 'sentinels = ["../x"]'), "'..'"),
    ],
)
def test_config_errors(upstream, capsys, edit, message):
    (upstream / "tether.toml").write_text(edit(CONFIG))
    assert call("manifest", "build", "-C", str(upstream)) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "tether.toml" in err


def test_version_file_must_hold_a_version(upstream, capsys):
    (upstream / "VERSION").write_text("latest\n")
    assert call("manifest", "build", "-C", str(upstream)) == 1
    assert "'latest' is not a semantic version" in capsys.readouterr().err


def test_missing_config(tmp_path, capsys):
    assert call("manifest", "build", "-C", str(tmp_path)) == 1
    assert "tether.toml: no such file" in capsys.readouterr().err


def test_hashes_option_records_each_files_sha256(upstream):
    import hashlib

    config = upstream / "tether.toml"
    config.write_text("hashes = true\n" + config.read_text())
    git(upstream, "commit", "-qam", "hashes")
    assert call("manifest", "build", "-C", str(upstream)) == 0
    manifest = load_manifest(upstream / ".tether/manifest.json")
    digest = hashlib.sha256((upstream / "bin/lint.sh").read_bytes()).hexdigest()
    assert manifest.hashes["bin/lint.sh"] == digest
    assert set(manifest.hashes) == set(manifest.files)
    entry = built(upstream)["files"]["bin/lint.sh"]
    assert entry == {"class": "owned", "sha256": digest}


def test_human_lines_name_the_classes_and_sentinels(upstream, capsys):
    """report/publish.py words the build: what was written, then that nothing changed."""
    assert call("manifest", "build", "-C", str(upstream)) == 0
    summary = "acme-kit 2.0.0: 7 files (4 owned, 3 shared), 1 sentinel"
    assert capsys.readouterr().out == f"wrote .tether/manifest.json: {summary}\n"
    assert call("manifest", "build", "-C", str(upstream)) == 0
    assert capsys.readouterr().out == f".tether/manifest.json is up to date: {summary}\n"
