"""A remote git source is held to the bounds of every other network read, and tether's
cached clone of it runs nothing.

Bounds: a clone or fetch that receives more than ``TETHER_LIMIT_DOWNLOAD_BYTES`` is stopped
(a local repository with a 2 MiB blob of random bytes, given as a ``file://`` URL, so that
git really clones it, with the bound set to 256 KiB); a remote that trickles is stopped at
``TETHER_LIMIT_NETWORK_SECONDS``: a real HTTP server on 127.0.0.1 serves a bare repository
over git's plain ("dumb") HTTP protocol and sends its objects, or its list of refs, one byte
every 50 ms, and gives up on its own after a few seconds, so that a client without the bound
fails these tests instead of hanging them. Each ends in one line, and nothing of what was
received is kept.

The cached clone (``<cache>/<source>/.mirror.git``) is data in the project, where anything
can change it: a hook, or a setting of its config that makes git start a program
(``core.hooksPath``, ``core.fsmonitor``, ``core.sshCommand``, ``credential.helper``, a
``filter``, an alias, an ``include.path``), or a pointer to another repository's config.
Each tampered clone is refused before git runs in it; the program each names is a stand-in
script that records its arguments when it runs, and it never does.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import git, make_release, run_tether
from helpers_sources import (
    bare_for_http,
    commit_release,
    init_repo,
    listing,
    serve_bare_repository,
)
from tether.errors import TetherError
from tether.sources import limits, open_source

BIG = 2 << 20  # bytes of random data in the release that is too large


def _release_files(tmp_path: Path, version: str, extra: dict[str, str] | None = None) -> dict:
    folder = make_release(tmp_path / "build", version, {"docs/a.txt": f"hi {version}\n"})
    files = {
        p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()
    }
    return {**files, **(extra or {})}


def _upstream(tmp_path: Path, big_in: str | None = None) -> Path:
    """A repository of releases 1.0.0 and 2.0.0 (manifest and files); ``big_in`` names the
    release that also carries 2 MiB of random bytes (not listed in its manifest)."""
    repo = init_repo(tmp_path / "upstream")
    for version in ("1.0.0", "2.0.0"):
        files = _release_files(tmp_path, version)
        commit_release(repo, files, f"v{version}")
        if version == big_in:
            (repo / "blob.bin").write_bytes(os.urandom(BIG))
            git(repo, "add", "blob.bin")
            git(repo, "commit", "-q", "--amend", "--no-edit")
            git(repo, "tag", "-f", f"v{version}")
    return repo


def _hold_back(repo: Path) -> str:
    """Release 2.0.0 not published yet: no ref reaches its commit (a clone made now holds
    1.0.0 only). Returns the commit, for ``_publish``."""
    commit = git(repo, "rev-parse", "v2.0.0").strip()
    git(repo, "tag", "-d", "v2.0.0")
    git(repo, "reset", "-q", "--hard", "v1.0.0")
    return commit


def _publish(repo: Path, commit: str) -> None:
    git(repo, "tag", "v2.0.0", commit)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repositories most tests start from, built once per module and copied by each
    test (``_copy``): ``plain/upstream`` (``_upstream`` without the large file),
    ``held/upstream`` (the same with 2.0.0 held back, its commit in ``held/commit``) and
    ``served/kit.git`` (a bare clone of the plain one made ready to serve)."""
    top = tmp_path_factory.mktemp("built")
    plain = _upstream(top / "plain")
    held = top / "held" / "upstream"
    shutil.copytree(plain, held, symlinks=True)
    (top / "held" / "commit").write_text(_hold_back(held))
    bare_for_http(plain, top / "served" / "kit.git")
    return top


def _copy(built: Path, name: str, tmp_path: Path) -> Path:
    """This test's copy of ``built/<name>``, at ``tmp_path/<name>``."""
    return shutil.copytree(built / name, tmp_path / name, symlinks=True)


