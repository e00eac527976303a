"""The git edge: every call of the ``git`` program goes through this module.

A flat module of small functions, in sections by concern:

1. running git: the one environment (``git_env``) and the runners every call goes through
2. where a repository is: the working tree around a folder
3. the working tree and the index: tracked, ignored and changed paths, index entries
4. commits and refs: what a name points at, branches, ancestry
5. stored bytes: trees and blobs, read as committed through one reader (``BlobReader``)
6. history: logs and diffs between commits
7. linked worktrees
8. remotes: listing, cloning, fetching, pushing
9. bundles
10. merging three texts (``git merge-file``)

Each function addresses a repository by an explicit path or URL, so by default the
environment variables that would point git at some other repository (set, for example, while
git runs a hook) are dropped.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from tether import process
from tether.errors import TetherError
from tether.process import child_env
from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays
if TYPE_CHECKING:
    from typing import IO, Any, BinaryIO

# --- 1. running git: the one environment, the runners -------------------------------------


# Every path tether hands git after ``--`` is a path, never a pattern: a shipped file named
# ``*`` or ``[ab].md`` must not make git match other files (``a.md``). Given as an option of
# each call that takes paths, not in the environment every git call shares: the variable
# would reach the hooks and other programs git starts.
LITERAL = "--literal-pathspecs"


GIT_MISSING = "git is not installed or not on PATH; install git and retry"


# Transports tether may use; ``ext::`` and friends can run arbitrary commands.
_ALLOWED_PROTOCOLS = "file:git:http:https:ssh"


def git_env(keep_repo_env: bool = False, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a git call: the one every program tether starts gets
    (``tether.process.child_env``: no repository-selecting variables, never a prompt for
    credentials, which would hang a CI job or a pre-commit hook forever), only safe
    transports."""
    env = child_env(keep_repo_env=keep_repo_env)
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
        raise TetherError(GIT_MISSING) from None
    if check and result.returncode != 0:
        raise TetherError(f"git {args[0]} failed: {first_error_line(result.stderr)}")
    return result


def _run_git_bytes(args: Sequence[str], cwd: Path, data: bytes | None = None) -> bytes | None:
    """Run git with binary stdin/stdout; None when git exits non-zero."""
    result = _git_with_bytes(args, cwd, data)
    return result.stdout if result.returncode == 0 else None


