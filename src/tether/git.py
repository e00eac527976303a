"""The git edge: every call of the ``git`` program goes through this module.

Keep it a flat module of small functions. Each function addresses a repository by an
explicit path or URL, so by default the environment variables that would point git at
some other repository (set, for example, while git runs a hook) are dropped.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.errors import TetherError

# Variables that make git ignore ``-C``/``cwd`` and act on another repository or index.
_REPO_SELECTING_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
)

# Transports tether may use; ``ext::`` and friends can run arbitrary commands.
_ALLOWED_PROTOCOLS = "file:git:http:https:ssh"


def git_env(keep_repo_env: bool = False, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a git call: never prompt for credentials, only safe transports."""
    env = dict(os.environ)
    if not keep_repo_env:
        for name in _REPO_SELECTING_VARS:
            env.pop(name, None)
    # A prompt would hang a CI job or a pre-commit hook forever; fail instead.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GCM_INTERACTIVE"] = "never"
    env.setdefault("GIT_ALLOW_PROTOCOL", _ALLOWED_PROTOCOLS)
    if extra:
        env.update(extra)
    return env


def first_error_line(stderr: str) -> str:
    """The line of git's stderr worth showing: the first ``fatal:``/``error:``, else the first."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[0] if lines else "no error message"


def run_git(
    args: Sequence[str],
    cwd: Path | None = None,
    *,
    check: bool = True,
    keep_repo_env: bool = False,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``cwd`` and capture text output.

    With ``check`` a non-zero exit raises TetherError naming the subcommand and git's
    error line. stdin is closed so nothing can wait for input.
    """
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=git_env(keep_repo_env, env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
    except FileNotFoundError:
        raise TetherError("git is not installed or not on PATH; install git and retry") from None
    if check and result.returncode != 0:
        raise TetherError(f"git {args[0]} failed: {first_error_line(result.stderr)}")
    return result


def is_git_repo(path: Path) -> bool:
    """True when ``path`` is the top of a working tree or a bare repository itself.

    A folder merely inside some repository is not one: a shelf of releases kept in a
    repository must still read as a shelf.
    """
    if not path.is_dir():
        return False
    resolved = path.resolve()
    if (path / ".git").exists():
        result = run_git(["rev-parse", "--show-toplevel"], cwd=path, check=False)
        return result.returncode == 0 and Path(result.stdout.strip()).resolve() == resolved
    if (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir():
        result = run_git(["rev-parse", "--absolute-git-dir"], cwd=path, check=False)
        return result.returncode == 0 and Path(result.stdout.strip()).resolve() == resolved
    return False


def list_tags(location: str) -> list[str]:
    """Tag names of the repository at ``location`` (a path or URL), without cloning it."""
    result = run_git(["ls-remote", "--tags", "--refs", location])
    tags: list[str] = []
    for line in result.stdout.splitlines():
        _, _, ref = line.partition("\t")
        if ref.startswith("refs/tags/"):
            tags.append(ref.removeprefix("refs/tags/"))
    return tags


def clone_bare(url: str, dest: Path) -> None:
    """A bare clone of ``url`` into ``dest`` (which must not exist)."""
    run_git(["clone", "--bare", "--quiet", "--", url, str(dest)])


def fetch_tags(repo: Path, url: str, tags: Sequence[str]) -> None:
    """Fetch ``tags`` from ``url`` into the bare ``repo``, replacing moved ones."""
    refspecs = [f"+refs/tags/{tag}:refs/tags/{tag}" for tag in tags]
    run_git(["fetch", "--quiet", "--no-tags", "--", url, *refspecs], cwd=repo)


def has_ref(repo: Path, ref: str) -> bool:
    result = run_git(
        ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=repo, check=False
    )
    return result.returncode == 0


def rev_parse(repo: Path, rev: str) -> str:
    """The full object id ``rev`` names in ``repo``."""
    return run_git(["rev-parse", "--verify", "--end-of-options", rev], cwd=repo).stdout.strip()


def archive(repo: Path, ref: str, out: Path) -> None:
    """Write the tree at ``ref`` as a plain tar file to ``out`` (git streams it to disk)."""
    run_git(["archive", "--format=tar", f"--output={out}", "--end-of-options", ref], cwd=repo)
