"""How often an update reads a file (docs/performance.md, "Small projects"): a release file
the update changes is read once, by the plan, which checks it against the manifest's hash;
finalize packs those same bytes into the pristine cache instead of reading them again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from builders import call, make_release
from tether import fsio
from tether.flows.project import open_project

V1 = {f"f{i}.txt": f"one {i}\n" for i in range(4)}
V2 = {rel: text.replace("one", "two") for rel, text in V1.items()} | {"new.txt": "added\n"}


def _with_hashes(root: Path) -> None:
    """The manifest records each file's sha256, as ``tether manifest`` writes it."""
    path = root / ".tether" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["files"] = {
        rel: {"class": cls, "sha256": hashlib.sha256((root / rel).read_bytes()).hexdigest()}
        for rel, cls in manifest["files"].items()
    }
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def test_an_updated_release_file_is_read_once_and_cached_as_read(tmp_path, monkeypatch):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", V1)
    make_release(shelf, "2.0.0", V2)
    _with_hashes(shelf / "1.0.0")
    _with_hashes(shelf / "2.0.0")
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    release = shelf / "2.0.0"
    opened: list[str] = []
    real_open = fsio.open_regular

    def open_counted(path):
        opened.append(str(path))
        return real_open(path)

    monkeypatch.setattr(fsio, "open_regular", open_counted)
    assert call("update", "--yes", "-C", str(project)) == 0
    for rel, text in V2.items():
        assert opened.count(str(release / rel)) == 1, rel
        assert (project / rel).read_text() == text
    pristine = open_project(project).pristine
    for text in V2.values():  # every file of the new release is in the pristine cache
        assert pristine.get(hashlib.sha256(text.encode()).hexdigest()) == text.encode()
