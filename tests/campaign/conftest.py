"""Fixtures shared by the tests of one area:
tether campaign (src/tether/campaign).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from builders import call, git, make_release


class Seeds:
    """The releases the campaign tests install, and repositories with them installed, made
    once per test process and copied into each test.

    A repository of a campaign test is a git repository with a release installed by ``tether
    init`` and committed (and perhaps one edit of its own committed too), served as a bare
    clone: an init, a tether init, an add, one or two commits and a clone, ~16 ms of CPU
    each, and most tests make three to six. Each kind (release shelf, own edit, branch) is
    built once here; a test gets a copy of its bare repository (a few small files) and may
    change it as it likes. The releases are shared, read only: a repository records the
    folder it was installed from (its update finds the next release there), so the copies
    and their shelf go together."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.shelf = root / "rel"  # acme-kit 1.0.0 and 1.1.0
        make_release(self.shelf, "1.0.0", {"a.txt": "a\n", "c.txt": "x\ny\nz\n"})
        make_release(self.shelf, "1.1.0", {"a.txt": "a2\n", "c.txt": "x\nY\nz\n", "n.txt": "new\n"})
        self.other_shelf = root / "other-rel"  # another upstream: other-kit 1.0.0
        make_release(self.other_shelf, "1.0.0", {"o.txt": "o\n"}, name="other-kit")
        self._bare: dict[tuple[Path, str | None, str], Path] = {}

    def releases(self, name: str, build: Callable[[Path], object]) -> Path:
        """A further shelf of releases, ``build(folder)`` on first use; read only."""
        folder = self.root / name
        if not folder.exists():
            build(folder)
        return folder

    def bare(self, shelf: Path, edit: str | None, branch: str) -> Path:
        """The bare repository of one kind, built on first use: keep it unchanged, copy it."""
        kind = (shelf, edit, branch)
        if kind not in self._bare:
            work = self.root / "work" / str(len(self._bare))
            build_repository(work, shelf, edit, branch)
            bare = self.root / "bare" / f"{len(self._bare)}.git"
            # Packed (not the hard links of a local clone): a copy is a few files, and a
            # fetch from it sends what is packed already.
            git(self.root, "clone", "-q", "--bare", "--no-local", str(work), str(bare))
            self._bare[kind] = bare
        return self._bare[kind]

    def copy(self, bare: Path, to: Path) -> Path:
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(bare, to, symlinks=True)
        return to


def build_repository(root: Path, shelf: Path, edit: str | None, branch: str) -> None:
    """A working repository at ``root`` with the release 1.0.0 of ``shelf`` installed and
    committed; ``edit`` is its own c.txt, committed after."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", branch)
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root)) == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "install 1.0.0")
    if edit is not None:
        (root / "c.txt").write_text(edit)
        git(root, "commit", "-qam", "local edit")


@pytest.fixture(scope="session")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Seeds:
    return Seeds(tmp_path_factory.mktemp("campaign-seeds"))


@dataclass(frozen=True)
class SerialRun:
    """``campaign run -j 1`` of ``mixed_repositories`` (tests/campaign/test_campaign_exec.py)
    in this process's coordinator: its exit code, its document and what it decided per
    repository (``results``)."""

    code: int
    document: dict[str, Any]
    results: dict[str, tuple[Any, ...]]


@pytest.fixture(scope="session")
def serial_run(tmp_path_factory: pytest.TempPathFactory, seeds: Seeds) -> SerialRun:
    """The run every executor's results are compared with, made once per test process: the
    repositories of a test are copies of the same ones (``Seeds``), with the same commits,
    so each test's pool, Dask or bundle run must decide exactly what this run decided."""
    from tests.campaign.test_campaign import World
    from tests.campaign.test_campaign_exec import mixed_repositories, results, run, start

    root = tmp_path_factory.mktemp("serial-run")
    world = World(root, seeds.shelf, root / "registry.json", root / "campaigns", seeds)
    with pytest.MonkeyPatch.context() as patch:  # what the world fixture sets for a test
        patch.setenv("XDG_STATE_HOME", str(root / "state"))
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        mixed_repositories(world)
        start(world, "serial")
        code, document = run(world, "serial", "-j", "1")
    return SerialRun(code, document, results(document))
