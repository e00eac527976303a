"""Shared helpers for the audit tests: real git repositories and in-process CLI calls."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import builders
import tether.cli.main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"


def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A private analyser cache and no shellcheck options from the person running the tests
    (git's identity and configuration are isolated for the whole run in conftest.py)."""
    for name in ("CI", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)  # sidecars are written on local runs only
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("SHELLCHECK_OPTS", raising=False)


def write(repo: Path, files: Mapping[str, str | None]) -> None:
    """Write (or, for None, delete) files relative to ``repo``."""
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Path, message: str, files: Mapping[str, str | None] | None = None) -> None:
    write(repo, files or {})
    builders.git(repo, "add", "-A")
    builders.git(repo, "commit", "-q", "--allow-empty", "-m", message)


def head(repo: Path) -> str:
    """The commit HEAD names."""
    return builders.git(repo, "rev-parse", "HEAD").strip()


# Repositories already built in this test process, by what they hold, each kept untouched
# under the folder the area's conftest.py names (None: build every one). Most tests of a
# module start from the same files: a copy of the built repository (its objects, refs,
# reflogs and index, so the same commits and fork point) costs a fraction of the eight
# git processes that build one.
_kept_under: Path | None = None
_built: dict[str, Path] = {}


def make_repo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    base: Mapping[str, str | None],
    branch: Mapping[str, str | None] | None = None,
    name: str = "feature",
) -> Path:
    """A repository with ``base`` committed on main and ``branch`` committed on a branch."""
    isolate(monkeypatch, tmp_path)
    repo = tmp_path / "repo"
    key = json.dumps([dict(base), None if branch is None else dict(branch), name], sort_keys=True)
    built = _built.get(key)
    if built is None:
        _build_repo(repo, base, branch, name)
        if _kept_under is not None:
            built = _built[key] = _kept_under / str(len(_built))
            shutil.copytree(repo, built, symlinks=True)
    else:
        shutil.copytree(built, repo, symlinks=True)
    return repo


def _build_repo(
    repo: Path,
    base: Mapping[str, str | None],
    branch: Mapping[str, str | None] | None,
    name: str,
) -> None:
    repo.mkdir()
    builders.git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", base)
    builders.git(repo, "switch", "-q", "-c", name)
    if branch is not None:
        commit(repo, "branch", branch)


def keep_built_repositories(folder: Path | None) -> None:
    """Keep each repository ``make_repo`` builds under ``folder`` from now on (None: stop,
    and forget those kept)."""
    global _kept_under
    _kept_under = folder
    _built.clear()


def audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = tether.cli.main.main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def audit_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code, out, err = audit(capsys, *argv, "--json")
    return code, json.loads(out) if out.strip() else {"stderr": err}


def start_review(
    capsys: pytest.CaptureFixture[str], repo: Path, member: str = "shell", *extra: str
) -> str:
    """Begin the member's review round: ``audit scope`` captures the digest it starts on
    (a second call returns the first capture)."""
    code, doc = audit_json(capsys, "scope", "-C", str(repo), "--member", member, *extra)
    assert code == 0, doc
    return str(doc["scope_digest"])


def write_report(
    capsys: pytest.CaptureFixture[str],
    repo: Path,
    member: str = "shell",
    *extra: str,
    findings: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write the member's findings sidecar for the current digest (keyed to main)."""
    source = repo.parent / f"{member}-findings.json"
    source.write_text(json.dumps(findings or []))
    base = builders.git(repo, "rev-parse", "main").strip()
    code, doc = audit_json(
        capsys,
        "findings",
        "write",
        "-C",
        str(repo),
        "--member",
        member,
        "--base-ref",
        base,
        "--findings",
        str(source),
        *extra,
    )
    assert code == 0, doc
    return dict(doc)


_EXPECT = re.compile(r"#\s*expect:\s*(.+?)\s*$")


def expected_marks(text: str) -> set[tuple[int, str]]:
    """(line, class) pairs a fixture announces with ``# expect: class[, class]`` comments."""
    marks: set[tuple[int, str]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            marks.update((number, name.strip()) for name in match.group(1).split(","))
    return marks
