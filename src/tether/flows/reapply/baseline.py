"""A saved file's baseline: the bytes the user started from, looked up in priority order.

Only bytes whose sha256 equals the recorded pristine hash count: (a) a pristine folder, (b)
the git history of the target, (c) the baseline release from a source (its files also as
GSD's installer rewrites their paths), (d) none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tether import git
from tether.engine.installer_paths import install_prefixes, installed_forms
from tether.errors import TetherError
from tether.flows.project import Project
from tether.flows.reapply.patches import PatchSet
from tether.flows.reapply.target import profile_of, read_file
from tether.fsio import sha256_bytes

GIT_COMMITS = "git-commits"  # the baseline strategy read from the user's own commits

# Subjects of the commits an install or update of the release makes, not the user (GSD's).
_UPDATE_SUBJECT = re.compile(r"gsd:update|gsd-update|GSD update|gsd-install")


def is_update_commit(subject: str) -> bool:
    return _UPDATE_SUBJECT.search(subject) is not None


def _root_commit(commit: str, parent: str) -> bool:
    return not parent


def user_commit_chain(
    history: list[tuple[str, str, str]],
    adds_file: Callable[[str, str], bool] = _root_commit,
) -> tuple[list[tuple[str, str]], str] | None:
    """From a file's commits (newest first: commit, parent, subject), the user's latest run
    of own commits and the commit before the first of them; None when there is none.

    Update commits newer than the run are passed over (the update that installed the new
    release); an update commit, or the commit that added the file (its installation:
    ``adds_file(commit, parent)``, by default a root commit), ends it.
    """
    commits: list[tuple[str, str]] = []
    before = ""
    for commit, parent, subject in history:
        if is_update_commit(subject) or adds_file(commit, parent):
            if commits:
                break
            continue
        commits.append((commit, subject))
        before = parent
    return (commits, before) if commits else None


@dataclass(frozen=True)
class BaselineOptions:
    pristine: Path | None = None
    git_repo: Path | None = None  # None: the git working tree holding the target, if any
    use_git: bool = True
    source: str | None = None
    version: str | None = None
    accept_pristine: frozenset[str] = frozenset()

    @property
    def release_version(self) -> str | None:
        """The baseline release's version: given, or named by the source itself
        (``npm:<package>@<version>``)."""
        from tether.sources.npm import pinned_version

        if self.version is not None or self.source is None:
            return self.version
        return pinned_version(self.source)


class BaselineNoteCode(StrEnum):
    """What the search for one file's baseline found on the way: worded by
    ``report/reapply.baseline_note``, joined into the file's reason."""

    NO_PRISTINE_COPY = "no-pristine-copy"  # where: no copy in the pristine folder
    PRISTINE_UNCHECKED = "pristine-unchecked"  # a pristine copy, but no hash to check it
    PRISTINE_DRIFT = "pristine-drift"  # where, sha256, recorded: the copy is not the hash
    PRISTINE_ACCEPTED = "pristine-accepted"  # sha256: a drifted copy taken (--accept-pristine)
    NO_HASH = "no-hash"  # no pristine hash recorded, and no release to fall back on
    RELEASE_UNCHECKED = "release-unchecked"  # version: no hash, the release taken unchecked
    FROM_GIT = "from-git"  # blob: the version git recorded with the pristine hash
    FROM_RELEASE = "from-release"  # version, and prefix when the installer's paths were put in
    RELEASE_MISMATCH = "release-mismatch"  # version; rewritten: the installer's forms tried too
    NOT_FOUND = "not-found"  # no version with the recorded pristine hash anywhere
    BEFORE_YOUR_COMMITS = "before-your-commits"  # commits: the file before the user's own


@dataclass(frozen=True)
class BaselineNote:
    """One fact about a file's baseline, with the data its words quote."""

    code: BaselineNoteCode
    where: str = ""  # the pristine copy looked at
    sha256: str = ""  # what the pristine copy hashes to
    recorded: str = ""  # the pristine hash the backup recorded
    version: str = ""  # the baseline release's
    prefix: str = ""  # the path prefix GSD's installer wrote into the release's copy
    rewritten: bool = False  # the installer's path rewriting was tried as well
    blob: str = ""  # the git blob that is the baseline
    commits: tuple[tuple[str, str], ...] = ()  # (commit, subject): the user's own