def _held_upstream(built: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the upstream with 2.0.0 held back, and 2.0.0's commit (for ``_publish``)."""
    return _copy(built, "held/upstream", tmp_path), (built / "held" / "commit").read_text()


# --- bounds --------------------------------------------------------------------------------


def test_a_clone_past_the_byte_bound_is_stopped_and_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _upstream(tmp_path, big_in="1.0.0")
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.setenv(limits.DOWNLOAD_BYTES, "256K")
    done = run_tether("init", "--source", f"file://{repo}", "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 1, done.stdout
    assert done.stderr == (
        f"tether: cannot fetch file://{repo}: git clone received more than 262,144 bytes "
        f"({limits.DOWNLOAD_BYTES} sets it)\n"
    )
    assert listing(project) == []  # no clone, no pack, no cache folder: nothing at all


def test_a_fetch_past_the_byte_bound_is_stopped_and_the_partial_clone_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _upstream(tmp_path, big_in="2.0.0")
    cache = tmp_path / "cache"
    held = _hold_back(repo)  # the clone holds 1.0.0 only
    assert open_source(f"file://{repo}", cache).fetch("1.0.0").root.is_dir()
    _publish(repo, held)  # then 2.0.0 is published: it must be fetched
    monkeypatch.setenv(limits.DOWNLOAD_BYTES, "256K")
    with pytest.raises(TetherError) as caught:
        open_source(f"file://{repo}", cache).fetch("2.0.0")
    assert str(caught.value) == (
        f"cannot fetch file://{repo}: git fetch received more than 262,144 bytes "
        f"({limits.DOWNLOAD_BYTES} sets it)"
    )
    assert [p for p in listing(cache) if "mirror" in p] == []  # the half-fetched clone too
    assert not [p for p in listing(cache) if p.endswith("/2.0.0")]
    monkeypatch.delenv(limits.DOWNLOAD_BYTES)
    again = open_source(f"file://{repo}", cache).fetch("2.0.0")  # cloned again, whole
    assert (again.root / "blob.bin").stat().st_size == BIG


@pytest.mark.parametrize(
    ("slow", "words"),
    [
        ("/objects/", "cannot fetch {url}: git clone took longer than 1 s"),
        ("/info/refs", "cannot read the tags of {url}: git ls-remote took longer than 1 s"),
    ],
)
def test_a_trickling_remote_is_stopped_at_the_time_bound(
    tmp_path: Path, built: Path, monkeypatch: pytest.MonkeyPatch, slow: str, words: str
) -> None:
    bare = _copy(built, "served/kit.git", tmp_path)
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    with serve_bare_repository(bare, slow) as url:
        done = run_tether("init", "--source", url, "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 1, done.stdout
    assert done.stderr == (f"tether: {words.format(url=url)} ({limits.NETWORK_SECONDS} sets it)\n")
    # Only the bound says "took longer": without it git would fail when the server gives up.
    assert listing(project) == []


def test_a_remote_within_the_bounds_is_cloned_over_http(
    tmp_path: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = _copy(built, "served/kit.git", tmp_path)
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.setenv(limits.NETWORK_SECONDS, "30")
    with serve_bare_repository(bare) as url:
        done = run_tether("init", "--source", url, "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert (project / "docs/a.txt").read_text() == "hi 1.0.0\n"


# --- a tampered cached clone runs nothing --------------------------------------------------


def _stand_in(tmp_path: Path) -> tuple[Path, Path]:
    """A program that records each run (its arguments) in a file, and that file."""
    record = tmp_path / "ran.txt"
    program = tmp_path / "stand-in"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {shlex.quote(str(record))}\ncat >/dev/null\n')
    program.chmod(0o755)
    return program, record


def _hooks_folder(tmp_path: Path, program: Path) -> Path:
    hooks = tmp_path / "their-hooks"
    hooks.mkdir()
    for name in ("reference-transaction", "post-checkout", "pre-auto-gc"):
        (hooks / name).symlink_to(program)
    return hooks


def _in_config(key: str, value: Callable[[Path, Path], str]) -> Callable[[Path, Path, Path], None]:
    def tamper(mirror: Path, program: Path, tmp_path: Path) -> None:
        git(mirror, "config", "--file", str(mirror / "config"), key, value(program, tmp_path))

    return tamper


def _own_hook(mirror: Path, program: Path, tmp_path: Path) -> None:
    hook = mirror / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.symlink_to(program)


def _included(mirror: Path, program: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.config"
    hooks = str(_hooks_folder(tmp_path, program))
    git(tmp_path, "config", "--file", str(other), "core.hooksPath", hooks)
    git(mirror, "config", "--file", str(mirror / "config"), "include.path", str(other))


def _common_dir(mirror: Path, program: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    git(other, "config", "core.hooksPath", str(_hooks_folder(tmp_path, program)))
    (mirror / "commondir").write_text(f"{other}\n")


TAMPERINGS = {
    "core.hooksPath": _in_config("core.hooksPath", lambda p, t: str(_hooks_folder(t, p))),
    "a hook of its own": _own_hook,
    "core.fsmonitor": _in_config("core.fsmonitor", lambda p, t: str(p)),
    "core.sshCommand": _in_config("core.sshCommand", lambda p, t: str(p)),
    "credential.helper": _in_config("credential.helper", lambda p, t: f"!{p}"),
    "a filter": _in_config("filter.x.smudge", lambda p, t: str(p)),
    "an alias": _in_config("alias.fetch", lambda p, t: f"!{p}"),
    "include.path": _included,
    "commondir": _common_dir,
}


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_a_tampered_clone_is_refused_and_runs_nothing(
    tmp_path: Path, built: Path, tampering: str
) -> None:
    """A clone holding 1.0.0 is changed; fetching 2.0.0 (listing the tags, fetching the
    tag into the clone, exporting it) must not run the program the change names."""
    repo, held = _held_upstream(built, tmp_path)
    cache = tmp_path / "cache"
    assert open_source(f"file://{repo}", cache).fetch("1.0.0").root.is_dir()
    _publish(repo, held)
    (mirror,) = [p for p in cache.rglob(".mirror.git") if p.is_dir()]
    program, record = _stand_in(tmp_path)
    TAMPERINGS[tampering](mirror, program, tmp_path)
    with pytest.raises(TetherError) as caught:
        open_source(f"file://{repo}", cache).fetch("2.0.0")
    message = str(caught.value)
    assert message.startswith(f"refusing tether's clone of file://{repo}: {mirror}/"), message
    assert message.endswith(f"; no git command was run in it (remove {mirror} to clone again)"), (
        message
    )
    assert "\n" not in message
    assert not record.exists(), record.read_text()
    assert not [p for p in listing(cache) if p.endswith("/2.0.0")]


def test_update_through_a_clone_given_a_hook_runs_nothing_and_writes_nothing(
    tmp_path: Path, built: Path
) -> None:
    """Through the command: `update` to a release the clone must fetch, after something
    set a hooks folder in the clone's config. One line, exit 1, the project as it was."""
    repo, held = _held_upstream(built, tmp_path)
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--source", f"file://{repo}", "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    _publish(repo, held)
    (mirror,) = [p for p in project.rglob(".mirror.git") if p.is_dir()]
    program, record = _stand_in(tmp_path)
    TAMPERINGS["core.hooksPath"](mirror, program, tmp_path)
    before = {p: (project / p).read_bytes() for p in listing(project) if (project / p).is_file()}
    refused = run_tether("update", "--yes", "--to", "2.0.0", "-C", str(project))
    assert refused.returncode == 1, refused.stdout
    assert refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("tether: refusing tether's clone of file://")
    assert "core.hookspath" in refused.stderr
    assert not record.exists(), record.read_text()
    after = {p: (project / p).read_bytes() for p in listing(project) if (project / p).is_file()}
    assert after == before


def test_a_clone_tether_made_is_used_again(tmp_path: Path, built: Path) -> None:
    """What ``git clone --bare`` writes passes: the second release is fetched into it."""
    repo, held = _held_upstream(built, tmp_path)
    cache = tmp_path / "cache"
    open_source(f"file://{repo}", cache).fetch("1.0.0")
    (mirror,) = [p for p in cache.rglob(".mirror.git") if p.is_dir()]
    _publish(repo, held)
    made = mirror.stat().st_ino
    assert (open_source(f"file://{repo}", cache).fetch("2.0.0").root / "docs/a.txt").is_file()
    assert mirror.stat().st_ino == made  # fetched into, not cloned again
    assert stat.S_ISDIR(os.lstat(mirror).st_mode)


def test_a_file_where_the_clone_belongs_is_refused_in_one_line(tmp_path: Path, built: Path) -> None:
    repo = _copy(built, "plain/upstream", tmp_path)
    cache = tmp_path / "cache"
    open_source(f"file://{repo}", cache).fetch("1.0.0")
    (mirror,) = [p for p in cache.rglob(".mirror.git") if p.is_dir()]
    shutil.rmtree(mirror)
    mirror.write_text("not a clone\n")
    with pytest.raises(TetherError) as caught:
        open_source(f"file://{repo}", cache).fetch("2.0.0")
    assert str(caught.value) == (
        f"{mirror}: is not a folder; tether keeps its clone of file://{repo} only in a plain "
        "folder (remove it to clone again)"
    )
    assert mirror.read_text() == "not a clone\n"


def test_a_config_too_large_to_check_is_refused(tmp_path: Path, built: Path) -> None:
    """Padding the config past what is read must not hide a setting after the padding."""
    repo, held = _held_upstream(built, tmp_path)
    cache = tmp_path / "cache"
    open_source(f"file://{repo}", cache).fetch("1.0.0")
    _publish(repo, held)
    (mirror,) = [p for p in cache.rglob(".mirror.git") if p.is_dir()]
    program, record = _stand_in(tmp_path)
    hooks = _hooks_folder(tmp_path, program)
    with (mirror / "config").open("a") as config:
        config.write(("# padding\n" * 200_000) + f"[core]\n\thooksPath = {hooks}\n")
    with pytest.raises(TetherError, match="config: is larger than 65,536 bytes"):
        open_source(f"file://{repo}", cache).fetch("2.0.0")
    assert not record.exists()


def test_a_remote_template_is_cloned_within_the_same_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project cruft made from a template given as a ``file://`` URL (so git clones it):
    the template's new commit carries 2 MiB of random bytes, past a 256 KiB bound."""
    import json

    cruft = pytest.importorskip("cruft", reason="the cruft extra is not installed")
    monkeypatch.setenv("TETHER_RENDER_CACHE", str(tmp_path / "render-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    template = init_repo(tmp_path / "tpl")
    slug = "{{cookiecutter.project_slug}}"
    commit_release(
        template,
        {"cookiecutter.json": '{"project_slug": "demo"}', f"{slug}/README.md": "one\n"},
        "v1",
    )
    first = git(template, "rev-parse", "HEAD").strip()
    (template / slug / "blob.bin").write_bytes(os.urandom(BIG))
    git(template, "add", "-A")
    git(template, "commit", "-qm", "v2")
    (tmp_path / "out").mkdir()
    project = cruft.create(str(template), tmp_path / "out", checkout=first, no_input=True)
    record = json.loads((project / ".cruft.json").read_text())
    record["template"], record["checkout"] = f"file://{template}", None
    (project / ".cruft.json").write_text(json.dumps(record, indent=2) + "\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "created")
    before = {p: (project / p).read_bytes() for p in listing(project) if (project / p).is_file()}
    monkeypatch.setenv(limits.DOWNLOAD_BYTES, "256K")
    done = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert done.returncode == 1, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.endswith(
        f"git clone received more than 262,144 bytes ({limits.DOWNLOAD_BYTES} sets it)\n"
    ), done.stderr
    after = {p: (project / p).read_bytes() for p in listing(project) if (project / p).is_file()}
    assert {p: b for p, b in after.items() if not p.startswith(".tether/")} == {
        p: b for p, b in before.items() if not p.startswith(".tether/")
    }
