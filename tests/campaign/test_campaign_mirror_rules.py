"""A campaign's mirrors are held to the rules of tether's clone of a remote release source.

Bounds: each fetch into a mirror, and the listing of a remote's default branch, stop at
``TETHER_LIMIT_NETWORK_SECONDS``. The remote is a real HTTP server on 127.0.0.1 serving a
bare repository over git's plain ("dumb") HTTP protocol, which sends its objects (or its
list of refs) one byte every 50 ms and gives up on its own after a few seconds, so that a
fetch without the bound fails these tests with another message instead of hanging them.

Checks: a mirror lies in the campaign folder, where anything can change it, and git reads a
repository's config and hooks. A mirror holding a setting, a hook or a link that tether's
mirror never has is refused before git runs in it, for the fetch, the update and the push.
The program the setting or hook names is a stand-in script that records its arguments when
it runs, and it never does.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import git, make_release, run_tether
from helpers_sources import bare_for_http, listing, serve_bare_repository
from tether import git as tether_git
from tether.campaign.store import CampaignFolder
from tether.errors import Exit
from tether.sources import limits


@pytest.fixture
def shelf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a\n"})
    make_release(shelf, "1.1.0", {"a.txt": "a2\n"})
    return shelf


def _installed(tmp_path: Path, shelf: Path) -> Path:
    """A repository with release 1.0.0 installed and committed."""
    root = tmp_path / "seeds" / "p1"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    done = run_tether("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(root))
    assert done.returncode == 0, done.stderr
    git(root, "add", "-A")
    git(root, "commit", "-qm", "install 1.0.0")
    return root


def _campaign(tmp_path: Path, entry: dict[str, str], *args: str) -> tuple[int, dict]:
    """``campaign start c1`` over one registered repository, then ``args`` (``run``…)."""
    registry = tmp_path / "registry.json"
    document = {"version": 2, "projects": {"p1": {"name": "p1", **entry}}}
    registry.write_text(json.dumps(document))
    where = ["--dir", str(tmp_path / "campaigns")]
    started = run_tether(
        "campaign", "start", "c1", "--upstream", "acme-kit", "--to", "1.1.0",
        "--registry", str(registry), *where, "--json",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    done = run_tether("campaign", *args, "c1", *where, "--json")
    return done.returncode, json.loads(done.stdout)


def _mirror(tmp_path: Path, url: str) -> Path:
    return CampaignFolder(tmp_path / "campaigns" / "c1").mirror_path(url)


# --- bounds ----------------------------------------------------------------------------------


def test_a_trickling_remote_is_stopped_at_the_time_bound_and_nothing_of_it_is_kept(
    tmp_path: Path, shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = bare_for_http(_installed(tmp_path, shelf), tmp_path / "served" / "p1.git")
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    with serve_bare_repository(bare, "/objects/") as url:
        code, ran = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.ERROR
    [record] = ran["repositories"]
    assert record["status"] == "failed"
    # Only the bound says "took longer": without it git fails when the server gives up.
    assert record["reason"] == (
        f"cannot fetch {url}: git fetch took longer than 1 s ({limits.NETWORK_SECONDS} sets it)"
    )
    objects = _mirror(tmp_path, url) / "objects"
    assert [p for p in listing(objects) if (objects / p).is_file()] == []


def test_a_remote_within_the_bounds_is_fetched_and_updated_over_http(
    tmp_path: Path, shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = bare_for_http(_installed(tmp_path, shelf), tmp_path / "served" / "p1.git")
    monkeypatch.setenv(limits.NETWORK_SECONDS, "30")
    with serve_bare_repository(bare) as url:
        code, ran = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.OK, ran
    [record] = ran["repositories"]
    assert record["status"] == "updated", record["reason"]
    assert git(_mirror(tmp_path, url), "show", f"{record['commit']}:a.txt") == "a2\n"


def test_the_listing_of_a_remotes_default_branch_is_bounded(tmp_path: Path, shelf: Path) -> None:
    bare = bare_for_http(_installed(tmp_path, shelf), tmp_path / "served" / "p1.git")
    bound = tether_git.TransferBound(1.0, 1 << 20)
    with (
        serve_bare_repository(bare, "/info/refs") as url,
        pytest.raises(tether_git.TransferBoundExceeded, match="git ls-remote took longer"),
    ):
        tether_git.remote_head_branch(url, bound)


# --- a changed mirror runs nothing ---------------------------------------------------------


def _stand_in(tmp_path: Path) -> tuple[Path, Path]:
    """A program that records each run (its arguments) in a file, and that file."""
    record = tmp_path / "ran.txt"
    program = tmp_path / "stand-in"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {shlex.quote(str(record))}\ncat >/dev/null\n')
    program.chmod(0o755)
    return program, record


_HOOKS = ("reference-transaction", "pre-push", "post-checkout", "pre-commit", "pre-auto-gc")


def _hooks_path(mirror: Path, program: Path) -> None:
    hooks = mirror.parent / "their-hooks"
    hooks.mkdir()
    for name in _HOOKS:
        (hooks / name).symlink_to(program)
    git(mirror, "config", "--file", str(mirror / "config"), "core.hooksPath", str(hooks))


def _own_hooks(mirror: Path, program: Path) -> None:
    (mirror / "hooks").mkdir(exist_ok=True)
    for name in _HOOKS:
        (mirror / "hooks" / name).symlink_to(program)


def _fsmonitor(mirror: Path, program: Path) -> None:
    git(mirror, "config", "--file", str(mirror / "config"), "core.fsmonitor", str(program))


TAMPERINGS: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "hooks-path": (_hooks_path, "holds the setting 'core.hookspath'"),
    "own-hook": (_own_hooks, "is a hook, which tether's clone never has"),
    "fsmonitor": (_fsmonitor, "holds the setting 'core.fsmonitor'"),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_a_changed_mirror_is_refused_before_the_fetch_and_runs_nothing(
    tmp_path: Path, shelf: Path, tampering: str
) -> None:
    """The mirror is there before the campaign's first fetch (made as tether makes one,
    then changed): the fetch, and everything after it, would run git in it."""
    url = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git").as_uri()
    program, ran = _stand_in(tmp_path)
    mirror = _mirror(tmp_path, url)
    mirror.parent.mkdir(parents=True)
    tether_git.init_bare(mirror)
    tamper, words = TAMPERINGS[tampering]
    tamper(mirror, program)
    code, document = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.ERROR
    [record] = document["repositories"]
    assert record["status"] == "failed"
    assert record["reason"].startswith(f"cannot fetch {url}: refusing tether's mirror of {url}: ")
    assert words in record["reason"] and "no git command was run in it" in record["reason"]
    assert not ran.exists(), ran.read_text()
    assert tether_git.commit_of(mirror, "refs/remotes/origin/main") is None  # nothing fetched


def test_a_mirror_given_a_hook_after_the_run_is_refused_by_push(
    tmp_path: Path, shelf: Path
) -> None:
    """``campaign push`` pushes from the mirror, and a push runs the ``pre-push`` hook."""
    remote = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git")
    url = remote.as_uri()
    code, document = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.OK, document
    program, ran = _stand_in(tmp_path)
    mirror = _mirror(tmp_path, url)
    _own_hooks(mirror, program)
    branches = git(remote, "for-each-ref", "refs/heads/")
    done = run_tether("campaign", "push", "c1", "--dir", str(tmp_path / "campaigns"), "--json")
    [record] = json.loads(done.stdout)["repositories"]
    assert record["status"] == "failed"
    assert record["reason"].startswith(f"cannot push: refusing tether's mirror of {url}: ")
    assert ": is a hook, which tether's clone never has" in record["reason"]
    assert not ran.exists(), ran.read_text()
    assert git(remote, "for-each-ref", "refs/heads/") == branches  # nothing pushed


def test_a_link_for_the_mirror_is_refused_and_never_fetched_into(
    tmp_path: Path, shelf: Path
) -> None:
    url = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git").as_uri()
    elsewhere = tmp_path / "elsewhere.git"
    tether_git.init_bare(elsewhere)
    before = listing(elsewhere)
    mirror = _mirror(tmp_path, url)
    mirror.parent.mkdir(parents=True)
    mirror.symlink_to(elsewhere)
    code, document = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.ERROR
    [record] = document["repositories"]
    assert record["reason"] == (
        f"cannot fetch {url}: {mirror}: is a symbolic link; tether keeps its mirror of "
        f"{url} only in a plain folder (remove it to mirror the repository again)"
    )
    assert listing(elsewhere) == before


# --- pushing is bounded too --------------------------------------------------------------

SSH_STAND_IN = """#!/bin/sh
# The remote's ssh: records its arguments, then runs git's own program for the request on
# the local bare repository; a push waits GIVE_UP seconds first when STALL_PUSH is set.
echo "$*" >> "$SSH_LOG"
case "$2" in
  git-upload-pack*) exec git-upload-pack "$REMOTE_BARE" ;;
  git-receive-pack*)
    if [ -n "$STALL_PUSH" ]; then sleep {give_up}; exit 1; fi
    exec git-receive-pack "$REMOTE_BARE" ;;
