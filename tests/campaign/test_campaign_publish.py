"""``tether campaign push|pr|close|retry`` and ``status --refresh``.

The repositories are real bare git repositories served as ``file://`` remotes (the builders of
test_campaign.py); what was pushed is read back from them with git. ``gh`` is NOT GitHub's
program: it is a stand-in script (helpers_gh.py, ``GH_STORE_STAND_IN``) that records every
call's argv and time into a JSON-lines file and keeps a small JSON store of pull requests, so
``pr list/view/create/edit/close`` answer one another consistently. The tests check what
tether asks of gh and what it does with the answers, never gh itself. Interruptions are real:
the coordinator runs as its own process and is killed (by the crash points of
state/crashpoint.py, or by the stand-in itself right after it opened a pull request).
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from builders import git, run_forked
from helpers_gh import GhStore, install_gh_store, path_without_gh
from tests.campaign.test_campaign import BRANCH, World, by_name, cli, mirror_of
from tests.campaign.test_campaign import world as world  # the fixture, shared with test_campaign.py
from tether.campaign.pacing import Pacing
from tether.campaign.publish import PullRequestsRequest, open_pull_requests
from tether.campaign.store import RECORD_STEP
from tether.errors import Exit
from tether.report.campaign import TRAILER
from tether.state import crashpoint

CONFLICTING = "x\nmine\nz\n"  # p's own c.txt, on the line the release changes too


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GhStore:
    return install_gh_store(tmp_path, monkeypatch)


def step(world: World, action: str, *extra: str) -> tuple[int, dict]:
    return cli(action, "c1", "--dir", str(world.campaigns), *extra)


def remote_branch(bare: Path) -> str | None:
    out = git(bare, "for-each-ref", "--format=%(objectname)", f"refs/heads/{BRANCH}")
    return out.strip() or None


def run_campaign(world: World, *start: str) -> dict:
    assert world.start(*start)[0] == 0
    code, ran = world.run()
    assert code in (Exit.OK, Exit.CONFLICTS, Exit.ERROR), ran
    return ran


def open_prs(gh: GhStore) -> list[dict]:
    return [pr for pr in gh.pull_requests() if pr["state"] == "OPEN"]


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


# --- push, then pr ---------------------------------------------------------------------------


def test_push_then_pr_opens_one_pull_request_per_committed_update_and_a_rerun_opens_none(
    world: World, gh: GhStore
) -> None:
    p1 = world.remote("p1")
    p2 = world.remote("p2", edit=CONFLICTING)
    p3 = world.remote("p3")
    ran = run_campaign(world, "--on-conflict", "commit")
    commits = {r["name"]: r["commit"] for r in ran["repositories"]}

    code, pushed = step(world, "push")
    assert code == Exit.OK and gh.calls() == []  # push never asks gh
    assert [r["status"] for r in pushed["repositories"]] == ["pushed"] * 3
    assert pushed["step"]["changed"] == ["p1", "p2", "p3"]
    for name, bare in (("p1", p1), ("p2", p2), ("p3", p3)):
        assert remote_branch(bare) == commits[name]
        assert by_name(pushed)[name]["pushed_commit"] == commits[name]

    code, opened = step(world, "pr")
    assert code == Exit.OK, opened
    rows = by_name(opened)
    assert {n: r["status"] for n, r in rows.items()} == dict.fromkeys(("p1", "p2", "p3"), "pr-open")
    prs = {Path(pr["repo"]).name: pr for pr in gh.pull_requests()}
    assert sorted(prs) == ["p1.git", "p2.git", "p3.git"]
    for name, bare in (("p1", p1), ("p2", p2), ("p3", p3)):
        pr = prs[f"{name}.git"]
        assert pr["repo"] == bare.as_uri() and pr["head"] == BRANCH and pr["base"] == "main"
        assert pr["title"] == "chore: update acme-kit to 1.1.0"
        assert (rows[name]["pr_number"], rows[name]["pr_url"]) == (pr["number"], pr["url"])
        assert f"{TRAILER}: 1.0.0 -> 1.1.0" in pr["body"]
        assert remote_branch(bare) == commits[name]  # pr pushed nothing new
    assert "- add: 1\n- update: 2" in prs["p1.git"]["body"]
    assert "Conflict markers are committed in 1 file(s):\n- c.txt" in prs["p2.git"]["body"]
    assert "Conflict markers" not in prs["p1.git"]["body"]
    # Each repository: its open pull request looked up, then one created.
    assert [c["argv"][:2] for c in gh.calls()] == [["pr", "list"], ["pr", "create"]] * 3

    before = len(gh.calls())
    code, again = step(world, "pr")
    assert code == Exit.OK and again["repositories"] == opened["repositories"]
    later = gh.calls()[before:]
    assert [c["argv"][:2] for c in later] == [["pr", "view"]] * 3  # states read, nothing opened
    assert len(gh.pull_requests()) == 3


def test_pr_pushes_itself_and_reuses_the_open_pull_request_of_the_branch(
    world: World, gh: GhStore
) -> None:
    p1 = world.remote("p1")
    world.remote("p2", edit=CONFLICTING)  # held: never pushed, never a pull request
    ran = run_campaign(world)
    earlier = gh.add(p1.as_uri(), BRANCH)  # a pull request for the branch is already open

    code, opened = step(world, "pr")
    assert code == Exit.CONFLICTS  # p2 holds conflicts for a person
    rows = by_name(opened)
    assert rows["p1"]["status"] == "pr-open" and rows["p1"]["pr_number"] == earlier
    assert rows["p2"]["status"] == "conflicts" and rows["p2"]["pr_number"] is None
    assert remote_branch(p1) == by_name(ran)["p1"]["commit"]  # pr pushed it
    assert gh.calls("create") == []
    [edit] = gh.calls("edit")
    assert flag(edit["argv"], "--repo") == p1.as_uri() and edit["argv"][2] == str(earlier)
    [only] = gh.pull_requests()
    assert only["body"].startswith("Updates acme-kit from 1.0.0 to 1.1.0.")
    assert opened["step"]["pacing"]["open_prs"] == 1


# --- killed and run again: never a second pull request ----------------------------------------


def pr_process(world: World, crash: str | None = None, **env: str) -> subprocess.CompletedProcess:
    argv = ["campaign", "pr", "c1", "--dir", str(world.campaigns), "--json"]
    return run_forked(*argv, crash=crash, env=env, timeout=300)


def three_updated(world: World) -> None:
    for name in ("p1", "p2", "p3"):
        world.remote(name)
    run_campaign(world)


def test_a_coordinator_killed_right_after_gh_opened_a_pull_request_never_opens_a_second(
    world: World, gh: GhStore
) -> None:
    three_updated(world)
    # The stand-in kills its caller as it answers the second `pr create`: the pull request
    # exists, the coordinator never learned its number.
    killed = pr_process(world, GH_KILL_CALLER_AT_CREATE="2")
    assert killed.returncode == -9, killed.stderr
    states = [r["status"] for r in world.status()[1]["repositories"]]
    assert states == ["pr-open", "pushed", "updated"]

    rerun = pr_process(world)
    assert rerun.returncode == Exit.OK, rerun.stderr
    rows = json.loads(rerun.stdout)["repositories"]
    assert [r["status"] for r in rows] == ["pr-open"] * 3
    prs = gh.pull_requests()
    assert len(prs) == 3 and len({pr["head"] + pr["repo"] for pr in prs}) == 3
    assert len(gh.calls("create")) == 3
    assert rows[1]["pr_number"] == 2  # found again, not opened again
    assert [pr["number"] for pr in prs] == [r["pr_number"] for r in rows]


# The record writes of one repository in `pr`: pushed, then pr-open.
@pytest.mark.parametrize("crash_after", [1, 2])
def test_a_coordinator_killed_after_a_record_write_continues_with_one_pull_request_each(
    world: World, gh: GhStore, crash_after: int
) -> None:
    three_updated(world)
    killed = pr_process(world, f"{RECORD_STEP}:{crash_after}")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stderr
    rerun = pr_process(world)
    assert rerun.returncode == Exit.OK, rerun.stderr
    assert [r["status"] for r in json.loads(rerun.stdout)["repositories"]] == ["pr-open"] * 3
    assert len(gh.calls("create")) == 3 and len(gh.pull_requests()) == 3


# --- pacing -----------------------------------------------------------------------------------


def test_max_open_prs_counts_the_open_ones_and_continues_when_one_is_merged(
    world: World, gh: GhStore
) -> None:
    for name in ("p1", "p2", "p3", "p4"):
        world.remote(name)
    run_campaign(world)

    code, first = step(world, "pr", "--max-open-prs", "2")
    assert code == Exit.FOUND, first  # work left for a later run
    stopped = first["step"]["stopped"]
    assert stopped["limit"] == "max_open_prs" and stopped["value"] == 2
    assert stopped["resume_at"] is None and "--max-open-prs 2" in stopped["message"]
    assert [r["status"] for r in first["repositories"]] == ["pr-open"] * 2 + ["updated"] * 2
    assert len(open_prs(gh)) == 2

    code, second = step(world, "pr", "--max-open-prs", "2")
    assert code == Exit.FOUND and len(gh.calls("create")) == 2  # still two open
    assert second["step"]["stopped"]["reached"] == 2

    gh.set_state(1, "MERGED")
    code, third = step(world, "pr", "--max-open-prs", "2")
    assert code == Exit.FOUND
    assert [r["status"] for r in third["repositories"]] == [
        "merged",
        "pr-open",
        "pr-open",
        "updated",
    ]
    assert len(gh.calls("create")) == 3 and len(open_prs(gh)) == 2
    assert third["step"]["pacing"]["open_prs"] == 2


def test_prs_per_hour_stops_with_the_time_to_come_back_and_a_rerun_opens_nothing(
    world: World, gh: GhStore
) -> None:
    three_updated(world)
    code, first = step(world, "pr", "--prs-per-hour", "2")
    assert code == Exit.FOUND
    assert [r["status"] for r in first["repositories"]] == ["pr-open", "pr-open", "updated"]
    creates = gh.calls("create")
    assert len(creates) == 2
    stopped = first["step"]["stopped"]
    assert stopped["limit"] == "prs_per_hour" and stopped["reached"] == 2
    # The window ends an hour after the first opening (when gh answered it).
    resume = datetime.fromisoformat(stopped["resume_at"].replace("Z", "+00:00")).timestamp()
    assert creates[0]["time"] + 3600 <= resume <= creates[1]["time"] + 3600 + 1
    assert f"run again after {stopped['resume_at']}" in stopped["message"]
    # The ledger holds each opening at the time gh answered, never before gh was asked.
    ledger = json.loads((world.campaigns / "c1" / "pacing.json").read_text())
    opened = ledger["pull_requests_opened"]
    assert len(opened) == 2 and all(o > c["time"] for o, c in zip(opened, creates, strict=True))

    code, second = step(world, "pr", "--prs-per-hour", "2")
    assert code == Exit.FOUND and len(gh.calls("create")) == 2
    assert second["step"]["stopped"]["resume_at"] == stopped["resume_at"]


WINDOW = 0.5  # seconds: long beside a pull request's opening by the stand-in gh


def test_wait_sleeps_out_a_spent_budget_and_no_window_holds_more_than_the_limit(
    world: World, gh: GhStore
) -> None:
    """The one larger test: six repositories through a two-per-window budget with --wait
    (the window shortened to WINDOW seconds through the library; the CLI's is an hour)."""
    names = [f"p{i}" for i in range(1, 7)]
    for name in names:
        world.remote(name)
    run_campaign(world)
    request = PullRequestsRequest("c1", str(world.campaigns), Pacing(None, 2, True, window=WINDOW))
    result = open_pull_requests(request)
    assert result.exit_code == Exit.OK
    assert [r["status"] for r in result.document["repositories"]] == ["pr-open"] * 6
    times = sorted(c["time"] for c in gh.calls("create"))
    assert len(times) == 6
    # Any window holds at most two openings, as gh saw them.
    assert all(later - earlier >= WINDOW for earlier, later in zip(times, times[2:], strict=False))


def test_pacing_limits_below_one_are_a_usage_error(world: World, gh: GhStore) -> None:
    world.remote("p1")
    run_campaign(world)
    for flag_name in ("--max-open-prs", "--prs-per-hour"):
        code, document = step(world, "pr", flag_name, "0")
        assert code == Exit.USAGE and f"{flag_name} must be at least 1" in json.dumps(document)
    assert gh.calls() == [] and world.status()[1]["counts"]["updated"] == 1


# --- bad input: one failed record each, the campaign goes on ------------------------------


def test_each_repositorys_trouble_fails_only_that_repository(world: World, gh: GhStore) -> None:
    gone = world.remote("gone")
    hooked = world.remote("hooked")
    taken = world.remote("taken")
    fine = world.remote("fine")
    plain = world.tmp / "plain"  # a repository with no upstream installed at all
    plain.mkdir()
    git(plain, "init", "-q", "-b", "main")
    (plain / "README").write_text("hi\n")
    git(plain, "add", "-A")
    git(plain, "commit", "-qm", "first")
    bare_plain = world.tmp / "remotes" / "plain.git"
    git(world.tmp, "clone", "-q", "--bare", str(plain), str(bare_plain))
    world.add("plain", {"url": bare_plain.as_uri()})
    ran = run_campaign(world)
    assert by_name(ran)["plain"]["status"] == "failed"
    assert by_name(ran)["plain"]["reason"].startswith("acme-kit is not installed here: ")

    os.rename(gone, gone.with_name("moved.git"))  # unreachable when it is pushed
    hook = hooked / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)  # repositories here are made without sample hooks
    hook.write_text(
        "#!/bin/sh\necho 'error: GH006: Protected branch update failed for this branch.' >&2\n"
        "exit 1\n"
    )
    hook.chmod(0o755)
    git(taken, "branch", BRANCH, "main")  # someone else's branch of that name

    code, pushed = step(world, "pr")
    assert code == Exit.ERROR
    rows = by_name(pushed)
    assert rows["gone"]["status"] == "failed"
    assert rows["gone"]["reason"].startswith("cannot push: git ls-remote failed: fatal: ")
    assert rows["hooked"]["reason"] == (
        f"cannot push to {hooked.as_uri()}: push rejected (pre-receive hook declined): "
        "GH006: Protected branch update failed for this branch."
    )
    main = git(taken, "rev-parse", "main").strip()
    assert rows["taken"]["reason"] == (
        f"{BRANCH} on {taken.as_uri()} is at {main[:12]}, which tether did not push; left as it is"
    )
    assert remote_branch(taken) == main and remote_branch(hooked) is None
    assert rows["fine"]["status"] == "pr-open"
    for row in rows.values():
        assert "\n" not in row["reason"]
    assert [Path(pr["repo"]).name for pr in gh.pull_requests()] == ["fine.git"]
    assert remote_branch(fine) == rows["fine"]["commit"]


