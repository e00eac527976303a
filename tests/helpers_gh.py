"""A stand-in for the external ``gh`` program (the GitHub CLI needs the network and an
account), and a real bare repository as the project's ``origin``.

The stand-in only records its argv, one JSON list a line, and answers the two pull-request
calls tether makes: ``pr list`` (no open pull request, or the one in ``GH_OPEN_PR``) and
``pr create`` (an address ending in /pull/7). ``GH_FAIL=list`` or ``GH_FAIL=create`` makes
that call fail the way gh does: an error on stderr and exit 1. It tests tether's handling
of gh's answers, never gh itself.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import git

GH_STAND_IN = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["GH_LOG"], "a") as handle:
    handle.write(json.dumps(args) + "\\n")
if args[:2] == ["pr", os.environ.get("GH_FAIL")]:
    sys.stderr.write("HTTP 401: Bad credentials (https://api.github.com/graphql)\\n")
    sys.exit(1)
if args[:2] == ["pr", "list"]:
    print(os.environ.get("GH_OPEN_PR") or "[]")
elif args[:2] == ["pr", "create"]:
    print("https://example.invalid/acme/proj/pull/7")
else:
    sys.exit("gh stand-in: unexpected call " + " ".join(args))
"""


@dataclass
class Remote:
    bare: Path  # the real bare repository that is the project's origin
    gh_log: Path

    def branches(self) -> dict[str, str]:
        """Branch name → commit, as the bare remote holds them."""
        out = git(
            self.bare, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"
        )
        return dict(line.split(" ", 1) for line in out.splitlines())

    def gh_calls(self) -> list[list[str]]:
        if not self.gh_log.exists():
            return []
        return [json.loads(line) for line in self.gh_log.read_text().splitlines()]


def install_gh_stand_in(bin_dir: Path, monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(GH_STAND_IN.format(python=sys.executable))
    (bin_dir / "gh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.delenv("GH_FAIL", raising=False)
    monkeypatch.delenv("GH_OPEN_PR", raising=False)


def add_origin(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Remote:
    """A bare ``origin`` holding the project's current branch, and the gh stand-in on PATH."""
    bare = tmp_path / f"{repo.name}-origin.git"
    branch = git(repo, "branch", "--show-current").strip()
    git(tmp_path, "init", "-q", "--bare", f"--initial-branch={branch}", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "-u", "origin", "HEAD")
    git(repo, "remote", "set-head", "origin", "--auto")
    log = tmp_path / "gh.log"
    install_gh_stand_in(tmp_path / "gh-bin", monkeypatch, log)
    return Remote(bare, log)


def path_without_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH holding only git and tether: gh is not installed."""
    only = tmp_path / "no-gh-bin"
    only.mkdir()
    for tool in ("git", "tether"):
        found = next(d for d in os.environ["PATH"].split(os.pathsep) if (Path(d) / tool).exists())
        (only / tool).symlink_to(Path(found) / tool)
    monkeypatch.setenv("PATH", str(only))
