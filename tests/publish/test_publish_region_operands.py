"""``tether manifest build`` and ``tether release pack`` refuse a region whose regeneration
program's operand is not a file of the release (``../x.sh``, an absolute path, a file left
out), as docs/publishing.md says: an adopter's update would refuse to run it. Real git
repositories, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import call, git, write_files

CONFIG = """\
name = "acme-kit"
version = "2.0.0"
default_class = "owned"
exclude = ["internal/**"]

[[regions]]
id = "remit"
startMarker = "<!-- remit:start -->"
endMarker = "<!-- remit:end -->"
paths = ["docs/agent.md"]
regenerate = {{ interpreter = "bash", operand = "{operand}", args = [] }}
"""

FILES = {
    "docs/agent.md": "<!-- remit:start -->\n<!-- remit:end -->\n",
    "scripts/remit.sh": "#!/bin/sh\n",
    "internal/remit.sh": "#!/bin/sh\n",
}


def _upstream(tmp_path: Path, operand: str) -> Path:
    repo = tmp_path / "upstream"
    write_files(repo, {**FILES, "tether.toml": CONFIG.format(operand=operand)})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "release")
    return repo


@pytest.mark.parametrize(
    ("operand", "problem"),
    [
        ("../x.sh", "'../x.sh' is not a path inside the release (path contains '..')"),
        ("/usr/local/bin/x.sh", "'/usr/local/bin/x.sh' is not a path inside the release"),
        ("scripts/../../x.sh", "is not a path inside the release (path contains '..')"),
        ("internal/remit.sh", "internal/remit.sh is not a shipped file"),
    ],
)
def test_manifest_build_refuses_an_operand_outside_the_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], operand: str, problem: str
) -> None:
    repo = _upstream(tmp_path, operand)
    assert call("manifest", "build", "-C", str(repo)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tether: {repo / 'tether.toml'}: regions[0]: regenerate.operand ")
    assert problem in err
    assert len(err.splitlines()) == 1
    assert not (repo / ".tether/manifest.json").exists()


def test_manifest_build_keeps_an_operand_the_release_ships(tmp_path: Path) -> None:
    repo = _upstream(tmp_path, "scripts/remit.sh")
    assert call("manifest", "build", "-C", str(repo)) == 0
    doc = json.loads((repo / ".tether/manifest.json").read_text())
    assert doc["regions"][0]["regenerate"]["operand"] == "scripts/remit.sh"


def test_release_pack_refuses_a_hand_written_manifest_with_such_an_operand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _upstream(tmp_path, "scripts/remit.sh")
    assert call("manifest", "build", "-C", str(repo)) == 0
    (repo / "tether.toml").unlink()  # a manifest written by hand: pack checks it as it is
    manifest = repo / ".tether/manifest.json"
    doc = json.loads(manifest.read_text())
    doc["regions"][0]["regenerate"]["operand"] = "../x.sh"
    manifest.write_text(json.dumps(doc))
    out = tmp_path / "dist"
    assert call("release", "pack", "--version", "2.0.0", "--out", str(out), "-C", str(repo)) == 1
    err = capsys.readouterr().err
    assert err == (
        f"tether: {manifest}: regions[0]: regenerate.operand '../x.sh' is not a path inside "
        "the release (path contains '..')\n"
    )
    assert not out.exists()