def test_gh_missing_or_logged_out_fails_the_repository_before_any_push_and_retry_reruns_it(
    world: World, gh: GhStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = world.remote("p1")
    run_campaign(world)
    with monkeypatch.context() as without:
        path_without_gh(tmp_path, without)
        code, missing = step(world, "pr")
    assert code == Exit.ERROR
    [row] = missing["repositories"]
    assert (row["status"], row["reason"]) == ("failed", "the `gh` program is not installed")
    assert remote_branch(bare) is None

    code, retried = step(world, "retry", "--failed")
    assert code == Exit.OK and retried["step"]["changed"] == ["p1"]
    [row] = retried["repositories"]
    assert row["status"] == "updated" and row["reason"] == "" and row["commit"]

    monkeypatch.setenv("GH_UNAUTHENTICATED", "1")
    code, logged_out = step(world, "pr")
    assert code == Exit.ERROR
    [row] = logged_out["repositories"]
    assert row["status"] == "failed"
    assert row["reason"] == (
        "gh pr failed: To get started with GitHub CLI, please run:  gh auth login"
    )
    assert remote_branch(bare) is None and gh.pull_requests() == []

    monkeypatch.delenv("GH_UNAUTHENTICATED")
    assert step(world, "retry", "--failed")[0] == Exit.OK
    code, opened = step(world, "pr")
    assert code == Exit.OK and opened["repositories"][0]["status"] == "pr-open"
    assert len(gh.pull_requests()) == 1


def test_retry_reruns_only_failed_repositories_and_needs_failed(world: World, gh: GhStore) -> None:
    world.remote("p1")
    missing = world.tmp / "later.git"
    world.add("later", {"url": missing.as_uri()})
    ran = run_campaign(world)
    assert [r["status"] for r in ran["repositories"]] == ["updated", "failed"]
    p1_record = next((world.campaigns / "c1" / "repos").glob("p1-*.json")).read_bytes()

    code, document = step(world, "retry")
    assert code == Exit.USAGE and "--failed" in json.dumps(document)

    git(world.tmp, "clone", "-q", "--bare", str(world.repo("later")), str(missing))
    code, retried = step(world, "retry", "--failed")
    assert code == Exit.OK
    assert [r["status"] for r in retried["repositories"]] == ["updated", "updated"]
    assert retried["step"] == {
        "action": "retry",
        "changed": ["later"],
        "stopped": None,
        "pacing": None,
        "notes": [],
    }
    assert next((world.campaigns / "c1" / "repos").glob("p1-*.json")).read_bytes() == p1_record


# --- the pull requests' states, and close -------------------------------------------------------


def test_status_refresh_reads_merges_and_close_ends_the_campaign(world: World, gh: GhStore) -> None:
    p1 = world.remote("p1")
    p2 = world.remote("p2")
    world.remote("p3", edit=CONFLICTING)  # held conflicts: a worktree, nothing pushed
    run_campaign(world)
    code, opened = step(world, "pr")
    assert code == Exit.CONFLICTS
    numbers = {r["name"]: r["pr_number"] for r in opened["repositories"]}

    gh.set_state(numbers["p2"], "MERGED")
    code, status = step(world, "status")
    assert by_name(status)["p2"]["status"] == "pr-open"  # status alone asks nobody
    code, refreshed = step(world, "status", "--refresh")
    assert code == Exit.OK and refreshed["step"]["changed"] == ["p2"]
    assert [r["status"] for r in refreshed["repositories"]] == ["pr-open", "merged", "conflicts"]

    folder = world.campaigns / "c1"
    mirrors = {r["name"]: mirror_of(world, r) for r in refreshed["repositories"]}
    code, closed = step(world, "close")
    assert code == Exit.OK, closed
    assert [r["status"] for r in closed["repositories"]] == ["closed", "merged", "closed"]
    states = {pr["number"]: pr["state"] for pr in gh.pull_requests()}
    assert states == {numbers["p1"]: "CLOSED", numbers["p2"]: "MERGED"}
    [close_call] = gh.calls("close")
    assert close_call["argv"][2] == str(numbers["p1"])
    assert "tether campaign close c1" in flag(close_call["argv"], "--comment")
    assert remote_branch(p1) is None and remote_branch(p2) is None  # tether's pushes deleted
    for name, mirror in mirrors.items():
        assert git(mirror, "branch", "--list", BRANCH).strip() == "", name
    assert list((folder / "work").iterdir()) == []
    assert git(p1, "rev-parse", "main")  # the default branches stay

    calls = len(gh.calls())
    code, again = step(world, "close")
    assert code == Exit.OK and again["step"]["changed"] == [] and len(gh.calls()) == calls


def test_close_keeps_a_campaign_branch_someone_pushed_to(world: World, gh: GhStore) -> None:
    bare = world.remote("p1")
    run_campaign(world)
    assert step(world, "push")[0] == Exit.OK
    clone = world.tmp / "person"
    git(world.tmp, "clone", "-q", "-b", BRANCH, bare.as_uri(), str(clone))
    (clone / "fix.txt").write_text("mine\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "a person's fix")
    git(clone, "push", "-q", "origin", BRANCH)
    theirs = remote_branch(bare)

    code, closed = step(world, "close")
    assert code == Exit.OK and closed["repositories"][0]["status"] == "closed"
    assert remote_branch(bare) == theirs
    assert closed["step"]["notes"] == [
        f"p1: kept {BRANCH} on {bare.as_uri()}: it holds commits tether did not push"
    ]


def test_human_output_names_the_pull_requests_and_the_stop(world: World, gh: GhStore) -> None:
    from builders import run_tether

    three_updated(world)
    done = run_tether("campaign", "pr", "c1", "--dir", str(world.campaigns), "--max-open-prs", "1")
    assert done.returncode == Exit.FOUND
    [pr] = gh.pull_requests()
    assert f"pr-open     1.0.0 → 1.1.0; pull request {pr['url']}" in done.stdout
    assert "pr: changed p1" in done.stdout
    assert (
        "stopped: 1 of the campaign's pull requests are open (--max-open-prs 1): "
        "run again when some are merged or closed"
    ) in done.stdout


def test_a_local_entry_is_pushed_to_its_origin_and_its_checkout_left_alone(
    world: World, gh: GhStore
) -> None:
    from builders import tree_digest

    mine = world.repo("mine")
    origin = world.tmp / "remotes" / "mine.git"
    git(world.tmp, "clone", "-q", "--bare", str(mine), str(origin))
    git(mine, "remote", "add", "origin", "../../remotes/mine.git")  # relative to the checkout
    world.add("mine", {"path": str(mine)})
    lone = world.repo("lone")  # no origin: nowhere to push
    world.add("lone", {"path": str(lone)})
    run_campaign(world)
    before = tree_digest(mine), git(mine, "for-each-ref")

    code, pushed = step(world, "push")
    assert code == Exit.ERROR
    rows = by_name(pushed)
    assert rows["mine"]["status"] == "pushed" and remote_branch(origin) == rows["mine"]["commit"]
    assert (tree_digest(mine), git(mine, "for-each-ref")) == before
    assert rows["lone"]["reason"] == f"cannot push: {lone} has no remote named origin to push to"


def test_a_commands_notes_are_facts_worded_in_the_step_document_in_their_order() -> None:
    from tether.campaign.publish import RepoNote
    from tether.report.campaign_publish import step_document

    notes = [
        RepoNote("p2", error="gh is not installed"),
        RepoNote("p1", kept_branch="tether/up", target="file:///srv/p1.git"),
    ]
    step = step_document("close", [], None, None, notes)
    assert step["notes"] == [
        "p2: gh is not installed",
        "p1: kept tether/up on file:///srv/p1.git: it holds commits tether did not push",
    ]