def _git_with_bytes(
    args: Sequence[str], cwd: Path | None = None, data: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` with ``data`` (or nothing) on stdin, its output captured as bytes."""
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=git_env(),
            input=data if data is not None else b"",
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise TetherError(GIT_MISSING) from None


# --- 2. where a repository is: the working tree around a folder ---------------------------


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


def _no_repository_above(path: Path) -> bool:
    """True when git could find no repository from ``path``: no ``.git`` in it or in any
    folder above it (tether's git calls never see GIT_DIR and the like: ``git_env``). Most
    projects that are not repositories are answered here without starting git."""
    here = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return False
        parent = os.path.dirname(here)
        if parent == here:
            return True
        here = parent


def inside_work_tree(path: Path) -> bool:
    """True when ``path`` is anywhere inside a git working tree (its top or a subfolder)."""
    if not path.is_dir() or _no_repository_above(path):
        return False
    result = run_git(["rev-parse", "--is-inside-work-tree"], cwd=path, check=False)
    return result.returncode == 0 and result.stdout.strip() == "true"


@valueclass(frozen=True)
class WorkTree:
    """What git says of the working tree around a folder."""

    top: Path
    linked_main: Path | None  # the main checkout, when this is a linked worktree


# Folders whose working tree was already asked of git in this command (None: no cache).
_known_trees: ContextVar[dict[str, WorkTree | None] | None] = ContextVar(
    "known_trees", default=None
)


@contextmanager
def one_command() -> Iterator[None]:
    """Within this block ``work_tree`` asks git once per folder: one command neither makes
    nor removes the repository around its project, and an update asked it in five places
    (branch, dirty files, linked worktrees, apply, the version marker)."""
    token = _known_trees.set({})
    try:
        yield
    finally:
        _known_trees.reset(token)


def work_tree(path: Path) -> WorkTree | None:
    """The working tree that contains ``path``, or None outside git."""
    known = _known_trees.get()
    key = os.path.abspath(path)
    if known is not None and key in known:
        return known[key]
    tree = _ask_work_tree(path)
    if known is not None:
        known[key] = tree
    return tree


def work_tree_top(path: Path) -> Path | None:
    """The top of the working tree that contains ``path``, or None outside git."""
    tree = work_tree(path)
    return tree.top if tree is not None else None


def _ask_work_tree(path: Path) -> WorkTree | None:
    if not path.is_dir() or _no_repository_above(path):
        return None
    asked = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
    result = run_git(asked, cwd=path, check=False)
    lines = result.stdout.splitlines()
    if result.returncode != 0 or not result.stdout.strip():
        return None
    if len(lines) != 3:  # a folder name holding a line break: one answer per call
        return _ask_work_tree_apart(path)
    top, git_dir, common = lines
    return WorkTree(Path(top), _main_checkout(path, git_dir, common))


def _ask_work_tree_apart(path: Path) -> WorkTree | None:
    result = run_git(["rev-parse", "--show-toplevel"], cwd=path, check=False)
    top = result.stdout.rstrip("\n")
    if result.returncode != 0 or not top:
        return None
    result = run_git(["rev-parse", "--absolute-git-dir"], cwd=path, check=False)
    git_dir = result.stdout.rstrip("\n")
    result = run_git(["rev-parse", "--git-common-dir"], cwd=path, check=False)
    return WorkTree(Path(top), _main_checkout(path, git_dir, result.stdout.rstrip("\n")))


def _main_checkout(path: Path, git_dir: str, common: str) -> Path | None:
    """The main checkout when the git folder differs from the common one (a linked worktree);
    a relative common folder is relative to ``path``, where git was asked."""
    common_path = Path(common).resolve() if os.path.isabs(common) else (path / common).resolve()
    return None if Path(git_dir).resolve() == common_path else common_path.parent


# --- 3. the working tree and the index ----------------------------------------------------


def ls_files(path: Path) -> list[str]:
    """Tracked files under ``path``, as paths relative to it (git's index, not the disk)."""
    # -z: names come back raw, without git's quoting of unusual characters.
    result = run_git(["ls-files", "-z", "--cached"], cwd=path)
    return [name for name in result.stdout.split("\0") if name]


def tracked_paths(root: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (relative to ``root``, files or folders), the tracked files they name;
    [] outside a git working tree. Paths are taken literally, never as patterns."""
    if not paths or not root.is_dir():
        return []
    result = run_git([LITERAL, "ls-files", "-z", "--cached", "--", *paths], cwd=root, check=False)
    if result.returncode != 0:
        return []
    return [name for name in result.stdout.split("\0") if name]


def ignored_paths(root: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (relative to ``root``), those git ignores there (``.gitignore`` files,
    ``info/exclude``, the user's excludes); [] outside a work tree. Taken literally."""
    if not paths or not root.is_dir():
        return []
    # -z needs --stdin: names go in and come back NUL-separated, never quoted.
    result = _git_with_bytes(
        ["check-ignore", "-z", "--stdin"], root, b"".join(os.fsencode(p) + b"\0" for p in paths)
    )
    if result.returncode not in (0, 1):  # 1: none of them is ignored
        return []
    return [os.fsdecode(name) for name in result.stdout.split(b"\0") if name]


def dirty_paths(repo: Path, paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (relative to ``repo``), those with uncommitted changes (staged or not)."""
    if not paths:
        return []
    result = run_git(
        [LITERAL, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--", *paths],
        cwd=repo,
    )
    dirty = [entry[3:] for entry in result.stdout.split("\0") if len(entry) > 3]
    if not dirty:
        return []
    # Porcelain names paths from the top of the working tree; callers name them from ``repo``.
    prefix = run_git(["rev-parse", "--show-prefix"], cwd=repo).stdout.strip()
    return [path.removeprefix(prefix) for path in dirty]


def status_changed_paths(repo: Path) -> list[str]:
    """Paths whose working-tree or index state differs from HEAD, untracked files included."""
    result = run_git(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"], cwd=repo
    )
    return [entry[3:] for entry in result.stdout.split("\0") if len(entry) > 3]


IndexEntry = tuple[int, str, int]  # (mode, object id, stage)


def index_entries(repo: Path, rels: Sequence[str]) -> dict[str, list[IndexEntry]]:
    """The index entries of each of ``rels`` (relative to ``repo``): [] when untracked."""
    entries: dict[str, list[IndexEntry]] = {rel: [] for rel in rels}
    if not rels:
        return entries
    # Without --full-name git names each path relative to ``repo``, as ``rels`` are: no
    # second process to ask where ``repo`` lies in its working tree.
    args = [LITERAL, "ls-files", "--stage", "-z", "--", *rels]
    out = _run_git_bytes(args, cwd=repo)
    if out is None:
        raise TetherError(f"git ls-files failed in {repo}")
    for line in out.decode("utf-8", "surrogateescape").split("\0"):
        if not line:
            continue
        meta, _, rel = line.partition("\t")
        mode, oid, stage = meta.split()
        if rel in entries:
            entries[rel].append((int(mode, 8), oid, int(stage)))
    return entries


def restore_index_entries(repo: Path, rel: str, entries: Sequence[IndexEntry]) -> None:
    """Put back ``rel``'s index entries as recorded (none: the path leaves the index)."""
    _set_index_entries(repo, [(rel, entries)])


def _set_index_entries(repo: Path, paths: Sequence[tuple[str, Sequence[IndexEntry]]]) -> None:
    """Each path's entries replace whatever the index holds for it, all in one
    ``update-index`` (none: the path leaves the index)."""
    lines: list[str] = []
    for rel, entries in paths:
        lines.append(f"0 {'0' * 40}\t{rel}")  # drop every stage first
        lines += [f"{mode:o} {oid} {stage}\t{rel}" for mode, oid, stage in entries]
    # NUL-terminated records: a line break in a folder above the project is part of a name.
    payload = ("\0".join(lines) + "\0").encode("utf-8", "surrogateescape")
    if _run_git_whole_input(["update-index", "-z", "--index-info"], repo, payload) is None:
        raise TetherError(f"git update-index failed for {', '.join(rel for rel, _ in paths)}")


def _run_git_whole_input(args: Sequence[str], cwd: Path, data: bytes) -> bytes | None:
    """``_run_git_bytes`` for a program that acts on every record it reads before its input
    ends (``update-index --index-info``): ``data`` reaches it in a file, not a pipe, so tether
    killed while handing it over cannot leave git an input cut short (git would apply the
    records before the cut, one cut inside a path as an entry for a path that does not
    exist). Through a pipe as before when no scratch file can be written."""
    with contextlib.ExitStack() as cleanup:
        try:
            folder = cleanup.enter_context(_scratch_folder("tether-input-"))
            name = os.path.join(folder, "input")
            handle = cleanup.enter_context(open(name, "w+b"))
            os.unlink(name)  # nothing left behind, whatever ends tether
            handle.write(data)
            handle.flush()
            handle.seek(0)
        except OSError:
            return _run_git_bytes(args, cwd, data)
        try:
            result = subprocess.run(
                ["git", *args], cwd=cwd, env=git_env(), stdin=handle, capture_output=True
            )
        except FileNotFoundError:
            raise TetherError(GIT_MISSING) from None
    return result.stdout if result.returncode == 0 else None


def write_blob(repo: Path, data: bytes) -> str:
    """Store ``data`` as a blob in ``repo``'s object database; its object id."""
    out = _run_git_bytes(["hash-object", "-w", "--stdin"], cwd=repo, data=data)
    if out is None:
        raise TetherError(f"git hash-object failed in {repo}")
    return out.decode().strip()


def write_blobs(repo: Path, blobs: Sequence[bytes]) -> list[str]:
    """Store each of ``blobs`` in ``repo``'s object database with one ``git hash-object``
    for all of them (each is written to a scratch file it reads); their ids, in order.
    ``--no-filters``: the bytes are stored as given, as ``--stdin`` stores them."""
    if len(blobs) < 2:
        return [write_blob(repo, data) for data in blobs]
    try:
        with _scratch_folder("tether-blobs-") as folder:
            if "\n" in folder:  # a scratch folder whose name holds a line break
                raise OSError("a line break in the scratch folder's name")
            names = []
            for index, data in enumerate(blobs):
                name = os.path.join(folder, str(index))
                with open(name, "wb") as scratch:
                    scratch.write(data)
                names.append(name)
            payload = ("\n".join(names) + "\n").encode("utf-8", "surrogateescape")
            args = ["hash-object", "-w", "--no-filters", "--stdin-paths"]
            out = _run_git_bytes(args, cwd=repo, data=payload)
    except OSError:  # no scratch files to be had (a full /tmp): one at a time, on stdin
        return [write_blob(repo, data) for data in blobs]
    ids = out.decode().split() if out is not None else []
    if len(ids) != len(blobs):
        raise TetherError(f"git hash-object failed in {repo}")
    return ids


@contextmanager
def _scratch_folder(prefix: str) -> Iterator[str]:
    """A private folder (mode 0700) for the scratch files of one git call, removed with
    them after it. Made where ``tempfile`` would make it when ``TMPDIR`` (``TEMP``, ``TMP``)
    or ``/tmp`` takes it, without loading ``tempfile`` (with ``shutil`` and ``random``) on an
    update's path (docs/performance.md, "Small projects"); anywhere else through it."""
    for base in (os.environ.get("TMPDIR"), os.environ.get("TEMP"), os.environ.get("TMP")):
        if base:
            break
    else:
        base = "/tmp"
    folder = os.path.join(os.path.abspath(base), prefix + os.urandom(6).hex())
    try:
        os.mkdir(folder, 0o700)
    except OSError:
        import tempfile

        with tempfile.TemporaryDirectory(prefix=prefix) as made:
            yield made
        return
    try:
        yield folder
    finally:
        for name in os.listdir(folder):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
        with contextlib.suppress(OSError):
            os.rmdir(folder)


Stages = Sequence[tuple[int, bytes | None, int]]  # (stage, bytes or None when absent, mode)


def record_unmerged(repo: Path, rel: str, stages: Stages) -> None:
    """Put ``rel`` into the index as unmerged: (stage, bytes or None when absent, mode).

    Stages 1/2/3 are base/ours/theirs, so ``git status`` lists the path as unmerged and
    ``git mergetool`` and IDEs offer a three-way view.
    """
    record_unmerged_paths(repo, [(rel, stages)])


def record_unmerged_paths(repo: Path, conflicts: Sequence[tuple[str, Stages]]) -> None:
    """``record_unmerged`` for several paths at once: one ``hash-object`` stores every
    side's bytes and one ``update-index`` records every path's stages."""
    if not conflicts:
        return
    blobs = [data for _, stages in conflicts for _, data, _ in stages if data is not None]
    ids = iter(write_blobs(repo, blobs))
    paths = [
        (rel, [(mode, next(ids), stage) for stage, data, mode in stages if data is not None])
        for rel, stages in conflicts
    ]
    _set_index_entries(repo, paths)


def commit_everything(repo: Path, message: str) -> str:
    """Stage every change of the working tree (ignored files stay out), commit with
    ``message`` and return the new commit. A person's global hooks (``core.hooksPath``)
    are for their own commits; tether's commit in its own worktree skips them."""
    run_git(["add", "--all"], cwd=repo)
    run_git(["commit", "--quiet", "--no-verify", "--message", message], cwd=repo)
    return rev_parse(repo, "HEAD")


# --- 4. commits and refs: what a name points at, branches, ancestry -----------------------


def commit_of(repo: Path, rev: str) -> str | None:
    """The commit ``rev`` names in ``repo``, None when it names none."""
    result = run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        cwd=repo,
        check=False,
    )
    return result.stdout.strip() or None if result.returncode == 0 else None


def has_ref(repo: Path, ref: str) -> bool:
    return commit_of(repo, ref) is not None


def has_commit(repo: Path, commit: str) -> bool:
    """True when ``repo`` holds the commit ``commit`` (a full object id)."""
    args = ["cat-file", "-e", "--end-of-options", f"{commit}^{{commit}}"]
    return run_git(args, cwd=repo, check=False).returncode == 0


def rev_parse(repo: Path, rev: str) -> str:
    """The full object id ``rev`` names in ``repo``."""
    return run_git(["rev-parse", "--verify", "--end-of-options", rev], cwd=repo).stdout.strip()


def tree_of(repo: Path, rev: str) -> str | None:
    """The tree id of a commit, None when ``rev`` names no commit."""
    result = run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{tree}}"],
        cwd=repo,
        check=False,
    )
    return result.stdout.strip() or None if result.returncode == 0 else None


def head_commit(repo: Path) -> str | None:
    """The commit HEAD names, None in a repository without commits."""
    return commit_of(repo, "HEAD")


def checked_out(repo: Path) -> tuple[str | None, str | None]:
    """(the commit HEAD names, the branch checked out), asked of git at once: None for a
    repository without commits, and for a detached HEAD."""
    result = run_git(
        ["rev-parse", "--quiet", "HEAD^{commit}", "--symbolic-full-name", "HEAD", "--"],
        cwd=repo,
        check=False,
    )
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) < 2:  # no commit yet: HEAD names no commit
        return None, current_branch(repo)
    return lines[0], _branch_name(lines[1])


def checked_out_and_branch(repo: Path, branch: str) -> tuple[str | None, str | None, str | None]:
    """``checked_out`` and ``branch_commit(branch)`` together: (the commit HEAD names, the
    branch checked out, the commit ``branch`` points at). One ``for-each-ref`` listing the
    local branches answers all three when HEAD is on a branch with a commit; a detached or
    unborn HEAD is asked as those two functions ask."""
    listing = run_git(
        ["for-each-ref", "--format=%(HEAD)%00%(objectname)%00%(refname)", "refs/heads/"],
        cwd=repo,
        check=False,
    )
    if listing.returncode == 0:
        head: tuple[str, str | None] | None = None
        wanted = None
        for line in listing.stdout.splitlines():
            marker, _, rest = line.partition("\0")
            oid, _, ref = rest.partition("\0")
            if marker == "*":
                head = (oid, _branch_name(ref))
            if ref == f"refs/heads/{branch}":
                wanted = oid
        if head is not None and head[1] is not None:
            return head[0], head[1], wanted
    start, current = checked_out(repo)
    return start, current, branch_commit(repo, branch)


def current_branch(repo: Path) -> str | None:
    """The checked-out branch name; None when HEAD is detached."""
    result = run_git(["symbolic-ref", "--quiet", "HEAD"], cwd=repo, check=False)
    return _branch_name(result.stdout.strip()) if result.returncode == 0 else None


def _branch_name(ref: str) -> str | None:
    """The branch a full ref name names (``refs/heads/NAME``), None for any other ref."""
    return ref.removeprefix("refs/heads/") or None if ref.startswith("refs/heads/") else None


def branch_commit(repo: Path, name: str) -> str | None:
    """The commit branch ``name`` points at, None when there is no such branch."""
    return commit_of(repo, f"refs/heads/{name}")


def default_branch(repo: Path) -> str | None:
    """The branch the project integrates into: origin's HEAD, else a local main or master."""
    result = run_git(
        ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], cwd=repo, check=False
    )
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
    configured = run_git(["config", "--get", "init.defaultBranch"], cwd=repo, check=False)
    candidates = [configured.stdout.strip()] if configured.returncode == 0 else []
    for name in [*candidates, "main", "master"]:
        if name and has_ref(repo, f"refs/heads/{name}"):
            return name
    return None


def tag_kinds(repo: Path) -> dict[str, str]:
    """Tag name -> the kind of object it finally names (``commit``, ``tree``, ``blob``, or
    ``tag`` for a tag of a tag), for the tags the repository at ``repo`` holds."""
    fields = "%(refname:strip=2)%00%(objecttype)%00%(*objecttype)"
    result = run_git(["for-each-ref", f"--format={fields}", "refs/tags"], cwd=repo)
    kinds: dict[str, str] = {}
    for line in result.stdout.splitlines():
        name, kind, peeled = line.split("\0")
        kinds[name] = peeled or kind
    return kinds


def switch_branch(repo: Path, name: str) -> None:
    """Check out the existing branch ``name``, carrying working-tree changes along."""
    run_git(["switch", "--end-of-options", name], cwd=repo)


def switch_to_new_branch(repo: Path, name: str) -> None:
    """Create ``name`` at HEAD and check it out, keeping the working tree as it is."""
    run_git(["switch", "-c", name], cwd=repo)


def move_branch(repo: Path, name: str, commit: str, expected: str) -> None:
    """Point branch ``name`` at ``commit``, only while it still points at ``expected``."""
    run_git(["update-ref", "--no-deref", f"refs/heads/{name}", commit, expected], cwd=repo)


def delete_branch(repo: Path, name: str) -> None:
    run_git(["branch", "-D", name], cwd=repo)


def set_ref(repo: Path, ref: str, commit: str) -> None:
    """Point ``ref`` at ``commit``, whatever it pointed at (a branch checked out in a
    worktree included: the caller has removed that worktree or means to)."""
    run_git(["update-ref", "--no-deref", ref, commit], cwd=repo)


def merge_base(repo: Path, left: str, right: str = "HEAD") -> str | None:
    """The best common ancestor of two commits, None when either is unknown or none exists."""
    result = run_git(["merge-base", "--end-of-options", left, right], cwd=repo, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def fork_point(repo: Path, ref: str) -> str | None:
    """Where HEAD forked from ``ref``: the reflog-aware fork point, else the merge base."""
    result = run_git(["merge-base", "--fork-point", ref, "HEAD"], cwd=repo, check=False)
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
    return merge_base(repo, ref)


def is_ancestor(repo: Path, older: str, newer: str = "HEAD") -> bool:
    """True when ``older`` is ``newer`` or one of its ancestors."""
    result = run_git(
        ["merge-base", "--is-ancestor", "--end-of-options", older, newer], cwd=repo, check=False
    )
    return result.returncode == 0


def commits_ahead(repo: Path, base: str, head: str = "HEAD") -> int:
    """How many commits ``head`` has that ``base`` lacks (``git rev-list --count``)."""
    result = run_git(["rev-list", "--count", "--end-of-options", f"{base}..{head}"], cwd=repo)
    return int(result.stdout.strip() or 0)


# --- 5. stored bytes: trees and blobs, as committed ---------------------------------------


TreeEntry = tuple[str, str, str, str]  # (mode, type, object id, path)


def tree_listing(repo: Path, rev: str) -> list[TreeEntry]:
    """Every entry of the tree of ``rev``, folders included (each before what it holds),
    recursively; names kept byte for byte (``surrogateescape``), not re-encoded."""
    args = ["ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", rev]
    out = _run_git_bytes(args, repo)
    if out is None:
        raise TetherError(f"git ls-tree could not list {rev}")
    entries: list[TreeEntry] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid = meta.decode().split(" ")
        entries.append((mode, kind, oid, path.decode("utf-8", "surrogateescape")))
    return entries


def ls_tree_entries(repo: Path, rev: str) -> list[tuple[str, str, str, str]]:
    """(mode, type, object id, path) for every entry in the tree of ``rev``, recursively."""
    result = run_git(["ls-tree", "-r", "-z", "--full-tree", rev], cwd=repo)
    entries = []
    for record in result.stdout.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, oid = meta.split(" ")
        entries.append((mode, kind, oid, path))
    return entries


class BlobReader:
    """The stored bytes of objects, one after the other, through one ``git cat-file --batch``:
    the one way tether reads what a repository holds.

    These are the bytes as committed: ``cat-file`` runs no filter (``filter.*.smudge``,
    ``filter.*.process``), no ``ident``, end-of-line or ``textconv`` conversion, whatever the
    repository's ``.gitattributes`` and config say, where ``git archive`` and ``git show``
    may run them. An object is named by its id, by ``REV:PATH`` (a path from the top of the
    repository) or by ``REV:./PATH`` (a path from the folder the reader was opened in).
    Each blob ``open`` gives is a stream; it must be read (or is skipped) before the next is
    asked for.
    """

    def __init__(self, repo: Path) -> None:
        self._repo = repo
        try:
            self._process = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=repo,
                env=git_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise TetherError(GIT_MISSING) from None
        self._left = 0  # bytes of the current object (and its closing newline) still unread

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self.close()

    def open(self, name: str) -> tuple[int, BinaryIO]:
        """The size of blob ``name`` and a stream of exactly that many bytes; TetherError
        when ``name`` names no blob."""
        size = self._ask(name)
        if size is None:
            raise TetherError(f"git cat-file could not read blob {name}")
        return size, self._stream(size)

    def read(self, name: str) -> bytes | None:
        """The bytes of blob ``name``; None when it names no blob (no such object or path,
        a folder, a submodule) or there is no repository."""
        size = self._ask(name)
        return None if size is None else self._stream(size).read()

    def _ask(self, name: str) -> int | None:
        """Ask for object ``name``: the size of the blob it names, to be read next, or None."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        if "\n" in name:  # one name a line: a path with a line break is resolved apart
            found = run_git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", name],
                cwd=self._repo,
                check=False,
            )
            if found.returncode != 0 or not found.stdout.strip():
                return None
            name = found.stdout.strip()
        self._skip()
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
        except BrokenPipeError:  # git stopped: no repository here
            return None
        header = stdout.readline().split()
        if len(header) != 3 or not header[2].isdigit():
            return None  # "NAME missing", "NAME ambiguous", or git stopped
        size = int(header[2])
        self._left = size + 1  # the content is followed by one newline
        return size if header[1] == b"blob" else None

    def _stream(self, size: int) -> BinaryIO:
        stdout = self._process.stdout
        assert stdout is not None
        return io.BufferedReader(_BlobStream(self, stdout, size))

    def _take(self, count: int) -> None:
        self._left -= count

    def _skip(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        while self._left > 0:
            chunk = stdout.read(min(self._left, 1 << 20))
            if not chunk:
                raise TetherError("git cat-file stopped before the end of a blob")
            self._left -= len(chunk)

    def close(self) -> None:
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._process.wait()


class _BlobStream(io.RawIOBase):
    """One blob's bytes from ``cat-file``'s output: reads stop at the blob's end."""

    def __init__(self, owner: BlobReader, pipe: IO[bytes], size: int) -> None:
        self._owner = owner
        self._pipe = pipe
        self._remaining = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._remaining <= 0:
            return 0
        view = memoryview(buffer).cast("B")
        data = self._pipe.read(min(len(view), self._remaining))
        if not data:
            raise TetherError("git cat-file stopped before the end of a blob")
        view[: len(data)] = data
        self._remaining -= len(data)
        self._owner._take(len(data))
        return len(data)


def read_blob(repo: Path, name: str) -> bytes | None:
    """The committed bytes of the blob ``name`` names in ``repo`` (an object id, ``REV:PATH``
    from the repository's top, ``REV:./PATH`` from ``repo``); None when it names none."""
    with BlobReader(repo) as reader:
        return reader.read(name)


def read_blobs(repo: Path, oids: Sequence[str]) -> dict[str, bytes]:
    """The bytes of each blob in ``oids``, read through one ``cat-file --batch`` process;
    TetherError when one of them is not a blob ``repo`` holds."""
    if not oids:
        return {}
    blobs: dict[str, bytes] = {}
    with BlobReader(repo) as reader:
        for oid in oids:
            data = reader.read(oid)
            if data is None:
                raise TetherError(f"git cat-file could not read {oid} in {repo}")
            blobs[oid] = data
    return blobs


# --- 6. history: logs and diffs between commits -------------------------------------------


def commit_messages(repo: Path, since: str, head: str = "HEAD") -> list[tuple[str, str]]:
    """(commit, full message) for each commit in ``since..head``, newest first."""
    result = run_git(
        ["log", "--format=%H%x00%B%x1e", "--end-of-options", f"{since}..{head}"],
        cwd=repo,
        check=False,
    )
    if result.returncode != 0:
        return []
    found = []
    for record in result.stdout.split("\x1e"):
        sha, _, message = record.strip("\n").partition("\0")
        if sha:
            found.append((sha, message))
    return found


def commit_day(repo: Path, rev: str = "HEAD") -> str | None:
    """The committer date of ``rev`` as YYYY-MM-DD (UTC), None when it does not resolve."""
    result = run_git(
        ["log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d", "--end-of-options", rev],
        cwd=repo,
        check=False,
        env={"TZ": "UTC"},
    )
    day = result.stdout.strip()
    return day if result.returncode == 0 and day else None


def commit_message(repo: Path, commit: str) -> str | None:
    """The full message of ``commit``; None when the repository does not have it."""
    result = run_git(
        ["log", "-1", "--format=%B", "--end-of-options", commit], cwd=repo, check=False
    )
    return result.stdout if result.returncode == 0 else None


def file_commits(repo: Path, rel: str) -> list[tuple[str, str, str]]:
    """(commit, first parent or "", subject) of each non-merge commit on HEAD's history that
    touched ``rel`` (relative to ``repo``'s top), newest first; empty without any."""
    result = run_git(
        [LITERAL, "log", "--no-merges", "--format=%H%x00%P%x00%s", "--", rel],
        cwd=repo,
        check=False,
    )
    if result.returncode != 0:
        return []
    found = []
    for line in result.stdout.splitlines():
        commit, _, rest = line.partition("\0")
        parents, _, subject = rest.partition("\0")
        if commit:
            found.append((commit, parents.split(" ")[0] if parents else "", subject))
    return found


def path_blob_ids(repo: Path, rel: str) -> list[str]:
    """Object ids of every version of ``rel`` (relative to ``repo``'s top) that a commit on
    any ref recorded, newest first, each once; empty when git knows none (or no repository).

    Read from ``log --raw`` so one git call lists them all; ``-m`` includes versions that
    first appeared in a merge commit.
    """
    result = run_git(
        [
            LITERAL,
            "log",
            "--all",
            "-m",
            "--format=",
            "--raw",
            "-z",
            "--no-abbrev",
            "--no-renames",
            "--",
            rel,
        ],
        cwd=repo,
        check=False,
    )
    if result.returncode != 0:
        return []
    ids: list[str] = []
    for entry in result.stdout.split("\0"):
        if not entry.startswith(":"):
            continue  # a path; the ":<modes> <old> <new> <status>" record precedes it
        fields = entry[1:].split()
        for oid in (fields[3], fields[2]):  # the version a commit wrote, then the one it replaced
            if oid.strip("0") and oid not in ids:
                ids.append(oid)
    return ids


def diff_name_status(repo: Path, old: str, new: str) -> list[tuple[str, str]]:
    """(status letter, path) for every path that differs between two commits.

    Renames are split into a deletion and an addition so the answer never depends on the
    user's rename-detection settings.
    """
    result = run_git(
        ["diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", old, new, "--"],
        cwd=repo,
    )
    fields = [field for field in result.stdout.split("\0") if field]
    return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


# --- 7. linked worktrees ------------------------------------------------------------------


def worktree_add(repo: Path, dest: Path, branch: str, start: str = "HEAD") -> None:
    """Add a linked worktree at ``dest`` on a new branch ``branch`` made at ``start``."""
    run_git(["worktree", "add", "-b", branch, os.path.abspath(dest), start], cwd=repo)


def worktree_remove(repo: Path, dest: Path) -> None:
    """Remove the linked worktree at ``dest`` (its files and git's record of it)."""
    run_git(["worktree", "remove", "--force", os.path.abspath(dest)], cwd=repo)


def worktree_reset(repo: Path, dest: Path, branch: str, start: str) -> None:
    """A linked worktree at ``dest`` on ``branch``, the branch (re)set to ``start``."""
    run_git(["worktree", "add", "--force", "-B", branch, os.path.abspath(dest), start], cwd=repo)


def worktree_forget(repo: Path, dest: Path) -> None:
    """Drop ``repo``'s registration of a worktree at ``dest`` whose folder is gone, even a
    locked one: a ``git worktree add`` killed half way leaves its registration locked
    ("initializing"), and ``prune`` keeps locked registrations."""
    if not _may_have_worktrees(repo):
        return
    run_git(["worktree", "unlock", os.path.abspath(dest)], cwd=repo, check=False)
    worktree_prune(repo)


def _may_have_worktrees(repo: Path) -> bool:
    """False only when ``repo`` (a bare repository or the top of a main checkout) has no
    folder for worktree registrations, so there is none to forget."""
    dot_git = repo / ".git"
    if dot_git.is_dir():
        return (dot_git / "worktrees").exists()
    if dot_git.exists():  # itself a linked worktree or a submodule: git knows
        return True
    return (repo / "worktrees").exists()


def worktree_prune(repo: Path) -> None:
    """Forget worktrees whose folders are gone."""
    run_git(["worktree", "prune"], cwd=repo)


def remove_lock_files(git_dir: Path) -> None:
    """Delete the ``*.lock`` files under ``git_dir``. Git makes one beside each file it is
    about to replace (a ref, ``packed-refs``, an index, the config) and renames it into place;
    a git killed in between leaves it behind, and every later change of that file fails with
    "File exists". Only for a repository the caller knows no git is working in. One that
    cannot be removed stays, and git's own error names it when it is in the way."""
    objects = os.path.join(git_dir, "objects")
    for folder, folders, names in os.walk(git_dir):
        if folder == objects:  # loose objects: thousands of files and never a lock among them
            folders[:] = [f for f in folders if f in ("info", "pack")]
        for name in names:
            if name.endswith(".lock"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))


# --- 8. remotes: listing, cloning, fetching, pushing --------------------------------------


@valueclass(frozen=True)
class TransferBound:
    """What one exchange with a remote may take: ``seconds`` in all (git and every program
    it started are stopped then), and at most ``max_bytes`` in any file it writes
    (``RLIMIT_FSIZE``: the kernel refuses the write past it). A clone or fetch keeps what it
    receives as one pack (``fetch.unpackLimit=1``), so the bound holds the pack as a whole,
    not each of thousands of loose objects; a listing's answer goes to a file as well."""

    seconds: float
    max_bytes: int


class TransferBoundExceeded(TetherError):
    """git was stopped by a ``TransferBound``: ``kind`` is ``"time"`` or ``"bytes"``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# Every fetch keeps what it receives as one pack, whatever its number of objects (below
# git's default of 100 it would write each as a loose file), and runs no hook.
_TRANSFER_CONFIG = (
    "-c",
    "fetch.unpackLimit=1",
    "-c",
    "transfer.unpackLimit=1",
    "-c",
    "core.hooksPath=/dev/null",
)


def _run_bounded(args: Sequence[str], cwd: Path | None, bound: TransferBound) -> str:
    """``git ARGS`` within ``bound``: its stdout as text. TransferBoundExceeded when the
    bound stopped it, TetherError with git's error line when it failed otherwise."""
    exit_code, stdout, stderr = _bounded(args, cwd, bound)
    if exit_code != 0:
        raise TetherError(f"git {args[0]} failed: {first_error_line(stderr)}")
    return stdout.decode("utf-8", "replace")


def _bounded(args: Sequence[str], cwd: Path | None, bound: TransferBound) -> tuple[int, bytes, str]:
    """``git ARGS`` within ``bound``: its exit code, stdout and stderr. TransferBoundExceeded
    when the bound stopped it, TetherError when git could not be started."""
    import tempfile

    argv = ["git", *_TRANSFER_CONFIG, *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        ran = process.run(
            argv,
            timeout=bound.seconds,
            cwd=cwd,
            env=git_env(extra={"LC_ALL": "C"}),  # git's error lines are read by the callers
            output=out,
            errors=err,
            max_file_bytes=bound.max_bytes,
            at_once=True,
        )
        out.seek(0)
        stdout = out.read()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if ran.not_found:
        raise TetherError(GIT_MISSING)
    if not ran.started:
        raise TetherError(f"git {args[0]}: {ran.end_words()}")
    if ran.timed_out:
        raise TransferBoundExceeded("time", f"git {args[0]} took longer than {bound.seconds:g} s")
    if ran.exit_code != 0 and ("File too large" in stderr or len(stdout) >= bound.max_bytes):
        raise TransferBoundExceeded(
            "bytes", f"git {args[0]} received more than {bound.max_bytes:,} bytes"
        )
    return ran.code(), stdout, stderr


def list_tags(location: str, bound: TransferBound | None = None) -> list[str]:
    """Tag names of the repository at ``location`` (a path or URL), without cloning it;
    within ``bound`` when given (a remote's answer is not tether's to end)."""
    args = ["ls-remote", "--tags", "--refs", "--", location]
    listing = _run_bounded(args, None, bound) if bound else run_git(args).stdout
    tags: list[str] = []
    for line in listing.splitlines():
        _, _, ref = line.partition("\t")
        if ref.startswith("refs/tags/"):
            tags.append(ref.removeprefix("refs/tags/"))
    return tags


def remote_commits(location: str, bound: TransferBound | None = None) -> dict[str, str]:
    """Ref name (``refs/tags/v1.0.0``, ``refs/heads/main``, ``HEAD``) -> the commit it names
    (an annotated tag peeled), for the repository at ``location``, without cloning it;
    within ``bound`` when given."""
    args = ["ls-remote", "--", location]
    listing = _run_bounded(args, None, bound) if bound else run_git(args).stdout
    commits: dict[str, str] = {}
    for line in listing.splitlines():
        sha, _, ref = line.partition("\t")
        if ref.endswith("^{}"):
            commits[ref.removesuffix("^{}")] = sha  # the peeled commit wins
        else:
            commits.setdefault(ref, sha)
    return commits


def remote_head_branch(url: str, bound: TransferBound) -> str | None:
    """The branch ``url``'s HEAD names (its default branch), None when it names none;
    within ``bound``."""
    listing = _run_bounded(["ls-remote", "--symref", "--", url, "HEAD"], None, bound)
    for line in listing.splitlines():
        ref, _, target = line.partition("\t")
        if ref.startswith("ref: refs/heads/") and target == "HEAD":
            return ref.removeprefix("ref: refs/heads/")
    return None


def remote_branch_commit(url: str, branch: str, bound: TransferBound) -> str | None:
    """The commit ``branch`` points at on ``url``, None when it has no such branch; within
    ``bound``. An unreachable remote raises TetherError with git's error line."""
    listing = _run_bounded(["ls-remote", "--", url, f"refs/heads/{branch}"], None, bound)
    for line in listing.splitlines():
        commit, _, ref = line.partition("\t")
        if ref == f"refs/heads/{branch}":
            return commit
    return None


def remote_url(repo: Path, name: str = "origin") -> str | None:
    """The URL of ``repo``'s remote ``name``, None when it has none. Reads only."""
    result = run_git(["remote", "get-url", "--", name], cwd=repo, check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def has_remote(repo: Path, name: str) -> bool:
    result = run_git(["remote"], cwd=repo, check=False)
    return result.returncode == 0 and name in result.stdout.split()


def remote_default_branch(repo: Path, remote: str = "origin") -> str | None:
    """The branch pull requests on ``remote`` go into: the remote's HEAD as last fetched,
    else ``main`` or ``master`` when the remote or this checkout has it."""
    head = run_git(
        ["symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD"], cwd=repo, check=False
    )
    prefix = f"refs/remotes/{remote}/"
    if head.returncode == 0 and head.stdout.strip().startswith(prefix):
        return head.stdout.strip().removeprefix(prefix)
    for name in ("main", "master"):
        if has_ref(repo, f"{prefix}{name}") or has_ref(repo, f"refs/heads/{name}"):
            return name
    return None


def clone_checkout(
    location: str, dest: Path, commit: str, bound: TransferBound | None = None
) -> None:
    """A working copy of the repository at ``location`` with ``commit`` checked out; the
    clone within ``bound`` when given (the checkout reads only what it received)."""
    args = ["clone", "--quiet", "--no-checkout", "--", location, str(dest)]
    if bound is None:
        run_git(args)
    else:
        _run_bounded(args, None, bound)
    run_git(["checkout", "--quiet", "--detach", commit, "--"], cwd=dest)


def clone_bare(url: str, dest: Path, bound: TransferBound | None = None) -> None:
    """A bare clone of ``url`` into ``dest`` (which must not exist), within ``bound``."""
    args = ["clone", "--bare", "--quiet", "--", url, os.path.abspath(dest)]
    if bound is None:
        run_git(args)
    else:
        _run_bounded(args, None, bound)


def init_bare(dest: Path) -> None:
    """An empty bare repository at ``dest``, made from no template: no hook of a person's
    ``init.templateDir`` is copied in (tether's clones hold none; see
    ``foreign_clone_setting``)."""
    run_git(["init", "--bare", "--quiet", "--template=", os.path.abspath(dest)])


def fetch_tags(
    repo: Path, url: str, tags: Sequence[str], bound: TransferBound | None = None
) -> None:
    """Fetch ``tags`` from ``url`` into the bare ``repo``, replacing moved ones; within
    ``bound`` when given."""
    refspecs = [f"+refs/tags/{tag}:refs/tags/{tag}" for tag in tags]
    args = ["fetch", "--quiet", "--no-tags", "--", url, *refspecs]
    if bound is None:
        run_git(args, cwd=repo)
    else:
        _run_bounded(args, repo, bound)


# The settings ``git clone --bare`` writes into a clone's config (on every platform and
# object format): a cached clone holding any other setting was changed by something else.
_CLONE_SETTINGS = frozenset(
    {
        "core.repositoryformatversion",
        "core.filemode",
        "core.bare",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.symlinks",
        "core.logallrefupdates",
        "remote.origin.url",
        "extensions.objectformat",
    }
)
# A clone's config is a few hundred bytes; one past this is not read (nor handed to git).
_CLONE_CONFIG_BYTES = 64 << 10
# Files that make git read another repository's config (a linked worktree's pointers).
_REDIRECTS = ("commondir", "gitdir", "config.worktree")


def checked_own_clone(place: Path, what: str, again: str) -> Path:
    """``place``, where tether keeps its ``what`` (a bare clone tether made), once git may
    work in it: TetherError when a link or a file stands there, or when something other
    than tether changed the clone so that git could run a program or read another
    repository (``foreign_clone_setting``). Checked before any git command runs in it;
    ``again`` names what removing it leads to."""
    if place.is_symlink() or (os.path.lexists(place) and not place.is_dir()):
        kind = "a symbolic link" if place.is_symlink() else "not a folder"
        raise TetherError(
            f"{place}: is {kind}; tether keeps its {what} only in a plain folder "
            f"(remove it to {again})"
        )
    problem = foreign_clone_setting(place) if place.is_dir() else None
    if problem is not None:
        raise TetherError(
            f"refusing tether's {what}: {problem}; no git command was run in it "
            f"(remove {place} to {again})"
        )
    return place


def foreign_clone_setting(repo: Path) -> str | None:
    """Why the bare clone ``repo`` (one tether made) may not be handed to git, or None.

    A setting git reads from a repository's config can run any program (``core.hooksPath``
    and the hooks a fetch runs, ``core.sshCommand``, ``credential.helper``,
    ``core.fsmonitor``, a ``filter``, an ``include.path`` naming another file), so a clone
    whose config holds anything ``git clone --bare`` did not write, a hook, or a pointer to
    another repository's config is refused before any git command runs in it. The config
    is read as bytes (never through a link, never a FIFO) and listed by ``git config
    --file -``, which reads nothing else and runs nothing."""
    config = repo / "config"
    try:
        info = os.lstat(config)
    except FileNotFoundError:
        return None  # not a repository: git is not asked to work in it
    except OSError as error:
        return f"{config}: cannot read ({error.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return f"{config}: is not a regular file"
    try:
        with open(config, "rb", opener=_no_follow_opener) as handle:
            data = handle.read(_CLONE_CONFIG_BYTES + 1)
    except OSError as error:
        return f"{config}: cannot read ({error.strerror})"
    if len(data) > _CLONE_CONFIG_BYTES:  # git would read past what was checked
        return f"{config}: is larger than {_CLONE_CONFIG_BYTES:,} bytes, which no clone's is"
    listed = _git_with_bytes(["config", "--file", "-", "--null", "--list"], Path("/"), data)
    if listed.returncode != 0:
        return f"{config}: does not parse as git's config"
    for entry in listed.stdout.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "replace")
        if key and key not in _CLONE_SETTINGS:
            return f"{config}: holds the setting {key!r}, which tether's clone never has"
    for name in _REDIRECTS:
        if os.path.lexists(repo / name):
            return f"{repo / name}: would make git read another repository's config"
    hooks = repo / "hooks"
    if os.path.lexists(hooks):
        if not hooks.is_dir() or hooks.is_symlink():
            return f"{hooks}: is not a plain folder"
        for hook in sorted(os.listdir(hooks)):
            if not hook.endswith(".sample"):
                return f"{hooks / hook}: is a hook, which tether's clone never has"
    return None


def _no_follow_opener(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


def fetch_heads(mirror: Path, url: str, bound: TransferBound) -> None:
    """Every branch of ``url`` into ``refs/remotes/origin/`` of the bare ``mirror``, within
    ``bound``. The mirror's own branches (tether's campaign branches, checked out in
    worktrees) stay apart. A fetch the bound stopped leaves nothing it received: git's
    partial pack is removed (the refs move only once a fetch is complete)."""
    args = ["fetch", "--quiet", "--prune", "--no-tags", "--", url]
    try:
        _run_bounded([*args, "+refs/heads/*:refs/remotes/origin/*"], mirror, bound)
    except TransferBoundExceeded:
        remove_partial_fetch(mirror)
        raise


def remove_partial_fetch(git_dir: Path) -> None:
    """Delete what a fetch stopped half way left in ``git_dir``: its temporary pack, index
    and object files (``tmp_*`` in ``objects/pack/`` and the object folders, and the
    ``*.temp`` files git's plain HTTP transport writes there) and its quarantine folders
    (``objects/incoming-*``). Only for a repository no other git process works in (a
    campaign mirror under its lock)."""
    import shutil

    objects = git_dir / "objects"
    if not objects.is_dir() or objects.is_symlink():
        return
    for name in os.listdir(objects):
        folder = objects / name
        if name.startswith("incoming-"):
            shutil.rmtree(folder, ignore_errors=True)
        elif (name == "pack" or len(name) == 2) and folder.is_dir() and not folder.is_symlink():
            for entry in os.listdir(folder):
                if entry.startswith("tmp_") or entry.endswith(".temp"):
                    with contextlib.suppress(OSError):
                        os.unlink(folder / entry)


def push_branch(repo: Path, name: str, remote: str = "origin") -> str | None:
    """Push branch ``name`` to ``remote`` and track it there; git's error line when the
    push failed, None when it went through."""
    result = run_git(
        ["push", "--set-upstream", remote, f"refs/heads/{name}:refs/heads/{name}"],
        cwd=repo,
        check=False,
    )
    return None if result.returncode == 0 else first_error_line(result.stderr)


def push_commit(
    repo: Path, url: str, commit: str, branch: str, expected: str, bound: TransferBound
) -> str | None:
    """Set ``branch`` on ``url`` to ``commit``, only while it is still at ``expected`` (""
    for absent), so a branch someone else pushed to is never overwritten. An empty
    ``commit`` deletes the branch. The error line when the push failed, None when it went
    through; TransferBoundExceeded when ``bound`` stopped it (no hook of ``repo`` runs)."""
    args = [
        "push",
        "--quiet",
        f"--force-with-lease=refs/heads/{branch}:{expected}",
        "--",
        url,
        f"{commit}:refs/heads/{branch}",
    ]
    exit_code, _, stderr = _bounded(args, repo, bound)
    return None if exit_code == 0 else push_error_line(stderr)


def push_error_line(stderr: str) -> str:
    """One line for a failed push: why the remote refused (its ``[rejected]`` reason and the
    first thing its hook said), else git's own error line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [
        line.removeprefix("remote:").strip().removeprefix("error:").strip()
        for line in lines
        if line.startswith("remote:") and line.removeprefix("remote:").strip()
    ]
    refused = next((line for line in lines if "rejected]" in line), None)
    if refused is None:
        return first_error_line(stderr)
    why = refused.rsplit("(", 1)[-1].rstrip(")") if refused.endswith(")") else "rejected"
    return f"push rejected ({why})" + (f": {said[0]}" if said else "")


# --- 9. bundles: commits carried as a file ------------------------------------------------


def bundle_create(repo: Path, ref: str) -> bytes:
    """A bundle of ``ref`` with its whole history, as bytes (``git bundle create -``)."""
    result = _git_with_bytes(["bundle", "create", "-", ref], repo)
    if result.returncode != 0:
        error = result.stderr.decode("utf-8", "replace")
        raise TetherError(f"git bundle failed: {first_error_line(error)}")
    return result.stdout


def bundle_heads(repo: Path, bundle: Path) -> dict[str, str]:
    """The refs a bundle file carries and their commits; TetherError when it is no bundle."""
    result = run_git(["bundle", "list-heads", os.path.abspath(bundle)], cwd=repo)
    heads = {}
    for line in result.stdout.splitlines():
        commit, _, ref = line.partition(" ")
        heads[ref] = commit
    return heads


def fetch_bundle(repo: Path, bundle: Path, ref: str) -> None:
    """The objects of ``ref`` in the bundle file into ``repo``, no ref changed; git checks
    the bundle's prerequisites, its pack and that everything ``ref`` needs arrived."""
    args = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"]
    run_git([*args, "--", os.path.abspath(bundle), ref], cwd=repo)


# --- 10. merging three texts --------------------------------------------------------------


def merge_file(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    labels: tuple[str, str, str],
    favor: str | None = None,
) -> tuple[bytes, int]:
    """``git merge-file --diff3 -p`` of three texts: (merged bytes, conflict hunks). The
    same bytes as ``engine.textmerge.merge_lines`` (the differential tests hold them to
    it); used for inputs past that engine's bounds. The sides go through files in a private
    temporary folder, as git merge-file reads only files.

    ``favor`` (``ours`` or ``theirs``) adds git's ``--ours``/``--theirs``: the clashing
    hunks take that side's lines; git then counts nothing, so the count of the hunks it
    settled comes from the same merge without it (a second run of git)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tether-merge-") as folder:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(folder, name)
            with open(path, "wb") as handle:
                handle.write(data)
            names.append(path)
        merged, conflicts = _merge_files(names, labels, None)
        if favor is not None and conflicts:
            merged, _ = _merge_files(names, labels, favor)
    return merged, conflicts


def _merge_files(
    names: list[str], labels: tuple[str, str, str], favor: str | None
) -> tuple[bytes, int]:
    argv = ["merge-file", "--diff3", "-p"]
    if favor is not None:
        argv.append(f"--{favor}")
    for label in labels:
        argv += ["-L", label]
    result = _git_with_bytes([*argv, "--", *names])
    if result.returncode < 0 or result.returncode >= 255:
        error = result.stderr.decode(errors="replace").strip().splitlines()
        raise TetherError(f"git merge-file failed: {error[-1] if error else result.returncode}")
    conflicts = result.returncode
    if conflicts >= 127:  # git's exit status stops counting there
        start = b"<<<<<<< " + labels[0].encode() + b"\n"
        conflicts = result.stdout.startswith(start) + result.stdout.count(b"\n" + start)
    return result.stdout, conflicts