@dataclass(frozen=True)
class Found:
    """The baseline of one file, or why there is none."""

    data: bytes | None
    origin: str = "none"
    verified: bool = False  # its sha256 equals the recorded pristine hash
    notes: tuple[BaselineNote, ...] = ()
    drifted: bool = False
    commits: tuple[tuple[str, str], ...] = ()  # (commit, subject): the user's own commits
    accepted: bool = False  # a drifted pristine copy taken as the base (--accept-pristine)
    copy: bytes | None = None  # drifted: the pristine copy that did not match


class BaselineFinder:
    """Looks a file's baseline up in priority order; git and the release are opened lazily."""

    def __init__(self, options: BaselineOptions, patch_set: PatchSet, target: Path) -> None:
        self.options = options
        self.patch_set = patch_set
        self.target = target
        self._release_root: Path | None = None
        self._repo: tuple[Path, Path | None] | None = None  # (repository, working-tree top)
        self._repo_opened = False

    def find(self, rel: str) -> Found:
        recorded = self.patch_set.pristine_hashes.get(rel)
        notes: list[BaselineNote] = []
        pristine, drift = self._pristine(rel, recorded, notes)
        if pristine is not None:
            return pristine
        if recorded is None:
            return self._or_user_commits(rel, self._unrecorded(rel, notes))
        found = self._from_git(rel, recorded) or self._from_release(rel, recorded, notes)
        if found is not None:
            # A verified baseline from elsewhere makes a drifted pristine copy harmless.
            drifted = (drift,) if drift is not None else ()
            return Found(found.data, found.origin, True, (*drifted, *found.notes))
        if drift is not None:
            assert self.options.pristine is not None
            copy = read_file(self.options.pristine / rel)
            return Found(None, notes=(drift, *notes), drifted=True, copy=copy)
        notes.append(BaselineNote(BaselineNoteCode.NOT_FOUND))
        return self._or_user_commits(rel, Found(None, notes=tuple(notes)))

    def _or_user_commits(self, rel: str, found: Found) -> Found:
        """Git-enhanced two-way: with no baseline, the user's own commits touching the file
        tell what they changed; the version before the first of them is the baseline. It is
        not the recorded pristine version, so it is never taken as proof of adoption."""
        if found.data is not None:
            return found
        located = self._git_path(rel)
        if located is None:
            return found
        repo, path = located

        def adds_file(commit: str, parent: str) -> bool:
            return not parent or git.read_blob(repo, f"{parent}:{path}") is None

        chain = user_commit_chain(git.file_commits(repo, path), adds_file)
        if chain is None:
            return found
        commits, before = chain
        data = git.read_blob(repo, f"{before}:{path}") if before else None
        if data is None:
            return found
        note = BaselineNote(BaselineNoteCode.BEFORE_YOUR_COMMITS, commits=tuple(commits))
        return Found(data, GIT_COMMITS, False, (note,), commits=tuple(commits))

    def _unrecorded(self, rel: str, notes: list[BaselineNote]) -> Found:
        """No pristine hash to check against: only a release the user named can serve, and
        then never as proof that upstream adopted the change."""
        data = self._release_bytes(rel)
        if data is None:
            notes.append(BaselineNote(BaselineNoteCode.NO_HASH))
            return Found(None, notes=tuple(notes))
        version = str(self.options.release_version)
        note = BaselineNote(BaselineNoteCode.RELEASE_UNCHECKED, version=version)
        return Found(data, "release", False, (note,))

    def _pristine(
        self, rel: str, recorded: str | None, notes: list[BaselineNote]
    ) -> tuple[Found | None, BaselineNote | None]:
        """(a): the pristine copy when its hash matches; else the drift, if any."""
        if self.options.pristine is None:
            return None, None
        where = str(self.options.pristine / rel)
        data = read_file(self.options.pristine / rel)
        if data is None:
            notes.append(BaselineNote(BaselineNoteCode.NO_PRISTINE_COPY, where))
            return None, None
        digest = sha256_bytes(data)
        if recorded is not None and digest == recorded:
            return Found(data, "pristine", True), None
        if rel in self.options.accept_pristine:
            note = BaselineNote(BaselineNoteCode.PRISTINE_ACCEPTED, sha256=digest)
            return Found(data, "pristine", False, (note,), accepted=True), None
        if recorded is None:
            notes.append(BaselineNote(BaselineNoteCode.PRISTINE_UNCHECKED))
            return None, None
        drift = BaselineNote(BaselineNoteCode.PRISTINE_DRIFT, where, digest, recorded)
        return None, drift

    def _from_git(self, rel: str, recorded: str) -> Found | None:
        """(b): walk the versions of the file git recorded; take the one with the hash."""
        located = self._git_path(rel)
        if located is None:
            return None
        repo, path = located
        for oid in git.path_blob_ids(repo, path):
            data = git.read_blob(repo, oid)
            if data is not None and sha256_bytes(data) == recorded:
                return Found(
                    data, "git", True, (BaselineNote(BaselineNoteCode.FROM_GIT, blob=oid),)
                )
        return None

    def _git_path(self, rel: str) -> tuple[Path, str] | None:
        """The repository and the file's path in it; None without a usable repository."""
        if not self._repo_opened:
            self._repo = self._open_repo()
            self._repo_opened = True
        if self._repo is None:
            return None
        repo, top = self._repo
        target = (self.target.resolve() / rel) if top is not None else None
        if top is not None and target is not None and target.is_relative_to(top.resolve()):
            return top, target.relative_to(top.resolve()).as_posix()
        # Otherwise the target is not in this working tree: it mirrors the repository's root.
        return repo, rel

    def _open_repo(self) -> tuple[Path, Path | None] | None:
        """(repository, its working-tree top or None when bare), or None for no repository."""
        if not self.options.use_git:
            return None
        if self.options.git_repo is None:
            top = git.work_tree_top(self.target)
            return (top, top) if top is not None else None
        repo = self.options.git_repo
        top = git.work_tree_top(repo)
        if top is None and not git.is_git_repo(repo):
            raise TetherError(f"--git {repo}: not a git repository")
        return repo, top

    def _from_release(self, rel: str, recorded: str, notes: list[BaselineNote]) -> Found | None:
        """(c): the baseline release's copy, when it is the bytes that were installed: as
        the package has it, or as GSD's installer rewrote its paths for this install. Only
        a form whose sha256 is the recorded hash is taken."""
        data = self._release_bytes(rel)
        if data is None:
            return None
        version = str(self.options.release_version)
        if sha256_bytes(data) == recorded:
            note = BaselineNote(BaselineNoteCode.FROM_RELEASE, version=version)
            return Found(data, "release", True, (note,))
        forms = installed_forms(rel, data, self._install_prefixes(), self._dir_names())
        for prefix, form in forms:
            if sha256_bytes(form) == recorded:
                note = BaselineNote(BaselineNoteCode.FROM_RELEASE, version=version, prefix=prefix)
                return Found(form, "release", True, (note,))
        mismatch = BaselineNoteCode.RELEASE_MISMATCH
        notes.append(BaselineNote(mismatch, version=version, rewritten=bool(forms)))
        return None

    def _install_prefixes(self) -> list[str]:
        """The path prefixes GSD's installer may have written for this install folder: the
        folder as given and with its links resolved, against the home folder likewise."""
        target = os.path.abspath(self.target)
        home = os.path.expanduser("~")
        homes = [home, os.path.realpath(home)] if home != "~" else []
        return install_prefixes([target, os.path.realpath(target)], homes)

    def _dir_names(self) -> list[str]:
        """The folder name a local install's ``./<name>/`` paths get: Claude Code's, or the
        install folder's own (another runtime's)."""
        return list(dict.fromkeys([".claude", self.target.name]))

    def _release_bytes(self, rel: str) -> bytes | None:
        if self.options.source is None or self.options.release_version is None:
            return None
        if self._release_root is None:
            from tether.sources import open_source

            cache = Project(self.target, profile_of(self.target)).releases_cache
            tree = open_source(self.options.source, cache).fetch(self.options.release_version)
            self._release_root = tree.root
        return read_file(self._release_root / rel)
