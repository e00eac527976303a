"""The package-manager configuration git ignores, carried from a checkout into its worktree.

A worktree holds only committed files. A project's ``.npmrc`` naming a private registry and
its token is usually git-ignored, so a fresh worktree lacks it: the install there would ask
the default registry for versions only the private one has (and could resolve a private
unscoped name publicly), although the plan read the private one. Before the bump is written,
every configuration file a package manager reads in the folders from the workspace root down
to the project (``CONFIG_FILES``) that the checkout has, the worktree lacks and git ignores
there too is copied in, mode kept (a token file stays ``0600``). Ignored in the worktree by
the same rules, it is never part of a commit.

A file that is neither committed nor ignored is not copied: in the worktree it would be a
file to commit, token and all. The caller then treats worktree isolation as not possible for
that project when an install is to run, since the install could not read it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether import git
from tether.flows.safety import PathGuard
from tether.fsio import read_with_stat

# What npm, pnpm, yarn (1 and berry) and Bun read from a project's folders for where and how
# to install: registries, tokens, scopes, resolution hooks.
CONFIG_FILES = (".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml", ".pnpmfile.cjs")


@dataclass
class Carried:
    carried: list[str] = field(default_factory=list)  # relative to the repository top
    refused: list[str] = field(default_factory=list)  # neither committed nor ignored


def folders_between(top: Path, workspace: Path, project: Path) -> list[str]:
    """The folders from ``workspace`` down to ``project`` (both included), relative to the
    repository ``top`` ("" for the top itself)."""
    base = workspace.resolve()
    inner = project.resolve()
    steps = inner.relative_to(base).parts if inner.is_relative_to(base) else ()
    folders = [base]
    for part in steps:
        folders.append(folders[-1] / part)
    root = top.resolve()
    return [f.relative_to(root).as_posix().removeprefix(".") for f in folders]


def carry(checkout: Path, worktree: Path, folders: Sequence[str]) -> Carried:
    """Copy the ignored configuration files of ``folders`` (relative to both tops) from the
    ``checkout`` into the ``worktree`` where it lacks them."""
    wanted = []
    for folder in folders:
        for name in CONFIG_FILES:
            rel = f"{folder}/{name}" if folder else name
            if os.path.isfile(checkout / rel) and not os.path.lexists(worktree / rel):
                wanted.append(rel)
    found = Carried()
    if not wanted:
        return found
    ignored = set(git.ignored_paths(worktree, wanted))
    guard = PathGuard(worktree)
    for rel in wanted:
        if rel not in ignored:
            found.refused.append(rel)
            continue
        data, info = read_with_stat(checkout / rel)
        guard.write(rel, data, info.st_mode & 0o777)
        found.carried.append(rel)
    return found
