"""A stand-in for the external ``gh`` program (the GitHub CLI needs the network and an
account), and a real bare repository as the project's ``origin``.

The stand-in only records its argv and answers the two pull-request
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

# What the stand-in that keeps pull requests starts with. -IS: the standard library is all it
# needs (no site folders, no PYTHON* variables). JSON goes through _json, the json module's C
# core: the json module itself imports re and enum, which took longer than the interpreter's
# own start, and the stand-in runs a hundred times and more in a test run.
STAND_IN_PRELUDE = r"""#!{python} -IS
import os, sys, _json


class _Decoding:  # what _json's scanner reads from a json.JSONDecoder
    strict = True
    object_hook = object_pairs_hook = parse_constant = None
    parse_float, parse_int, memo = float, int, {}


def from_json(text):
    return _json.make_scanner(_Decoding())(text.strip(), 0)[0]


def to_json(value):
    if isinstance(value, str):
        return _json.encode_basestring_ascii(value)
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_json(k)}: {to_json(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(to_json(item) for item in value) + "]"


"""

# A shell script, not Python: a shell starts in about 1 ms of CPU, an interpreter in 9 ms
# even with -IS. Each call is recorded as the number of its arguments and the arguments,
# each ending in a NUL byte (``Remote.gh_calls`` reads them back), so an argument holding
# spaces, quotes or newlines (a pull request's body) comes back as given.
GH_STAND_IN = r"""#!/bin/sh
printf '%s\0' "$#" "$@" >> "$GH_LOG"
if [ "$#" -ge 2 ] && [ "$1" = pr ] && [ "${GH_FAIL+set}" = set ] && [ "$2" = "$GH_FAIL" ]; then
    echo "HTTP 401: Bad credentials (https://api.github.com/graphql)" >&2
    exit 1
fi
if [ "$1" = pr ] && [ "$2" = list ]; then
    printf '%s\n' "${GH_OPEN_PR:-[]}"
elif [ "$1" = pr ] && [ "$2" = create ]; then
    echo "https://example.invalid/acme/proj/pull/7"
else
    echo "gh stand-in: unexpected call $*" >&2
    exit 1
fi
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
        return recorded_gh_calls(self.gh_log) if self.gh_log.exists() else []


def recorded_gh_calls(log: Path) -> list[list[str]]:
    """The argv of each call a gh stand-in recorded in ``log``, in order: each call is the
    number of its arguments and the arguments, each ending in a NUL byte."""
    fields = os.fsdecode(log.read_bytes()).split("\0")[:-1]
    calls = []
    while fields:
        count = int(fields[0])
        calls.append(fields[1 : 1 + count])
        del fields[: 1 + count]
    return calls


def install_gh_stand_in(bin_dir: Path, monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(GH_STAND_IN)
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


# --- a stand-in that keeps pull requests (campaigns) -------------------------------------

GH_STORE_STAND_IN = (
    STAND_IN_PRELUDE
    + r"""# A stand-in for gh, not gh: it records each call (argv and time) and keeps pull requests
# in a JSON file, so pr list/view/create/edit/close answer one another consistently.
import time

args = sys.argv[1:]
with open(os.environ["GH_LOG"], "a") as handle:
    handle.write(to_json({"argv": args, "time": time.time()}) + "\n")
if os.environ.get("GH_UNAUTHENTICATED"):
    sys.stderr.write(
        "To get started with GitHub CLI, please run:  gh auth login\n"
        "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
        "authentication token.\n"
    )
    sys.exit(4)
path = os.environ["GH_STORE"]
store = {"next": 1, "prs": []}
if os.path.exists(path):
    with open(path) as handle:
        store = from_json(handle.read())


def option(name):
    return args[args.index(name) + 1] if name in args else None


def save():
    with open(path + ".tmp", "w") as out:
        out.write(to_json(store))
    os.replace(path + ".tmp", path)


def named(ref, repo):
    for pr in store["prs"]:
        if pr["repo"] == repo and ref in (str(pr["number"]), pr["url"]):
            return pr
    sys.exit(f"GraphQL: Could not resolve to a PullRequest with the number of {ref}.")


def fields(pr):
    return {key: pr[key] for key in option("--json").split(",")}


repo, verb = option("--repo"), args[:2]
if verb == ["pr", "list"]:
    state = (option("--state") or "open").upper()
    print(to_json([
        fields(pr) for pr in store["prs"]
        if pr["repo"] == repo and pr["head"] == option("--head")
        and state in ("ALL", pr["state"])
    ]))
elif verb == ["pr", "create"]:
    head, base = option("--head"), option("--base")
    if any(p["repo"] == repo and p["head"] == head and p["state"] == "OPEN" for p in store["prs"]):
        sys.exit(f'a pull request for branch "{head}" into branch "{base}" already exists')
    number = store["next"]
    store["next"] += 1
    url = f"https://example.invalid/{os.path.basename(repo)}/pull/{number}"
    store["prs"].append({
        "number": number, "url": url, "repo": repo, "head": head, "base": base,
        "title": option("--title"), "body": option("--body"), "state": "OPEN",
    })
    save()
    print(url)
    if os.environ.get("GH_KILL_CALLER_AT_CREATE") == str(number):
        sys.stdout.flush()
        os.kill(os.getppid(), 9)  # SIGKILL: the caller dies before it reads the answer
elif verb == ["pr", "edit"]:
    pr = named(args[2], repo)
    pr["body"] = option("--body")
    save()
    print(pr["url"])
elif verb == ["pr", "view"]:
    print(to_json(fields(named(args[2], repo))))
elif verb == ["pr", "close"]:
    pr = named(args[2], repo)
    pr["state"], pr["comment"] = "CLOSED", option("--comment")
    save()
    print(f"Closed pull request #{pr['number']}")
else:
    sys.exit("gh stand-in: unexpected call " + " ".join(args))
"""
)


@dataclass
class GhStore:
    """The stand-in's record of calls and its pull requests, as the tests read them."""

    log: Path
    store: Path

    def calls(self, verb: str | None = None) -> list[dict]:
        """Every call, in order: {"argv": [...], "time": seconds}; only ``pr VERB`` ones
        when ``verb`` is given."""
        if not self.log.exists():
            return []
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [c for c in calls if verb is None or c["argv"][:2] == ["pr", verb]]

    def pull_requests(self) -> list[dict]:
        return json.loads(self.store.read_text())["prs"] if self.store.exists() else []

    def set_state(self, number: int, state: str) -> None:
        """What a person does on the forge: merge or close a pull request."""
        data = json.loads(self.store.read_text())
        next(pr for pr in data["prs"] if pr["number"] == number)["state"] = state
        self.store.write_text(json.dumps(data))

    def add(self, repo: str, head: str, base: str = "main") -> int:
        """A pull request opened outside the test's commands (by an earlier run)."""
        data = json.loads(self.store.read_text()) if self.store.exists() else {"next": 1, "prs": []}
        number = data["next"]
        data["next"] += 1
        url = f"https://example.invalid/{Path(repo).name}/pull/{number}"
        data["prs"].append(
            {
                "number": number,
                "url": url,
                "repo": repo,
                "head": head,
                "base": base,
                "title": "earlier",
                "body": "earlier",
                "state": "OPEN",
            }
        )
        self.store.write_text(json.dumps(data))
        return number


def install_gh_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GhStore:
    """The keeping stand-in first on PATH, its log and store in ``tmp_path``."""
    bin_dir = tmp_path / "gh-store-bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(GH_STORE_STAND_IN.replace("{python}", sys.executable))
    (bin_dir / "gh").chmod(0o755)
    made = GhStore(tmp_path / "gh-calls.jsonl", tmp_path / "gh-store.json")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GH_LOG", str(made.log))
    monkeypatch.setenv("GH_STORE", str(made.store))
    for name in ("GH_UNAUTHENTICATED", "GH_KILL_CALLER_AT_CREATE"):
        monkeypatch.delenv(name, raising=False)
    return made