esac
exit 1
"""


def test_a_push_to_a_remote_that_never_answers_is_stopped_at_the_time_bound(
    tmp_path: Path, shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remote is reached over ``ssh://`` through a stand-in for ssh (``GIT_SSH_COMMAND``)
    that serves a local bare repository; its push side answers nothing for 10 s."""
    from helpers_sources import GIVE_UP

    remote = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git")
    ssh = tmp_path / "ssh-stand-in"
    ssh.write_text(SSH_STAND_IN.format(give_up=int(GIVE_UP)))
    ssh.chmod(0o755)
    log = tmp_path / "ssh.log"
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    monkeypatch.setenv("SSH_LOG", str(log))
    monkeypatch.setenv("REMOTE_BARE", str(remote))
    url = "ssh://example.invalid/p1.git"
    code, document = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.OK, document
    branches = git(remote, "for-each-ref", "refs/heads/")
    monkeypatch.setenv("STALL_PUSH", "1")
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    done = run_tether("campaign", "push", "c1", "--dir", str(tmp_path / "campaigns"), "--json")
    assert done.returncode == Exit.ERROR, done.stderr
    [record] = json.loads(done.stdout)["repositories"]
    assert record["status"] == "failed"
    # Only the bound says "took longer": without it the push fails when the remote gives up.
    assert record["reason"] == (
        f"cannot push to {url}: git push took longer than 1 s ({limits.NETWORK_SECONDS} sets it)"
    )
    assert "git-receive-pack '/p1.git'" in log.read_text().splitlines()[-1]
    assert git(remote, "for-each-ref", "refs/heads/") == branches


