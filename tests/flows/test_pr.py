"""``tether pr``: push a committed update's branch and open its pull request.

Every test has a real bare repository as ``origin`` (what was pushed is read back from it
with git) and a stand-in for the external ``gh`` program that records its argv (see
helpers_gh.py); one test runs with no gh at all.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from builders import call, git, make_release, run_tether, tree_digest
from helpers_gh import Remote, add_origin, install_gh_stand_in, path_without_gh

BRANCH = "chore/update-acme-kit-1.2.0"
TITLE = "chore: update acme-kit to 1.2.0"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Built once per module and copied by each test (``repo``, ``remote``): a project at
    1.0.0 committed on main (``installed/proj``), and the same project with a bare origin
    holding main and the update to 1.2.0 applied on its branch (``updated/proj`` and
    ``updated/proj-origin.git``). Both record the one shelf here, which no test changes."""
    top = tmp_path_factory.mktemp("pr")
    shelf = top / "rel"
    make_release(shelf, "1.0.0", {"a.txt": "a0\n", "b.txt": "b\n"})
    make_release(shelf, "1.2.0", {"a.txt": "a2\n", "b.txt": "b\n", "n.txt": "new\n"})
    installed = top / "installed"
    project = installed / "proj"
    project.mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install 1.0.0")
    updated = top / "updated"
    shutil.copytree(installed, updated, symlinks=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        add_origin(updated / "proj", updated, monkeypatch)
    assert call("update", "--yes", "-C", str(updated / "proj")) == 0
    assert git(updated / "proj", "branch", "--show-current").strip() == BRANCH
    return installed, updated


@pytest.fixture
def repo(tmp_path: Path, built: tuple[Path, Path]) -> Path:
    """A project at 1.0.0, committed on main."""
    project = tmp_path / "proj"
    shutil.copytree(built[0] / "proj", project, symlinks=True)
    return project


@pytest.fixture
def remote(repo: Path, tmp_path: Path, built: tuple[Path, Path], monkeypatch) -> Remote:
    """origin holds main; the update to 1.2.0 is applied on its branch, not committed (the
    project and its origin as ``built`` left them, origin's address made this test's)."""
    updated = built[1]
    shutil.rmtree(repo)
    shutil.copytree(updated / "proj", repo, symlinks=True)
    bare = tmp_path / "proj-origin.git"
    shutil.copytree(updated / "proj-origin.git", bare, symlinks=True)
    config = repo / ".git" / "config"
    text = config.read_text()
    assert text.count(str(updated / "proj-origin.git")) == 1, text  # origin's url, only
    config.write_text(text.replace(str(updated / "proj-origin.git"), str(bare)))
    log = tmp_path / "gh.log"
    install_gh_stand_in(tmp_path / "gh-bin", monkeypatch, log)
    return Remote(bare, log)


def commit_update(repo: Path) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", TITLE)
    return git(repo, "rev-parse", "HEAD").strip()


def pr_json(repo: Path, *args: str) -> tuple[int, dict]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = call("pr", "--json", "-C", str(repo), *args)
    return code, json.loads(out.getvalue())


def flag(call_args: list[str], name: str) -> str:
    return call_args[call_args.index(name) + 1]


def test_nothing_committed_pushes_nothing_and_says_what_to_do(repo: Path, remote: Remote) -> None:
    main = remote.branches()["main"]
    result = run_tether("pr", "-C", str(repo))
    assert result.returncode == 0, result.stderr  # guidance, not a failure
    assert "nothing to open yet" in result.stdout
    assert f"{BRANCH} → main: 0 commits ahead" in result.stdout
    assert "commit it, then run 'tether pr' again" in result.stdout
    assert "uncommitted changes" in result.stdout  # the update waiting to be committed
    assert remote.branches() == {"main": main}  # nothing pushed
    assert remote.gh_calls() == []  # gh never asked
    code, doc = pr_json(repo)
    assert code == 0
    assert doc["status"] == "nothing-ahead" and doc["ahead"] == 0 and doc["pushed"] is False
    assert doc["pull_request"] is None
    # The words of the note and of the next step, the same in both outputs and in the
    # document's last two keys (the report holds the count and the status; report/ words them).
    note = doc["notes"][0]
    assert re.fullmatch(
        r"[1-9][0-9]* file\(s\) have uncommitted changes; they are not part of the pull "
        r"request until you commit them \(and run 'tether pr' again\)",
        note,
    )
    step = (
        f"nothing is committed on {BRANCH} that main lacks: review the update (git diff), "
        "commit it, then run 'tether pr' again"
    )
    assert list(doc)[-2:] == ["next_step", "notes"]
    assert doc["notes"] == [note] and doc["next_step"] == step
    assert result.stdout.splitlines()[-2:] == [f"note: {note}", f"Next: {step}"]


def test_a_committed_update_is_pushed_and_its_pull_request_opened(
    repo: Path, remote: Remote
) -> None:
    head = commit_update(repo)
    code, doc = pr_json(repo)
    assert code == 0
    assert remote.branches()[BRANCH] == head
    assert git(repo, "rev-parse", "--abbrev-ref", f"{BRANCH}@{{upstream}}").strip() == (
        f"origin/{BRANCH}"
    )
    listing, create = remote.gh_calls()
    assert listing == ["pr", "list", "--head", BRANCH, "--state", "open", "--json", "number,url"]
    assert create[:6] == ["pr", "create", "--base", "main", "--head", BRANCH]
    assert flag(create, "--title") == TITLE
    body = flag(create, "--body")
    assert "Updates acme-kit from 1.0.0 to 1.2.0" in body  # main's state said 1.0.0
    assert doc["status"] == "opened" and doc["ahead"] == 1 and doc["pushed"] is True
    assert doc["pull_request"] == {
        "number": 7,
        "url": "https://example.invalid/acme/proj/pull/7",
    }
    assert doc["body"] == body and doc["notes"] == [] and doc["error"] == ""


def test_an_open_pull_request_is_not_opened_twice(
    repo: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_update(repo)
    url = "https://example.invalid/acme/proj/pull/3"
    monkeypatch.setenv("GH_OPEN_PR", json.dumps([{"number": 3, "url": url}]))
    (repo / "b.txt").write_text("b, reviewed\n")
    head = commit_update(repo)
    result = run_tether("pr", "-C", str(repo))
    assert result.returncode == 0, result.stderr
    assert f"pull request #3 ({url}) is already open; the push updated it" in result.stdout
    assert remote.branches()[BRANCH] == head  # the new commit reached the open PR
    assert [c[:2] for c in remote.gh_calls()] == [["pr", "list"]]  # no second create


def test_gh_failing_exits_1_and_keeps_the_whole_report(
    repo: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = commit_update(repo)
    monkeypatch.setenv("GH_FAIL", "create")
    result = run_tether("pr", "-C", str(repo))
    assert result.returncode == 1
    out = result.stdout
    assert "pushed; the pull request was not opened (gh failed)" in out
    assert f"{BRANCH} → main: 1 commit ahead, pushed to origin" in out
    assert f"title: {TITLE}" in out
    assert "error: gh pr failed: HTTP 401: Bad credentials" in out
    assert f"open the pull request by hand (or check for one already open): {BRANCH} → main" in out
    assert remote.branches()[BRANCH] == head  # what was done stays done
    code, doc = pr_json(repo)
    assert code == 1
    assert doc["status"] == "gh-failed" and doc["pushed"] is True
    assert f"{BRANCH} → main" in doc["next_step"] and doc["body"]


def test_gh_failing_to_list_opens_nothing(
    repo: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_update(repo)
    monkeypatch.setenv("GH_FAIL", "list")
    code, doc = pr_json(repo)
    assert code == 1 and doc["status"] == "gh-failed"
    assert [c[:2] for c in remote.gh_calls()] == [["pr", "list"]]  # unknown: no blind create


def test_without_gh_the_branch_is_pushed_and_the_rest_is_by_hand(
    repo: Path, remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = commit_update(repo)
    path_without_gh(tmp_path, monkeypatch)
    result = run_tether("pr", "-C", str(repo))
    assert result.returncode == 1
    assert "gh is not installed" in result.stdout
    assert f"the branch is pushed to origin; open the pull request by hand: {BRANCH} → main" in (
        result.stdout
    )
    assert f"titled '{TITLE}'" in result.stdout
    # Everything to paste: the title, and the body the pull request would have had.
    assert f"  title: {TITLE}\n" in result.stdout
    _code, doc = pr_json(repo)
    pasted = result.stdout.split("body (paste it as the pull request's description):\n")[1]
    for line in doc["body"].strip().splitlines():
        assert (f"    {line}" if line else "") in pasted.splitlines()
    assert remote.branches()[BRANCH] == head
    assert remote.gh_calls() == []


def test_a_failed_push_asks_nothing_of_gh(repo: Path, remote: Remote) -> None:
    commit_update(repo)
    hook = remote.bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)  # repositories here are made without sample hooks
    hook.write_text("#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
    hook.chmod(0o755)
    code, doc = pr_json(repo)
    assert code == 1
    assert doc["status"] == "push-failed" and doc["pushed"] is False
    assert doc["error"].startswith("git push failed:")
    assert f"git push -u origin {BRANCH}" in doc["next_step"]
    assert f"{BRANCH} → main" in doc["next_step"]
    assert BRANCH not in remote.branches()
    assert remote.gh_calls() == []


def test_base_comes_from_the_remotes_head_or_the_option(repo: Path, remote: Remote) -> None:
    git(repo, "push", "-q", "origin", "main:trunk")
    git(repo, "remote", "set-head", "origin", "trunk")
    commit_update(repo)
    assert pr_json(repo)[0] == 0
    assert flag(remote.gh_calls()[-1], "--base") == "trunk"
    assert pr_json(repo, "--base-ref", "main", "--title", "Kit 1.2", "--body", "by hand")[0] == 0
    create = remote.gh_calls()[-1]
    assert flag(create, "--base") == "main"
    assert flag(create, "--title") == "Kit 1.2" and flag(create, "--body") == "by hand"


def test_refusals_before_anything_happens(
    repo: Path, remote: Remote, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_update(repo)
    before = remote.branches()
    assert call("pr", "--base-ref", "nope", "-C", str(repo)) == 2
    assert "branch 'nope' exists neither here nor as origin/nope" in capsys.readouterr().err
    assert call("pr", "--remote", "upstream", "-C", str(repo)) == 1
    assert "no git remote named 'upstream'" in capsys.readouterr().err
    git(repo, "switch", "-q", "main")
    assert call("pr", "-C", str(repo)) == 1
    assert "you are on main, the branch the pull request would go into" in (capsys.readouterr().err)
    assert remote.branches() == before and remote.gh_calls() == []


def test_the_body_lists_conflicts_still_unresolved(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "a.txt").write_text("a mine\n")
    git(repo, "commit", "-qam", "local edit")
    remote = add_origin(repo, tmp_path, monkeypatch)
    assert call("update", "--yes", "-C", str(repo)) == 4  # a.txt left with markers
    commit_update(repo)
    assert pr_json(repo)[0] == 0
    body = flag(remote.gh_calls()[-1], "--body")
    assert "Conflicts still unresolved in the working tree (1):\n- a.txt" in body


def test_update_pr_is_refused_and_names_tether_pr(repo: Path, tmp_path: Path, monkeypatch) -> None:
    remote = add_origin(repo, tmp_path, monkeypatch)
    before = tree_digest(repo)
    result = run_tether("update", "--yes", "--pr", "--json", "-C", str(repo))
    assert result.returncode == 2
    assert result.stderr == (
        "tether update: --pr was removed; commit the update, then run 'tether pr'\n"
    )
    assert json.loads(result.stdout)["error"]["kind"] == "usage"
    assert tree_digest(repo) == before  # nothing updated, nothing pushed
    assert list(remote.branches()) == ["main"]
    assert remote.gh_calls() == []


def test_a_gaia_project_in_a_subfolder_reads_the_base_version_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shelf = tmp_path / "rel"
    for version, text in (("2.0.0", "v1\n"), ("2.1.0", "v2\n")):
        make_release(shelf, version, {"agents/auditor.md": text}, profile="gaia")
    top = tmp_path / "mono"
    app = top / "app"
    app.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    init = ("init", "--profile", "gaia", "--source", str(shelf), "--to", "2.0.0", "-C", str(app))
    assert call(*init) == 0
    git(top, "add", "-A")
    git(top, "commit", "-qm", "install 2.0.0")
    remote = add_origin(top, tmp_path, monkeypatch)
    assert call("update", "--yes", "-C", str(app)) == 0
    commit_update(top)
    code, doc = pr_json(app)
    assert code == 0 and doc["status"] == "opened"
    assert doc["title"] == "chore: update GAIA to v2.1.0"  # GAIA's own title, exactly
    assert doc["body"].startswith("Updates GAIA from v2.0.0 to v2.1.0.")  # main's .gaia/VERSION
    assert flag(remote.gh_calls()[-1], "--head") == doc["branch"]


def test_the_body_printed_to_paste_cannot_drive_the_terminal(
    repo: Path, remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body (release-supplied text by default) is shown escaped: a control sequence in it
    never reaches the terminal, the words around it do."""
    commit_update(repo)
    path_without_gh(tmp_path, monkeypatch)
    body = "Notes\x1b]0;owned\x07 here\n\x1b[2Jcleared?"
    result = run_tether("pr", "--title", "T", "--body", body, "-C", str(repo))
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "Notes" in result.stdout and "cleared?" in result.stdout


def test_the_report_holds_facts_and_report_words_the_next_step_of_each_status() -> None:
    from tether.flows.pullrequest import PullRequestReport
    from tether.report.pullrequest import pull_request_document

    report = PullRequestReport("push-failed", BRANCH, "main", "origin", 1, TITLE, "body")
    report.uncommitted = 2
    assert "next_step" not in report.to_json() and "notes" not in report.to_json()
    doc = pull_request_document(report)
    assert doc["next_step"] == (
        f"resolve the push error, then run 'tether pr' again, or push (git push -u origin "
        f"{BRANCH}) and open the pull request by hand: {BRANCH} → main, titled '{TITLE}'"
    )
    assert doc["notes"][0].startswith("2 file(s) have uncommitted changes")
    report.status, report.pushed = "gh-missing", True
    assert pull_request_document(report)["next_step"] == (
        f"the branch is pushed to origin; open the pull request by hand: {BRANCH} → main, "
        f"titled '{TITLE}'"
    )
    report.status, report.uncommitted = "opened", 0
    assert pull_request_document(report)["next_step"] == ""
    assert pull_request_document(report)["notes"] == []
