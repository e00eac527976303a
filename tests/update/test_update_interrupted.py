"""An interrupted update is visible, resumable and reversible, in the files and in git.

Interruptions are real: a crash point (``TETHER_CRASH_AFTER``, the process dies right after a
journal record) or a real SIGINT sent to a running ``tether update``.
"""

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from builders import call, git, make_release, run_forked, run_tether
from process_helpers import signal_delivered
from tests.flows.test_crash_safety import BIG, HELD_AT, big_fixture, held_update, wait_for_records
from tether.state import crashpoint
from tether.state.lock import ProjectLock

BASE = "".join(f"line {i}\n" for i in range(10))


def _build_git_project(tmp_path: Path) -> Path:
    """A committed project on main whose update to 2.0.0 writes, merges and conflicts."""
    shelf = tmp_path / "rel"
    v1 = {f"f{i}.txt": BASE for i in range(6)} | {"c.txt": "a\nb\nc\n"}
    v2 = {k: v.replace("line 9\n", "line 9 upstream\n") for k, v in v1.items()}
    v2["c.txt"] = "a\ntheirs\nc\n"
    make_release(shelf, "1.0.0", v1)
    make_release(shelf, "2.0.0", v2)
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "f0.txt").write_text(BASE.replace("line 0\n", "line 0 mine\n"))
    (project / "c.txt").write_text("a\nmine\nc\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The projects the tests start from, built once per module (``git/proj``,
    ``auto/proj``); each test copies them. Their releases stay here, unchanged."""
    top = tmp_path_factory.mktemp("built")
    _build_git_project(top / "git")
    auto_fixture(top / "auto")
    return top


@pytest.fixture
def git_project(built: Path) -> Callable[[Path], Path]:
    """``git_project(folder)``: at ``folder/proj``, a copy of the committed project on main
    whose update to 2.0.0 writes, merges and conflicts."""

    def copy(tmp_path: Path) -> Path:
        return shutil.copytree(built / "git" / "proj", tmp_path / "proj", symlinks=True)

    return copy


def crash_update(project: Path, point: str = "file-written:1") -> None:
    result = run_forked("update", "--yes", "--conflict", "markers", "-C", str(project), crash=point)
    assert result.returncode == crashpoint.EXIT_CODE, result.stderr


def unmerged(project: Path) -> list[str]:
    """Paths git's index holds as unmerged (porcelain v2 'u' records)."""
    out = git(project, "status", "--porcelain=v2")
    return [line.split(" ")[-1] for line in out.splitlines() if line.startswith("u ")]


def branches(project: Path) -> list[str]:
    return git(project, "branch", "--format=%(refname:short)").split()


# --- item: rerunning the same command resumes -------------------------------------------


def test_rerun_resumes_past_the_files_tether_itself_wrote(tmp_path, git_project):
    project = git_project(tmp_path)
    crash_update(project)
    assert git(project, "status", "--porcelain")  # tether's writes look dirty to git
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(project))
    assert result.returncode == 4, result.stderr  # finished; c.txt holds a conflict
    run_id = json.loads((project / ".tether/journal.jsonl").read_text().splitlines()[0])["run"]
    assert result.stdout.startswith(
        f"resuming interrupted update 1.0.0 → 2.0.0 (run {run_id})\ntether update: 1.0.0 → 2.0.0\n"
    )
    assert (project / "f1.txt").read_text() == BASE.replace("line 9\n", "line 9 upstream\n")
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["version"] == "2.0.0"


def test_rerun_still_refuses_a_file_the_user_changed_after_the_crash(tmp_path, git_project):
    project = git_project(tmp_path)
    crash_update(project)
    # The run wrote its merge into f0.txt; an edit since makes it the user's again.
    (project / "f0.txt").write_text((project / "f0.txt").read_text() + "added after\n")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1
    assert "uncommitted changes in files this update changes (f0.txt)" in result.stderr


def test_resumed_run_names_the_versions_it_set_out_between(tmp_path, git_project):
    """A run that saved its new state but did not journal it replans 2.0.0 → 2.0.0; its
    report still says 1.0.0 → 2.0.0."""
    project = git_project(tmp_path)
    assert run_tether("update", "--yes", "--no-branch", "-C", str(project)).returncode == 4
    journal = project / ".tether/journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    cut = [line for line in lines if '"step":"state-written"' not in line]
    cut = [line for line in cut if '"step":"run-complete"' not in line]
    journal.write_text("".join(cut))
    result = run_tether("update", "--yes", "--json", "--no-branch", "-C", str(project))
    doc = json.loads(result.stdout)
    assert (doc["from_version"], doc["to_version"], doc["resumed"]) == ("1.0.0", "2.0.0", True)


# --- item: status and check see an unfinished run ----------------------------------------


