"""The programs ``deps apply`` runs in a project: the install of its package manager (and the
lock of its Python tool), and override commands. Each runs through the process edge with
its stdin closed, its output appended to the project's log, stopped with its process group
at its time limit or on Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import IO

from tether.deps.work import ApplyOptions, ProjectWork
from tether.process import Finished, child_env
from tether.process import run as run_program
from tether.report.deps import program_log_line

# The install after a bump is there to rewrite the lockfile. Under CI (``CI=true``) pnpm
# defaults to a frozen lockfile and yarn berry to an immutable one, and a project's own config
# can ask for either anywhere: both then refuse the very change the bump needs, so the
# command says so. yarn 1 never freezes on its own and ignores ``--no-immutable``.
INSTALL = {
    "npm": ["npm", "install"],
    "pnpm": ["pnpm", "install", "--no-frozen-lockfile"],
    "yarn": ["yarn", "install", "--no-immutable"],
    "bun": ["bun", "install"],
    # Deno 2 installs a package.json's dependencies and writes deno.lock.
    "deno": ["deno", "install"],
}
# Where each package manager reads its default registry from the environment: npm, yarn 1,
# pnpm up to 10 and bun read ``npm_config_registry``; pnpm 11+ only ``pnpm_config_registry``;
# yarn berry only ``YARN_NPM_REGISTRY_SERVER``.
REGISTRY_ENV = ("npm_config_registry", "pnpm_config_registry", "YARN_NPM_REGISTRY_SERVER")
PYTHON_LOCK = {"uv": ["uv", "lock"], "poetry": ["poetry", "lock"], "pdm": ["pdm", "lock"]}


def install_commands(work: ProjectWork, options: ApplyOptions) -> list[list[str]]:
    """One install per ecosystem the bumps touched, and any install an earlier run owes;
    none for override-only projects. A member whose install another runs owes these until
    that one succeeds; the member that runs it runs its own and those of every member it
    covers."""
    if not options.install or options.level == "engines":
        return []
    commands = list(work.owed)
    if any(b.ecosystem == "npm" for b in work.bumps) and work.package_manager in INSTALL:
        commands.append(INSTALL[work.package_manager])
    if any(b.ecosystem == "pypi" for b in work.bumps) and work.python_tool in PYTHON_LOCK:
        commands.append(PYTHON_LOCK[work.python_tool])
    for member in work.covers:
        commands += install_commands(member, options)
    return [list(c) for c in dict.fromkeys(tuple(c) for c in commands)]


def registry_env(env: Mapping[str, str], registry: str) -> dict[str, str]:
    """``env`` with ``registry`` as every package manager's default registry."""
    return {**env, **dict.fromkeys(REGISTRY_ENV, registry)}


def run_logged(
    argv: list[str],
    cwd: Path,
    log: IO[str],
    env: Mapping[str, str] | None,
    seconds: float | None,
    limit: str | None = None,
) -> Finished:
    """Run a tool with stdin closed and every line of its output in the log, through the
    process edge: stopped with its process group after ``seconds`` or on Ctrl-C."""
    finished = run_program(
        argv, cwd=cwd, env=child_env(env), output=log, timeout=seconds, limit=limit
    )
    line = program_log_line(finished)
    if line is not None:
        log_line(log, line)
    return finished


def log_line(log: IO[str], line: str) -> None:
    """One line into a project's log, at once (the log is read while the run goes on)."""
    log.write(line + "\n")
    log.flush()