def test_what_a_killed_fetch_left_in_a_mirror_is_swept_by_the_next_unit(
    tmp_path: Path, shelf: Path
) -> None:
    """A fetch killed with its unit (kill -9) leaves its temporary pack and its quarantine
    folder; they stand here as files of git's own names. The next unit that takes the
    mirror's lock removes them, and only them."""
    from tether.campaign.workspace import lock_mirror

    url = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git").as_uri()
    assert _campaign(tmp_path, {"url": url}, "run", "-j", "1")[0] == Exit.OK
    mirror = _mirror(tmp_path, url)
    objects = mirror / "objects"
    kept = sorted(listing(objects))
    (objects / "pack" / "tmp_pack_Xy12ab").write_bytes(b"PACK" + bytes(1 << 20))
    (objects / "pack" / "tmp_idx_Xy12ab").write_bytes(b"\xfftOc")
    (objects / "incoming-Q3ab9z" / "pack").mkdir(parents=True)
    (objects / "incoming-Q3ab9z" / "pack" / "tmp_pack_1").write_bytes(b"PACK")
    lock = lock_mirror(CampaignFolder(tmp_path / "campaigns" / "c1"), url, "test")
    lock.release()
    assert sorted(listing(objects)) == kept


# --- gh's pull-request calls are bounded ---------------------------------------------------

GH_STAND_IN = """#!/bin/sh
# gh: records its arguments; "pr list" answers after {give_up} s, "pr create" at once.
echo "$*" >> "$GH_LOG"
case "$1 $2" in
  "pr list") sleep {give_up}; echo "[]" ;;
  "pr create") echo "https://example.invalid/acme/p1/pull/7" ;;
  *) exit 1 ;;
esac
"""


def test_a_pull_request_call_gh_never_answers_is_stopped_at_the_time_bound(
    tmp_path: Path, shelf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gh stands in as a program recording its arguments, whose ``pr list`` answers only
    after 10 s (then with no pull request, so that ``pr`` without the bound goes on to push
    and open one, and fails this test)."""
    from helpers_sources import GIVE_UP

    remote = bare_for_http(_installed(tmp_path, shelf), tmp_path / "remotes" / "p1.git")
    url = remote.as_uri()
    code, document = _campaign(tmp_path, {"url": url}, "run", "-j", "1")
    assert code == Exit.OK, document
    bin_dir = tmp_path / "gh-bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(GH_STAND_IN.format(give_up=int(GIVE_UP)))
    (bin_dir / "gh").chmod(0o755)
    log = tmp_path / "gh.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(log))
    monkeypatch.setenv(limits.NETWORK_SECONDS, "1")
    branches = git(remote, "for-each-ref", "refs/heads/")
    done = run_tether("campaign", "pr", "c1", "--dir", str(tmp_path / "campaigns"), "--json")
    assert done.returncode == Exit.ERROR, done.stderr
    [record] = json.loads(done.stdout)["repositories"]
    assert record["status"] == "failed"
    assert record["reason"] == (
        f"gh pr list took longer than 1 s ({limits.NETWORK_SECONDS} sets it)"
    )
    assert [line.split()[:2] for line in log.read_text().splitlines()] == [["pr", "list"]]
    assert git(remote, "for-each-ref", "refs/heads/") == branches  # nothing pushed