def test_check_and_status_report_an_unfinished_update(tmp_path, git_project):
    project = git_project(tmp_path)
    crash_update(project)
    check = run_tether("check", "-C", str(project))
    assert check.returncode == 3
    assert "clean" not in check.stdout
    assert "unfinished update 1.0.0 → 2.0.0 (run " in check.stdout
    assert "rerun 'tether update' to finish or 'tether update --abandon' to roll back" in (
        check.stdout
    )
    doc = json.loads(run_tether("check", "--json", "-C", str(project)).stdout)
    assert "unfinished-update" in doc["reasons"]
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert (
        status["unfinished"]["from_version"] == "1.0.0"
        and status["unfinished"]["to_version"] == "2.0.0"
    )
    # The flow finds the run as a fact; report/status_document.py words its message.
    from tether.flows.status import UnfinishedUpdate, project_status

    found = project_status(project).unfinished
    assert isinstance(found, UnfinishedUpdate)
    assert (found.from_version, found.to_version, found.command) == ("1.0.0", "2.0.0", "update")
    assert status["unfinished"]["message"] == (
        f"unfinished update 1.0.0 → 2.0.0 (run {found.run_id}): rerun 'tether update' to "
        "finish or 'tether update --abandon' to roll back"
    )
    assert "unfinished update" in run_tether("status", "-C", str(project)).stdout
    assert run_tether("update", "--yes", "-C", str(project)).returncode == 4
    assert run_tether("status", "--json", "-C", str(project)).returncode == 0
    after = json.loads(run_tether("check", "--json", "-C", str(project)).stdout)
    assert "unfinished-update" not in after["reasons"]


def test_check_and_status_say_when_another_run_holds_the_lock(tmp_path, git_project):
    project = git_project(tmp_path)
    with ProjectLock(project / ".tether/lock", command="update --to 2.0.0"):
        check = run_tether("check", "-C", str(project))
        status = run_tether("status", "-C", str(project))
        doc = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert check.returncode == 3
    assert "another tether run is changing the project right now" in check.stdout
    assert "clean" not in check.stdout
    assert f"pid {os.getpid()}" in status.stdout
    assert doc["running"]["command"] == "update --to 2.0.0"
    assert run_tether("check", "-C", str(project)).returncode == 0  # released: clean again


# --- item: the interrupted run's summary ------------------------------------------------


def test_sigint_mid_apply_reports_what_was_done_and_what_remains(tmp_path):
    project = big_fixture(tmp_path)
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    proc = held_update(project, gate, "--json")
    assert wait_for_records(journal, "file-written", HELD_AT, proc), "update ended first"
    proc.send_signal(signal.SIGINT)
    assert signal_delivered(proc.pid, signal.SIGINT)  # it lands while the run is held
    gate.unlink()
    done = proc.wait(timeout=60)
    out, err = done.stdout, done.stderr
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    written = sum(
        json.loads(line)["step"] == "file-written" for line in journal.read_text().splitlines()
    )
    assert len(doc["buckets"]["update"]) == written < BIG
    assert len(doc["pending"]) == BIG - written
    assert not set(doc["buckets"]["update"]) & {p["path"] for p in doc["pending"]}


def test_interrupted_summary_does_not_claim_the_plan_or_suggest_a_commit(tmp_path):
    project = big_fixture(tmp_path)
    journal = project / ".tether/journal.jsonl"
    gate = tmp_path / "hold"
    proc = held_update(project, gate)
    assert wait_for_records(journal, "file-written", HELD_AT, proc), "update ended first"
    proc.send_signal(signal.SIGINT)
    assert signal_delivered(proc.pid, signal.SIGINT)  # it lands while the run is held
    gate.unlink()
    out = proc.wait(timeout=60).stdout
    assert proc.returncode == 130
    head = out.splitlines()[0]
    assert head.startswith("tether update: interrupted 1.0.0 → 2.0.0 after ")
    assert head.endswith(f" of {BIG} changes")
    assert "Not done yet (the run stopped first)" in out
    assert "commit" not in out.split("Next steps:")[1]
    assert "tether update --abandon" in out


