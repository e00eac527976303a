"""``tether snapshot`` records a tree; ``snapshot check`` exits 3 with what changed (1 is
an error: a snapshot that cannot be read)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixtures.deps.kit import run_cli, run_json, setup_cli
from tether.errors import Exit


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.txt").write_text("a\n")
    (root / "b.sh").write_text("echo b\n")
    (root / "gone.txt").write_text("bye\n")
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"git's own")
    os.symlink("src/a.txt", root / "link")
    return root


def record(root: Path, out: Path) -> None:
    code, text, _ = run_cli("snapshot", "-C", str(root), "--out", str(out))
    assert code == 0 and "recorded 4 file(s)" in text


def test_unchanged_tree(tree: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "before.json"
    record(tree, baseline)
    (tree / ".git" / "index").write_bytes(b"refreshed by git status")  # not recorded
    code, doc = run_json("snapshot", "check", "-C", str(tree), "--baseline", str(baseline))
    assert code == 0 and doc["changed"] == []


def test_every_kind_of_change(tree: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "before.json"
    record(tree, baseline)
    assert json.loads(baseline.read_text())["files"]["link"]["kind"] == "link"
    (tree / "src" / "a.txt").write_text("A\n")
    (tree / "gone.txt").unlink()
    (tree / "new.txt").write_text("new\n")
    (tree / "b.sh").chmod(0o755)
    (tree / "link").unlink()
    os.symlink("b.sh", tree / "link")
    code, doc = run_json("snapshot", "check", "-C", str(tree), "--baseline", str(baseline))
    assert code == Exit.FOUND
    assert doc["changed"] == [
        {"path": "b.sh", "change": "mode"},
        {"path": "gone.txt", "change": "removed"},
        {"path": "link", "change": "modified"},
        {"path": "new.txt", "change": "added"},
        {"path": "src/a.txt", "change": "modified"},
    ]


def test_allowed_changes(tree: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "before.json"
    record(tree, baseline)
    (tree / "src" / "a.txt").write_text("approved\n")
    args = ["snapshot", "check", "-C", str(tree), "--baseline", str(baseline)]
    code, out, _ = run_cli(*args, "--allow", "src/*")
    assert code == 0 and "modified (allowed): src/a.txt" in out
    (tree / "b.sh").write_text("not approved\n")
    code, out, _ = run_cli(*args, "--allow", "src/*")
    assert code == Exit.FOUND and "modified: b.sh" in out


def test_bad_input(tree: Path, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "snapshot", "check", "-C", str(tree), "--baseline", str(tmp_path / "none")
    )
    missing = tmp_path / "none"
    assert code == 1
    assert err == f"tether: {missing}: cannot read the baseline (No such file or directory)\n"
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"files": {}}')
    code, _, err = run_cli("snapshot", "check", "-C", str(tree), "--baseline", str(bogus))
    assert code == 1
    assert err.startswith(
        f"tether: {bogus}: the baseline is not a tether snapshot (schema_version "
    )
    bogus.write_text("{not json")
    code, _, err = run_cli("snapshot", "check", "-C", str(tree), "--baseline", str(bogus))
    assert code == 1 and err.startswith(f"tether: {bogus}: the baseline is not a snapshot (")
    code, _, err = run_cli("snapshot", "-C", str(tree))
    assert code == 2 and "--out" in err


def test_exclude(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code, _, _ = run_cli("snapshot", "-C", str(tree), "--out", str(out), "--exclude", "src")
    assert code == 0
    assert sorted(json.loads(out.read_text())["files"]) == ["b.sh", "gone.txt", "link"]
    (tree / "src" / "a.txt").write_text("ignored\n")
    code, doc = run_json("snapshot", "check", "-C", str(tree), "--baseline", str(out))
    assert code == 0 and doc["changed"] == []
