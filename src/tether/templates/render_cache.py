"""Renders of a template, cached where every project of the user finds them.

A render is keyed by (template source, commit, answers digest, renderer version): the
release side of one update is the baseline of the next, and projects that share a template
and answers render each version once. The folder is ``$TETHER_RENDER_CACHE``, else
``$XDG_CACHE_HOME/tether/renders`` (else ``~/.cache/tether/renders``). An entry is built in a
scratch folder beside it and renamed into place whole, so a killed render never leaves a
half-written entry under a key; it is never written to again (a release tree is read-only).

A scratch folder (``.building-``) and a broken entry set aside (``.broken-``) carry the id of
the process that made them and a tag of its machine; a process killed meanwhile leaves them
behind, and the next render of any process on that machine removes those whose process is
gone (``_remove_leftovers``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import atomic_write, read_regular

TREE = "tree"
FACTS = "facts.json"
# One render at a time in a process: copier and cookiecutter change the process's working
# folder while they render (so two renders in threads, a fleet's planning, would each find
# the other's folder), and a render the other thread is making is then found in the cache.
ONE_RENDER = threading.RLock()


# Names of the folders a render process makes beside the entries, with its pid and machine.
_LEFTOVER = re.compile(
    r"\.(?:building-(?P<pid>[0-9]{1,10})-(?P<host>[0-9a-f]{8})-[a-z0-9_]{8}"
    r"|broken-(?P<bpid>[0-9]{1,10})-(?P<bhost>[0-9a-f]{8})-[0-9a-f]{40}-[0-9a-f]{8})"
)
# A broken entry set aside by a tether that named no process: only the process that set it
# aside ever used it, and only to remove it.
_OLD_BROKEN = re.compile(r"\.broken-[0-9a-f]{40}-[0-9a-f]{8}")


def _machine_tag() -> str:
    """Eight hex digits of this machine's name: a cache folder shared between machines (a
    home on a network) holds folders whose pids mean nothing here."""
    return hashlib.sha256(os.uname().nodename.encode()).hexdigest()[:8]


def _owner() -> str:
    return f"{os.getpid()}-{_machine_tag()}"


def renders_home(env: dict[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    explicit = environ.get("TETHER_RENDER_CACHE", "")
    if os.path.isabs(explicit):
        return Path(explicit)
    configured = environ.get("XDG_CACHE_HOME", "")
    base = Path(configured) if os.path.isabs(configured) else Path.home() / ".cache"
    return base / "tether" / "renders"


def render_key(*parts: str) -> str:
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:40]


def read_facts(key: str, home: Path | None = None) -> dict[str, Any] | None:
    """The facts of cached render ``key``; None when it is not (whole) in the cache."""
    return _read_entry((home or renders_home()) / key)


def cached_render(
    key: str, build: Callable[[Path], dict[str, Any]], home: Path | None = None
) -> tuple[Path, dict[str, Any], bool]:
    """The tree of render ``key`` and its facts, built by ``build(tree)`` when missing;
    the last value says whether it came from the cache."""
    with ONE_RENDER, no_git_prompts():
        return _cached_render(key, build, home or renders_home())


@contextlib.contextmanager
def no_git_prompts() -> Iterator[None]:
    """The renderers run git themselves: a template behind a password must fail at once,
    never wait for a person at a terminal (as tether's own git calls do)."""
    saved = {name: os.environ.get(name) for name in _NO_PROMPTS}
    os.environ.update(_NO_PROMPTS)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_NO_PROMPTS = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


def _cached_render(
    key: str, build: Callable[[Path], dict[str, Any]], home: Path
) -> tuple[Path, dict[str, Any], bool]:
    entry = home / key
    found = _read_entry(entry)
    if found is not None:
        return entry / TREE, found, True
    try:
        home.mkdir(parents=True, exist_ok=True)
        _remove_leftovers(home)
        scratch = Path(tempfile.mkdtemp(prefix=f".building-{_owner()}-", dir=home))
    except OSError as error:
        raise TetherError(f"{home}: cannot write the render cache ({error.strerror})") from None
    try:
        facts = build(scratch / TREE)
        (scratch / TREE).mkdir(exist_ok=True)  # a template may render no file at all
        atomic_write(scratch / FACTS, json.dumps(facts).encode())  # key order is data (a context)
        try:
            os.rename(scratch, entry)
        except OSError:
            if not os.path.lexists(entry):
                raise  # the cache folder's own trouble (a permission, a full disk)
            if _read_entry(entry) is not None:
                pass  # another run's identical render came first
            elif _is_broken(entry) and _set_aside_broken(entry, home):
                os.rename(scratch, entry)
            else:
                raise TetherError(
                    f"{entry}: a render cache entry tether can neither read nor replace (a "
                    "link, a file, or facts that are no plain file); remove it to render again"
                ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    found = _read_entry(entry)
    if found is None:
        raise TetherError(f"{entry}: the render cache entry could not be read back")
    return entry / TREE, found, False


def _is_broken(entry: Path) -> bool:
    """The entry's facts are missing or do not parse, or its tree is gone: no render. One
    that could not be read for another reason (too many open files, a permission) may be
    whole, and another run may be reading it: it is not broken."""
    try:
        facts = json.loads(read_regular(entry / FACTS))
    except (FileNotFoundError, ValueError):
        return True
    except OSError:
        return False
    return not (isinstance(facts, dict) and (entry / TREE).is_dir())


def _set_aside_broken(entry: Path, home: Path) -> bool:
    """Remove an entry whose facts do not read (cut short, edited by hand): a plain folder
    under its key is one tether made, and no render is in it. False (left as it is) for
    anything else at that name, a link or a file, and when there is nothing."""
    try:
        if not stat.S_ISDIR(os.lstat(entry).st_mode):
            return False
        aside = home / f".broken-{_owner()}-{entry.name}-{os.urandom(4).hex()}"
        os.rename(entry, aside)  # out of the way at once: no reader finds it half removed
    except OSError:
        return False
    shutil.rmtree(aside, ignore_errors=True)
    return True


def _remove_leftovers(home: Path) -> None:
    """Remove the scratch and set-aside folders of render processes of this machine that are
    gone (killed while rendering). Only plain folders under the names tether gives them: a
    link, a file, a name tether does not make, a folder of a live process or of another
    machine, and a scratch folder of a tether that named no process (it may still be
    rendering) are left alone. Run before a render only: a cache hit pays nothing."""
    here = _machine_tag()
    try:
        with os.scandir(home) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(".")]
    except OSError:
        return
    for name in names:
        match = _LEFTOVER.fullmatch(name)
        if match is not None:
            pid = int(match["pid"] or match["bpid"])
            if (match["host"] or match["bhost"]) != here or _process_lives(pid):
                continue
        elif _OLD_BROKEN.fullmatch(name) is None:
            continue
        path = home / name
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                continue  # a link or a file under one of tether's names: not tether's
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)  # never follows a link inside


def _process_lives(pid: int) -> bool:
    """Whether process ``pid`` exists (a pid reused since only keeps a folder longer)."""
    if pid <= 0 or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process (EPERM), or no such pid to ask about
    return True


def _read_entry(entry: Path) -> dict[str, Any] | None:
    try:
        facts = json.loads(read_regular(entry / FACTS))
    except (OSError, ValueError):
        return None
    return facts if isinstance(facts, dict) and (entry / TREE).is_dir() else None