def test_interrupt_while_planning_exits_130(tmp_path, monkeypatch, capsys, git_project):
    """Ctrl-C during planning arrives as KeyboardInterrupt (apply has its own handler)."""
    from tether.cli.main import main
    from tether.flows import update

    project = git_project(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(update, "build_plan", interrupted)
    assert main(["update", "--yes", "-C", str(project)]) == 130
    assert not (project / ".tether/journal.jsonl").exists()


# --- item: --abandon undoes the git side too ---------------------------------------------


def test_abandon_restores_the_index_and_the_branch(tmp_path, git_project):
    project = git_project(tmp_path)
    crash_update(project)
    assert unmerged(project) == ["c.txt"]
    assert git(project, "branch", "--show-current").strip() == "chore/update-acme-kit-2.0.0"
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert unmerged(project) == []
    assert git(project, "status", "--porcelain") == ""  # files and index as committed
    assert git(project, "branch", "--show-current").strip() == "main"
    assert branches(project) == ["main"]
    assert "switched back to main and deleted the update branch" in result.stdout
    assert "put git's index back for 1 file(s)" in result.stdout
    # A later update starts cleanly again.
    assert run_tether("update", "--yes", "-C", str(project)).returncode == 4


def test_abandon_restores_a_staged_entry_as_it_was(tmp_path, git_project):
    """The pre-run index entry comes back, not HEAD's: here a staged version of c.txt."""
    project = git_project(tmp_path)
    (project / "c.txt").write_text("a\nmine, staged\nc\n")
    git(project, "add", "c.txt")
    staged = git(project, "ls-files", "-s", "c.txt")
    run_forked(
        "update",
        "--yes",
        "--allow-dirty",
        "--no-branch",
        "-C",
        str(project),
        crash="file-written:1",
    )
    assert unmerged(project) == ["c.txt"]
    assert run_tether("update", "--abandon", "-C", str(project)).returncode == 0
    assert git(project, "ls-files", "-s", "c.txt") == staged
    assert (project / "c.txt").read_text() == "a\nmine, staged\nc\n"


def test_abandon_leaves_an_update_branch_with_commits_of_its_own(tmp_path, git_project):
    project = git_project(tmp_path)
    crash_update(project)
    (project / "c.txt").write_text("a\nresolved\nc\n")
    (project / "notes.txt").write_text("mine\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "work on the update branch")
    result = run_tether("update", "--abandon", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert git(project, "branch", "--show-current").strip() == "chore/update-acme-kit-2.0.0"
    assert "stayed on branch chore/update-acme-kit-2.0.0: it has commits of its own" in (
        result.stdout
    )
    assert (project / "notes.txt").read_text() == "mine\n"
    assert "git's index left as it is" in result.stdout


def test_update_reuses_an_update_branch_at_the_start_commit(tmp_path, git_project):
    project = git_project(tmp_path)
    git(project, "branch", "chore/update-acme-kit-2.0.0")  # e.g. left by a crash before any write
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 4, result.stderr
    assert json.loads(result.stdout)["branch"] == "chore/update-acme-kit-2.0.0"
    assert git(project, "branch", "--show-current").strip() == "chore/update-acme-kit-2.0.0"


def test_update_refuses_an_update_branch_that_moved_on(tmp_path, git_project):
    project = git_project(tmp_path)
    git(project, "switch", "-q", "-c", "chore/update-acme-kit-2.0.0")
    (project / "notes.txt").write_text("mine\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "someone's work")
    git(project, "switch", "-q", "main")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1
    assert "a branch named chore/update-acme-kit-2.0.0 already exists" in result.stderr
    assert "--branch NAME" in result.stderr
    assert git(project, "status", "--porcelain") == ""  # nothing written
    assert git(project, "branch", "--show-current").strip() == "main"


@pytest.mark.parametrize("point", ["file-backed-up:1", "file-intent:1", "index-saved:1"])
def test_abandon_after_a_crash_before_any_write_leaves_git_as_it_was(tmp_path, point, git_project):
    project = git_project(tmp_path)
    crash_update(project, point)
    assert run_tether("update", "--abandon", "-C", str(project)).returncode == 0
    assert git(project, "status", "--porcelain") == ""
    assert git(project, "branch", "--show-current").strip() == "main"


def auto_fixture(tmp_path: Path) -> Path:
    shelf = tmp_path / "rel"
    v1 = {f"c{i}.txt": "a\nb\nc\n" for i in range(3)} | {"u.txt": "u1\n"}
    v2 = {f"c{i}.txt": "a\ntheirs\nc\n" for i in range(3)} | {"u.txt": "u2\n"}
    make_release(shelf, "1.0.0", v1)
    make_release(shelf, "2.0.0", v2)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    for i in range(3):
        (project / f"c{i}.txt").write_text("a\nmine\nc\n")
    return project


@pytest.fixture(scope="module")
def uninterrupted(built: Path) -> Callable[[str], subprocess.CompletedProcess[str]]:
    """``uninterrupted(auto)``: the uninterrupted ``update --auto <auto>`` of a copy of the
    module's ``auto/proj``, run once per module and value."""
    runs: dict[str, subprocess.CompletedProcess[str]] = {}

    def run(auto: str) -> subprocess.CompletedProcess[str]:
        if auto not in runs:
            whole = shutil.copytree(built / "auto" / "proj", built / f"whole-{auto}")
            command = ("update", "--yes", "--json", "--auto", auto)
            runs[auto] = run_tether(*command, "-C", str(whole))
        assert runs[auto].returncode == 0, runs[auto].stderr  # every conflict settled
        return runs[auto]

    return run


def comparable(doc: dict) -> dict:
    return {
        "buckets": doc["buckets"],
        "backed_up": sorted(doc["backed_up"]),
        "status": doc["status"],
        "pending": doc["pending"],
    }


@pytest.mark.parametrize("auto", ["take-theirs", "keep-mine"])
@pytest.mark.parametrize("point", ["file-intent:1", "file-written:1", "finalize-started:1"])
def test_resumed_run_reports_what_an_uninterrupted_run_would(
    tmp_path, built, uninterrupted, auto, point
):
    command = ("update", "--yes", "--json", "--auto", auto)
    expected = uninterrupted(auto)
    project = shutil.copytree(built / "auto" / "proj", tmp_path / "cut", symlinks=True)
    crashed = run_forked(*command, "-C", str(project), crash=point)
    assert crashed.returncode == crashpoint.EXIT_CODE
    resumed = run_tether(*command, "-C", str(project))
    assert resumed.returncode == expected.returncode, resumed.stdout
    assert comparable(json.loads(resumed.stdout)) == comparable(json.loads(expected.stdout))


def test_sigterm_while_planning_exits_130(tmp_path, monkeypatch, git_project):
    """A real SIGTERM, delivered to this process while the plan is being built."""
    from tether.cli.main import main
    from tether.flows import update

    project = git_project(tmp_path)
    real_build_plan = update.build_plan

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real_build_plan(*args, **kwargs)

    monkeypatch.setattr(update, "build_plan", terminated)
    before = signal.getsignal(signal.SIGTERM)
    assert main(["update", "--yes", "-C", str(project)]) == 130
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    assert not (project / ".tether/journal.jsonl").exists()


def test_an_update_branch_an_earlier_run_made_is_reused_after_the_start_branch_moved_on(
    tmp_path,
    git_project,
):
    """The branch an interrupted run made holds no commit of its own; the adopter went back
    to main and committed there. The branch is moved up to main's commit (nothing is lost:
    its commit is main's ancestor) and the update goes on there."""
    project = git_project(tmp_path)
    crash_update(project, "file-intent:1")
    made = git(project, "rev-parse", "chore/update-acme-kit-2.0.0").strip()
    git(project, "switch", "-q", "main")
    (project / "notes.txt").write_text("mine\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "my own work on main")
    head = git(project, "rev-parse", "HEAD").strip()
    result = run_tether("update", "--yes", "--json", "-C", str(project))
    assert result.returncode == 4, result.stdout + result.stderr  # c.txt conflicts
    assert json.loads(result.stdout)["branch"] == "chore/update-acme-kit-2.0.0"
    assert git(project, "branch", "--show-current").strip() == "chore/update-acme-kit-2.0.0"
    assert git(project, "rev-parse", "HEAD").strip() == head  # moved up to main's commit
    assert git(project, "merge-base", "--is-ancestor", made, head) == ""


def test_an_update_branch_an_earlier_run_made_with_commits_of_its_own_says_so(
    tmp_path, git_project
):
    project = git_project(tmp_path)
    crash_update(project, "file-intent:1")
    (project / "notes.txt").write_text("committed on the update branch\n")
    git(project, "add", "notes.txt")
    git(project, "commit", "-qm", "work on the update branch")
    git(project, "switch", "-q", "main")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1
    assert "an earlier update made it: 'git switch chore/update-acme-kit-2.0.0'" in result.stderr
    assert git(project, "branch", "--show-current").strip() == "main"


# --- item: a resume records the conflict stages a kill left out -------------------------


def test_kill_between_writing_markers_and_recording_stages_then_resume(tmp_path, git_project):
    """Killed after a batch wrote its conflict markers and before git's index got their
    stages: the resumed run records them, so the index ends as an uninterrupted run's."""
    uninterrupted = git_project(tmp_path / "one")
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(uninterrupted))
    assert result.returncode == 4, result.stderr
    expected = git(uninterrupted, "ls-files", "-u")
    assert expected  # c.txt's three stages

    project = git_project(tmp_path / "two")
    crash_update(project, "conflicts-written:1")
    assert (project / "c.txt").read_text() == (uninterrupted / "c.txt").read_text()
    assert git(project, "ls-files", "-u") == ""  # the markers are there, the stages not
    result = run_tether("update", "--yes", "--conflict", "markers", "-C", str(project))
    assert result.returncode == 4, result.stderr
    assert git(project, "ls-files", "-u") == expected
    assert (project / "c.txt").read_text() == (uninterrupted / "c.txt").read_text()
    # Running it once more changes nothing: the stages are not recorded twice or dropped.
    assert run_tether("status", "-C", str(project)).returncode in (0, 4)
    assert git(project, "ls-files", "-u") == expected
